"""Paths, the helm binary and what the image tests share (a uniquely named module: the test
directories' conftest modules share one name): a process's output read line by line with the
time each line came, a process's CPU seconds, the box's node/config set-up for ``kubesched run``
replicas and the wait for their leader and bindings."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

from kubesched.apiserver.launcher import ServerHandle
from kubesched.testing.upstream import http_request

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "kubesched"
_VERSION = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M)
assert _VERSION is not None
VERSION = _VERSION.group(1)
ARCHIVE = REPO / "out" / "image" / f"kubesched-{VERSION}.oci.tar"  # what ``make image`` writes
IMAGE_NAME = f"localhost/kubesched:{VERSION}"  # what ``podman load -i ARCHIVE`` names it (docs/deploy.md)
SYNCED = "Caches are synced"  # kubesched run's log line once its informers have listed


def helm_bin() -> Path:
    """Where ``tools/deploy/build-helm.sh`` (``make helm``) puts helm."""
    out = subprocess.run([str(REPO / "tools" / "deploy" / "build-helm.sh"), "--print-bin"], capture_output=True,
                         text=True, check=True)
    return Path(out.stdout.strip())


class Lines:
    """``stream`` (a process's text stdout) read in a thread; each line kept with its time in
    seconds since ``t0`` (``time.monotonic()``)."""

    def __init__(self, stream: IO[str], t0: float) -> None:
        self.t0 = t0
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append((time.monotonic() - self.t0, line))

    def first(self, needle: str) -> float | None:
        """Seconds from ``t0`` to the first line containing ``needle``; None before it came."""
        return next((t for t, line in list(self.lines) if needle in line), None)

    def wait_for(self, needle: str, timeout: float) -> float | None:
        deadline = time.monotonic() + timeout
        while (t := self.first(needle)) is None and time.monotonic() < deadline and self._thread.is_alive():
            time.sleep(0.05)
        return self.first(needle) if t is None else t

    def text(self, join_timeout: float = 30) -> str:
        """All the output (after the stream closed, or ``join_timeout`` seconds)."""
        self._thread.join(join_timeout)
        return "".join(line for _, line in self.lines)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (``/proc/PID/stat`` utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get(srv: ServerHandle, path: str) -> dict[str, Any] | None:
    status, _, body = http_request(srv.url + path, srv.token, srv.ssl_context(), "GET", None)
    return body if status == 200 else None


def replica_config(srv: ServerHandle, inside: Path) -> None:
    """Into ``inside`` (what a container sees at /etc/kubesched, the chart's ConfigMap volume):
    deploy/configmap.yaml's configuration pointed at ``srv``'s kubeconfig (copied in), with short
    leader-election periods, all owned by the image's user 65532; and one Ready node ``n1`` in
    ``srv``."""
    assert srv.kubeconfig_path is not None
    cm = yaml.safe_load((REPO / "deploy" / "configmap.yaml").read_text())
    cfg = yaml.safe_load(cm["data"]["config.yaml"])
    inside.mkdir(exist_ok=True)
    shutil.copy(srv.kubeconfig_path, inside / "kubeconfig")
    cfg["clientConnection"]["kubeconfig"] = "/etc/kubesched/kubeconfig"
    cfg["leaderElection"].update(leaseDuration="3s", renewDeadline="2s", retryPeriod="500ms")
    (inside / "config.yaml").write_text(yaml.safe_dump(cfg))
    for f in [inside, *inside.iterdir()]:
        os.chown(f, 65532, 65532)
    srv.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
        "kubernetes.io/hostname": "n1"}}, "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                      "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                      "conditions": [{"type": "Ready", "status": "True"}]}})


RUN_ARGS = ["run", "--config=/etc/kubesched/config.yaml", "--secure-port=0", "--bind-address=127.0.0.1", "--v=2"]


def lead_and_bind(srv: ServerHandle, procs: list[subprocess.Popen[str]],
                  t0: float) -> tuple[str, float, dict[str, str]]:
    """Wait for a Lease holder, then create three pods for kubesched and wait for their binding;
    returns (holder, seconds to a leader since ``t0``, pod → node)."""
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"
    holder = ""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not holder and all(p.poll() is None for p in procs):
        holder = (((get(srv, lease_path) or {}).get("spec") or {}).get("holderIdentity")) or ""
        time.sleep(0.2)
    started = time.monotonic() - t0
    bound: dict[str, str] = {}
    if not holder:
        return holder, started, bound
    for i in range(3):
        srv.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
                    "spec": {"schedulerName": "kubesched", "containers": [{"name": "c", "image": "x",
                             "resources": {"requests": {"cpu": "100m"}}}]}})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(bound) < 3:
        for i in range(3):
            pod = get(srv, f"/api/v1/namespaces/default/pods/p{i}")
            if pod and pod["spec"].get("nodeName"):
                bound[f"p{i}"] = pod["spec"]["nodeName"]
        time.sleep(0.2)
    assert all(p.poll() is None for p in procs), "a replica exited"
    # one leader all along: the same holder, never handed over
    spec = (get(srv, lease_path) or {}).get("spec") or {}
    assert spec.get("holderIdentity") == holder and not spec.get("leaseTransitions"), spec
    return holder, started, bound


@dataclass
class Replicas:
    """What :func:`run_two_replicas` saw: the Lease holder and seconds to it, pod → node, seconds
    to :data:`SYNCED` and CPU seconds then per replica, the replicas' output and exit codes."""

    holder: str
    leader_after: float
    bound: dict[str, str]
    synced: list[float | None]
    cpu: list[float]
    outs: list[str]
    returncodes: list[int | None]

    def check(self) -> None:
        """One leader all along, the three pods bound to n1, the lease acquired in the logs."""
        tails = "\n".join(f"--- replica {i}:\n{out[-3000:]}" for i, out in enumerate(self.outs))
        assert self.holder, f"no leader after 90s\n{tails}"
        assert self.bound == {"p0": "n1", "p1": "n1", "p2": "n1"}, f"{self.bound}\n{tails}"
        assert any("successfully acquired lease" in out for out in self.outs), tails


def run_two_replicas(srv: ServerHandle, start: Callable[[int], subprocess.Popen[str]],
                     pid_of: Callable[[int, subprocess.Popen[str]], int | None],
                     cleanup: Callable[[], object] = lambda: None) -> Replicas:
    """Start replicas 0 and 1 (``start(i)``: a process with text stdout, stderr merged), wait for
    :data:`SYNCED` in each one's output, take the CPU seconds of ``pid_of(i, proc)`` then, run
    :func:`lead_and_bind`, then SIGTERM both (killed after 60 s) and ``cleanup()``."""
    t0 = time.monotonic()
    procs = [start(i) for i in range(2)]
    logs = [Lines(p.stdout, t0) for p in procs if p.stdout is not None]
    holder, started, bound, synced, cpu = "", 0.0, {}, [], []
    try:
        synced = [log.wait_for(SYNCED, 90) for log in logs]
        pids = [pid_of(i, p) for i, p in enumerate(procs)]
        cpu = [cpu_seconds(pid) for pid in pids if pid]
        holder, started, bound = lead_and_bind(srv, procs, t0)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        cleanup()
    return Replicas(holder, started, bound, synced, cpu, [log.text() for log in logs], [p.returncode for p in procs])
