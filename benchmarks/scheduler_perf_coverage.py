"""Which scheduler_perf workloads of v1.37.2 ``kubesched bench`` reproduces (issue 18 §5).

    .venv/bin/python benchmarks/scheduler_perf_coverage.py              # markdown table per test case
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --missing    # also name the missing workloads
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --thresholds # the performance workloads with
                                                                         # upstream's threshold and the 3x goal

Reads every ``test/integration/scheduler_perf/**/performance-config.yaml`` of the upstream module
(``--upstream DIR``, default the v1.37.2 module cache; ``$KUBESCHED_UPSTREAM_K8S`` too) and
compares its test cases and workloads with :data:`kubesched.sim.bench.WORKLOADS` (which holds
``bench_dra``, ``bench_podgroup``, ``bench_ndf`` and ``bench_events`` too). Workloads are matched by
``Case/Workload`` name. The figures themselves come from ``benchmarks/scheduler_perf.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kubesched.sim.bench import WORKLOADS  # noqa: E402

DEFAULT = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2"))


def upstream_cases(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(topic, test case)`` for every test case of every performance-config.yaml, by topic."""
    base = root / "test/integration/scheduler_perf"
    out = []
    for f in sorted(base.rglob("performance-config.yaml")):
        topic = str(f.parent.relative_to(base))
        for case in yaml.safe_load(f.read_text()) or []:
            out.append((topic, case))
    return out


THRESHOLDS_FILE = ROOT / "src/kubesched/data/scheduler_perf_thresholds.json"
THRESHOLD_VERSIONS = {"1.34": "1.34.12", "1.35": "1.35.4", "1.36": "1.36.3", "1.37": "1.37.2"}


def thresholds_of(root: Path) -> dict[str, float | None]:
    """Every workload ``Case/Workload`` of one release's performance-config.yaml files → its
    threshold (None when it has none; a per-topic map such as ``{dra: 56}`` → its value)."""
    out: dict[str, float | None] = {}
    for _, case in upstream_cases(root):
        for w in case.get("workloads") or []:
            thr = w.get("threshold")
            if isinstance(thr, dict):
                thr = max(thr.values()) if thr else None
            out[f"{case['name']}/{w['name']}"] = thr or None
    return out


def _fmt(threshold: Any, factor: int) -> str:
    """A threshold (a number, or a map of them per environment label such as ``dra: 56``) × factor."""
    if threshold is None:
        return "–"
    if isinstance(threshold, dict):
        return ", ".join(f"{k}: {v * factor}" for k, v in threshold.items())
    return str(threshold * factor)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", type=Path, default=DEFAULT, help="the k8s.io/kubernetes@v1.37.2 module directory")
    ap.add_argument("--missing", action="store_true", help="name the missing workloads")
    ap.add_argument("--thresholds", action="store_true", help="list the performance workloads and thresholds")
    ap.add_argument("--write-thresholds", action="store_true",
                    help=f"regenerate {THRESHOLDS_FILE.relative_to(ROOT)} from the module cache's "
                         f"v{', v'.join(THRESHOLD_VERSIONS.values())} and exit")
    args = ap.parse_args(argv)
    if args.write_thresholds:
        data = {minor: thresholds_of(args.upstream.parent / f"kubernetes@v{full}")
                for minor, full in THRESHOLD_VERSIONS.items()}
        THRESHOLDS_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print(f"wrote {THRESHOLDS_FILE} ({', '.join(f'{m}: {len(d)}' for m, d in data.items())} workloads)")
        return 0
    cases = upstream_cases(args.upstream)
    if not cases:
        print(f"no performance-config.yaml under {args.upstream}", file=sys.stderr)
        return 1
    total = have = 0
    print("| topic | test case | in `kubesched bench` |" + (" missing |" if args.missing else ""))
    print("|---|---|---:|" + ("---|" if args.missing else ""))
    perf: list[tuple[str, Any, bool]] = []
    for topic, case in cases:
        names = [w["name"] for w in case.get("workloads") or []]
        got = [n for n in names if f"{case['name']}/{n}" in WORKLOADS]
        total += len(names)
        have += len(got)
        row = f"| {topic} | {case['name']} | {len(got)}/{len(names)} |"
        if args.missing:
            row += " " + (", ".join(n for n in names if n not in got) or "–") + " |"
        print(row)
        for w in case.get("workloads") or []:
            if "performance" in (w.get("labels") or []):
                key = f"{case['name']}/{w['name']}"
                perf.append((key, w.get("threshold"), key in WORKLOADS))
    print(f"\n{have} of {total} upstream workloads are in `kubesched bench`.")
    if args.thresholds:
        print("\n| performance workload | upstream threshold (pods/s) | 3x goal | in bench |")
        print("|---|---:|---:|---|")
        for key, thr, ok in perf:
            print(f"| {key} | {_fmt(thr, 1)} | {_fmt(thr, 3)} | {'yes' if ok else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
