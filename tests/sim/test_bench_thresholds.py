"""``kubesched bench`` reports the threshold of the emulated version's scheduler_perf: v1.37.2's by
default, v1.34.12's with ``--emulated-version 1.34`` (the table in ``kubesched/data`` checked
against upstream's performance-config.yaml files)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.features import FeatureGate
from kubesched.sim.bench import WORKLOADS
from kubesched.sim.bench_runner import upstream_threshold, upstream_thresholds

MOD = Path("/root/go/pkg/mod/k8s.io")
RELEASES = {"1.34": "1.34.12", "1.35": "1.35.4", "1.36": "1.36.3", "1.37": "1.37.2"}


def _yaml_thresholds(release: str) -> dict[str, object]:
    base = MOD / f"kubernetes@v{release}" / "test/integration/scheduler_perf"
    out: dict[str, object] = {}
    for f in sorted(base.rglob("performance-config.yaml")):
        for case in yaml.safe_load(f.read_text()) or []:
            for w in case.get("workloads") or []:
                out[f"{case['name']}/{w['name']}"] = w.get("threshold")
    return out


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_table_is_upstreams_yaml(minor: str) -> None:
    release = RELEASES[minor]
    if not (MOD / f"kubernetes@v{release}").is_dir():
        pytest.skip(f"k8s.io/kubernetes@v{release} module source not present")
    want = _yaml_thresholds(release)
    got = upstream_thresholds()[minor]
    assert set(got) == set(want)
    for key, thr in want.items():
        if isinstance(thr, dict):  # a per-topic threshold ({dra: 56}): its value
            thr = max(thr.values())
        assert got[key] == (thr or None), key  # 0 disables the check upstream


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_bench_reports_the_emulated_versions_threshold(minor: str) -> None:
    features = FeatureGate.from_flags(minor)
    table = upstream_thresholds()[minor]
    for key, w in WORKLOADS.items():
        want = table[key] if key in table else w.threshold  # a workload the release lacks keeps its own
        assert upstream_threshold(w, features) == want, key


def test_default_is_v137() -> None:
    table = upstream_thresholds()["1.37"]
    for key, w in WORKLOADS.items():
        if key in table:
            assert upstream_threshold(w) == table[key]
