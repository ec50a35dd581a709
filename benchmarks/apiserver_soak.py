"""RSS of the box under a steady mixed load: is there a plateau? (issue "The box as an API server
people can trust", item 8).

    PYTHONPATH=src python benchmarks/apiserver_soak.py --minutes 30 [--objects 1200]
    PYTHONPATH=src python benchmarks/apiserver_soak.py --minutes 60 --load-minutes 8 --idle-minutes 2

With ``--load-minutes L --idle-minutes I`` the load runs in cycles: L minutes of operations, then I
minutes with no request at all (the server idle: nothing should grow, and what a load phase left
behind should not keep growing in the next one); RSS is sampled through both, and at the end of each
idle phase split into anonymous memory (heaps) and mapped files.

With ``--tracemalloc`` the server runs in this process (a background thread, the same
``--data-dir`` store) with :mod:`tracemalloc` on, and at the end of every idle phase the Python heap
is compared with the previous idle phase's: the allocation sites that grew, top 15 (what an idle
floor that creeps is made of). Needs ``--load-minutes`` and ``--idle-minutes``.

The server runs in a child process (``kubesched apiserver --data-dir``); the driver keeps ~N live
ConfigMaps and Pods, creating, updating (one 1 MB ConfigMap rewritten over and over), listing,
watching and deleting, and samples the server's RSS from /proc every 10 s. Prints one line per
sample and a summary (first, peak, last RSS, and the slope over the second half, MiB per minute).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import yaml


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _rss_split(pid: int) -> str:
    """``RssAnon`` / ``RssFile`` / ``RssShmem`` of a process (MiB): heap vs mapped files (SQLite's -shm)."""
    parts = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key = line.split(":", 1)[0]
            if key in ("RssAnon", "RssFile", "RssShmem"):
                parts[key] = int(line.split()[1]) / 1024
    return "  ".join(f"{k} {v:.1f}" for k, v in parts.items())


def _cpu_s(pid: int) -> float:
    """user+sys CPU seconds of a live process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _caller(url: str, token: str, ctx: ssl.SSLContext) -> Callable[..., int]:
    def call(method: str, path: str, body: object = None) -> int:
        req = urllib.request.Request(url + path, method=method, data=None if body is None else
                                     json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
                r.read()
                return int(r.status)
        except urllib.error.HTTPError as e:
            return e.code

    return call


def _drive(args: argparse.Namespace, rng: random.Random, call: Callable[..., int], rss: Callable[[], float],
           idle_end: Callable[[float], None] | None) -> tuple[int, list[tuple[float, float]]]:
    """The mixed load (see the module docstring) for ``args.minutes``; returns (operations, RSS
    samples as (minute, MiB)). ``idle_end(minute)`` runs at the end of every idle phase."""
    cms = "/api/v1/namespaces/default/configmaps"
    big = "x" * (1 << 20)
    call("POST", cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"v": big}})
    live: list[str] = []
    n = 0
    start = time.monotonic()
    samples: list[tuple[float, float]] = []
    next_sample = start
    ops = 0
    cycle = (args.load_minutes + args.idle_minutes) * 60
    idle = False
    while time.monotonic() - start < args.minutes * 60:
        if args.load_minutes > 0 and args.idle_minutes > 0 and \
                (time.monotonic() - start) % cycle >= args.load_minutes * 60:
            time.sleep(1.0)  # idle phase: no requests
            op = -1.0
            idle = True
        else:
            if idle and idle_end is not None:
                idle_end((time.monotonic() - start) / 60)
            idle = False
            op = rng.random()
            ops += 1
        if op < 0:
            pass
        elif op < 0.4 and len(live) >= args.objects:  # hold ~objects live: a create becomes a delete
            name = live.pop(rng.randrange(len(live)))
            call("DELETE", f"{cms}/{name}")
        elif op < 0.4 or len(live) < args.objects // 2:
            n += 1
            name = f"c{n}"
            if call("POST", cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                  "data": {"k": "v" * rng.randint(10, 2000)}}) == 201:
                live.append(name)
        elif op < 0.7 and live:
            name = rng.choice(live)
            call("PUT", f"{cms}/{name}", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                          "data": {"k": str(rng.random())}})
        elif op < 0.8:
            call("PUT", f"{cms}/big", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                                       "data": {"v": big, "i": str(n)}})
        elif op < 0.9:
            call("GET", f"{cms}?limit=500")
        else:
            call("GET", "/api/v1/namespaces/default/pods")
        now = time.monotonic()
        if now >= next_sample:
            r = rss()
            samples.append(((now - start) / 60, r))
            phase = "idle" if op < 0 else "load"
            print(f"{(now - start) / 60:6.1f} min  RSS {r:7.1f} MiB  live {len(live)}  ops {ops}  {phase}", flush=True)
            next_sample = now + 10
    return ops, samples


def _summary(args: argparse.Namespace, samples: list[tuple[float, float]], ops: int, cpu_s: float) -> None:
    half = [s for s in samples if s[0] >= args.minutes / 2]
    slope = (half[-1][1] - half[0][1]) / max(half[-1][0] - half[0][0], 1e-9) if len(half) > 1 else 0.0
    print(f"summary: first {samples[0][1]:.1f} MiB, peak {max(r for _, r in samples):.1f} MiB, last "
          f"{samples[-1][1]:.1f} MiB; second-half slope {slope:+.2f} MiB/min over {args.minutes:g} min; "
          f"{ops} operations; server CPU {cpu_s:.1f} s")


def _traced(args: argparse.Namespace) -> int:
    """The server in this process with tracemalloc: heap growth between the ends of idle phases."""
    import tracemalloc

    from kubesched.apiserver.launcher import run_server

    if not (args.load_minutes > 0 and args.idle_minutes > 0):
        raise SystemExit("--tracemalloc needs --load-minutes and --idle-minutes")
    tracemalloc.start(8)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    snaps: list[tracemalloc.Snapshot] = []
    keep = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
            tracemalloc.Filter(False, __file__)]  # the driver's own requests

    def idle_end(minute: float) -> None:
        snap = tracemalloc.take_snapshot().filter_traces(keep)
        traced, peak = tracemalloc.get_traced_memory()
        print(f"--- end of idle phase at {minute:.1f} min: Python heap {traced / 2**20:.1f} MiB "
              f"(peak {peak / 2**20:.1f}), RSS {_rss_mib(os.getpid()):.1f} MiB", flush=True)
        if snaps:
            for stat in snap.compare_to(snaps[-1], "traceback")[:15]:
                frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(stat.traceback)[::-1][:5])
                print(f"    {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {frames}", flush=True)
        snaps[:] = [snap]

    with run_server(work / "kc", data_dir=work / "data") as srv:
        call = _caller(srv.url, srv.token or "", srv.ssl_context())
        ops, samples = _drive(args, random.Random(args.seed), call, lambda: _rss_mib(os.getpid()), idle_end)
    _summary(args, samples, ops, _cpu_s(os.getpid()))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--objects", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load-minutes", type=float, default=0.0, help="load phase length (0: load throughout)")
    ap.add_argument("--idle-minutes", type=float, default=0.0, help="idle phase after each load phase")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="server in this process; diff the Python heap between the ends of idle phases")
    args = ap.parse_args()
    if args.tracemalloc:
        return _traced(args)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    kc = work / "kc"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    server = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                               "--data-dir", str(work / "data"), "--write-kubeconfig", str(kc)],
                              env=env, stderr=subprocess.DEVNULL)
    try:
        while not kc.exists():
            time.sleep(0.1)
        cfg = yaml.safe_load(kc.read_text())
        cluster = cfg["clusters"][0]["cluster"]
        import base64

        ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        url, token = cluster["server"], cfg["users"][0]["user"]["token"]

        call = _caller(url, token, ctx)
        ops, samples = _drive(args, rng, call, lambda: _rss_mib(server.pid),
                              lambda minute: print(f"--- end of idle phase at {minute:.1f} min: RSS "
                                                   f"{_rss_mib(server.pid):.1f} MiB ({_rss_split(server.pid)} MiB)",
                                                   flush=True))
        _summary(args, samples, ops, _cpu_s(server.pid))
        return 0
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
