"""Benchmark of the box API server (``kubesched apiserver``) — prints figures, asserts nothing on speed.

    PYTHONPATH=src python benchmarks/apiserver.py [--nodes 5000] [--pods 30000] [--bindings 30000]

Runs the server as a child process (``--data-dir`` in a temp dir) and drives it over HTTPS with
aiohttp (32 requests in flight):

1. create N nodes and M pods (objects/s);
2. list all pods (ms, client side, including decoding; full list and paginated with limit=500,
   as informers do);
3. start 3 watchers on pods, bind B pods (bindings/s sustained) and measure when all 3
   watchers have seen every binding (fan-out);
4. server RSS (from /proc);
5. stop the server, start it again on the same data dir: startup time, and every object
   (name, resourceVersion, nodeName) is back; RVs continue increasing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml

ROOT = Path(__file__).resolve().parents[1]


class Server:
    def __init__(self, data_dir: Path, kubeconfig: Path, http: bool = False) -> None:
        self.data_dir, self.kubeconfig, self.http = data_dir, kubeconfig, http
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.token = ""
        self.ssl: ssl.SSLContext | None = None

    def start(self) -> float:
        if self.kubeconfig.exists():
            self.kubeconfig.unlink()
        t0 = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0", "--data-dir",
             str(self.data_dir), "--write-kubeconfig", str(self.kubeconfig),
             *(["--insecure-http"] if self.http else [])],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("server failed to start")
            time.sleep(0.02)
        kc = yaml.safe_load(self.kubeconfig.read_text())
        cluster = kc["clusters"][0]["cluster"]
        self.url = cluster["server"]
        self.token = kc["users"][0]["user"]["token"]
        ca = cluster.get("certificate-authority-data")
        self.ssl = ssl.create_default_context(cadata=base64.b64decode(ca).decode()) if ca else None
        return time.perf_counter() - t0

    def rss_mib(self) -> float:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
            self.proc = None


def node(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                                              "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:05d}", "namespace": "default", "labels": {"app": f"app-{i % 50}"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


async def run_many(session: aiohttp.ClientSession, srv: Server, reqs: list[tuple[str, str, bytes]],
                   concurrency: int = 32) -> float:
    headers = {"Authorization": f"Bearer {srv.token}", "Content-Type": "application/json"}
    it = iter(reqs)
    errors: list[str] = []

    async def worker() -> None:
        for method, path, body in it:
            async with session.request(method, srv.url + path, data=body, headers=headers, ssl=srv.ssl) as r:
                if r.status >= 300:
                    errors.append(f"{method} {path}: {r.status} {await r.text()}")
                await r.read()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    dt = time.perf_counter() - t0
    if errors:
        raise SystemExit(f"{len(errors)} errors, first: {errors[0]}")
    return dt


async def get_json(session: aiohttp.ClientSession, srv: Server, path: str) -> tuple[float, Any]:
    t0 = time.perf_counter()
    async with session.get(srv.url + path, headers={"Authorization": f"Bearer {srv.token}"}, ssl=srv.ssl) as r:
        data = await r.read()
    dt = time.perf_counter() - t0
    return dt, orjson.loads(data)


async def watcher(session: aiohttp.ClientSession, srv: Server, rv: str, want: int,
                  done: asyncio.Future[float]) -> None:
    seen = 0
    buf = b""
    url = f"{srv.url}/api/v1/pods?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
    async with session.get(url, headers={"Authorization": f"Bearer {srv.token}"}, ssl=srv.ssl,
                           timeout=aiohttp.ClientTimeout(total=None)) as r:
        async for chunk in r.content.iter_any():
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                ev = orjson.loads(line)
                if ev["type"] == "MODIFIED" and ev["object"]["spec"].get("nodeName"):
                    seen += 1
            if seen >= want:
                done.set_result(time.perf_counter())
                return


async def bench(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-bench-"))
    srv = Server(tmp / "data", tmp / "kubeconfig", http=args.http)
    t_start = srv.start()
    print(f"server started in {t_start * 1000:.0f} ms (pid {srv.proc.pid if srv.proc else '?'}; data {tmp})")
    conn = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(connector=conn) as s:
        reqs = [("POST", "/api/v1/nodes", orjson.dumps(node(i))) for i in range(args.nodes)]
        dt = await run_many(s, srv, reqs)
        print(f"create {args.nodes} nodes: {dt:.1f} s ({args.nodes / dt:.0f}/s)")
        reqs = [("POST", "/api/v1/namespaces/default/pods", orjson.dumps(pod(i))) for i in range(args.pods)]
        dt = await run_many(s, srv, reqs)
        print(f"create {args.pods} pods: {dt:.1f} s ({args.pods / dt:.0f}/s)")

        times = []
        for _ in range(5):
            dt, body = await get_json(s, srv, "/api/v1/pods")
            times.append(dt)
        assert len(body["items"]) == args.pods
        print(f"list {args.pods} pods (one request): best {min(times) * 1000:.0f} ms, "
              f"median {sorted(times)[2] * 1000:.0f} ms")
        t0 = time.perf_counter()
        n, token = 0, ""
        while True:
            _, page = await get_json(s, srv, f"/api/v1/pods?limit=500{'&continue=' + token if token else ''}")
            n += len(page["items"])
            token = page["metadata"].get("continue", "")
            if not token:
                break
        print(f"list {n} pods paginated (limit=500): {(time.perf_counter() - t0) * 1000:.0f} ms")
        dt, body = await get_json(s, srv, "/api/v1/nodes")
        print(f"list {len(body['items'])} nodes: {dt * 1000:.0f} ms")
        dt, body = await get_json(s, srv, "/api/v1/pods?fieldSelector=status.phase!%3DSucceeded,"
                                          "status.phase!%3DFailed")
        print(f"list pods with the scheduler's field selector: {dt * 1000:.0f} ms ({len(body['items'])} items)")
        print(f"server RSS after load: {srv.rss_mib():.0f} MiB")

        rv = body["metadata"]["resourceVersion"]
        nb = min(args.bindings, args.pods)
        loop = asyncio.get_running_loop()
        dones: list[asyncio.Future[float]] = [loop.create_future() for _ in range(3)]
        tasks = [asyncio.create_task(watcher(s, srv, rv, nb, d)) for d in dones]
        await asyncio.sleep(0.5)
        reqs = [("POST", f"/api/v1/namespaces/default/pods/pod-{i:05d}/binding",
                 orjson.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"pod-{i:05d}"},
                               "target": {"kind": "Node", "name": f"node-{i % args.nodes:05d}"}}))
                for i in range(nb)]
        t0 = time.perf_counter()
        dt = await run_many(s, srv, reqs)
        print(f"bind {nb} pods: {dt:.1f} s ({nb / dt:.0f} bindings/s sustained) with 3 pod watchers open")
        ends = await asyncio.wait_for(asyncio.gather(*dones), timeout=600)
        print(f"watch fan-out: all 3 watchers saw all {nb} bindings {max(ends) - t0 - dt:+.2f} s after the "
              f"last binding returned ({nb * 3 / (max(ends) - t0):.0f} events/s delivered)")
        for t in tasks:
            t.cancel()
        print(f"server RSS after bindings: {srv.rss_mib():.0f} MiB")
        _, before = await get_json(s, srv, "/api/v1/pods")
        _, nbefore = await get_json(s, srv, "/api/v1/nodes")
    srv.stop()
    db = tmp / "data" / "state.db"
    print(f"data dir size: {sum(f.stat().st_size for f in (tmp / 'data').glob('state.db*')) / 2**20:.0f} MiB "
          f"({db.name} + WAL)")
    t_start = srv.start()
    print(f"restart on the same data dir: ready in {t_start * 1000:.0f} ms")
    async with aiohttp.ClientSession() as s:
        _, after = await get_json(s, srv, "/api/v1/pods")
        _, nafter = await get_json(s, srv, "/api/v1/nodes")
        key = lambda o: (o["metadata"]["name"], o["metadata"]["resourceVersion"], o["spec"].get("nodeName"))
        same = sorted(map(key, before["items"])) == sorted(map(key, after["items"]))
        nsame = [o["metadata"]["resourceVersion"] for o in nbefore["items"]] == \
                [o["metadata"]["resourceVersion"] for o in nafter["items"]]
        print(f"after restart: {len(after['items'])} pods, {len(nafter['items'])} nodes; "
              f"identical (name, resourceVersion, nodeName): {same and nsame}; "
              f"list RV {before['metadata']['resourceVersion']} -> {after['metadata']['resourceVersion']}")
        reqs = [("POST", "/api/v1/namespaces/default/configmaps",
                 orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-restart"}}))]
        await run_many(s, srv, reqs, 1)
        _, cm = await get_json(s, srv, "/api/v1/namespaces/default/configmaps/after-restart")
        print(f"first write after restart got resourceVersion {cm['metadata']['resourceVersion']} "
              f"(> {after['metadata']['resourceVersion']})")
        print(f"server RSS after restart: {srv.rss_mib():.0f} MiB")
    srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=30000)
    ap.add_argument("--bindings", type=int, default=30000)
    ap.add_argument("--http", action="store_true", help="plain HTTP instead of HTTPS (to see the cost of TLS)")
    asyncio.run(bench(ap.parse_args()))


if __name__ == "__main__":
    main()
