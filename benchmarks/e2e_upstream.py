#!/usr/bin/env python
"""End to end through a real kube-apiserver: pods/s from the first pod created to the last bound.

    python benchmarks/e2e_upstream.py --nodes 5000 --pods 10000                 # upstream kube-scheduler
    python benchmarks/e2e_upstream.py --nodes 500 --pods 1000 --scheduler-cmd \\
        'kubesched run --kubeconfig {kubeconfig} --config {config}'           # any scheduler command

Starts etcd + kube-apiserver v1.34 (``make upstream``; :mod:`kubesched.testing.upstream`),
creates the nodes (scheduler_perf's ``node-default.yaml``: 4 cpu, 32Gi, 110 pods, Ready), starts
the scheduler with one ``KubeSchedulerConfiguration`` (default profile, leader election off,
``clientConnection`` QPS/burst 5000 as scheduler_perf uses — the v1 default of 50/100 would cap
binding at ~50 pods/s), then creates the pods (``pod-default.yaml``: 100m / 500Mi) from
``--creators`` threads while one watch records when each pod is first seen with
``spec.nodeName``. Prints one line: nodes, pods, create rate, pods/s first-create→last-bind, and
the load average. The creators (Python, TLS) top out at a few hundred pods/s on a small
machine, so that figure is bounded by them when the scheduler keeps up; ``--backlog`` creates
every pod first and times from the scheduler's start (informer sync included) to the last bind. Without ``--scheduler-cmd`` the scheduler is upstream kube-scheduler; with it,
``{kubeconfig}`` and ``{config}`` are replaced by paths and the command runs in a shell.

Figures depend on the machine's load; nothing here is a test assertion.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from typing import Any

try:
    from kubesched.testing import upstream
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    from kubesched.testing import upstream

import yaml

NODE = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
               "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}
POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
    "spec": {"containers": [{
        "image": "registry.k8s.io/pause:3.10.1", "name": "pause", "ports": [{"containerPort": 80}],
        "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                      "requests": {"cpu": "100m", "memory": "500Mi"}}}]},
}
NAMESPACE = "e2e"


class Client:
    """One keep-alive HTTPS connection (http.client) to the control plane as user kubesched."""

    def __init__(self, cp: upstream.ControlPlane, timeout: float = 60.0) -> None:
        host, port = cp.url.removeprefix("https://").split(":")
        self.conn = http.client.HTTPSConnection(host, int(port), context=cp.ssl_context(), timeout=timeout)
        self.headers = {"Authorization": f"Bearer {cp.tokens['kubesched']}",
                        "Content-Type": "application/json", "Accept": "application/json"}

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.conn.request("POST", path, json.dumps(body), self.headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.status != 201:
            raise RuntimeError(f"POST {path}: HTTP {r.status}: {data[:300]!r}")
        out: dict[str, Any] = json.loads(data)
        return out


def create_all(cp: upstream.ControlPlane, path: str, body: dict[str, Any], count: int, threads: int) -> float:
    """Create ``count`` objects from ``threads`` threads; returns the wall time."""
    counter = iter(range(count))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        c = Client(cp)
        while True:
            with lock:
                i = next(counter, None)
            if i is None or errors:
                return
            try:
                c.post(path, body)
            except (OSError, RuntimeError, http.client.HTTPException) as e:  # reported below
                errors.append(e)
                return

    t0 = time.monotonic()
    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
    return time.monotonic() - t0


class BindWatch(threading.Thread):
    """Records the first time each pod of the namespace is seen bound, as a reflector would:
    list, then watch from the list's resourceVersion; when the server ends the watch (the
    watch cache closes consumers that fall behind) or sends an ERROR, list and watch again.
    Pods found bound by a relist are stamped with the relist time (a slight overestimate)."""

    def __init__(self, cp: upstream.ControlPlane) -> None:
        super().__init__(daemon=True)
        self.cp = cp
        self.bound: dict[str, float] = {}
        self.rewatches = 0
        self.error: str | None = None
        self.stop = threading.Event()

    def _seen(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if obj["spec"].get("nodeName") and name not in self.bound:
            self.bound[name] = time.monotonic()

    def run(self) -> None:
        base = f"/api/v1/namespaces/{NAMESPACE}/pods"
        while not self.stop.is_set():
            c = Client(self.cp, timeout=600)
            c.conn.request("GET", base, headers=c.headers)
            r = c.conn.getresponse()
            lst = json.loads(r.read())
            if r.status != 200:
                self.error = f"list: HTTP {r.status}"
                return
            for obj in lst["items"]:
                self._seen(obj)
            rv = lst["metadata"]["resourceVersion"]
            c.conn.request("GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=3600", headers=c.headers)
            r = c.conn.getresponse()
            if r.status != 200:
                self.error = f"watch: HTTP {r.status}"
                return
            while not self.stop.is_set():
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev["type"] == "ERROR":
                    break
                self._seen(ev["object"])
            c.conn.close()
            self.rewatches += 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--creators", type=int, default=8, help="threads creating objects")
    ap.add_argument("--scheduler-cmd", help="shell command of the scheduler under test ({kubeconfig}, {config})")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds to wait for all pods to be bound")
    ap.add_argument("--backlog", action="store_true",
                    help="create every pod first, then start the scheduler; time from its start to the last bind")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    a = ap.parse_args(argv)

    config: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "clientConnection": {"qps": 5000, "burst": 5000}, "leaderElection": {"leaderElect": False}}
    try:
        cp = upstream.ControlPlane.start(extra_apiserver_args=["--max-requests-inflight=2000",
                                                               "--max-mutating-requests-inflight=1000"])
    except upstream.UpstreamNotBuilt as e:
        print(e, file=sys.stderr)
        return 2
    ext: subprocess.Popen[bytes] | None = None
    watch: BindWatch | None = None
    try:
        c = Client(cp)
        c.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        t_nodes = create_all(cp, "/api/v1/nodes", NODE, a.nodes, a.creators)
        def start_scheduler() -> str:
            nonlocal ext
            if not a.scheduler_cmd:
                cp.start_kube_scheduler(config)
                return f"kube-scheduler {cp.binaries.version}"
            cfg_path = cp.workdir / "scheduler-config.yaml"
            kubeconfig = cp.kubeconfig_for("kubesched")
            cfg_path.write_text(yaml.safe_dump({**config, "clientConnection": {
                **config["clientConnection"], "kubeconfig": str(kubeconfig)}}))
            cmd = a.scheduler_cmd.format(kubeconfig=shlex.quote(str(kubeconfig)), config=shlex.quote(str(cfg_path)))
            log = open(cp.workdir / "scheduler-under-test.log", "wb")  # noqa: SIM115 - closed at exit
            ext = subprocess.Popen(cmd, shell=True, stdout=log, stderr=subprocess.STDOUT)
            if not a.backlog:
                time.sleep(5)  # no common readiness probe for an arbitrary command
            return str(a.scheduler_cmd.split()[0])

        watch = BindWatch(cp)
        if a.backlog:
            # all pods exist before the scheduler starts: measures the scheduler, not the creators
            t_pods = create_all(cp, f"/api/v1/namespaces/{NAMESPACE}/pods", POD, a.pods, a.creators)
            watch.start()
            t0 = time.monotonic()
            name = start_scheduler()
        else:
            name = start_scheduler()
            watch.start()
            t0 = time.monotonic()
            t_pods = create_all(cp, f"/api/v1/namespaces/{NAMESPACE}/pods", POD, a.pods, a.creators)
        deadline = time.monotonic() + a.timeout
        while len(watch.bound) < a.pods and time.monotonic() < deadline and watch.error is None:
            time.sleep(0.2)
        bound = len(watch.bound)
        last = max(watch.bound.values(), default=t0)
        first = min(watch.bound.values(), default=t0)
        res = {
            "scheduler": name, "nodes": a.nodes, "pods": a.pods, "bound": bound,
            "node_create_s": round(t_nodes, 1), "pod_create_s": round(t_pods, 1),
            "create_pods_per_s": round(a.pods / t_pods, 1),
            "mode": "backlog (scheduler start → last bind)" if a.backlog else "first create → last bind",
            "first_create_to_last_bind_s": round(last - t0, 1),
            "pods_per_s": round(bound / (last - t0), 1) if last > t0 else 0.0,
            "first_to_last_bind_pods_per_s": round(bound / (last - first), 1) if last > first else 0.0,
            "loadavg": [round(x, 2) for x in os.getloadavg()], "watch_error": watch.error,
            "rewatches": watch.rewatches,
        }
        if a.json:
            print(json.dumps(res))
        else:
            print(f"{name}: {a.nodes} nodes, {bound}/{a.pods} pods bound; created at "
                  f"{res['create_pods_per_s']} pods/s; {res['mode']} "
                  f"{res['first_create_to_last_bind_s']} s = {res['pods_per_s']} pods/s; first → last "
                  f"bind {res['first_to_last_bind_pods_per_s']} pods/s (load {res['loadavg']})")
        return 0 if bound == a.pods else 1
    finally:
        if watch is not None:
            watch.stop.set()
        if ext is not None:
            ext.terminate()
            try:
                ext.wait(timeout=15)
            except subprocess.TimeoutExpired:
                ext.kill()
        cp.stop()


if __name__ == "__main__":
    sys.exit(main())
