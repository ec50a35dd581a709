"""``Up`` in-process against its own box with faults injected: a server failing writes while the
manifests are applied, and a scheduler that loses its Lease. Real HTTP on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.box.apply import ApplyError
from kubesched.box.up import Up, UpOptions
from kubesched.config import load_config
from kubesched.sim.manifests import parse_manifest_text


async def until(cond: Any, what: str, timeout: float = 60.0) -> None:
    """Poll ``cond`` every 20 ms; fail after ``timeout`` s (a bound for a loaded machine)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.02)

MANIFESTS = """\
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p2}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
"""


class RecordingView:
    def __init__(self) -> None:
        self.started_up: Any = None
        self.events: list[tuple[str, str]] = []
        self.finished_reason: str | None = None

    def started(self, up: Any) -> None:
        self.started_up = up

    def pod_event(self, event: str, row: Any) -> None:
        self.events.append((event, row.key))

    def tick(self, board: Any) -> None:
        pass

    def finished(self, up: Any, reason: str) -> None:
        self.finished_reason = reason


@pytest.mark.asyncio
async def test_server_failing_pod_creates_is_an_apply_error_and_everything_stops(tmp_path) -> None:
    from kubesched.apiserver.faults import Faults

    faults = Faults()
    faults.fail_writes("pods", fraction=1.0, code=500, verbs=("create",))
    view = RecordingView()
    up = Up(UpOptions(objects=parse_manifest_text(MANIFESTS, "m.yaml"), config=load_config(None),
                      work_dir=str(tmp_path / "work"), extra_server_kw={"faults": faults}), view)
    with pytest.raises(ApplyError, match=r"m.yaml:\d+: Pod default/p1: the API server failed: 500"):
        await up.run()
    assert view.started_up is None and up.runner is None  # the scheduler never started
    # the server is gone: its port refuses connections
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", up.server.port)


@pytest.mark.asyncio
async def test_lost_lease_stops_up_with_exit_1(tmp_path) -> None:
    cfg_file = tmp_path / "sched.yaml"
    cfg_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                        "leaderElection:\n  leaseDuration: 2s\n  renewDeadline: 1s\n  retryPeriod: 200ms\n")
    view = RecordingView()
    up = Up(UpOptions(objects=parse_manifest_text(MANIFESTS, "m.yaml"), config=load_config(str(cfg_file)),
                      config_given=True, work_dir=str(tmp_path / "work")), view)
    task = asyncio.create_task(up.run())
    await until(lambda: len(view.events) >= 2, "two pods bound")
    assert sorted(view.events) == [("bound", "default/p1"), ("bound", "default/p2")]
    up.server.faults.fail_writes("leases", fraction=1.0, code=500)
    code = await asyncio.wait_for(task, 30)
    assert code == 1 and view.finished_reason == "failed"


@pytest.mark.asyncio
async def test_until_idle_without_pending_pods_stops_at_once_and_releases_the_lease(tmp_path) -> None:
    view = RecordingView()
    objs = parse_manifest_text(MANIFESTS.split("---\napiVersion: v1\nkind: Pod")[0], "m.yaml")
    up = Up(UpOptions(objects=objs, config=load_config(None), until_idle=True, quiet_s=0.2,
                      work_dir=str(tmp_path / "work")), view)
    assert await asyncio.wait_for(up.run(), 30) == 0
    assert view.finished_reason == "idle"
    elector = up.runner.elector
    assert elector is not None and not elector.is_leader()
    assert elector.leader == ""  # the lease was handed back (empty holder), not left to expire


@pytest.mark.asyncio
async def test_watches_cut_and_compacted_while_scheduling_each_pod_is_reported_bound_once(tmp_path) -> None:
    """The board's watch (and the scheduler's) are closed every 0.2 s and the store compacted:
    the reflectors resume or relist, and every pod is still reported bound exactly once."""
    from kubesched.apiserver.faults import Faults

    nodes = "".join(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
                    f"status: {{capacity: {{cpu: '2', memory: 4Gi, pods: '110'}}}}\n" for i in range(4))
    pods = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i:02d}}}\n"
                   f"spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: 500m}}}}}}]}}\n"
                   for i in range(20))
    faults = Faults()
    faults.watch_close_every = 0.2
    view = RecordingView()
    up = Up(UpOptions(objects=parse_manifest_text(nodes + pods, "m.yaml"), config=load_config(None),
                      until_idle=True, quiet_s=0.5, work_dir=str(tmp_path / "work"),
                      extra_server_kw={"faults": faults}), view)
    task = asyncio.create_task(up.run())
    await until(lambda: up.server is not None and up.runner is not None, "server and scheduler started")
    for _ in range(5):
        up.server.faults.compact()
        await asyncio.sleep(0.1)
    assert await asyncio.wait_for(task, 60) == 0
    bound = [k for e, k in view.events if e == "bound"]
    # 4 nodes x 2 CPUs, 500m each: 16 fit; the other 4 stay pending with upstream's message
    assert len(bound) == 16 and len(set(bound)) == 16, view.events
    assert view.finished_reason == "idle"
    assert len(up.board.pending()) == 4
    assert all(r.message.startswith("0/4 nodes are available: 4 Insufficient cpu.") for r in up.board.pending())


@pytest.mark.asyncio
async def test_stop_while_applying_ends_cleanly_without_starting_the_scheduler(tmp_path) -> None:
    from kubesched.apiserver.faults import Faults

    faults = Faults()
    faults.latency = 0.2  # every request is slow: apply takes a while
    view = RecordingView()
    up = Up(UpOptions(objects=parse_manifest_text(MANIFESTS, "m.yaml"), config=load_config(None),
                      work_dir=str(tmp_path / "work"), extra_server_kw={"faults": faults}), view)
    task = asyncio.create_task(up.run())
    await asyncio.sleep(0.5)
    up.request_stop()
    assert await asyncio.wait_for(task, 30) == 0
    assert up.runner is None and view.started_up is None and view.finished_reason == "stopped"
