"""Preemption live, over real HTTP against the box: the victim gets ``DisruptionTarget`` and is
deleted, the preemptor is nominated (``status.nominatedNodeName``) and then bound, a
``Preempted`` event is recorded (upstream ``framework/preemption/executor.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj
from test_run_faults import make_runner, start, stop

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config

pytestmark = pytest.mark.asyncio


async def test_preemption_writes(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(kc, qps=-1))
        await api.create("/api/v1/nodes", node_obj("n0", cpu="2"))
        victim = pod_obj("victim", cpu="1500m", node="n0")
        victim["spec"].update({"terminationGracePeriodSeconds": 0})  # priority 0 (no PriorityClass)
        await api.create("/apis/scheduling.k8s.io/v1/priorityclasses",
                         {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": "high"}, "value": 1000})
        await api.create("/api/v1/namespaces/default/pods", victim)
        runner = make_runner(kc)
        task = await start(runner)
        seen: list[dict[str, Any]] = []
        rv = (await api.list("/api/v1/pods"))["metadata"]["resourceVersion"]

        async def watch() -> None:
            async for ev in api.stream_watch("/api/v1/pods", {"resourceVersion": rv}):
                seen.append(ev)

        import asyncio

        wt = asyncio.create_task(watch())
        try:
            boss = pod_obj("boss", cpu="1500m")
            boss["spec"]["priorityClassName"] = "high"  # admission resolves spec.priority = 1000
            await api.create("/api/v1/namespaces/default/pods", boss)

            async def boss_bound() -> bool:
                p = await api.get("/api/v1/namespaces/default/pods/boss")
                return p["spec"].get("nodeName") == "n0"

            await eventually(boss_bound, timeout=60, what="preemptor bound")
            victim_states = [e["object"] for e in seen if e["object"]["metadata"]["name"] == "victim"]
            conds = [c for o in victim_states for c in (o.get("status") or {}).get("conditions") or []
                     if c["type"] == "DisruptionTarget"]
            assert conds and conds[0]["status"] == "True" and conds[0]["reason"] == "PreemptionByScheduler"
            assert conds[0]["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
            assert any(e["type"] == "DELETED" and e["object"]["metadata"]["name"] == "victim" for e in seen)
            boss_states = [e["object"] for e in seen if e["object"]["metadata"]["name"] == "boss"]
            assert any((o.get("status") or {}).get("nominatedNodeName") == "n0" for o in boss_states)

            async def preempted_event() -> bool:
                evs = (await api.list("/apis/events.k8s.io/v1/namespaces/default/events"))["items"]
                return any(e["reason"] == "Preempted" and e["regarding"]["name"] == "victim" for e in evs)

            await eventually(preempted_event, timeout=60, what="Preempted event")
            assert runner.scheduler.cache.assumed_count() == 0
        finally:
            wt.cancel()
            await stop(runner, task)
            await api.close()
            assert box is not None
