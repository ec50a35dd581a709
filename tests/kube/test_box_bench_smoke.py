"""Smoke runs of the box's benchmark scripts (tiny sizes) so they keep working; no figure is
asserted, only that they run to the end and print their summary lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def run(*args: str) -> str:
    p = subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p.stdout


def test_metrics_flood_benchmark_runs() -> None:
    out = run("benchmarks/metrics_flood.py", "--nodes", "3", "--pods", "5", "--flood", "5")
    lines = [ln.split(":")[0].strip() for ln in out.splitlines() if "bound in" in ln]
    assert lines == ["baseline", "flood", "after"], out
    assert "{401:" in out  # the flood's unknown tokens are refused


def test_apiserver_soak_benchmark_runs() -> None:
    out = run("benchmarks/apiserver_soak.py", "--minutes", "0.15", "--load-minutes", "0.05", "--idle-minutes",
              "0.03", "--objects", "20")
    assert "summary: first" in out and "server CPU" in out, out
