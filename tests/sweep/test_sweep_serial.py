"""``kubesched sweep --serial``: runs, metrics, outputs, a failing run, resume (no Ray here;
tests/sweep/test_ray.py runs the same on a real Ray cluster)."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.sim.alibaba import TracePod
from kubesched.sweep.execute import run_plan
from kubesched.sim.replay import scale_arrivals
from kubesched.sweep.runner import pending_reasons
from kubesched.sweep.spec import load_spec

NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}}}
status: {{allocatable: {{cpu: "4", memory: 4Gi, pods: "110"{gpu}}}}}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1", memory: 1Gi{gpu}}}{limits}}}}}]
---
"""


def cluster(tmp_path: Path, *, gpus: int = 0, pods: int = 3, pod_gpus: int = 0) -> Path:
    """Three identical nodes (4 cpu, 4Gi; ``gpus`` nvidia.com/gpu each) in zones a, b, c and
    ``pods`` pending pods of 1 cpu / 1Gi (``pod_gpus`` GPUs each)."""
    d = tmp_path / "cluster"
    d.mkdir(exist_ok=True)
    g = f', nvidia.com/gpu: "{gpus}"' if gpus else ""
    text = "".join(NODE.format(name=f"n{i}", zone=z, gpu=g) for i, z in enumerate("abc"))
    pg = f', nvidia.com/gpu: "{pod_gpus}"' if pod_gpus else ""
    lim = f', limits: {{nvidia.com/gpu: "{pod_gpus}"}}' if pod_gpus else ""
    text += "".join(POD.format(name=f"p{i}", gpu=pg, limits=lim) for i in range(pods))
    (d / "all.yaml").write_text(text)
    return d


def spec_file(tmp_path: Path, files: Path, *, seeds: str = "[1, 2]", metrics: str = "") -> str:
    p = tmp_path / "spec.yaml"
    p.write_text(textwrap.dedent(f"""\
        apiVersion: kubesched.io/v1alpha1
        kind: Sweep
        name: packing
        inputs:
          - name: three
            files: [{files}]
        configs:
          grid:
            - name: strategy
              path: profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type
              values: [LeastAllocated, MostAllocated]
        seeds: {seeds}
        """) + metrics)
    return str(p)


# ───────────────────────────── metrics helpers ─────────────────────────────

def test_pending_reasons_of_upstream_fit_errors() -> None:
    # messages from upstream's FitError tests (pkg/scheduler/framework/types_test.go)
    msgs = ["0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
            "2 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin FailedPostFilter",
            "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.",
            "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.",
            "pod has unbound immediate PersistentVolumeClaims"]
    assert pending_reasons(msgs) == {"Node(s) failed Filter plugin FalseFilter-1": 2,
                                     "Node(s) failed Filter plugin FalseFilter-2": 1,
                                     "Node(s) failed PreFilter plugin FalsePreFilter": 1,
                                     "pod has unbound immediate PersistentVolumeClaims": 1}


def test_scale_arrivals_keeps_lifetimes() -> None:
    p = TracePod("a", 100.0, 160.0, None, None, None, 1000, 1024, 0, 0)
    q = TracePod("b", 50.0, None, None, None, None, 1000, 1024, 0, 0)
    a, b = scale_arrivals([p, q], 10.0)
    assert (a.creation_time, a.deletion_time) == (10.0, 70.0)
    assert (b.creation_time, b.deletion_time) == (5.0, None)


# ───────────────────────────── a sweep ─────────────────────────────

