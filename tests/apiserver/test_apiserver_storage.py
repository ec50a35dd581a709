"""The SQLite revision log: revisions, history, compaction, and restart with the same data dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiserver_helpers import Client, pod

from kubesched.apiserver.storage import (
    Compacted,
    Conflict,
    FutureRevision,
    KeyExists,
    StorageError,
    Store,
)
from kubesched.apiserver.launcher import run_server

PODS = "/api/v1/namespaces/default/pods"


def _cm(name: str, v: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"v": v}}, "data": {"v": v}}


def test_every_write_is_a_new_global_revision_and_history_is_readable() -> None:
    s = Store(None)
    a1 = s.create("configmaps", "ns", "a", _cm("a", "1"))
    b1 = s.create("configmaps", "ns", "b", _cm("b", "1"))
    a2 = s.update("configmaps", "ns", "a", _cm("a", "2"), expect_rv=a1.rv)
    assert (a1.rv, b1.rv, a2.rv) == (1, 2, 3)
    assert a2.obj()["metadata"]["resourceVersion"] == "3"
    with pytest.raises(Conflict):
        s.update("configmaps", "ns", "a", _cm("a", "x"), expect_rv=a1.rv)
    with pytest.raises(KeyExists):
        s.create("configmaps", "ns", "a", _cm("a", "1"))
    d = s.delete("configmaps", "ns", "b")
    assert d.rv == 4 and d.obj()["data"] == {"v": "1"}
    assert [e.obj()["data"]["v"] for e in s.list_at("configmaps", 2)] == ["1", "1"]
    assert [e.obj()["data"]["v"] for e in s.list_at("configmaps", 4)] == ["2"]
    evs = s.events_since("configmaps", 1)
    assert [(e.type, e.name, e.rv) for e in evs] == [("ADDED", "b", 2), ("MODIFIED", "a", 3), ("DELETED", "b", 4)]
    assert evs[1].prev is not None and evs[1].prev.rv == 1
    with pytest.raises(FutureRevision):
        s.events_since("configmaps", 99)
    s.compact(3)
    with pytest.raises(Compacted):
        s.events_since("configmaps", 2)
    with pytest.raises(Compacted):
        s.list_at("configmaps", 2)
    assert [e.type for e in s.events_since("configmaps", 3)] == ["DELETED"]
    s.close()


def test_history_beyond_the_ring_is_read_from_sqlite() -> None:
    s = Store(None, ring_size=3)
    e = s.create("configmaps", "ns", "a", _cm("a", "0"))
    for i in range(1, 10):
        e = s.update("configmaps", "ns", "a", _cm("a", str(i)), expect_rv=e.rv)
    evs = s.events_since("configmaps", 0)
    assert [ev.rv for ev in evs] == list(range(1, 11))
    assert [ev.type for ev in evs] == ["ADDED"] + ["MODIFIED"] * 9
    assert all(ev.prev is not None and ev.prev.rv == ev.rv - 1 for ev in evs[1:])
    s.close()


def test_data_dir_survives_a_restart_and_revisions_keep_increasing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with run_server(tmp_path / "kc", data_dir=data) as srv:
        c = Client.of(srv)
        for i in range(5):
            c.create(PODS, pod(f"p{i}"))
        c.req("DELETE", f"{PODS}/p4")
        c.req("PATCH", f"{PODS}/p0/status", {"status": {"phase": "Running"}}, ctype="application/merge-patch+json")
        before = c.get(PODS)
        rv_before = int(before["metadata"]["resourceVersion"])
    with run_server(tmp_path / "kc", data_dir=data) as srv:
        c = Client.of(srv)
        after = c.get(PODS)
        assert after["items"] == before["items"]
        assert int(after["metadata"]["resourceVersion"]) == rv_before
        assert c.get(f"{PODS}/p0")["status"]["phase"] == "Running"
        # a watch from an RV of the previous run replays what happened after it, from SQLite
        w = c.watch(f"{PODS}?watch=1&resourceVersion={rv_before - 2}&timeoutSeconds=5")
        evs = w.take(2)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("DELETED", "p4"), ("MODIFIED", "p0")]
        w.close()
        made = c.create(PODS, pod("new"))
        assert int(made["metadata"]["resourceVersion"]) == rv_before + 1
        srv.faults.compact()
    with run_server(tmp_path / "kc", data_dir=data) as srv:
        c = Client.of(srv)
        w = c.watch(f"{PODS}?watch=1&resourceVersion={rv_before - 2}")
        ev = w.next()
        assert ev is not None and ev["type"] == "ERROR" and ev["object"]["code"] == 410  # compaction persisted
        w.close()
        assert len(c.get(PODS)["items"]) == 5


def test_compacting_the_newest_tombstone_keeps_the_revision_across_a_restart(tmp_path: Path) -> None:
    """Compaction deletes the newest row (a deletion at the current revision); the reopened
    store still continues after it (kine: the AUTOINCREMENT sequence, not MAX(id))."""
    data = str(tmp_path / "data")
    s = Store(data)
    a = s.create("configmaps", "ns", "a", _cm("a", "1"))
    s.create("configmaps", "ns", "b", _cm("b", "1"))
    gone = s.delete("configmaps", "ns", "b")
    assert s.compact() == gone.rv == s.current_rev
    s.close()
    with pytest.raises(StorageError):  # a closed store takes no write (and keeps its state)
        s.create("configmaps", "ns", "c", _cm("c", "1"))
    assert s.current_rev == gone.rv and s.get("configmaps", "ns", "c") is None
    s2 = Store(data)
    try:
        assert s2.current_rev == gone.rv and s2.compact_rev == gone.rv
        assert [e.rv for e in s2.list("configmaps")] == [a.rv]
        assert s2.create("configmaps", "ns", "c", _cm("c", "1")).rv == gone.rv + 1
    finally:
        s2.close()


def test_watch_history_is_bounded_by_bytes_and_older_events_come_from_the_log() -> None:
    """A 1 MB object updated 300 times must not keep 300 MB of history in memory (issue item 8):
    the in-memory watch ring holds at most ``ring_bytes`` of objects; a watch from an older
    revision still gets every event, read back from the revision log."""
    s = Store(None, ring_bytes=8 << 20)
    big = "x" * (1 << 20)
    first = s.create("configmaps", "ns", "big", {"metadata": {"name": "big", "namespace": "ns"}, "data": {"v": big}})
    for i in range(40):
        s.update("configmaps", "ns", "big", {"metadata": {"name": "big", "namespace": "ns"},
                                             "data": {"v": big, "i": str(i)}})
    assert s._ring_bytes <= 8 << 20
    assert len(s._ring) - s._ring_head < 10
    events = s.events_since("configmaps", first.rv)
    assert [e.type for e in events] == ["MODIFIED"] * 40
    assert [int(e.entry.rv) for e in events] == list(range(first.rv + 1, first.rv + 41))
    assert events[-1].prev is not None


def test_watch_history_older_than_the_fresh_window_leaves_memory_not_the_log() -> None:
    """An idle server must not keep its last ``ring_size`` events — deleted objects, replaced versions —
    in memory for good (the idle RSS creep of the soak): ``expire_ring`` drops the events published
    more than ``max_age`` seconds ago, as upstream's watch cache keeps ``eventFreshDuration`` (75 s) of
    history (``pkg/storage/cacher/watch_cache_history.go``); a watch from before them still gets every
    event, from the revision log, and newer events stay in the ring."""
    import time

    s = Store(None)
    e = s.create("configmaps", "ns", "a", _cm("a", "0"))
    for i in range(1, 5):
        e = s.update("configmaps", "ns", "a", _cm("a", str(i)), expect_rv=e.rv)
    s.delete("configmaps", "ns", "a")
    assert s.expire_ring(75.0) == 0  # nothing is that old yet
    assert s.expire_ring(75.0, now=time.monotonic() + 76) == 6
    assert len(s._ring) - s._ring_head == 0 and s._ring_bytes == 0
    s.create("configmaps", "ns", "b", _cm("b", "0"))
    events = s.events_since("configmaps", 0)
    assert [(ev.type, ev.name) for ev in events] == [("ADDED", "a")] + [("MODIFIED", "a")] * 4 + [
        ("DELETED", "a"), ("ADDED", "b")]
    assert [ev.rv for ev in events] == list(range(1, 8))
    assert len(s._ring) - s._ring_head == 1  # the new event is in memory
    s.close()
