"""``kubesched run`` with a scheduler extender, in-process against the box over real HTTP: the
scheduling cycle runs on a worker thread, so while an extender call blocks the cycle the
informers keep watching (events are held at the loop's gate and applied after the cycle), and
every pod ends up bound once, on a node the extender accepted, preferring the one it scores."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.config import decode_config
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.runner import Runner, RunOptions
from kubesched.testing.extender_server import ExtenderServer

pytestmark = pytest.mark.asyncio


def _filter_prioritize(url: str) -> dict[str, Any]:
    return {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 10,
            "nodeCacheCapable": True, "httpTimeout": "30s"}


@contextlib.asynccontextmanager
async def _live(tmp_path: Path, nodes: int, extender: dict[str, Any],
                **config: Any) -> AsyncIterator[tuple[APIClient, Runner]]:
    """The box with ``nodes`` nodes ``n<i>`` and ``kubesched run`` against it with ``extender``
    (``config``: more KubeSchedulerConfiguration fields); yields ``(api, runner)`` once the runner
    has synced, and on exit requires the runner to stop cleanly (exit code 0)."""
    kc = str(tmp_path / "kc")
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data"):
        api = APIClient(load_config(kc, qps=-1))
        for i in range(nodes):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             **config, "extenders": [extender]})
        runner = Runner(RunOptions(config=cfg, kubeconfig=kc, leader_elect=False, secure_port=0,
                                   bind_address="127.0.0.1", kube_api_qps=-1, shutdown_grace_s=5.0))
        task = asyncio.create_task(runner.run())
        try:
            await eventually(lambda: runner.synced or task.done(), what="runner synced")
            yield api, runner
        finally:
            runner.request_stop()
            assert await asyncio.wait_for(task, 30) == 0
            await api.close()


async def _all_bound(api: APIClient, count: int) -> bool:
    """``count`` pods in ``default``, every one with a node."""
    items = (await api.list("/api/v1/namespaces/default/pods"))["items"]
    return len(items) == count and all(p["spec"].get("nodeName") for p in items)


async def test_slow_extender_does_not_freeze_informers(tmp_path) -> None:
    srv = ExtenderServer(filter=lambda pod, names: ({n for n in names if n != "n0"}, {"n0": "n0 is reserved"}, {}),
                         prioritize=lambda pod, names: {"n2": 10} if "n2" in names else {})
    srv.holds["filter"] = hold = threading.Event()
    with srv:
        async with _live(tmp_path, 3, _filter_prioritize(srv.url),
                         podInitialBackoffSeconds=1, podMaxBackoffSeconds=1) as (api, runner):
            assert runner.loop.threaded
            await api.create("/api/v1/namespaces/default/pods", pod_obj("p0"))
            await eventually(lambda: len(srv.calls("filter")) == 1, what="the cycle waits on the extender")
            # the cycle is blocked in the extender call: the loop and the informers go on
            await api.create("/api/v1/namespaces/default/pods", pod_obj("p1"))
            pods = runner.factory.informer("Pod").store
            await eventually(lambda: pods.get("default/p1") is not None, what="informer saw p1")
            await eventually(lambda: runner.loop.gate.deferred_total >= 1, what="event held at the gate")
            assert runner.loop.gate.busy  # still inside the cycle: the event waits for its end
            hold.set()
            await eventually(lambda: _all_bound(api, 2), timeout=20, what="both pods bound")
            items = (await api.list("/api/v1/namespaces/default/pods"))["items"]
            assert {p["metadata"]["name"]: p["spec"]["nodeName"] for p in items} == {"p0": "n2", "p1": "n2"}
            assert runner.scheduler.cache.assumed_count() == 0
            assert len(srv.calls("filter")) == 2  # one cycle each, nothing scheduled twice


async def test_extender_faults_live_every_pod_bound_once(tmp_path) -> None:
    """The filter verb answers 500 for a while, then times out once: those attempts are
    SchedulerErrors, the pods go back to the queue, and once the extender recovers every pod is
    bound exactly once (nothing lost, nothing left assumed)."""
    srv = ExtenderServer(filter=lambda pod, names: (set(names), {}, {}))
    srv.faults["filter"] = 500
    with srv:
        async with _live(tmp_path, 3, _filter_prioritize(srv.url),
                         podInitialBackoffSeconds=1, podMaxBackoffSeconds=1) as (api, runner):
            for i in range(6):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            await eventually(lambda: runner.scheduler.stats.attempts["error"] >= 6, timeout=20,
                             what="attempts failed on the extender")
            srv.faults.clear()
            await eventually(lambda: _all_bound(api, 6), timeout=30, what="all pods bound")
            sched = runner.scheduler
            assert sched.stats.bound == 6  # once each: the server refuses a second binding anyway
            assert runner.cluster_client.binds == 6 and runner.cluster_client.bind_errors == 0
            assert sched.cache.assumed_count() == 0
            items = (await api.list("/api/v1/namespaces/default/pods"))["items"]
            for p in items:
                conds = {c["type"]: c for c in p["status"].get("conditions", [])}
                assert conds["PodScheduled"]["status"] == "True"


async def test_binder_extender_binds_through_the_api_live(tmp_path) -> None:
    """An extender with ``bindVerb`` binds the pods (here by POSTing the binding to the API server
    itself, as a real one would): the scheduler's own binder is never used, the binding call runs
    off the event loop, and the watch confirms each assumed pod."""
    kc = str(tmp_path / "kc")

    async def bind_fn(ns: str, name: str, uid: str, node: str) -> str:
        client = APIClient(load_config(kc, qps=-1))  # on the extender's own event loop
        try:
            await client.bind(ns, name, uid, node)
        finally:
            await client.close()
        return ""

    srv = ExtenderServer()
    srv.bind_fn = bind_fn
    with srv:
        async with _live(tmp_path, 2, {"urlPrefix": srv.url, "bindVerb": "bind"}) as (api, runner):
            for i in range(4):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            await eventually(lambda: _all_bound(api, 4), timeout=30, what="all pods bound by the extender")
            await eventually(lambda: runner.scheduler.cache.assumed_count() == 0, what="assumed pods confirmed")
            await eventually(lambda: len(srv.bound) == 4, what="the extender answered every bind")
            assert sorted(b[1] for b in srv.bound) == ["p0", "p1", "p2", "p3"]
            assert len(srv.calls("bind")) == 4  # once each
            assert runner.cluster_client.binds == 0  # DefaultBinder never ran
            # the binding tasks count a bind after PostBind, which can trail the API's view
            await eventually(lambda: runner.scheduler.stats.bound == 4, what="binding cycles finished")


async def test_binder_extender_that_binds_but_answers_too_late(tmp_path) -> None:
    """Upstream's case in handleSchedulingFailure: the extender bound the pod but its answer came
    after ``httpTimeout``. The attempt fails, yet the pod is not bound a second time: the
    informer shows it assigned, so it is not requeued, and the cache ends in agreement."""
    kc = str(tmp_path / "kc")

    async def bind_fn(ns: str, name: str, uid: str, node: str) -> str:
        client = APIClient(load_config(kc, qps=-1))
        try:
            await client.bind(ns, name, uid, node)
        finally:
            await client.close()
        await asyncio.sleep(1.5)  # longer than httpTimeout
        return ""

    srv = ExtenderServer()
    srv.bind_fn = bind_fn
    with srv:
        async with _live(tmp_path, 2, {"urlPrefix": srv.url, "bindVerb": "bind", "httpTimeout": "300ms"},
                         podInitialBackoffSeconds=1, podMaxBackoffSeconds=1) as (api, runner):
            for i in range(3):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            await eventually(lambda: runner.scheduler.stats.attempts["error"] >= 3, timeout=20,
                             what="the late answers failed the attempts")

            async def settled() -> bool:
                items = (await api.list("/api/v1/namespaces/default/pods"))["items"]
                cache = runner.scheduler.cache
                return (len(items) == 3 and all(p["spec"].get("nodeName") for p in items)
                        and cache.assumed_count() == 0
                        and all(cache.pod_states.get(f"default/{p['metadata']['name']}") is not None
                                for p in items))

            await eventually(settled, timeout=20, what="bound once, cache in agreement")
            await asyncio.sleep(1.5)  # a wrongly requeued pod would be retried within its 1 s backoff
            assert len(srv.calls("bind")) == 3  # never a second binding
            assert list(runner.scheduler.queue.pending()) == []
