"""``kubesched sweep`` on a real Ray cluster on loopback: a head (``ray start --head``) and one
worker node (``ray start --address``), one CPU each, started by the test.

A small sweep runs across both nodes; the worker node is killed mid-sweep and the sweep still
completes (Ray retries the lost runs on the head); a sweep driver killed mid-sweep resumes
without redoing the runs it finished.

Ray on Linux replaces 127.0.0.1 by the machine's routable address; the nodes use 127.0.0.2
(loopback too) so no traffic leaves the machine. Token authentication is off for this
loopback-only cluster (``RAY_AUTH_MODE=disabled``).

A raylet gives its agents 15 s to report their ports and aborts otherwise; on a machine whose
CPU is saturated (a shared CI box, helpers running in parallel) their Python start-up takes
longer than that. Each node runs in its own session, hence its own scheduler autogroup
(``/proc/PID/autogroup``), which starts at the highest priority this process may give it (as
root: nice −20) and goes back to 0 once the nodes are up: only start-up is favoured, the runs
(workers) are not.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.sweep.execute import load_done, run_plan
from kubesched.sweep.spec import load_spec

ray = pytest.importorskip("ray")  # the `sweep` extra (make setup installs it)

SRC = str(Path(__file__).resolve().parents[2] / "src")
RAY = str(Path(sys.executable).with_name("ray"))
HOST = "127.0.0.2"
START_TIMEOUT = 240.0


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


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=SRC, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    return env


class Cluster:
    """Head + worker node processes (``ray start --block``, each its own process group)."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="ksr", dir="/tmp")  # short: Ray's unix socket paths
        self.port = _free_port()
        self.address = f"{HOST}:{self.port}"
        self.logs: dict[str, Path] = {}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def _start(self, name: str, args: list[str]) -> None:
        log = Path(self.tmp) / f"{name}.log"
        self.logs[name] = log
        with open(log, "wb") as fh:
            self.procs[name] = subprocess.Popen(
                [RAY, "start", *args, f"--node-ip-address={HOST}", "--num-cpus=1",
                 "--object-store-memory=80000000", "--disable-usage-stats", "--block"],
                stdout=fh, stderr=subprocess.STDOUT, env=_env(), start_new_session=True)
            _autogroup_nice(self.procs[name].pid, -20)

    def start_head(self) -> None:
        self._start("head", ["--head", f"--port={self.port}", "--include-dashboard=false",
                             f"--temp-dir={self.tmp}/ray"])

    def start_worker(self) -> None:
        self._start("worker", [f"--address={self.address}"])

    def alive_nodes(self) -> int:
        return sum(1 for n in ray.nodes() if n["Alive"])

    def wait(self, nodes: int) -> None:
        """Until ``nodes`` nodes are alive (connecting this process as the driver)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    tail = self.logs[name].read_text(errors="replace")[-1500:]
                    raise RuntimeError(f"ray {name} exited with {p.returncode}:\n{tail}")
            if not ray.is_initialized():
                try:
                    with socket.create_connection((HOST, self.port), timeout=1):
                        pass
                except OSError:
                    time.sleep(1)
                    continue
                ray.init(address=self.address, _node_ip_address=HOST, log_to_driver=False, logging_level="ERROR")
            if self.alive_nodes() >= nodes:
                self._unboost()
                return
            time.sleep(1)
        raise TimeoutError(f"{nodes} Ray node(s) not up in {START_TIMEOUT:.0f}s")

    def _unboost(self) -> None:
        """The nodes' sessions (and the workers their raylets start) back to the default share."""
        for p in self.procs.values():
            _autogroup_nice(p.pid, 0)

    def kill(self, name: str) -> None:
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the node's raylet and workers go with it
        except ProcessLookupError:
            pass
        p.wait(timeout=30)

    def stop(self) -> None:
        if ray.is_initialized():
            ray.shutdown()
        for name in list(self.procs):
            p = self.procs[name]
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
            self.procs.pop(name)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # this process is the driver
    c = Cluster()
    try:
        c.start_head()
        c.wait(1)
        c.start_worker()
        c.wait(2)
        yield c
    finally:
        c.stop()


def spec(tmp_path: Path, seeds: int) -> str:
    root = Path(__file__).resolve().parents[2]
    p = tmp_path / "spec.yaml"
    p.write_text(f"""\
apiVersion: kubesched.io/v1alpha1
kind: Sweep
name: ray
inputs:
  - name: quickstart
    files: [{root / "examples" / "quickstart"}]
configs:
  grid:
    - name: strategy
      path: profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type
      values: [LeastAllocated, MostAllocated]
seeds: {list(range(1, seeds + 1))}
metrics: [scheduled, pending, nodes_used]
""")
    return str(p)


@pytest.mark.timeout(600)
def test_sweep_on_a_two_node_cluster_survives_a_lost_worker_and_resumes(cluster: Cluster, tmp_path: Path) -> None:
    # 1. a small sweep over both nodes; the worker node is killed once the first result is in
    plan = load_spec(spec(tmp_path, seeds=6))
    out = tmp_path / "out"
    killed: list[int] = []

    def kill_worker(run, res) -> None:
        if not killed:
            killed.append(1)
            cluster.kill("worker")

    res = run_plan(plan, str(out), address=cluster.address, on_result=kill_worker)
    assert killed and res.failed == [] and res.ran == len(plan.runs) == 12
    assert all(r["status"] == "ok" for r in res.results.values())
    serial = run_plan(load_spec(spec(tmp_path, seeds=6)), str(tmp_path / "serial"), serial=True)
    # same decisions as in one process (runs are deterministic for a seed)
    assert {k: v["metrics"]["nodes_used"] for k, v in res.results.items()} == \
        {k: v["metrics"]["nodes_used"] for k, v in serial.results.items()}

    # 2. a driver interrupted mid-sweep (killed after some results are in) resumes
    (tmp_path / "b").mkdir()
    spec2 = spec(tmp_path / "b", seeds=8)
    out2 = tmp_path / "out2"
    env = _env()
    drv = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "sweep", spec2, "-o", str(out2),
                            "--address", cluster.address, "--no-plots"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    try:
        while len(load_done(str(out2))) < 3:
            assert drv.poll() is None, drv.stderr.read().decode() if drv.stderr else ""
            assert time.monotonic() < deadline, "the driver finished no run in time"
            time.sleep(0.2)
    finally:
        if drv.poll() is None:
            os.killpg(drv.pid, signal.SIGKILL)
        drv.wait(timeout=30)
    done = load_done(str(out2))
    assert 3 <= len(done) < 16
    res2 = run_plan(load_spec(spec2), str(out2), address=cluster.address)
    assert res2.skipped == len(done) and res2.ran == 16 - len(done) and res2.failed == []
