"""A Ray cluster on loopback for tests and benchmarks: a head (``ray start --head``) and worker
nodes (``ray start --address``), each a ``ray start --block`` process in its own session.

Ray on Linux replaces 127.0.0.1 by the machine's routable address; the nodes use 127.0.0.2
(loopback too) so no traffic leaves the machine. Token authentication is off for this
loopback-only cluster (``RAY_AUTH_MODE=disabled``; a driver in this process needs the same, see
:meth:`LocalRayCluster.connect`).

A raylet gives its agents 15 s to report their ports and aborts otherwise; on a machine whose
CPU is saturated (a shared CI box, work running in parallel) their Python start-up takes longer
than that. Each node runs in its own session, hence its own scheduler autogroup
(``/proc/PID/autogroup``), which starts at the highest priority this process may give it (as
root: nice −20) and goes back to 0 once the nodes are up: only start-up is favoured, the runs
(workers) are not.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["HOST", "LocalRayCluster"]

HOST = "127.0.0.2"
START_TIMEOUT = 240.0
RAY = str(Path(sys.executable).with_name("ray"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _autogroup_nice(pid: int, nice: int) -> None:
    """The CPU share of the autogroup (session) of ``pid``, as a nice value (Linux, root for < 0)."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as fh:
            fh.write(str(nice))
    except OSError:  # no autogroups, or not allowed: the default share
        pass


class LocalRayCluster:
    """Start with :meth:`start_head` / :meth:`start_worker`, :meth:`wait` for the nodes (this
    process becomes the cluster's driver), :meth:`kill` a node, :meth:`stop` everything.
    ``pythonpath``: what the nodes' workers import kubesched from."""

    def __init__(self, pythonpath: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="ksr", dir="/tmp")  # short: Ray's unix socket paths
        self.port = _free_port()
        self.address = f"{HOST}:{self.port}"
        self.pythonpath = pythonpath
        self.logs: dict[str, Path] = {}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(PYTHONPATH=self.pythonpath, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
        return env

    def _start(self, name: str, args: list[str], num_cpus: int) -> None:
        log = Path(self.tmp) / f"{name}.log"
        self.logs[name] = log
        with open(log, "wb") as fh:
            self.procs[name] = subprocess.Popen(
                [RAY, "start", *args, f"--node-ip-address={HOST}", f"--num-cpus={num_cpus}",
                 "--object-store-memory=80000000", "--disable-usage-stats", "--block"],
                stdout=fh, stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)
            _autogroup_nice(self.procs[name].pid, -20)

    def start_head(self, num_cpus: int = 1) -> None:
        self._start("head", ["--head", f"--port={self.port}", "--include-dashboard=false",
                             f"--temp-dir={self.tmp}/ray"], num_cpus)

    def start_worker(self, name: str = "worker", num_cpus: int = 1) -> None:
        self._start(name, [f"--address={self.address}"], num_cpus)

    def connect(self) -> Any:
        import ray

        if not ray.is_initialized():
            os.environ["RAY_AUTH_MODE"] = "disabled"
            ray.init(address=self.address, _node_ip_address=HOST, log_to_driver=False, logging_level=logging.ERROR)
        return ray

    def wait(self, nodes: int) -> None:
        """Until ``nodes`` nodes are alive (connecting this process as the driver)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    tail = self.logs[name].read_text(errors="replace")[-1500:]
                    raise RuntimeError(f"ray {name} exited with {p.returncode}:\n{tail}")
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(1)
                continue
            ray = self.connect()
            if sum(1 for n in ray.nodes() if n["Alive"]) >= nodes:
                for p in self.procs.values():  # back to the default share
                    _autogroup_nice(p.pid, 0)
                return
            time.sleep(1)
        raise TimeoutError(f"{nodes} Ray node(s) not up in {START_TIMEOUT:.0f}s")

    def kill(self, name: str) -> None:
        """SIGKILL a node's session: its raylet and workers go with it."""
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=30)

    def stop(self) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        for name in list(self.procs):
            p = self.procs.pop(name)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
