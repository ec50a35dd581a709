"""Scheduling rate of ``kubesched run`` with and without a pre-auth flood on its ``/metrics``
(issue 16 item 5).

Every request with an unknown bearer token makes the scheduler ask the API server (TokenReview).
Upstream's delegated authentication sends those through its own client (QPS 200, burst 400) and
caches the answers, so the scheduler's client (QPS 50, burst 100 by default) keeps its rate
limit for binding. Three processes: the box (in memory), ``kubesched run`` (upstream's client
defaults unless ``--qps``/``--burst``) and this driver, which creates ``--pods`` pending pods per
phase and watches them bind, once without a flood and once with ``--flood`` distinct unknown tokens
per second on ``/metrics`` (a new token each request, over up to 64 keep-alive connections), then
once more without (the order shows drift from other load on the machine).

    PYTHONPATH=src python benchmarks/metrics_flood.py --nodes 200 --pods 1000 --flood 20
    PYTHONPATH=src python benchmarks/metrics_flood.py ... --scheduler-src /path/to/other/src  # another version

Per phase: pods/s (pods / (last bind seen − first create)), the flood's achieved rate and answers,
the scheduler's and the API server's CPU seconds (user+sys from /proc) and the load average.
Nothing is asserted.
"""

# ruff: noqa: ASYNC220, ASYNC230, ASYNC251 - a driver script: blocking set-up calls are fine here

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from live import cpu_s, create_all, node_obj, pod_obj, stop_all

from kubesched.kube.client import APIClient, load_config

ROOT = Path(__file__).resolve().parents[1]


async def flood(url: str, rate: float, stop: asyncio.Event, codes: collections.Counter[int]) -> None:
    """GET ``url`` with a new bearer token ``rate`` times a second until ``stop``."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    pending: set[asyncio.Task[None]] = set()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64, ssl=ctx)) as s:

        async def one(i: int) -> None:
            try:
                async with s.get(url, headers={"Authorization": f"Bearer flood-{os.getpid()}-{i}"}) as r:
                    await r.read()
                    codes[r.status] += 1
            except aiohttp.ClientError:
                codes[0] += 1

        i = 0
        t0 = time.perf_counter()
        while not stop.is_set():
            i += 1
            t = asyncio.create_task(one(i))
            pending.add(t)
            t.add_done_callback(pending.discard)
            delay = t0 + i / rate - time.perf_counter()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except TimeoutError:
                    pass
        if pending:  # the requests in flight get their answers
            await asyncio.wait(list(pending), timeout=30)
        for t in list(pending):
            t.cancel()


async def phase(api: APIClient, name: str, pods: int, sched_pid: int, box_pid: int, metrics_url: str,
                rate: float, timeout: float) -> None:
    rv = (await api.list("/api/v1/pods", {"limit": 1}))["metadata"]["resourceVersion"]
    bound: dict[str, float] = {}
    done = asyncio.Event()

    async def watch() -> None:
        params = {"resourceVersion": rv, "fieldSelector": "metadata.namespace=default", "timeoutSeconds": int(timeout)}
        while len(bound) < pods:
            async for ev in api.stream_watch("/api/v1/pods", params):
                obj = ev.get("object") or {}
                meta = obj.get("metadata") or {}
                if meta.get("name", "").startswith(f"{name}-") and (obj.get("spec") or {}).get("nodeName"):
                    bound.setdefault(meta["name"], time.perf_counter())
                params["resourceVersion"] = meta.get("resourceVersion", rv)
                if len(bound) >= pods:
                    break
        done.set()

    codes: collections.Counter[int] = collections.Counter()
    stop = asyncio.Event()
    wt = asyncio.create_task(watch())
    ft = asyncio.create_task(flood(metrics_url, rate, stop, codes)) if rate > 0 else None
    await asyncio.sleep(1.0 if ft else 0.2)  # the flood running before the pods arrive
    cpu0, box0, t_first = cpu_s(sched_pid), cpu_s(box_pid), time.perf_counter()
    await create_all(api, "/api/v1/namespaces/default/pods", [pod_obj(f"{name}-{i}") for i in range(pods)])
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except TimeoutError:
        print(f"  timeout: {len(bound)}/{pods} bound")
    elapsed = (max(bound.values()) if bound else float("nan")) - t_first
    cpu, box_cpu = cpu_s(sched_pid) - cpu0, cpu_s(box_pid) - box0
    stop.set()
    wt.cancel()
    if ft is not None:
        await ft
    sent = sum(codes.values())
    flood_txt = (f"flood {sent / max(elapsed, 1e-9):.1f} req/s achieved ({dict(codes)})" if ft else "no flood")
    print(f"{name:>9}: {len(bound)}/{pods} bound in {elapsed:.1f}s = {len(bound) / elapsed:.1f} pods/s; {flood_txt}; "
          f"CPU scheduler {cpu:.1f}s, API server {box_cpu:.1f}s; load average {os.getloadavg()[0]:.1f}", flush=True)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=1000, help="pending pods per phase")
    ap.add_argument("--flood", type=float, default=20.0, help="unknown tokens per second on /metrics")
    ap.add_argument("--qps", type=float, default=50.0, help="the scheduler's --kube-api-qps (upstream default 50)")
    ap.add_argument("--burst", type=int, default=100, help="the scheduler's --kube-api-burst (upstream default 100)")
    ap.add_argument("--scheduler-src", default=str(ROOT / "src"), help="PYTHONPATH of the scheduler process")
    ap.add_argument("--scheduler-profile", metavar="OUT", help="run the scheduler under cProfile, stats to OUT")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="kubesched-flood-bench-"))
    kc = tmp / "kubeconfig"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    box = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                            "--write-kubeconfig", str(kc), "--in-memory"],
                           env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / "box.log", "wb"))  # noqa: SIM115
    sched: subprocess.Popen[bytes] | None = None
    try:
        while not kc.exists():
            time.sleep(0.1)
        api = APIClient(load_config(str(kc), qps=-1))
        await create_all(api, "/api/v1/nodes", [node_obj(i) for i in range(args.nodes)])
        log_path = tmp / "scheduler.log"
        prof = ["-m", "cProfile", "-o", args.scheduler_profile] if args.scheduler_profile else []
        sched = subprocess.Popen([sys.executable, *prof, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(kc),
                                  "--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1",
                                  f"--kube-api-qps={args.qps}", f"--kube-api-burst={args.burst}"],
                                 env={**os.environ, "PYTHONPATH": args.scheduler_src},
                                 stdout=subprocess.DEVNULL, stderr=open(log_path, "wb"))  # noqa: SIM115
        port = None
        while port is None or "Caches are synced" not in log_path.read_text(errors="replace"):
            await asyncio.sleep(0.1)
            if sched.poll() is not None:
                raise SystemExit(f"scheduler exited: {log_path.read_text()[-2000:]}")
            m = re.search(r"Serving securely on [^ \"]*?:(\d+)", log_path.read_text(errors="replace"))
            port = int(m.group(1)) if m else None
        url = f"https://127.0.0.1:{port}/metrics"
        print(f"{args.nodes} nodes, {args.pods} pods per phase, scheduler qps/burst {args.qps:g}/{args.burst}, "
              f"scheduler code {args.scheduler_src}")
        for name, rate in (("baseline", 0.0), ("flood", args.flood), ("after", 0.0)):
            await phase(api, name, args.pods, sched.pid, box.pid, url, rate, args.timeout)
        await api.close()
    finally:
        stop_all(sched, box)


if __name__ == "__main__":
    asyncio.run(main())
