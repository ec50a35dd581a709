"""``kubesched sweep`` on a real Ray cluster on loopback: a head (``ray start --head``) and one
worker node (``ray start --address``), one CPU each, started by the test
(:class:`kubesched.testing.raycluster.LocalRayCluster`).

A small sweep runs across both nodes; the worker node is killed mid-sweep and the sweep still
completes (Ray retries the lost runs on the head); a sweep driver killed mid-sweep resumes
without redoing the runs it finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.sweep.execute import load_done, run_plan
from kubesched.sweep.spec import load_spec
from kubesched.testing.raycluster import LocalRayCluster

pytest.importorskip("ray")  # the `sweep` extra (make setup installs it)

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalRayCluster]:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # this process is the driver
    c = LocalRayCluster(SRC)
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
def test_sweep_on_a_two_node_cluster_survives_a_lost_worker_and_resumes(cluster: LocalRayCluster,
                                                                         tmp_path: Path) -> None:
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
    env = cluster.env()
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
