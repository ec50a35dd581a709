"""The box's CPU per request on its two HTTP paths, side by side (issue 18 §3).

Two boxes run at once (``kubesched apiserver --in-memory``, HTTPS): one on aiohttp's request path
(``KUBESCHED_BOX_HTTP=aiohttp``: a Task per request), one on the lean path (``lean``: a complete
request on an idle connection answered inside ``data_received``, apiserver/lean.py). The driver
sends the same bursts to each in turn, alternating which goes first, and reads each box's CPU
(user + system, /proc) around every burst: both halves of a pair see the same machine load, so
the pairs compare the paths on a shared, noisy machine.

    PYTHONPATH=src python benchmarks/box_requests.py                     # GET /version and the pod triple
    PYTHONPATH=src python benchmarks/box_requests.py --kind pod --rounds 10 --n 1000 --concurrency 48

Kinds: ``version`` (``GET /version``: the fixed HTTP/TLS cost), ``pod`` (per pod: its create, its
binding and its ``Scheduled`` event, events.k8s.io/v1 — the three writes a scheduled pod costs the
box), ``get`` (``GET`` of one pod). Prints µs of box CPU per request (per pod for ``pod``), each
pair and the medians; nothing is asserted.
"""



from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kubesched.kube.client import APIClient, load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from live import cpu_s, node_obj, pod_obj, scheduled_event, stop_all

PATHS = ("aiohttp", "lean")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--kind", choices=("version", "pod", "get", "all"), default="all")
    ap.add_argument("--rounds", type=int, default=6, help="pairs per kind (each box once per pair)")
    ap.add_argument("--n", type=int, default=1000, help="requests (pods for --kind pod) per burst")
    ap.add_argument("--concurrency", type=int, default=48, help="requests in flight")
    ap.add_argument("--nodes", type=int, default=100, help="nodes the pods are bound to")
    return ap.parse_args(argv)


def start_box(path: str, tmp: Path) -> tuple[subprocess.Popen[bytes], Path]:
    kc = tmp / f"kubeconfig-{path}"
    env = {**os.environ, "KUBESCHED_BOX_HTTP": path}
    box = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                            "--write-kubeconfig", str(kc), "--in-memory", "--compaction-window", "100000"],
                           env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / f"box-{path}.log", "wb"))
    for _ in range(600):
        if kc.exists():
            return box, kc
        if box.poll() is not None:
            raise SystemExit(f"box exited: {(tmp / f'box-{path}.log').read_text()[-2000:]}")
        time.sleep(0.1)
    raise SystemExit("box did not start")


async def burst(api: APIClient, kind: str, n: int, concurrency: int, seq: int, nodes: int) -> None:
    """``n`` requests (pods) of ``kind``, ``concurrency`` in flight."""
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            if kind == "version":
                await api.get("/version")
            elif kind == "get":
                await api.get("/api/v1/namespaces/default/pods/seed")
            else:
                created = await api.create("/api/v1/namespaces/default/pods", pod_obj(f"b{seq}-{i}"))
                md = created["metadata"]
                node = f"node-{i % nodes}"
                await api.bind(md["namespace"], md["name"], md["uid"], node)
                await api.create("/apis/events.k8s.io/v1/namespaces/default/events", scheduled_event(created, node))

    await asyncio.gather(*(one(i) for i in range(n)))


async def main(argv: list[str] | None = None) -> dict[str, dict[str, list[float]]]:
    """Per kind and path, the µs of box CPU per request of each round (also printed)."""
    args = parse_args(argv)
    kinds = ("version", "get", "pod") if args.kind == "all" else (args.kind,)
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-box-requests-"))
    boxes: dict[str, subprocess.Popen[bytes]] = {}
    apis: dict[str, APIClient] = {}
    results: dict[str, dict[str, list[float]]] = {}
    try:
        for path in PATHS:
            boxes[path], kc = start_box(path, tmp)
            apis[path] = APIClient(load_config(str(kc), qps=-1))
        for path in PATHS:
            api = apis[path]
            for i in range(args.nodes):
                await api.create("/api/v1/nodes", node_obj(i))
            await api.create("/api/v1/namespaces/default/pods", pod_obj("seed"))
            await burst(api, "version", 200, args.concurrency, 0, args.nodes)  # connections warm
        seq = 0
        for kind in kinds:
            per: dict[str, list[float]] = {p: [] for p in PATHS}
            loads = []
            for r in range(args.rounds):
                order = PATHS if r % 2 == 0 else PATHS[::-1]
                pair = {}
                for path in order:
                    seq += 1
                    c0 = cpu_s(boxes[path].pid)
                    await burst(apis[path], kind, args.n, args.concurrency, seq, args.nodes)
                    pair[path] = 1e6 * (cpu_s(boxes[path].pid) - c0) / args.n
                    per[path].append(pair[path])
                loads.append(os.getloadavg()[0])
                print(f"{kind} pair {r + 1}: " + ", ".join(f"{p} {pair[p]:.0f}" for p in PATHS)
                      + f" µs CPU/{'pod' if kind == 'pod' else 'request'} (load {loads[-1]:.1f})")
            med = {p: statistics.median(per[p]) for p in PATHS}
            print(f"{kind}: median box µs CPU per {'pod' if kind == 'pod' else 'request'}: "
                  + ", ".join(f"{p} {med[p]:.0f}" for p in PATHS)
                  + f" (lean/aiohttp {med['lean'] / max(med['aiohttp'], 1e-9):.2f}; {args.rounds} pairs of {args.n}, "
                    f"{args.concurrency} in flight, load {min(loads):.1f}-{max(loads):.1f})")
            results[kind] = per
        for api in apis.values():
            await api.close()
    finally:
        stop_all(*boxes.values())
    return results


if __name__ == "__main__":
    asyncio.run(main())
