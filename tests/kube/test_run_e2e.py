"""End to end: ``kubesched run`` as a subprocess against the box over real HTTP (127.0.0.1,
ephemeral ports): binds pods, reports an unschedulable pod as upstream does, exits 0 on SIGTERM,
and with leader election: one leader of two replicas, fail-over when the leader is killed, exit 1
when the lease cannot be renewed."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config

pytestmark = pytest.mark.asyncio

SRC = str(Path(__file__).resolve().parents[2] / "src")
LE_FAST = ["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
           "--leader-elect-retry-period=500ms"]
WAIT = 60.0
"""Bound on every wait for a condition: generous for a loaded 2-core machine (a subprocess starts,
syncs its informers, binds); each wait ends as soon as its condition holds."""


async def spawn(kubeconfig: str, log: Path, *args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fh = open(log, "ab")  # noqa: SIM115, ASYNC230 - the child process owns it
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", kubeconfig, "--secure-port=0",
        "--bind-address=127.0.0.1", "-v=2", *args, stdout=fh, stderr=fh, env=env)


async def finish(proc: asyncio.subprocess.Process, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
    if proc.returncode is None:
        proc.send_signal(sig)
    return await asyncio.wait_for(proc.wait(), timeout)


async def pods_by_name(api: APIClient) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in (await api.list("/api/v1/namespaces/default/pods"))["items"]}


async def bound(api: APIClient, names: list[str]) -> bool:
    pods = await pods_by_name(api)
    return all(pods.get(n, {}).get("spec", {}).get("nodeName") for n in names)


async def test_run_binds_and_reports_unschedulable(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data"):
        api = APIClient(load_config(kc, qps=-1))
        for i in range(3):
            await api.create("/api/v1/nodes", node_obj(f"n{i}", cpu="2"))
        for i in range(6):
            await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
        await api.create("/api/v1/namespaces/default/pods", pod_obj("huge", cpu="64"))
        await api.create("/api/v1/namespaces/default/pods", pod_obj("other", scheduler="someone-else"))
        proc = await spawn(kc, tmp_path / "log", "--leader-elect=false")
        try:
            names = [f"p{i}" for i in range(6)]
            await eventually(lambda: bound(api, names), timeout=WAIT, what="pods bound")
            # created after the start: followed through the watch
            await api.create("/api/v1/namespaces/default/pods", pod_obj("late"))
            await eventually(lambda: bound(api, ["late"]), timeout=WAIT, what="late pod bound")

            async def huge_reported() -> bool:
                conds = (await pods_by_name(api))["huge"]["status"].get("conditions") or []
                return any(c["type"] == "PodScheduled" for c in conds)

            await eventually(huge_reported, timeout=WAIT, what="PodScheduled=False on the unschedulable pod")
            pods = await pods_by_name(api)
            cond = next(c for c in pods["huge"]["status"]["conditions"] if c["type"] == "PodScheduled")
            msg = ("0/3 nodes are available: 3 Insufficient cpu. preemption: "
                   "0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
            assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
            assert "nodeName" not in pods["other"]["spec"] and not pods["other"]["status"].get("conditions")

            async def events() -> list[dict[str, Any]]:
                return (await api.list("/apis/events.k8s.io/v1/namespaces/default/events"))["items"]

            async def all_events() -> bool:
                # the recorder writes events asynchronously and concurrently: huge's FailedScheduling
                # may land before some Scheduled events (binding cycles run in parallel)
                evs = await events()
                return (any(e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "huge" for e in evs)
                        and {e["regarding"]["name"] for e in evs if e["reason"] == "Scheduled"} >= set(names))

            await eventually(all_events, timeout=WAIT, what="FailedScheduling and Scheduled events")
            evs = await events()
            failed = next(e for e in evs if e["reason"] == "FailedScheduling")
            assert failed["type"] == "Warning" and failed["note"] == msg and failed["action"] == "Scheduling"
            assert failed["reportingController"] == "default-scheduler"
            sched = [e for e in evs if e["reason"] == "Scheduled"]
            assert {e["regarding"]["name"] for e in sched} >= set(names)
            p0 = next(e for e in sched if e["regarding"]["name"] == "p0")
            assert p0["note"] == f"Successfully assigned default/p0 to {pods['p0']['spec']['nodeName']}"
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- kubesched run log (tail) ---\n"
                                 + "\n".join((tmp_path / "log").read_text().splitlines()[-30:])) from None
        finally:
            code = await finish(proc)
            await api.close()
        assert code == 0
        log = (tmp_path / "log").read_text()
        assert '"Successfully bound pod to node" pod="default/p0"' in log
        assert '"Unable to schedule pod; no fit; waiting" pod="default/huge"' in log


async def lease(api: APIClient) -> dict[str, Any]:
    try:
        return await api.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
    except Exception:  # noqa: BLE001 - not created yet
        return {}


async def test_leader_election_failover_and_release(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data"):
        api = APIClient(load_config(kc, qps=-1))
        for i in range(3):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        a = await spawn(kc, tmp_path / "a.log", *LE_FAST)
        await eventually(lambda: _holder(api), timeout=WAIT, what="a leader")
        b = await spawn(kc, tmp_path / "b.log", *LE_FAST)
        procs = [a, b]
        try:
            first = (await lease(api))["spec"]["holderIdentity"]
            for i in range(5):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"x{i}"))
            await eventually(lambda: bound(api, [f"x{i}" for i in range(5)]), timeout=WAIT, what="bound by the leader")
            # b is synced and standing by (warm cache)
            await eventually(lambda: '"Caches are synced"' in (tmp_path / "b.log").read_text(), timeout=WAIT,
                             what="b synced")
            # kill the leader without letting it release: b takes over once the lease expires
            leader, standby = (a, b) if "Started leading" in (tmp_path / "a.log").read_text() else (b, a)
            leader.kill()
            await leader.wait()
            await eventually(lambda: _holder(api, not_=first), timeout=WAIT, what="fail-over")
            for i in range(5):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"y{i}"))
            await eventually(lambda: bound(api, [f"y{i}" for i in range(5)]), timeout=WAIT,
                             what="bound by the new leader")
            le = (await lease(api))["spec"]
            assert le["leaseTransitions"] >= 1
            # SIGTERM: the leader releases the lease (empty holder) and exits 0
            assert await finish(standby) == 0
            await eventually(lambda: _released(api), timeout=WAIT, what="lease released")
        finally:
            for p in procs:
                if p.returncode is None:
                    p.kill()
                    await p.wait()
            await api.close()


async def _holder(api: APIClient, not_: str | None = None) -> bool:
    h = ((await lease(api)).get("spec") or {}).get("holderIdentity")
    return bool(h) and h != not_


async def _released(api: APIClient) -> bool:
    return not ((await lease(api)).get("spec") or {}).get("holderIdentity")


async def test_lost_lease_exits_1(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(kc, qps=-1))
        proc = await spawn(kc, tmp_path / "log", *LE_FAST)
        try:
            await eventually(lambda: _holder(api), timeout=WAIT, what="leader")
            await eventually(lambda: "Started leading" in (tmp_path / "log").read_text(), timeout=WAIT)
            box.faults.pause()  # renewals hang past the renew deadline
            code = await asyncio.wait_for(proc.wait(), WAIT)
        finally:
            box.faults.resume()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await api.close()
        assert code == 1
        assert "Leaderelection lost" in (tmp_path / "log").read_text()
