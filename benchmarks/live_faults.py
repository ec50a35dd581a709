"""Fault figures for ``kubesched run`` (issue 7 §7): one run with every fault at once.

The box API server and the scheduler run in this process (one event loop, real HTTP on
127.0.0.1). While pending pods are created, watches are dropped every ``--drop-every`` seconds,
the store is compacted behind a paused watch (410 Expired → relist), a share of the binding
POSTs fails with 500 or 409, and the server is stopped and restarted once on the same data
(its resourceVersion continues from where it stopped; no client may hold a newer one).
At the end it checks that every pod is bound exactly once, none is lost, none is left assumed,
the queue is empty and the scheduler's cache agrees with the server, then prints the counts.

    PYTHONPATH=src python benchmarks/live_faults.py --nodes 50 --pods 1000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kube"))

from livehelpers import node_obj, pod_obj

from kubesched.apiserver.resources import RESOURCES
from kubesched.apiserver.launcher import start_server
from kubesched.config import decode_config
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.runner import Runner, RunOptions

NODES = next(r for r in RESOURCES if r.plural == "nodes")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--drop-every", type=float, default=1.0)
    ap.add_argument("--bind-fail", type=float, default=0.15, help="fraction of binding POSTs failed (500 and 409)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-faults-"))
    kc, data = str(tmp / "kc"), tmp / "data"
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 2})
    runner = Runner(RunOptions(config=cfg, kubeconfig=kc, leader_elect=False, secure_port=0,
                               bind_address="127.0.0.1", kube_api_qps=-1, request_timeout_s=5))
    drops = compactions = injected = restarts = 0
    t0 = time.perf_counter()
    async with start_server(kc, data_dir=data) as box:
        port, token = box.port, box.token
        api = APIClient(load_config(kc, qps=-1))
        await asyncio.gather(*(api.create("/api/v1/nodes", node_obj(f"n{i}", cpu="64", pods="200"))
                               for i in range(args.nodes)))
        task = asyncio.create_task(runner.run())
        while not runner.synced:
            await asyncio.sleep(0.05)
        box.faults.fail_writes("pods", subresource="binding", fraction=args.bind_fail / 2, code=500, verbs=("create",))
        box.faults.fail_writes("pods", subresource="binding", fraction=args.bind_fail / 2, code=409, verbs=("create",))
        half = args.pods // 2
        creator = asyncio.create_task(_create(api, 0, half))
        while not creator.done():
            await asyncio.sleep(args.drop_every)
            drops += box.faults.close_watches()
            if drops % 3 == 0:  # a gap behind a paused watch, then compaction: 410 on the rewatch
                box.faults.pause()
                drops += box.faults.close_watches()
                await asyncio.sleep(0.1)  # the rewatches are sent, and held
                node = box.store.get(NODES.key, "", "n0").obj()  # a write they have not seen …
                node["metadata"].setdefault("labels", {})["touched"] = str(compactions)
                box.store.update(NODES.key, "", "n0", node)
                box.compact_now()  # … compacted away: they start from a compacted RV
                compactions += 1
                box.faults.resume()
        await creator
        injected += box.faults.injected
        box.faults.clear()
    rv_at_stop = box.store.current_rev  # the last revision the stopped server committed
    restarts += 1  # the server is gone; the scheduler keeps running
    await asyncio.sleep(1.0)
    async with start_server(kc, data_dir=data, port=port, token=token) as box:
        rv_at_restart = box.store.current_rev
        await _create(api, half, args.pods)
        ok = await _wait_all_bound(api, runner, args.pods, timeout=300)
        sched = runner.scheduler
        refl = runner.factory.informer("Pod").reflector
        cc = runner.cluster_client
        # no client holds a resourceVersion the (restarted) server does not have
        rv_ok = rv_at_restart == rv_at_stop and all(
            not inf.reflector.last_sync_rv or int(inf.reflector.last_sync_rv) <= box.store.current_rev
            for inf in runner.factory.informers.values())
        runner.request_stop()
        code = await asyncio.wait_for(task, 60)
        await api.close()
    took = time.perf_counter() - t0
    print(f"{args.pods} pods on {args.nodes} nodes in {took:.1f}s: all bound exactly once and consistent: {ok}")
    print(f"faults: {drops} watch connections dropped, {compactions} compactions → "
          f"{refl.relists_after_expired} '410 Expired' relists ({refl.lists} lists, {refl.tombstones} tombstones), "
          f"{injected} binding POSTs failed on purpose (500/409), API server restarted {restarts}x")
    print(f"scheduler: {cc.binds} successful binds, {cc.bind_errors} bind errors, attempts {sched.stats.attempts}, "
          f"assumed left {sched.cache.assumed_count()}, queue left {len(list(sched.queue.pending()))}, "
          f"exit code {code}")
    print(f"resourceVersion at stop {rv_at_stop}, at restart {rv_at_restart}; "
          f"every informer's RV within the server's: {rv_ok}")
    return 0 if ok and rv_ok and code == 0 and cc.binds == args.pods else 1


async def _create(api: APIClient, lo: int, hi: int) -> None:
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))

    await asyncio.gather(*(one(i) for i in range(lo, hi)))


async def _wait_all_bound(api: APIClient, runner: Runner, n: int, timeout: float) -> bool:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        pods: list[dict[str, Any]] = (await api.list("/api/v1/pods"))["items"]
        states = runner.scheduler.cache.pod_states
        if (len(pods) == n and all(p["spec"].get("nodeName") for p in pods)
                and runner.scheduler.cache.assumed_count() == 0
                and all(states.get(f"default/{p['metadata']['name']}") is not None
                        and states[f"default/{p['metadata']['name']}"].node_name == p["spec"]["nodeName"]
                        for p in pods)
                and not list(runner.scheduler.queue.pending())):
            return True
        await asyncio.sleep(0.2)
    return False


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
