"""Live throughput and memory of ``kubesched run`` against the box API server (issue 7 §2, §7).

Three processes on this machine: the box (``kubesched apiserver``, HTTPS, in memory), the
scheduler (``kubesched run --leader-elect=false``) and this driver. The driver creates the
nodes (and optionally already-assigned pods, for the cache-size figures), starts the scheduler,
waits for its "Caches are synced" log line, then creates the pending pods through the API and
watches them: throughput = pending pods / (last bind seen in the watch − first create).

    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --pods 10000               # qps unlimited
    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --pods 2000 --qps 50 --burst 100
    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --cached-pods 30000 --pods 0   # sync + RSS
    PYTHONPATH=src python benchmarks/live.py --nodes 5000 --pods 5000 --no-scheduler     # the box alone

``--no-scheduler`` (binder mode) measures the box alone: no scheduler is started; the driver
creates each pod and binds it itself (``POST pods/{name}/binding`` round-robin over the nodes;
``--events``: and records its ``Scheduled`` event, as the scheduler does), while a second pod watch (all namespaces) stands in for the scheduler's informer; the figure is
the box's CPU-s per pod from /proc. ``--box-src DIR`` runs the box from another source tree
(e.g. ``git archive COMMIT src | tar -x -C DIR``; the driver keeps this checkout's client), for
bisecting the box's cost; ``--repeat K`` runs the pod phase K times on fresh boxes.

Prints one block of figures; nothing is asserted.
"""

# ruff: noqa: ASYNC220, ASYNC230, ASYNC251 - a driver script: blocking set-up calls are fine here

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import pstats
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
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


def scheduled_event(pod: dict[str, Any], node: str) -> dict[str, Any]:
    """The ``Scheduled`` event the scheduler records for a bound pod (events.k8s.io/v1, as
    kube/events.py ``_make_event`` writes it)."""
    md = pod["metadata"]
    now = datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": f"{md['name']}.{time.time_ns():x}", "namespace": md["namespace"]},
            "eventTime": now, "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-bench", "action": "Binding", "reason": "Scheduled",
            "regarding": {"kind": "Pod", "namespace": md["namespace"], "name": md["name"], "uid": md["uid"],
                          "apiVersion": "v1", "resourceVersion": md["resourceVersion"]},
            "note": f"Successfully assigned {md['namespace']}/{md['name']} to {node}", "type": "Normal"}


async def create_all(api: APIClient, path: str, objs: list[dict[str, Any]], concurrency: int = 48,
                     bind_nodes: int = 0, events: bool = False) -> float:
    """Create ``objs`` (``concurrency`` in flight, 5 tries each); seconds taken.

    ``bind_nodes`` > 0: bind each created pod right after its create to ``node-{i % bind_nodes}``
    (and with ``events`` record its ``Scheduled`` event, as the scheduler does).
    """
    sem = asyncio.Semaphore(concurrency)
    counter = iter(range(len(objs)))

    async def one(o: dict[str, Any]) -> None:
        async with sem:
            for _ in range(5):
                try:
                    created = await api.create(path, o)
                    break
                except Exception:  # noqa: BLE001 - retried: the box may be busy
                    await asyncio.sleep(0.2)
            else:
                return
            if bind_nodes:
                md = created["metadata"]
                node = f"node-{next(counter) % bind_nodes}"
                for _ in range(5):
                    try:
                        await api.bind(md["namespace"], md["name"], md["uid"], node)
                        break
                    except Exception:  # noqa: BLE001 - retried: the box may be busy
                        await asyncio.sleep(0.2)
                if events:
                    ns = md["namespace"]
                    try:
                        await api.create(f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
                                         scheduled_event(created, node))
                    except Exception:  # noqa: BLE001 - best effort, as the scheduler's recorder
                        pass

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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000, help="pending pods created after the sync")
    ap.add_argument("--cached-pods", type=int, default=0, help="assigned pods created before the scheduler starts")
    ap.add_argument("--qps", type=float, default=-1, help="--kube-api-qps (<=0: unlimited)")
    ap.add_argument("--burst", type=int, default=100, help="--kube-api-burst")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--no-scheduler", action="store_true",
                    help="binder mode: no scheduler; the driver binds each pod it creates (the box's cost alone)")
    ap.add_argument("--events", action="store_true",
                    help="binder mode: also POST each pod's Scheduled event (events.k8s.io/v1), as the scheduler does")
    ap.add_argument("--box-src", type=Path, default=None,
                    help="source tree (holding kubesched/) the box runs from (default: this checkout's src)")
    ap.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh box")
    ap.add_argument("--box-loop", choices=("asyncio", "uvloop", "alternate"), default=None,
                    help="the box's event loop (KUBESCHED_EVENT_LOOP; default: as the environment says); "
                         "alternate: asyncio and uvloop in turn, run by run (an A/B with --repeat 2K)")
    ap.add_argument("--box-http", choices=("lean", "aiohttp", "alternate"), default=None,
                    help="the box's HTTP/1.1 request path (KUBESCHED_BOX_HTTP; default: as the environment says, lean "
                         "unless it says aiohttp): "
                         "lean (requests answered inline, apiserver/lean.py) or aiohttp (a Task per request); "
                         "alternate: aiohttp and lean in turn, run by run (an A/B with --repeat 2K)")
    return ap.parse_args(argv)


