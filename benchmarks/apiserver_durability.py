"""What durability costs the box: acknowledged writes per second with every write synced (the
default, as etcd) and with ``--unsafe-no-fsync``, at the store and through the HTTP API.

    PYTHONPATH=src python benchmarks/apiserver_durability.py [--writes 2000] [--http-writes 500]

Prints one line per mode: writes/s, fdatasync calls per write (strace, when installed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

_STORE = textwrap.dedent("""
    import sys, time
    from kubesched.apiserver.storage import Store
    s = Store(sys.argv[1], fsync=sys.argv[2] == "1")
    n = int(sys.argv[3])
    t0 = time.perf_counter()
    for i in range(n):
        s.create("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}", "namespace": "ns"}, "data": {"k": "v" * 200}})
    dt = time.perf_counter() - t0
    s.close()
    print(n / dt)
""")


def store_rate(fsync: bool, writes: int) -> tuple[float, float | None]:
    d = tempfile.mkdtemp(prefix="durability-")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
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
                        if p.split() and p.split()[-1] in ("fsync", "fdatasync"))
            per_write = calls / writes
        return rate, per_write
    finally:
        shutil.rmtree(d, ignore_errors=True)


async def http_rate(fsync: bool, writes: int) -> float:
    import aiohttp

    from kubesched.apiserver.testing import start_server

    d = tempfile.mkdtemp(prefix="durability-http-")
    try:
        async with start_server(None, data_dir=d, tls=False, token=None, fsync=fsync) as srv:
            async with aiohttp.ClientSession() as session:
                url = f"{srv.url}/api/v1/namespaces/default/configmaps"
                t0 = time.perf_counter()
                for i in range(writes):
                    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"},
                            "data": {"k": "v" * 200}}
                    async with session.post(url, json=body) as r:
                        assert r.status == 201, await r.text()
                return writes / (time.perf_counter() - t0)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--http-writes", type=int, default=500)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for fsync in (True, False):
        mode = "fsync (default)" if fsync else "--unsafe-no-fsync"
        rate, per = store_rate(fsync, args.writes)
        http = asyncio.run(http_rate(fsync, args.http_writes))
        syncs = f"{per:.2f} fdatasync/write" if per is not None else "strace not installed"
        print(f"{mode:18s} store {rate:8.0f} writes/s  ({syncs})   HTTP POST {http:6.0f} writes/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
