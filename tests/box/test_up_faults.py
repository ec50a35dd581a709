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
    for _ in range(200):
        if len(view.events) == 2:
            break
        await asyncio.sleep(0.05)
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
