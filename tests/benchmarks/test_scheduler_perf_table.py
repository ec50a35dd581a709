"""benchmarks/scheduler_perf_coverage.py --run / --table (issue 18 §5): the side-by-side table of
kubesched bench against upstream's thresholds and upstream's own scheduler_perf results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "scheduler_perf_coverage.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _bench_line(workload: str, avg: float | None, per_cpu: float, load: float) -> dict:
    data = {} if avg is None else {"Average": avg, "Perc50": avg, "Perc90": avg, "Perc95": avg, "Perc99": avg}
    return {"version": "v1", "workload": workload, "podsPerCPUSecond": per_cpu, "loadAvg": [load, 1.0, 1.0],
            "overallPodsPerSecond": 42.0, "unschedulablePods": 0,
            "dataItems": [{"labels": {"Metric": "SchedulingThroughput",
                                      "Name": f"BenchmarkPerfScheduling/{workload}/ns"}, "data": data}]}


def test_table_from_bench_and_upstream_results(tmp_path: Path) -> None:
    jsonl = tmp_path / "perf.jsonl"
    lines = [
        _bench_line("SchedulingBasic/5000Nodes_10000Pods", 1000.0, 3000.0, 1.5),  # threshold 680: 3x = 2040
        {"_run": {"workload": "TopologySpreading/5000Nodes_5000Pods", "error": "timeout after 900 s",
                  "load_start": 3.0}},
        _bench_line("SchedulingBasic/5Nodes", None, 100.0, 0.5),  # no threshold, no 1-s sample
        _bench_line("SchedulingDaemonset/15000Nodes", 1.0, 1.0, 9.0),  # superseded by the next line
        _bench_line("SchedulingDaemonset/15000Nodes", 4000.0, 9000.0, 2.0),
    ]
    jsonl.write_text("".join(json.dumps(d) + "\n" for d in lines))
    up = tmp_path / "scheduler_perf" / "20261128T130000Z"
    up.mkdir(parents=True)
    (up / "BenchmarkPerfScheduling_benchmark_2026-11-28T13:05:00Z.json").write_text(json.dumps({"dataItems": [
        {"labels": {"Metric": "SchedulingThroughput",
                    "Name": "BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_10000Pods/namespace-2"},
         "data": {"Average": 500.0, "Perc50": 480.0, "Perc90": 600.0}},
        {"labels": {"Metric": "SchedulingDuration",
                    "Name": "BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_10000Pods/namespace-2"},
         "data": {"Duration": 21.5}}]}))
    (up / "run.json").write_text(json.dumps({"workload": "SchedulingBasic/5000Nodes_10000Pods", "wall_s": 80,
                                             "rc": 0, "load_start": 4.0, "load_end": 5.5}))
    failed = tmp_path / "scheduler_perf" / "20261128T140000Z"  # timed out: no data item, only run.json
    failed.mkdir()
    (failed / "run.json").write_text(json.dumps({"workload": "SchedulingPodAffinity/5000Nodes_5000Pods",
                                                 "wall_s": 1163, "rc": 1, "load_start": 13.0, "load_end": 29.9}))
    r = _run("--table", str(jsonl), "--upstream-results", str(tmp_path / "scheduler_perf"))
    assert r.returncode == 0, r.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line for line in r.stdout.splitlines() if line.startswith("| ")}
    basic = rows["SchedulingBasic/5000Nodes_10000Pods"]
    assert "| 680 | 2040 | 1,000 (1,000 / 1,000) | 3,000 | 1.5 | ✗ | ✓ |" in basic
    assert "500 (480 / 600) `20261128T130000Z`" in basic and "21.5 (wall 80 s, rc 0)" in basic
    assert "4.0 → 5.5" in basic and basic.rstrip().endswith("| 2.0× |")
    assert "failed (timeout after 900 s)" in rows["TopologySpreading/5000Nodes_5000Pods"]
    assert "| 4,000 (4,000 / 4,000) | 9,000 | 2.0 | ✓ | ✓ |" in rows["SchedulingDaemonset/15000Nodes"]
    affinity = rows["SchedulingPodAffinity/5000Nodes_5000Pods"]
    assert "| not run | – |" in affinity and "no result (exit code 1) `20261128T140000Z`" in affinity
    assert "13.0 → 29.9" in affinity
    assert "— (no 1-s sample; overall 42)" in rows["SchedulingBasic/5Nodes"]
    assert "49 workloads with a v1.37.2 threshold; kubesched ran 2: 1 at or above 3× by Average" in r.stdout
    assert "Not run (" in r.stdout


def test_cut_upstream_run_read_from_its_log_and_window_rate(tmp_path: Path) -> None:
    """An upstream run cut before its data items: the measured namespace's binds in the per-test log go
    through upstream's collector rules (the other namespace's binds do not count); a bench line whose
    rate in upstream's window differs from the whole loop's is judged by the window."""
    jsonl = tmp_path / "perf.jsonl"
    basic = _bench_line("SchedulingBasic/5000Nodes_50000Pods", 3000.0, 2000.0, 1.0)  # 3x = 2370
    basic["dataItems"][0]["labels"]["Name"] = "BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_50000Pods/namespace-2"
    basic["podsPerCPUSecondInWindow"] = 4000.0
    jsonl.write_text(json.dumps(basic) + "\n")
    cut = tmp_path / "scheduler_perf" / "20261128T150000Z"
    cut.mkdir(parents=True)
    lines = ["I1128 10:00:00.000000   1 reflector.go:507] \"Caches populated\"\n"]
    for i in range(30):  # init pods: bound fast, another namespace
        lines.append(f"I1128 10:00:00.{i:02d}0000   1 schedule_one.go:483] \"Successfully bound pod to node\" "
                     f"pod=\"namespace-1/init-{i}\" node=\"n\"\n")
    for i in range(50):  # measured: 10 per second from 10:00:01.05
        s = 1.05 + i * 0.1
        lines.append(f"I1128 10:00:{s:09.6f}   1 schedule_one.go:483] \"Successfully bound pod to node\" "
                     f"pod=\"namespace-2/pod-{i}\" node=\"n\" evaluatedNodes=5 feasibleNodes=5\n")
    (cut / "BenchmarkPerfScheduling_SchedulingBasic_5000Nodes_50000Pods.log").write_text("".join(lines))
    r = _run("--table", str(jsonl), "--upstream-results", str(tmp_path / "scheduler_perf"))
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("| SchedulingBasic/5000Nodes_50000Pods |"))
    assert "2,000 pods/CPU-s over the whole loop | 4,000 |" in row and "| ✓ | ✓ |" in row
    assert "10 (10 / 10), from the log (cut after 50 measured pods) `20261128T150000Z`" in row
    assert "| 4.9 |" in row  # first → last measured bind, s
    assert row.rstrip().endswith("| 300.0× |")


def test_table_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    r = _run("--table", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"workload": "SchedulingBasic/5Nodes"}\n{not json\n')
    r = _run("--table", str(bad))
    assert r.returncode != 0 and f"{bad}:2: not a JSON line" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.timeout(300)
def test_run_appends_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "perf.jsonl"
    r = _run("--run", str(out), "--all", "--only", "SchedulingBasic/5Nodes", "--timeout", "240")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert {d["workload"] for d in recs} == {"SchedulingBasic/5Nodes", "SchedulingBasic/5Nodes_AsyncAPICallsEnabled"}
    assert all("error" not in d["_run"] and d["_run"]["load_start"] >= 0 for d in recs)
    r = _run("--run", str(out), "--all", "--only", "SchedulingBasic/5Nodes")  # all done: nothing re-run
    assert r.returncode == 0 and len(out.read_text().splitlines()) == 2