def box_loop(args: argparse.Namespace, rep: int) -> str | None:
    """The box's ``KUBESCHED_EVENT_LOOP`` for run ``rep`` (0-based; None = the environment's):
    ``--box-loop alternate`` gives asyncio to even runs and uvloop to odd ones."""
    if args.box_loop == "alternate":
        return ("asyncio", "uvloop")[rep % 2]
    return args.box_loop


def box_http(args: argparse.Namespace, rep: int) -> str | None:
    """The box's ``KUBESCHED_BOX_HTTP`` for run ``rep`` (0-based; None = the environment's):
    ``--box-http alternate`` gives aiohttp to even runs and lean to odd ones."""
    if args.box_http == "alternate":
        return ("aiohttp", "lean")[rep % 2]
    return args.box_http


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the benchmark ``--repeat`` times; one dict of figures per run (also printed)."""
    args = parse_args(argv)
    results = []
    for rep in range(args.repeat):
        if args.repeat > 1:
            print(f"-- run {rep + 1}/{args.repeat}")
        results.append(await run_once(args, box_loop(args, rep), box_http(args, rep)))
    if args.repeat > 1 and args.pods:
        variants = sorted({(str(r.get("loop", "")), str(r.get("http", ""))) for r in results})
        for loop, http in variants:
            runs = [r for r in results if (str(r.get("loop", "")), str(r.get("http", ""))) == (loop, http)]
            per_pod = sorted(float(r["box_ms_per_pod"]) for r in runs)
            label = ", ".join(x for x in (f"{loop} loop" if loop else "", f"{http} HTTP path" if http else "") if x)
            label = f" ({label})" if label else ""
            print(f"box ms CPU/pod over {len(runs)} runs{label}: " + ", ".join(f"{x:.3f}" for x in per_pod)
                  + f" (min {per_pod[0]:.3f}, median {per_pod[len(per_pod) // 2]:.3f})")
    return results


async def run_once(args: argparse.Namespace, loop: str | None = None, http: str | None = None) -> dict[str, Any]:
    """One run: a fresh box (on event loop ``loop``: asyncio/uvloop, and HTTP path ``http``:
    lean/aiohttp; None = the environment's), the nodes, the scheduler (unless ``--no-scheduler``),
    the pods."""
    box_src = (args.box_src or ROOT / "src").resolve()
    # byte-compiled first, as an installed package is (under PYTHONDONTWRITEBYTECODE every start
    # of the box and the scheduler would otherwise compile their ~480 modules again)
    for src in {box_src, ROOT / "src"}:
        compileall.compile_dir(str(src), quiet=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    box_env = {**env, "PYTHONPATH": str(box_src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if loop is not None:
        box_env["KUBESCHED_EVENT_LOOP"] = loop
    if http is not None:
        box_env["KUBESCHED_BOX_HTTP"] = http
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-live-bench-"))
    kc = tmp / "kubeconfig"
    # KUBESCHED_BENCH_BOX_PROFILE=OUT.prof: cProfile the box during the pod phase (profile_child.py)
    box_prof = os.environ.get("KUBESCHED_BENCH_BOX_PROFILE")
    box_cmd = [str(ROOT / "benchmarks" / "profile_child.py"), box_prof] if box_prof else ["-m"]
    box = subprocess.Popen([sys.executable, *box_cmd, "kubesched.cli.main", "apiserver", "--port", "0",
                            "--write-kubeconfig", str(kc), "--in-memory", "--compaction-window", "100000"],
                           env=box_env, stdout=subprocess.DEVNULL, stderr=open(tmp / "box.log", "wb"))  # noqa: SIM115
    sched: subprocess.Popen[bytes] | None = None
    out: dict[str, Any] = {"loop": loop or os.environ.get("KUBESCHED_EVENT_LOOP", ""),
                           "http": http or os.environ.get("KUBESCHED_BOX_HTTP", "")}
    try:
        for _ in range(300):
            if kc.exists():
                break
            if box.poll() is not None:
                raise SystemExit(f"box exited: {(tmp / 'box.log').read_text()[-2000:]}")
            time.sleep(0.1)
        api = APIClient(load_config(str(kc), qps=-1))
        box_cpu_nodes = cpu_s(box.pid)
        t = await create_all(api, "/api/v1/nodes", [node_obj(i) for i in range(args.nodes)])
        out["box_cpu_nodes"] = cpu_s(box.pid) - box_cpu_nodes
        print(f"created {args.nodes} nodes in {t:.1f}s (box {out['box_cpu_nodes']:.1f} CPU-s)")
        if args.cached_pods:
            objs = [pod_obj(f"cached-{i}", f"node-{i % args.nodes}") for i in range(args.cached_pods)]
            t = await create_all(api, "/api/v1/namespaces/default/pods", objs)
            print(f"created {args.cached_pods} assigned pods in {t:.1f}s")

        if not args.no_scheduler:
            sched = await start_scheduler(args, env, kc, tmp / "scheduler.log")

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

            async def informer() -> None:
                # binder mode: the scheduler's pod informer's watch (every event read, decoded)
                async for _ev in api.stream_watch("/api/v1/pods", {"resourceVersion": rv,
                                                                  "timeoutSeconds": int(args.timeout)}):
                    pass

            tasks = [asyncio.create_task(watch())]
            if args.no_scheduler:
                tasks.append(asyncio.create_task(informer()))
            await asyncio.sleep(0.2)
            spy = box_profiler(box.pid)
            if box_prof:
                box.send_signal(signal.SIGRTMIN + 3)  # profile_child.START
            cpu0 = cpu_s(sched.pid) if sched else 0.0
            box_cpu0 = cpu_s(box.pid)
            t_first = time.perf_counter()
            t_create = await create_all(api, "/api/v1/namespaces/default/pods",
                                        [pod_obj(f"bench-{i}") for i in range(args.pods)],
                                        bind_nodes=args.nodes if args.no_scheduler else 0,
                                        events=args.events)
            try:
                await asyncio.wait_for(watch_done.wait(), args.timeout)
            except TimeoutError:
                print(f"timeout: {len(bound)}/{args.pods} bound")
            for task in tasks:
                task.cancel()
            if box_prof:
                box.send_signal(signal.SIGRTMIN + 4)  # profile_child.STOP
                out["box_calls_per_pod"] = await profile_calls(Path(box_prof)) / max(1, args.pods)
                print(f"box: {out['box_calls_per_pod']:.0f} Python calls per pod (cProfile, {box_prof})")
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
            t_last = max(bound.values()) if bound else float("nan")
            box_cpu = cpu_s(box.pid) - box_cpu0
            elapsed = t_last - t_first
            out.update(pods_per_s=len(bound) / elapsed, box_cpu=box_cpu,
                       box_ms_per_pod=1000 * box_cpu / max(1, len(bound)))
            load = os.getloadavg()[0]
            if loop:
                print(f"box event loop: {loop}")
            if http:
                print(f"box HTTP path: {http}")
            if sched is None:
                print(f"{len(bound)}/{args.pods} pods created and bound by the driver: {elapsed:.1f}s from first "
                      f"create to last bind seen in a watch = {out['pods_per_s']:.0f} pods/s")
                print(f"CPU during the run: API server {box_cpu:.1f}s ({out['box_ms_per_pod']:.3f} ms/pod); "
                      f"load average {load:.1f} on {os.cpu_count()} CPUs")
            else:
                rss, hwm = rss_mib(sched.pid)
                cpu = cpu_s(sched.pid) - cpu0
                out["sched_ms_per_pod"] = 1000 * cpu / max(1, len(bound))
                qps = "unlimited" if args.qps <= 0 else f"{args.qps:g}/{args.burst}"
                print(f"{len(bound)}/{args.pods} pending pods bound, qps/burst {qps}: {elapsed:.1f}s from first "
                      f"create to last bind seen in a watch = {out['pods_per_s']:.0f} pods/s "
                      f"(creates took {t_create:.1f}s = {args.pods / t_create:.0f}/s); scheduler RSS {rss:.0f} MiB "
                      f"(peak {hwm:.0f} MiB)")
                print(f"CPU during the run: scheduler {cpu:.1f}s ({out['sched_ms_per_pod']:.2f} ms/pod), "
                      f"API server {box_cpu:.1f}s ({out['box_ms_per_pod']:.3f} ms/pod); "
                      f"load average {load:.1f} on {os.cpu_count()} CPUs")
            out["load"] = load
        await api.close()
    finally:
        stop_all(sched, box)
    return out


async def profile_calls(path: Path, timeout: float = 60) -> int:
    """Total calls in the pstats file ``path`` once written (waits up to ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return int(pstats.Stats(str(path)).total_calls)  # type: ignore[attr-defined]
        except (OSError, EOFError, TypeError, ValueError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


def box_profiler(pid: int) -> subprocess.Popen[bytes] | None:
    """``KUBESCHED_BENCH_BOX_ATTACH="CMD ... {pid} ..."``: a profiler attached to the box (``pid``)
    for the pod phase, stopped with SIGINT — e.g. ``py-spy record --pid {pid} -r 100 --format raw -o
    FILE --nonblocking`` or ``perf record -e cpu-clock -g -o FILE -p {pid}`` (on-CPU samples only)."""
    cmd = os.environ.get("KUBESCHED_BENCH_BOX_ATTACH")
    if not cmd:
        return None
    return subprocess.Popen(shlex.split(cmd.replace("{pid}", str(pid))), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def start_scheduler(args: argparse.Namespace, env: dict[str, str], kc: Path,
                          log_path: Path) -> subprocess.Popen[bytes]:
    """Spawn ``kubesched run`` and wait for "Caches are synced"; prints the sync figures."""
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
    return sched


if __name__ == "__main__":
    asyncio.run(main())
