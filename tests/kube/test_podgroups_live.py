"""The workload API live: with GenericWorkload ``kubesched run`` watches
``scheduling.k8s.io/v1beta1`` podgroups (raw dicts in the informer's lister) and feeds
``Scheduler.on_object_event("PodGroup", old, new)``; ``LiveClusterClient.patch_pod_group_condition``
patches ``podgroups/{name}/status`` as upstream's ``updatePodGroupCondition`` (never True → False).

The end-to-end gang tests at the bottom (issue 15's live proof: a gang that cannot fit binds
nothing, a new node binds the whole group, a kill -9 mid-group leaves no partial group after a
restart) run the pod-group engine (the pod-group cycle, GangScheduling)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.features import FeatureGate
from kubesched.kube.adapter import EventHandlers, LiveClusterClient, plugin_kinds
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.informer import InformerFactory, InformerLister

pytestmark = pytest.mark.asyncio

ON = FeatureGate().with_overrides(GenericWorkload=True)
PGS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
WAIT = 60.0


def pg_obj(name: str = "pg1", min_count: int = 2) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


class _Sched:
    """What EventHandlers needs of a Scheduler, recording the workload events."""

    def __init__(self, features: FeatureGate) -> None:
        self.features = features
        self.profiles: dict[str, Any] = {}
        self.events: list[tuple[str, Any, Any]] = []

    def on_object_event(self, kind: str, old: Any, new: Any) -> None:
        self.events.append((kind, old, new))


async def test_watched_only_with_generic_workload() -> None:
    assert plugin_kinds(_Sched(FeatureGate())) == []
    assert plugin_kinds(_Sched(ON)) == ["PodGroup"]
    both = ON.with_overrides(TopologyAwareWorkloadScheduling=True, CompositePodGroup=True)
    assert plugin_kinds(_Sched(both)) == ["PodGroup", "CompositePodGroup"]


async def test_informer_feeds_on_object_event(tmp_path: Path) -> None:
    async with start_server(tmp_path / "kc", features=ON) as srv:
        api = APIClient(load_config(str(srv.kubeconfig_path), qps=-1))
        try:
            await api.create(PGS, pg_obj("early"))
            sched = _Sched(ON)
            factory = InformerFactory(api)
            handlers = EventHandlers(sched)
            for kind in plugin_kinds(sched):
                factory.informer(kind).add_event_handler(handlers.kind_handler(kind))
            assert await factory.probe_served() == []
            factory.start()
            assert await factory.wait_for_cache_sync(WAIT)
            lister = InformerLister(factory)
            await api.create(PGS, pg_obj("late"))
            await api.patch(f"{PGS}/late", {"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}})
            await eventually(lambda: len(sched.events) >= 3, timeout=WAIT, what="add, add, update")
            adds = [new["metadata"]["name"] for kind, old, new in sched.events if old is None]
            assert adds == ["early", "late"]
            kind, old, new = sched.events[2]
            assert kind == "PodGroup" and old["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
            assert new["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
            got = lister.get("PodGroup", "default", "late")
            assert isinstance(got, dict) and got["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
            # deletion: the protection finalizer goes (no controller here), then the object
            await api.delete(f"{PGS}/early")
            await api.patch(f"{PGS}/early", {"metadata": {"finalizers": None}},
                            content_type="application/merge-patch+json")
            await eventually(lambda: any(n is None for _, _, n in sched.events), timeout=WAIT, what="delete")
            assert lister.get("PodGroup", "default", "early") is None
            await factory.stop()
        finally:
            await api.close()


async def test_not_served_informer_is_disabled(tmp_path: Path) -> None:
    """A server without the workload API (GenericWorkload off there): the informer is skipped."""
    async with start_server(tmp_path / "kc") as srv:
        api = APIClient(load_config(str(srv.kubeconfig_path), qps=-1))
        try:
            factory = InformerFactory(api)
            factory.informer("PodGroup")
            assert await factory.probe_served() == ["PodGroup"]
        finally:
            await api.close()


async def test_patch_pod_group_condition(tmp_path: Path) -> None:
    async with start_server(tmp_path / "kc", features=ON) as srv:
        api = APIClient(load_config(str(srv.kubeconfig_path), qps=-1))
        try:
            created = await api.create(PGS, pg_obj())
            live = LiveClusterClient(api, features=ON)
            unsched = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
                       "message": "0/3 nodes are available: 3 Insufficient cpu."}
            live.patch_pod_group_condition(created, unsched)

            async def condition() -> dict[str, Any] | None:
                got = await api.get(f"{PGS}/pg1")
                return next((c for c in (got.get("status") or {}).get("conditions") or []
                             if c["type"] == "PodGroupInitiallyScheduled"), None)

            async def has(status: str) -> bool:
                c = await condition()
                return c is not None and c["status"] == status

            await eventually(lambda: has("False"), timeout=WAIT, what="Unschedulable condition")
            c = await condition()
            assert c is not None and (c["reason"], c["message"]) == ("Unschedulable", unsched["message"])
            assert c["lastTransitionTime"]
            current = await api.get(f"{PGS}/pg1")
            live.patch_pod_group_condition(current, {"type": "PodGroupInitiallyScheduled", "status": "True",
                                                     "reason": "Scheduled", "message": ""})
            await eventually(lambda: has("True"), timeout=WAIT, what="Scheduled condition")
            scheduled = await api.get(f"{PGS}/pg1")
            live.patch_pod_group_condition(scheduled, unsched)  # never back to False
            assert await live.writer.flush(10)
            assert (await condition() or {}).get("status") == "True"
        finally:
            await api.close()


# ───────────────────────────── end to end (the pod-group engine) ─────────────────────────────


def member(name: str, group: str, cpu: str) -> dict[str, Any]:
    pod = pod_obj(name, cpu=cpu)
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


async def _bound(api: APIClient, names: list[str]) -> list[str]:
    pods = (await api.list("/api/v1/namespaces/default/pods"))["items"]
    return [p["metadata"]["name"] for p in pods if p["metadata"]["name"] in names and p["spec"].get("nodeName")]


async def test_gang_that_cannot_fit_binds_nothing_then_a_node_binds_all(tmp_path: Path) -> None:
    from test_run_e2e import finish, spawn

    kc = str(tmp_path / "kc")
    async with start_server(kc, features=ON):
        api = APIClient(load_config(kc, qps=-1))
        proc = None
        try:
            for i in range(3):
                await api.create("/api/v1/nodes", node_obj(f"n{i}", cpu="2"))
            await api.create(PGS, pg_obj("train", min_count=4))
            names = [f"w{i}" for i in range(4)]
            for n in names:
                await api.create("/api/v1/namespaces/default/pods", member(n, "train", "2"))
            proc = await spawn(kc, tmp_path / "log", "--leader-elect=false", "--feature-gates=GenericWorkload=true")

            async def unschedulable() -> bool:
                st = (await api.get(f"{PGS}/train")).get("status") or {}
                return any(c["type"] == "PodGroupInitiallyScheduled" and c["status"] == "False"
                           for c in st.get("conditions") or [])

            await eventually(unschedulable, timeout=WAIT, what="PodGroup Unschedulable")
            await asyncio.sleep(2)
            assert await _bound(api, names) == []  # all or nothing: nothing
            await api.create("/api/v1/nodes", node_obj("n3", cpu="2"))
            await eventually(lambda: _all(api, names), timeout=WAIT, what="the whole gang bound")
            st = (await api.get(f"{PGS}/train"))["status"]
            assert any(c["type"] == "PodGroupInitiallyScheduled" and c["status"] == "True" for c in st["conditions"])
        finally:
            if proc is not None:
                await finish(proc)
            await api.close()


async def _all(api: APIClient, names: list[str]) -> bool:
    return len(await _bound(api, names)) == len(names)


async def test_kill_9_mid_group_leaves_no_partial_group(tmp_path: Path) -> None:
    """kill -9 of ``kubesched run`` while a gang's members are being committed (Permit barrier,
    bindings in flight), then a restart: the group ends all bound or none bound, never fewer than
    minCount members bound."""
    from test_run_e2e import finish, spawn

    kc = str(tmp_path / "kc")
    async with start_server(kc, features=ON):
        api = APIClient(load_config(kc, qps=-1))
        proc = None
        try:
            for i in range(8):
                await api.create("/api/v1/nodes", node_obj(f"n{i}", cpu="2"))
            await api.create(PGS, pg_obj("train", min_count=8))
            names = [f"w{i}" for i in range(8)]
            for n in names:
                await api.create("/api/v1/namespaces/default/pods", member(n, "train", "2"))
            proc = await spawn(kc, tmp_path / "log", "--leader-elect=false", "--feature-gates=GenericWorkload=true")
            await eventually(lambda: _some(api, names), timeout=WAIT, what="the first binding")
            await finish(proc, signal.SIGKILL)
            proc = await spawn(kc, tmp_path / "log2", "--leader-elect=false", "--feature-gates=GenericWorkload=true")
            await eventually(lambda: _all(api, names), timeout=WAIT, what="the whole gang bound after restart")
        finally:
            if proc is not None:
                await finish(proc)
            await api.close()


async def _some(api: APIClient, names: list[str]) -> bool:
    return bool(await _bound(api, names))
