"""``kubesched run`` in-process against the box over real HTTP, with faults injected: bind
failures (500, 409, timeouts after the server bound), an assumed pod deleted while it binds, the
API server restarted mid-run. After each run: every pod bound exactly once (the server refuses
a second bind and the scheduler's cache agrees with the server on every pod's node), none
lost, none left assumed, nothing left in the queue."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.apiserver.resources import RESOURCES
from kubesched.config import decode_config
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.runner import Runner, RunOptions

pytestmark = pytest.mark.asyncio

PODS_INFO = next(r for r in RESOURCES if r.plural == "pods")


def make_runner(kubeconfig: str, *, request_timeout_s: float = 60.0) -> Runner:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1})
    return Runner(RunOptions(config=cfg, kubeconfig=kubeconfig, leader_elect=False, secure_port=0,
                             bind_address="127.0.0.1", kube_api_qps=-1, request_timeout_s=request_timeout_s,
                             shutdown_grace_s=5.0))


async def start(runner: Runner) -> asyncio.Task[int]:
    task = asyncio.create_task(runner.run())
    await eventually(lambda: runner.synced or task.done(), what="runner synced")
    assert not task.done(), "runner exited during start-up"
    return task


async def stop(runner: Runner, task: asyncio.Task[int]) -> None:
    runner.request_stop()
    assert await asyncio.wait_for(task, 30) == 0


async def server_pods(api: APIClient) -> list[dict[str, Any]]:
    return (await api.list("/api/v1/pods"))["items"]


async def assert_all_bound_once(api: APIClient, runner: Runner, n: int, *, scheduled_condition: bool = True) -> None:
    async def converged() -> bool:
        pods = await server_pods(api)
        if len(pods) != n or not all(p["spec"].get("nodeName") for p in pods):
            return False
        cache = runner.scheduler.cache
        states = cache.pod_states
        return all(states.get(f"{p['metadata']['namespace']}/{p['metadata']['name']}") is not None
                   and states[f"{p['metadata']['namespace']}/{p['metadata']['name']}"].node_name
                   == p["spec"]["nodeName"] for p in pods) and cache.assumed_count() == 0

    await eventually(converged, timeout=60, what="all pods bound and the cache in agreement")
    sched = runner.scheduler
    assert sched.cache.assumed_count() == 0
    assert list(sched.queue.pending()) == []
    assert len(sched.cache.pod_states) == n
    # PodScheduled=True on every pod: set by the successful binding, never overwritten
    for p in await server_pods(api) if scheduled_condition else ():
        conds = {c["type"]: c for c in p["status"].get("conditions", [])}
        assert conds["PodScheduled"]["status"] == "True", p["metadata"]["name"]


@pytest.mark.parametrize("code", [500, 409])
async def test_bind_failures_injected(tmp_path, code: int) -> None:
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(str(tmp_path / "kc"), qps=-1))
        for i in range(4):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        runner = make_runner(str(tmp_path / "kc"))
        task = await start(runner)
        try:
            box.faults.fail_writes("pods", subresource="binding", fraction=0.4, code=code, verbs=("create",))
            for i in range(30):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            await eventually(lambda: box.faults.injected >= 5, timeout=60, what="faults injected")
            await asyncio.sleep(0.5)
            box.faults.clear()
            await assert_all_bound_once(api, runner, 30)
            cc = runner.cluster_client
            attempts = runner.scheduler.stats.attempts
            # every pod got exactly one successful binding POST; the failed ones were requeued
            assert cc.binds == 30
            if code == 409 or not runner.scheduler.features.at_least(1, 37):
                assert cc.bind_errors == box.faults.injected
            else:  # v1.37 util.BindPod retries a 500 (up to 4 tries) before the binding fails
                assert cc.bind_errors <= box.faults.injected // 4
            assert attempts["error"] == cc.bind_errors
        finally:
            await stop(runner, task)
            await api.close()


async def test_bind_timeouts_after_the_server_bound(tmp_path) -> None:
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(str(tmp_path / "kc"), qps=-1))
        for i in range(3):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        runner = make_runner(str(tmp_path / "kc"), request_timeout_s=0.3)
        task = await start(runner)
        try:
            # the server answers late: the client gives up (timeout) but the server binds anyway
            # (the body was read with the request, as kube-apiserver's handler reads it). Set before
            # the pods exist: set after, a fast scheduler had bound all but one of them already
            box.faults.latency = 0.6
            for i in range(10):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            await eventually(lambda: runner.cluster_client.bind_errors >= 3, timeout=60, what="bind timeouts")
            box.faults.latency = 0.0
            # not PodScheduled=True: the failure's PodScheduled=False patch, sent after the timed-out
            # bind, reaches the late server after its bind (upstream's handleSchedulingFailure sends
            # the same patch, so kube-apiserver ends the same way)
            await assert_all_bound_once(api, runner, 10, scheduled_condition=False)
        finally:
            box.faults.clear()
            await stop(runner, task)
            await api.close()


async def test_assumed_pod_deleted_while_binding_is_forgotten(tmp_path) -> None:
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(str(tmp_path / "kc"), qps=-1))
        await api.create("/api/v1/nodes", node_obj("n0"))
        runner = make_runner(str(tmp_path / "kc"))
        task = await start(runner)
        try:
            box.faults.pause()  # held: the binding POST (the pod stays assumed)
            # created behind the API's back: the open pod watch still delivers it
            box.store.create(PODS_INFO.key, "default", "doomed", _server_pod("doomed"))
            cache = runner.scheduler.cache
            await eventually(lambda: cache.is_assumed("default/doomed"), what="pod assumed")
            box.delete_object(PODS_INFO, "default", "doomed", {"gracePeriodSeconds": 0})
            await eventually(lambda: not cache.is_assumed("default/doomed"), what="assumed pod forgotten")
            box.faults.resume()
            await eventually(lambda: not runner.loop.binding_tasks, what="binding cycle ended")
            assert cache.assumed_count() == 0 and "default/doomed" not in cache.pod_states
            assert list(runner.scheduler.queue.pending()) == []
            assert runner.cluster_client.binds == 0
            # the node's capacity is free again: a new pod binds there
            await api.create("/api/v1/namespaces/default/pods", pod_obj("next", cpu="3900m"))
            await assert_all_bound_once(api, runner, 1)
        finally:
            box.faults.clear()
            await stop(runner, task)
            await api.close()


def _server_pod(name: str) -> dict[str, Any]:
    import uuid

    obj = pod_obj(name, cpu="3900m")
    obj["metadata"].update({"uid": str(uuid.uuid4()), "creationTimestamp": "2026-01-01T00:00:00Z"})
    obj["status"] = {"phase": "Pending"}
    obj["spec"]["schedulerName"] = "default-scheduler"
    return obj


async def test_api_server_restarted_mid_run(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    data = tmp_path / "data"
    async with start_server(kc, data_dir=data) as box:
        port, token = box.port, box.token
        api = APIClient(load_config(kc, qps=-1))
        for i in range(3):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        for i in range(5):
            await api.create("/api/v1/namespaces/default/pods", pod_obj(f"a{i}"))
        runner = make_runner(kc)
        task = await start(runner)
        await assert_all_bound_once(api, runner, 5)
        # pods created right before the server goes away: their bindings may be cut off
        for i in range(10):
            await api.create("/api/v1/namespaces/default/pods", pod_obj(f"c{i}"))
    # the server is gone: the scheduler keeps running, its reflectors back off
    await asyncio.sleep(1.5)
    assert not task.done()
    try:
        async with start_server(kc, data_dir=data, port=port, token=token):
            for i in range(5):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"b{i}"))
            await assert_all_bound_once(api, runner, 20)
            refl = runner.factory.informer("Pod").reflector
            assert refl.watch_errors >= 1
            await stop(runner, task)
    finally:
        if not task.done():
            task.cancel()
        await api.close()


async def test_update_of_an_assumed_pod_does_not_requeue_it(tmp_path) -> None:
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data") as box:
        api = APIClient(load_config(str(tmp_path / "kc"), qps=-1))
        await api.create("/api/v1/nodes", node_obj("n0"))
        runner = make_runner(str(tmp_path / "kc"))
        task = await start(runner)
        try:
            box.faults.pause()  # the binding POST is held: the pod stays assumed
            box.store.create(PODS_INFO.key, "default", "x", _server_pod("x"))
            sched = runner.scheduler
            await eventually(lambda: sched.cache.is_assumed("default/x"), what="pod assumed")
            obj = box.store.get(PODS_INFO.key, "default", "x").obj()
            obj["metadata"]["labels"] = {"changed": "while-binding"}
            box.store.update(PODS_INFO.key, "default", "x", obj)
            await eventually(lambda: runner.factory.informer("Pod").store.get("default/x").metadata.labels
                             == {"changed": "while-binding"}, what="update delivered")
            assert sched.queue.where("default/x") is None  # upstream: assumed pods ignore updates
            box.faults.resume()
            await assert_all_bound_once(api, runner, 1)
            assert runner.cluster_client.binds == 1 and runner.cluster_client.bind_errors == 0
        finally:
            box.faults.clear()
            await stop(runner, task)
            await api.close()


async def test_server_goes_down_while_scheduling_and_comes_back_on_the_same_data(tmp_path, caplog) -> None:
    """The server stops while pods are being created and bound and watches are being re-opened
    (every watch is cut every 50 ms, so rewatches arrive during the shutdown); it comes back on
    the same data directory and port. The stop is bounded, no client ever sees a
    resourceVersion the restarted server does not have (a stale server answering from a kept
    connection would show as 'Too large resource version'), every pod is bound exactly once."""
    kc, data = str(tmp_path / "kc"), tmp_path / "data"
    box = start_server(kc, data_dir=data)
    srv = await box.__aenter__()
    port, token = srv.port, srv.token
    api = APIClient(load_config(kc, qps=-1))
    runner = make_runner(kc, request_timeout_s=5.0)
    task: asyncio.Task[int] | None = None
    try:
        for i in range(3):
            await api.create("/api/v1/nodes", node_obj(f"n{i}"))
        task = await start(runner)
        srv.faults.watch_close_every = 0.05
        creating = asyncio.gather(*(api.create("/api/v1/namespaces/default/pods", pod_obj(f"a{i}"))
                                    for i in range(20)))
        await creating
        await eventually(lambda: runner.cluster_client.binds >= 5, timeout=60, what="some pods bound")
        rv_at_stop = srv.store.current_rev
        await asyncio.wait_for(box.__aexit__(None, None, None), 15)  # bounded stop, mid-flight
        assert not task.done()
        await asyncio.sleep(0.5)
        async with start_server(kc, data_dir=data, port=port, token=token) as srv2:
            assert srv2.store.current_rev >= rv_at_stop  # nothing acknowledged was lost
            for i in range(10):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(f"b{i}"))
            await assert_all_bound_once(api, runner, 30)
            cur = srv2.store.current_rev
            for inf in runner.factory.informers.values():
                rv = inf.reflector.last_sync_rv
                assert not rv or int(rv) <= cur, (inf.reflector.spec.kind, rv, cur)
            assert runner.cluster_client.binds == 30
            await stop(runner, task)
        assert "Too large resource version" not in caplog.text
    finally:
        if task is not None and not task.done():
            task.cancel()
        await api.close()


async def test_runner_turns_garbage_collection_back_on_once_synced(tmp_path) -> None:
    """`kubesched run` starts with the cyclic GC off (cli/run_cmd.py); the runner collects, freezes
    the caches' objects and turns it on again when the informers are synced."""
    import gc

    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data"):
        runner = make_runner(str(tmp_path / "kc"))
        gc.disable()
        try:
            task = await start(runner)
            assert gc.isenabled()
            await stop(runner, task)
        finally:
            gc.enable()
            gc.unfreeze()