def test_serial_sweep_metrics_and_outputs(tmp_path: Path) -> None:
    plan = load_spec(spec_file(tmp_path, cluster(tmp_path)))
    out = tmp_path / "out"
    res = run_plan(plan, str(out), serial=True)
    assert (res.ran, res.skipped, res.failed) == (4, 0, [])
    by = {(r.config, r.seed): res.results[r.key]["metrics"] for r in plan.runs}
    for seed in (1, 2):
        least, most = by[("strategy=LeastAllocated", seed)], by[("strategy=MostAllocated", seed)]
        # upstream's scoring strategies: LeastAllocated spreads the three pods over the three
        # empty nodes, MostAllocated stacks them on one (cpu and memory in the nodes' proportion,
        # so NodeResourcesBalancedAllocation scores every node alike)
        assert least["nodes_used"] == 3 and least["zone_skew"] == 0
        assert most["nodes_used"] == 1 and most["zone_skew"] == 3
        for m in (least, most):
            assert (m["scheduled"], m["pending"], m["preemptions"]) == (3, 0, 0)
            assert m["util_cpu"] == pytest.approx(3 / 12)
    # the table: one row per run, a column per parameter and per metric
    r = CliRunner().invoke(main, ["sweep", plan.path, "-o", str(out), "--serial", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "resumed: 4 of 4 runs were already done" in r.output
    with open(out / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 4 and {row["strategy"] for row in table} == {"LeastAllocated", "MostAllocated"}
    assert {"run", "input", "config", "seed", "status", "nodes_used", "util_cpu", "pending_reasons"} <= set(table[0])
    # the summary names the best configuration per metric, the spread over seeds
    assert "nodes_used" in r.output and "strategy=MostAllocated" in r.output
    page = (out / "index.html").read_text()
    assert "id='summary'" in page and "id='runs'" in page and "data:image/png;base64," in page
    assert (out / "plots" / "nodes_used.png").stat().st_size > 0


def test_parquet_table(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    spec = spec_file(tmp_path, cluster(tmp_path), seeds="[1]", metrics="metrics: [scheduled, nodes_used]\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["sweep", spec, "-o", str(out), "--serial", "--no-plots"])
    assert r.exit_code == 0, r.output
    t = pq.read_table(out / "results.parquet").to_pylist()
    assert sorted((row["strategy"], row["nodes_used"]) for row in t) == [("LeastAllocated", 3), ("MostAllocated", 1)]


def test_gpu_fragmentation(tmp_path: Path) -> None:
    # one pod of 2 GPUs on three 8-GPU nodes: one GPU node partly used, its 6 free GPUs stranded
    spec = spec_file(tmp_path, cluster(tmp_path, gpus=8, pods=1, pod_gpus=2), seeds="[1]")
    plan = load_spec(spec)
    res = run_plan(plan, str(tmp_path / "out"), serial=True, progress=True)  # with the progress bar
    for r in plan.runs:
        m = res.results[r.key]["metrics"]
        assert (m["gpu_nodes_partial"], m["gpu_stranded"]) == (1, pytest.approx(6 / 24))
        assert m["util_gpu"] == pytest.approx(2 / 24)


def test_pending_reason_metric(tmp_path: Path) -> None:
    spec = spec_file(tmp_path, cluster(tmp_path, pods=1, pod_gpus=1), seeds="[1]")  # no node has a GPU
    plan = load_spec(spec)
    res = run_plan(plan, str(tmp_path / "out"), serial=True)
    m = res.results[plan.runs[0].key]["metrics"]
    assert m["pending"] == 1
    assert json.loads(m["pending_reasons"]) == {"Insufficient nvidia.com/gpu": 1}


def test_a_failing_run_is_reported_and_the_rest_go_on_then_retried(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_file(tmp_path, cluster(tmp_path))
    out = tmp_path / "out"
    monkeypatch.setenv("KUBESCHED_SWEEP_FAIL", "strategy=MostAllocated")
    r = CliRunner().invoke(main, ["sweep", spec, "-o", str(out), "--serial", "--no-plots", "--format", "csv"])
    assert r.exit_code == 1, r.output
    failed = [line for line in r.output.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 2 and all("MostAllocated" in f and "injected" in f for f in failed), r.output
    with open(out / "results.csv") as fh:
        assert sorted(row["status"] for row in csv.DictReader(fh)) == ["failed", "failed", "ok", "ok"]
    # a failed run is tried again by the next sweep over the folder; the finished ones are not
    monkeypatch.delenv("KUBESCHED_SWEEP_FAIL")
    res = run_plan(load_spec(spec), str(out), serial=True)
    assert (res.skipped, res.ran, res.failed) == (2, 2, [])


def test_resume_skips_finished_runs_and_a_changed_input_reruns(tmp_path: Path) -> None:
    files = cluster(tmp_path)
    spec = spec_file(tmp_path, files, seeds="[1, 2, 3]")
    out = tmp_path / "out"
    seen: list[str] = []

    class Stop(Exception):
        pass

    def interrupt(run, res) -> None:  # the sweep is interrupted after its second result
        seen.append(run.key)
        if len(seen) == 2:
            raise Stop

    with pytest.raises(Stop):
        run_plan(load_spec(spec), str(out), serial=True, on_result=interrupt)
    assert len(list((out / "runs").glob("*.json"))) == 2
    res = run_plan(load_spec(spec), str(out), serial=True)
    assert (res.skipped, res.ran) == (2, 4)
    assert set(seen) <= set(res.results) and len(res.results) == 6
    # another input is another run: nothing is reused
    (files / "all.yaml").write_text((files / "all.yaml").read_text().replace('cpu: "4"', 'cpu: "8"'))
    res = run_plan(load_spec(spec), str(out), serial=True)
    assert (res.skipped, res.ran) == (0, 6)

