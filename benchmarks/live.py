"""Live throughput and memory of ``kubesched run`` against the box API server (issue 7 §2, §7).

Three processes on this machine: the box (``kubesched apiserver``, HTTPS, in memory), the
scheduler (``kubesched run --leader-elect=false``) and this driver. The driver creates the
nodes (and optionally already-assigned pods, for the cache-size figures), starts the scheduler,
waits for its "Caches are synced" log line, then creates the pending pods through the API and
watches them: throughput = pending pods / (last bind seen in the watch − first create).

    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --pods 10000               # qps unlimited
    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --pods 2000 --qps 50 --burst 100
    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --cached-pods 30000 --pods 0   # sync + RSS

Prints one block of figures; nothing is asserted.
"""

# ruff: noqa: ASYNC220, ASYNC230, ASYNC251 - a driver script: blocking set-up calls are fine here

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kubesched.kube.client import APIClient, load_config

ROOT = Path(__file__).resolve().parents[1]


def node_obj(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod_obj(name: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": "bench"}}, "spec": spec}


async def create_all(api: APIClient, path: str, objs: list[dict[str, Any]], concurrency: int = 48) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(o: dict[str, Any]) -> None:
        async with sem:
            for _ in range(5):
                try:
                    await api.create(path, o)
                    return
                except Exception:  # noqa: BLE001 - retried: the box may be busy
                    await asyncio.sleep(0.2)

    t = time.perf_counter()
    await asyncio.gather(*(one(o) for o in objs))
    return time.perf_counter() - t


def rss_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0]) / 1024
    return out.get("VmRSS", 0.0), out.get("VmHWM", 0.0)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds used so far by ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_all(*procs: subprocess.Popen[bytes] | None) -> None:
    """Terminate the still running ``procs`` (killed after 30 s)."""
    for p in procs:
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


_TS = re.compile(r"^[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)")


def _log_time(line: str) -> float | None:
    m = _TS.match(line)
    if not m:
        return None
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000, help="pending pods created after the sync")
    ap.add_argument("--cached-pods", type=int, default=0, help="assigned pods created before the scheduler starts")
    ap.add_argument("--qps", type=float, default=-1, help="--kube-api-qps (<=0: unlimited)")
    ap.add_argument("--burst", type=int, default=100, help="--kube-api-burst")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()

    # byte-compiled first, as an installed package is (under PYTHONDONTWRITEBYTECODE every start
    # of the box and the scheduler would otherwise compile their ~480 modules again)
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-live-bench-"))
    kc = tmp / "kubeconfig"
    box = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                            "--write-kubeconfig", str(kc), "--in-memory", "--compaction-window", "100000"],
                           env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / "box.log", "wb"))  # noqa: SIM115
    sched: subprocess.Popen[bytes] | None = None
    try:
        for _ in range(300):
            if kc.exists():
                break
            time.sleep(0.1)
        api = APIClient(load_config(str(kc), qps=-1))
        t = await create_all(api, "/api/v1/nodes", [node_obj(i) for i in range(args.nodes)])
        print(f"created {args.nodes} nodes in {t:.1f}s")
        if args.cached_pods:
            objs = [pod_obj(f"cached-{i}", f"node-{i % args.nodes}") for i in range(args.cached_pods)]
            t = await create_all(api, "/api/v1/namespaces/default/pods", objs)
            print(f"created {args.cached_pods} assigned pods in {t:.1f}s")

        log_path = tmp / "scheduler.log"
        t_spawn = time.perf_counter()
        # KUBESCHED_BENCH_PROFILE="wrapper.py out.prof": run the scheduler under a profiling wrapper
        prof = os.environ.get("KUBESCHED_BENCH_PROFILE", "").split()
        cmd = [*prof] if prof else ["-m", "kubesched.cli.main"]
        sched = subprocess.Popen([sys.executable, *cmd, "run", "--kubeconfig", str(kc),
                                  "--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1",
                                  f"--kube-api-qps={args.qps}", f"--kube-api-burst={args.burst}"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=open(log_path, "wb"))  # noqa: SIM115
        start_ts = synced_ts = None
        while synced_ts is None:
            await asyncio.sleep(0.05)
            if sched.poll() is not None:
                raise SystemExit(f"scheduler exited: {log_path.read_text()[-2000:]}")
            for line in log_path.read_text().splitlines():
                if "Starting Kubernetes Scheduler" in line:
                    start_ts = _log_time(line)
                if "Caches are synced" in line:
                    synced_ts = _log_time(line)
        wall_sync = time.perf_counter() - t_spawn
        rss, hwm = rss_mib(sched.pid)
        sync_cpu = cpu_s(sched.pid)
        sync_s = (synced_ts - start_ts) if start_ts is not None else float("nan")
        print(f"initial sync ({args.nodes} nodes, {args.cached_pods} pods cached): {sync_s:.2f}s from start-up "
              f"(process spawn to synced {wall_sync:.2f}s, {sync_cpu:.1f}s CPU incl. imports); "
              f"RSS {rss:.0f} MiB (peak {hwm:.0f} MiB); load average {os.getloadavg()[0]:.1f}")

        if args.pods:
            rv = (await api.list("/api/v1/pods", {"limit": 1}))["metadata"]["resourceVersion"]
            bound: dict[str, float] = {}
            watch_done = asyncio.Event()

            async def watch() -> None:
                params = {"resourceVersion": rv, "fieldSelector": "metadata.namespace=default",
                          "timeoutSeconds": int(args.timeout)}
                while len(bound) < args.pods:
                    async for ev in api.stream_watch("/api/v1/pods", params):
                        obj = ev.get("object") or {}
                        name = (obj.get("metadata") or {}).get("name", "")
                        if name.startswith("bench-") and (obj.get("spec") or {}).get("nodeName"):
                            bound.setdefault(name, time.perf_counter())
                        params["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion", rv)
                        if len(bound) >= args.pods:
                            break
                watch_done.set()

            wt = asyncio.create_task(watch())
            await asyncio.sleep(0.2)
            cpu0, box_cpu0 = cpu_s(sched.pid), cpu_s(box.pid)
            t_first = time.perf_counter()
            t_create = await create_all(api, "/api/v1/namespaces/default/pods",
                                        [pod_obj(f"bench-{i}") for i in range(args.pods)])
            try:
                await asyncio.wait_for(watch_done.wait(), args.timeout)
            except TimeoutError:
                print(f"timeout: {len(bound)}/{args.pods} bound")
            wt.cancel()
            t_last = max(bound.values()) if bound else float("nan")
            rss, hwm = rss_mib(sched.pid)
            cpu, box_cpu = cpu_s(sched.pid) - cpu0, cpu_s(box.pid) - box_cpu0
            elapsed = t_last - t_first
            qps = "unlimited" if args.qps <= 0 else f"{args.qps:g}/{args.burst}"
            print(f"{len(bound)}/{args.pods} pending pods bound, qps/burst {qps}: {elapsed:.1f}s from first create "
                  f"to last bind seen in a watch = {len(bound) / elapsed:.0f} pods/s "
                  f"(creates took {t_create:.1f}s = {args.pods / t_create:.0f}/s); scheduler RSS {rss:.0f} MiB "
                  f"(peak {hwm:.0f} MiB)")
            print(f"CPU during the run: scheduler {cpu:.1f}s ({1000 * cpu / max(1, len(bound)):.2f} ms/pod), "
                  f"API server {box_cpu:.1f}s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        await api.close()
    finally:
        stop_all(sched, box)


if __name__ == "__main__":
    asyncio.run(main())
