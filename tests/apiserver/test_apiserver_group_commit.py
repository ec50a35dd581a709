"""Group commit: concurrent writes to the box's on-disk store share one transaction and one fsync.

What it matches: etcd acknowledges a write only once the WAL entry holding it is synced, and its
raft loop saves every entry proposed during the previous sync in one ``wal.Save`` (one fsync) —
concurrent writes share a sync, sequential ones cannot. Reads never see an entry before it is
committed (watch events come from applied, i.e. synced, entries). Revisions stay one per write,
in order. Issue 16 ("durable on power loss"), follow-up: the cost of durability under concurrency.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubesched.apiserver.storage import Event, StorageError, Store
from kubesched.apiserver.launcher import run_server

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
CM = "/api/v1/namespaces/default/configmaps"


def _cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "data": {"v": name}}


def _rows(path: Path) -> int:
    """Committed rows, as another process (or a crash recovery) sees the database."""
    db = sqlite3.connect(path / "state.db")
    try:
        return int(db.execute("SELECT COUNT(*) FROM log").fetchone()[0])
    finally:
        db.close()


def test_writes_in_one_loop_turn_share_one_commit_and_publish_after_it(tmp_path: Path) -> None:
    s = Store(str(tmp_path / "d"), group_commit=True)
    commits: list[tuple[str, list[int]]] = []
    s.commit_hook = lambda when, batch: commits.append((when, [e.rv for e in batch]))
    seen: list[Event] = []
    s.subscribe("configmaps", seen.append)

    async def main() -> None:
        for i in range(5):
            s.create("configmaps", "ns", f"c{i}", _cm(f"c{i}"))
        s.update("configmaps", "ns", "c0", {**_cm("c0"), "data": {"v": "x"}}, expect_rv=1)
        s.delete("configmaps", "ns", "c1")
        # applied in memory (the next write's checks see it), not yet committed nor published
        assert s.current_rev == 7 and s.synced_rev == 0 and s.unsynced
        assert s.get("configmaps", "ns", "c0").rv == 6 and s.get("configmaps", "ns", "c1") is None
        assert seen == [] and _rows(tmp_path / "d") == 0
        await s.sync()
        assert commits == [("before", [1, 2, 3, 4, 5, 6, 7]), ("after", [1, 2, 3, 4, 5, 6, 7])]
        assert s.synced_rev == 7 and not s.unsynced and _rows(tmp_path / "d") == 7
        assert [(e.type, e.name, e.rv) for e in seen] == [
            ("ADDED", "c0", 1), ("ADDED", "c1", 2), ("ADDED", "c2", 3), ("ADDED", "c3", 4), ("ADDED", "c4", 5),
            ("MODIFIED", "c0", 6), ("DELETED", "c1", 7)]
        assert [e.rv for e in s.events_since("configmaps", 0)] == [1, 2, 3, 4, 5, 6, 7]
        await s.sync()  # nothing pending: returns at once
        s.create("configmaps", "ns", "late", _cm("late"))  # a later turn: a new batch
        await s.sync()
        assert [c for c in commits if c[0] == "before"][-1] == ("before", [8])

    asyncio.run(main())
    s.close()
    s = Store(str(tmp_path / "d"))
    assert s.current_rev == 8
    assert [e.obj()["metadata"]["name"] for e in s.list("configmaps")] == ["c0", "c2", "c3", "c4", "late"]
    s.close()


def test_without_a_loop_or_on_memory_every_write_is_its_own_commit(tmp_path: Path) -> None:
    s = Store(str(tmp_path / "d"), group_commit=True)  # no running loop: start-up, tools
    s.create("configmaps", "ns", "a", _cm("a"))
    assert not s.unsynced and s.synced_rev == 1 and _rows(tmp_path / "d") == 1
    s.close()

    async def in_memory() -> None:
        m = Store(None, group_commit=True)  # nothing to sync in memory: unchanged behaviour
        seen: list[Event] = []
        m.subscribe("configmaps", seen.append)
        m.create("configmaps", "ns", "a", _cm("a"))
        assert not m.unsynced and [e.name for e in seen] == ["a"]

    asyncio.run(in_memory())


def test_compaction_and_close_commit_the_open_batch_first(tmp_path: Path) -> None:
    s = Store(str(tmp_path / "d"), group_commit=True)

    async def main() -> None:
        s.create("configmaps", "ns", "a", _cm("a"))
        s.update("configmaps", "ns", "a", {**_cm("a"), "data": {"v": "2"}})
        assert s.compact() == 2 and not s.unsynced and _rows(tmp_path / "d") == 1
        s.create("configmaps", "ns", "b", _cm("b"))
        s.close()  # before the scheduled commit ran

    asyncio.run(main())
    s = Store(str(tmp_path / "d"))
    assert s.current_rev == 3 and s.get("configmaps", "ns", "b") is not None
    s.close()


def test_a_failed_commit_acknowledges_nothing_and_closes_the_store(tmp_path: Path) -> None:
    """etcd: a failed WAL save is fatal (``lg.Fatal("failed to save Raft hard state and entries")``)."""
    s = Store(str(tmp_path / "d"), group_commit=True)

    def fail(when: str, batch: list[Event]) -> None:
        if when == "before":
            raise sqlite3.OperationalError("disk I/O error")

    s.commit_hook = fail

    async def main() -> None:
        s.create("configmaps", "ns", "a", _cm("a"))
        with pytest.raises(StorageError, match="disk I/O error"):
            await s.sync()
        with pytest.raises(StorageError, match="the store failed: commit failed: disk I/O error"):
            s.create("configmaps", "ns", "b", _cm("b"))

    asyncio.run(main())
    assert s.closed
    s.close()
    s = Store(str(tmp_path / "d"))
    assert s.current_rev == 0
    s.close()


def test_concurrent_http_writes_share_commits_and_each_answer_follows_its_commit(tmp_path: Path) -> None:
    with run_server(None, data_dir=tmp_path / "d", tls=False, token=None) as srv:
        committed: set[str] = set()
        batches: list[int] = []

        def hook(when: str, batch: list[Event]) -> None:
            if when == "after":
                batches.append(len(batch))
                committed.update(e.name for e in batch if e.space == "configmaps")

        srv.call(lambda s: setattr(s.store, "commit_hook", hook))
        early: list[str] = []

        async def main() -> list[dict[str, Any]]:
            async with aiohttp.ClientSession() as session:
                watch = await session.get(f"{srv.url}{CM}?watch=1&resourceVersion=0")  # initial state + stream

                async def write(i: int) -> None:
                    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}
                    async with session.post(f"{srv.url}{CM}", json=body) as r:
                        assert r.status == 201, await r.text()
                        if f"c{i}" not in committed:
                            early.append(f"c{i}")

                await asyncio.gather(*(write(i) for i in range(48)))
                events: list[dict[str, Any]] = []
                names = {f"c{i}" for i in range(48)}
                while len(events) < 48:
                    ev = json.loads(await asyncio.wait_for(watch.content.readline(), 10))
                    if ev["object"]["metadata"].get("name") in names:
                        events.append(ev)
                watch.close()
                return events

        events = asyncio.run(main())
    assert early == []  # no 201 before the commit that made the write durable
    assert len(batches) < 48 and max(batches) > 1  # concurrent writes shared commits
    # every object exactly once on the watch, in revision order, whether it was pending at its start or not
    assert sorted(e["object"]["metadata"]["name"] for e in events) == sorted(f"c{i}" for i in range(48))
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and {e["type"] for e in events} == {"ADDED"}


_CRASHER = textwrap.dedent("""
    import json, os, sys, time
    from kubesched.apiserver.launcher import run_server
    data, where, out = sys.argv[1], sys.argv[2], sys.argv[3]
    h = run_server(None, data_dir=data, tls=False, token=None)
    batches = [0]

    def hook(when, batch):
        if when != where or len(batch) < 2:
            return
        batches[0] += 1
        if batches[0] < 3:
            return
        with open(out, "w") as f:  # the batch the crash hits
            json.dump([e.name for e in batch], f)
            f.flush()
            os.fsync(f.fileno())
        os._exit(137)  # as kill -9: no cleanup, no answers

    h.call(lambda s: setattr(s.store, "commit_hook", hook))
    print(h.port, flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_crash_around_the_batch_commit_loses_no_acknowledged_write(tmp_path: Path, where: str) -> None:
    """kill -9 (``os._exit``) just before a batch's COMMIT or between it and the answers: every
    acknowledged write is on disk; the crashed batch's writes were not acknowledged, and they are
    all absent (before) or all present (after: committed, the clients only saw the connection drop,
    as with etcd when it dies between its WAL sync and the reply)."""
    data, out = tmp_path / "d", tmp_path / "batch.json"
    p = subprocess.Popen([sys.executable, "-c", _CRASHER, str(data), where, str(out)], env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        port = int(p.stdout.readline())
        acked: list[str] = []

        async def writer(session: aiohttp.ClientSession, w: int) -> None:
            for i in range(300):
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"w{w}-{i}"}}
                try:
                    async with session.post(f"http://127.0.0.1:{port}{CM}", json=body) as r:
                        if r.status != 201:
                            return
                        acked.append(f"w{w}-{i}")
                except aiohttp.ClientError:
                    return

        async def main() -> None:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
                await asyncio.gather(*(writer(session, w) for w in range(16)))

        asyncio.run(main())
        assert p.wait(timeout=60) == 137, p.stderr.read() if p.stderr else ""
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=30)
    crashed = set(json.loads(out.read_text()))
    assert len(crashed) >= 2 and acked
    s = Store(str(data))
    try:
        stored = {e.obj()["metadata"]["name"] for e in s.list("configmaps", "default")}
    finally:
        s.close()
    assert set(acked) <= stored  # no acknowledged write lost
    assert not crashed & set(acked)  # the crashed batch was never acknowledged
    if where == "before":
        assert not crashed & stored
    else:
        assert crashed <= stored
