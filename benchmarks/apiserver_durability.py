"""What durability costs the box: acknowledged writes per second with every write synced (the
default, as etcd) and with ``--unsafe-no-fsync``, at the store and through the HTTP API with 1, 8
and 64 concurrent writers (concurrent writes share one fsync: group commit).

    PYTHONPATH=src python benchmarks/apiserver_durability.py [--writes 2000] [--http-writes 600]
        [--concurrency 1,8,64] [--modes durable,unsafe] [--no-store] [--src DIR]

The HTTP server is ``kubesched apiserver --data-dir … --insecure-http --token ''`` in its own
process (under ``strace -f --seccomp-bpf`` when strace is installed, which counts its fsync and
fdatasync calls during the measured window); the clients are aiohttp coroutines in this process,
each POSTing ConfigMaps of ~250 bytes one after the other. ``--src`` runs another source tree
(e.g. an older commit's ``src``, for a before/after comparison).
Prints the load average, then one line per mode and concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import yaml

_STORE = textwrap.dedent("""
    import sys, time
    from kubesched.apiserver.storage import Store
    s = Store(sys.argv[1], fsync=sys.argv[2] == "1")
    n = int(sys.argv[3])
    t0 = time.perf_counter()
    for i in range(n):
        obj = {"metadata": {"name": f"c{i}", "namespace": "ns"}, "data": {"k": "v" * 200}}
        s.create("configmaps", "ns", f"c{i}", obj)
    dt = time.perf_counter() - t0
    s.close()
    print(n / dt)
""")

_SYNCS = ("fsync", "fdatasync")


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src)}


def store_rate(src: Path, fsync: bool, writes: int) -> tuple[float, float | None]:
    """Sequential writes straight to the store: (writes/s, fsync+fdatasync calls per write)."""
    d = tempfile.mkdtemp(prefix="durability-")
    env = _env(src)
    try:
        out = subprocess.run([sys.executable, "-c", _STORE, d + "/a", "1" if fsync else "0", str(writes)],
                             env=env, capture_output=True, text=True, check=True)
        rate = float(out.stdout.strip())
        per_write = None
        if shutil.which("strace"):
            trace = Path(d) / "strace.txt"
            subprocess.run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", str(trace), sys.executable,
                            "-c", _STORE, d + "/b", "1" if fsync else "0", str(writes)], env=env,
                           capture_output=True, check=True)
            calls = sum(int(p.split()[3]) for p in trace.read_text().splitlines()
                        if p.split() and p.split()[-1] in _SYNCS)
            per_write = calls / writes
        return rate, per_write
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _syncs_between(trace: Path, t0: float, t1: float) -> int:
    """fsync/fdatasync calls in an ``strace -f -ttt`` log made between epoch times t0 and t1."""
    n = 0
    for line in trace.read_text().splitlines():
        parts = line.split(None, 2)  # pid, time, call
        if len(parts) < 3 or "resumed>" in parts[2]:
            continue
        try:
            ts = float(parts[1])
        except ValueError:
            continue
        if t0 <= ts <= t1 and parts[2].split("(", 1)[0] in _SYNCS:
            n += 1
    return n


def _start_server(src: Path, d: Path, fsync: bool, trace: Path | None) -> tuple[subprocess.Popen[bytes], int, str]:
    """``kubesched apiserver`` on ``d`` (plain HTTP, no token); returns (process, server pid, url)."""
    kc = d / "kubeconfig"
    cmd = [sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0", "--data-dir", str(d / "data"),
           "--insecure-http", "--token", "", "--write-kubeconfig", str(kc), "--compaction-interval", "3600"]
    if not fsync:
        cmd.append("--unsafe-no-fsync")
    if trace is not None:
        cmd = ["strace", "-f", "--seccomp-bpf", "-ttt", "-e", "trace=fsync,fdatasync", "-o", str(trace), *cmd]
    p = subprocess.Popen(cmd, env=_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not kc.exists():
        if p.poll() is not None:
            raise RuntimeError(f"server exited: {p.communicate()[1].decode()}")
        if time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.05)
    pid = p.pid
    if trace is not None:  # the traced server is strace's child
        pid = int(Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()[0])
    url = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
    return p, pid, url


async def _post_all(url: str, writes: int, concurrency: int) -> float:
    import aiohttp

    it = iter(range(writes))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def writer() -> None:
            for i in it:
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"},
                        "data": {"k": "v" * 200}}
                async with session.post(f"{url}/api/v1/namespaces/default/configmaps", json=body) as r:
                    assert r.status == 201, await r.text()

        async with session.get(f"{url}/api/v1/namespaces/default/configmaps") as r:  # connection warm-up
            assert r.status == 200, await r.text()
        t0 = time.perf_counter()
        await asyncio.gather(*(writer() for _ in range(concurrency)))
        return writes / (time.perf_counter() - t0)


def http_rate(src: Path, fsync: bool, writes: int, concurrency: int) -> tuple[float, float | None]:
    """``writes`` POSTs from ``concurrency`` clients: (acknowledged writes/s, syncs per write)."""
    d = Path(tempfile.mkdtemp(prefix="durability-http-"))
    trace = d / "strace.txt" if shutil.which("strace") else None
    p, pid, url = _start_server(src, d, fsync, trace)
    try:
        t0 = time.time()
        rate = asyncio.run(_post_all(url, writes, concurrency))
        t1 = time.time()
    finally:
        os.kill(pid, signal.SIGTERM)
        p.communicate(timeout=60)
    try:
        return rate, (_syncs_between(trace, t0, t1) / writes if trace is not None else None)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writes", type=int, default=2000, help="sequential writes straight to the store")
    ap.add_argument("--http-writes", type=int, default=600, help="POSTs per HTTP run")
    ap.add_argument("--concurrency", default="1,8,64", help="comma-separated numbers of concurrent HTTP writers")
    ap.add_argument("--modes", default="durable,unsafe", help="durable and/or unsafe (--unsafe-no-fsync)")
    ap.add_argument("--no-store", action="store_true", help="skip the sequential store measurement")
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src",
                    help="source tree to run (default: this checkout's src)")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    print(f"load average: {os.getloadavg()[0]:.1f} (src {args.src})")
    for fsync in [m == "durable" for m in args.modes.split(",")]:
        mode = "durable (default)" if fsync else "--unsafe-no-fsync"
        if not args.no_store:
            rate, per = store_rate(args.src, fsync, args.writes)
            syncs = f"{per:.2f} syncs/write" if per is not None else "strace not installed"
            print(f"{mode:18s} store sequential {rate:8.0f} writes/s  ({syncs})", flush=True)
        for c in levels:
            rate, per = http_rate(args.src, fsync, args.http_writes, c)
            syncs = f"{per:.2f} syncs/write" if per is not None else "strace not installed"
            print(f"{mode:18s} HTTP POST x{c:<3d}    {rate:8.0f} writes/s  ({syncs})  load {os.getloadavg()[0]:.1f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
