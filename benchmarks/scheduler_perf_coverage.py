"""Which scheduler_perf workloads of v1.37.2 ``kubesched bench`` reproduces (issue 18 §5).

    .venv/bin/python benchmarks/scheduler_perf_coverage.py              # markdown table per test case
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --missing    # also name the missing workloads
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --thresholds # the performance workloads with
                                                                         # upstream's threshold and the 3x goal
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --run out/perf.jsonl       # bench every thresholded
                                                                         # workload, one process each, appending
    .venv/bin/python benchmarks/scheduler_perf_coverage.py --table out/perf.jsonl     # the side-by-side table

Reads every ``test/integration/scheduler_perf/**/performance-config.yaml`` of the upstream module
(``--upstream DIR``, default the v1.37.2 module cache; ``$KUBESCHED_UPSTREAM_K8S`` too) and
compares its test cases and workloads with :data:`kubesched.sim.bench.WORKLOADS` (which holds
``bench_dra``, ``bench_podgroup``, ``bench_ndf`` and ``bench_events`` too). Workloads are matched by
``Case/Workload`` name. The figures themselves come from ``benchmarks/scheduler_perf.py``.

``--run JSONL`` runs ``kubesched bench --json`` for every workload with a v1.37.2 threshold (``--all``: every
workload) in its own process, one after the other, appending each result line to JSONL as it ends (a
workload already in the file is skipped, so an interrupted run resumes; ``--timeout`` bounds each).
``--table JSONL...`` reads such lines (the last line of a workload wins) and upstream's own
scheduler_perf results (``tools/upstream/run_scheduler_perf.sh`` output folders under
``--upstream-results``, default ``$KUBESCHED_UPSTREAM_DIR/scheduler_perf``) and prints, for every
thresholded workload, kubesched's Average and pods per CPU-second against 3x the threshold next to
upstream's Average, then the workloads without a threshold with their figures. Needs no module cache.
An upstream run cut before it wrote its data items (its timeout, or the caller's) still has the per-test log
of the scheduler: its ``"Successfully bound pod to node"`` lines of the measured namespace (kubesched's, from
the bench line) go through the same collector (:class:`~kubesched.sim.bench_runner.ThroughputCollector`: 1-s
ticks from the first bind, the first skipped) and the row says "from the log, cut after N pods".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kubesched.sim.bench import WORKLOADS  # noqa: E402
from kubesched.sim.bench_runner import ThroughputCollector, window_rate_if_apart  # noqa: E402

DEFAULT = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2"))
DEFAULT_RESULTS = Path(os.environ.get("KUBESCHED_UPSTREAM_DIR", str(ROOT / ".cache/upstream/v1.37.2")),
                       "scheduler_perf")


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


def _v137_thresholds() -> dict[str, float | None]:
    """``Case/Workload`` → v1.37.2 threshold (None when it has none), from the packaged JSON."""
    return dict(json.loads(THRESHOLDS_FILE.read_text())["1.37"])


def load_results(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """The bench JSON lines of ``paths`` by workload (the last line of a workload wins). A line
    may carry ``_run`` (``--run``'s start time, load averages, or ``error`` for a failed run)."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{n}: not a JSON line ({e})") from None
            name = d.get("workload") or (d.get("_run") or {}).get("workload")
            if not isinstance(name, str):
                raise SystemExit(f"{path}:{n}: no 'workload' field")
            out[name] = d
    return out


_BOUND = re.compile(r'^I\d{4} (\d\d):(\d\d):(\d\d\.\d+) .*"Successfully bound pod to node" pod="([^/"]+)/')


def throughput_from_log(log: Path, namespace: str) -> dict[str, Any] | None:
    """``SchedulingThroughput`` of a cut run from its per-test log: the bind times of ``namespace``'s pods
    (klog ``HH:MM:SS.micro`` of ``schedule_one.go``'s "Successfully bound pod to node") observed by
    upstream's collector rules; ``{"throughput": data, "duration": first → last bind (s), "bound": n}``,
    or None without a bind in that namespace."""
    times: list[float] = []
    with log.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if "Successfully bound pod" not in line:
                continue
            m = _BOUND.match(line)
            if m is None or m.group(4) != namespace:
                continue
            t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
            if times and t < times[-1] - 43200:  # past midnight
                t += 86400
            times.append(t)
    if not times:
        return None
    c = ThroughputCollector(times[0])
    for n, t in enumerate(times, 1):
        c.observe(t, n)
    return {"throughput": c.data(), "duration": times[-1] - times[0], "bound": len(times)}


def load_upstream(root: Path, names: set[str],
                  namespaces: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Upstream scheduler_perf results by workload: every output folder of
    ``run_scheduler_perf.sh`` under ``root`` (oldest first, so the newest wins), its
    ``SchedulingThroughput`` and ``SchedulingDuration`` data items and its ``run.json``
    (wall seconds, exit code, load average at start and end) when present. A folder without data
    items whose per-test log names a workload of ``namespaces`` (workload → measured namespace) gets
    its figures from that log (:func:`throughput_from_log`, ``"partial"`` set)."""
    out: dict[str, dict[str, Any]] = {}
    logs = {"BenchmarkPerfScheduling_" + k.replace("/", "_") + ".log": (k, ns) for k, ns in (namespaces or {}).items()}
    if not root.is_dir():
        return out
    by_len = sorted(names, key=len, reverse=True)
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        meta: dict[str, Any] = {}
        if (d / "run.json").is_file():
            meta = json.loads((d / "run.json").read_text())
            if meta.get("workload") in names:  # a run that wrote no data item still has its row
                out[meta["workload"]] = {"dir": d.name, "meta": meta}
        for f in sorted(d.glob("*.json")):
            if f.name == "run.json":
                continue
            try:
                items = json.loads(f.read_text()).get("dataItems") or []
            except (json.JSONDecodeError, AttributeError):
                continue
            for item in items:
                labels = item.get("labels") or {}
                full = str(labels.get("Name", "")).removeprefix("BenchmarkPerfScheduling/")
                key = next((k for k in by_len if full == k or full.startswith(k + "/")), None)
                if key is None:
                    continue
                rec = out.setdefault(key, {})
                if rec.get("dir") != d.name:
                    rec.clear()
                    rec.update(dir=d.name, meta=meta)
                if labels.get("Metric") == "SchedulingThroughput":
                    rec["throughput"] = item.get("data") or {}
                elif labels.get("Metric") == "SchedulingDuration":
                    rec["duration"] = (item.get("data") or {}).get("Duration")
        if not any(f.name != "run.json" for f in d.glob("*.json")):
            for f in d.glob("BenchmarkPerfScheduling_*.log"):
                known = logs.get(f.name)
                if known is None:
                    continue
                key, ns = known
                got = throughput_from_log(f, ns)
                if got is not None:
                    out[key] = {"dir": d.name, "meta": meta, "partial": got["bound"], **got}
    return out


def _num(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def _ks_cells(d: dict[str, Any] | None) -> tuple[str, float | None, float | None, str]:
    """kubesched's Average cell, its Average (None without a 1-s sample), pods/CPU-s, load."""
    if d is None:
        return "not run", None, None, ""
    run = d.get("_run") or {}
    if "error" in run or "dataItems" not in d:
        return f"failed ({str(run.get('error', '?'))[:60]})", None, None, _num(run.get("load_start"), 1)
    data = d["dataItems"][0].get("data") or {}
    avg = data.get("Average")
    cell = (f"{avg:,.0f} ({data.get('Perc50', 0):,.0f} / {data.get('Perc90', 0):,.0f})" if avg is not None
            else f"— (no 1-s sample; overall {d.get('overallPodsPerSecond', 0):,.0f})")
    left = d.get("unschedulablePods") or 0
    if left:
        cell += f", {left} left unscheduled"
    load = (d.get("loadAvg") or [None])[0]
    # upstream's collector samples from the first measured pod bound on: where pods of other namespaces
    # were scheduled before it inside the loop, the rate in that window is the comparable one
    per_cpu = d.get("podsPerCPUSecond")
    window = window_rate_if_apart(per_cpu or 0.0, d.get("podsPerCPUSecondInWindow"))
    if window is not None:
        cell += f"; {per_cpu:,.0f} pods/CPU-s over the whole loop"
        per_cpu = window
    return cell, avg, per_cpu, _num(load, 1)


def _up_cells(u: dict[str, Any] | None) -> tuple[str, float | None, str, str]:
    """Upstream's Average cell, its Average, SchedulingDuration cell and load cell."""
    if not u:
        return "not run", None, "", ""
    t: dict[str, Any] = u.get("throughput") or {}
    avg = t.get("Average")
    meta = u.get("meta") or {}
    cell = (f"{avg:,.0f} ({t.get('Perc50', 0):,.0f} / {t.get('Perc90', 0):,.0f})" if avg is not None
            else "— (no 1-s sample)" if "duration" in u else f"no result (exit code {meta.get('rc', '?')})")
    if u.get("partial"):
        cell += f", from the log (cut after {u['partial']:,} measured pods)"
    load = (f"{meta['load_start']:.1f} → {meta['load_end']:.1f}" if "load_start" in meta and "load_end" in meta
            else "")
    dur = _num(u.get("duration"), 1) + (f" (wall {meta['wall_s']} s, rc {meta.get('rc')})" if "wall_s" in meta else "")
    return cell + f" `{u['dir']}`", avg, dur, load


def print_table(results: dict[str, dict[str, Any]], upstream: dict[str, dict[str, Any]]) -> None:
    """The thresholded table and the list of the workloads without a threshold (issue 18 §5)."""
    thr = _v137_thresholds()
    print("| workload | threshold | 3× | kubesched Average (P50 / P90), pods/s | pods/CPU-s | load | "
          "3× by Average | 3× by pods/CPU-s | upstream Average (P50 / P90), pods/s | "
          "upstream SchedulingDuration, s | upstream load | kubesched / upstream (Average) |")
    print("|---|---:|---:|---:|---:|---:|:-:|:-:|---:|---:|---:|---:|")
    counts = {"run": 0, "avg_ok": 0, "cpu_ok": 0, "up": 0}
    rows = sorted((k for k, v in thr.items() if v is not None), key=str.lower)
    for key in rows:
        t = float(thr[key] or 0)
        cell, avg, per_cpu, load = _ks_cells(results.get(key))
        ucell, uavg, udur, uload = _up_cells(upstream.get(key))
        ok_avg = "" if avg is None else ("✓" if avg >= 3 * t else "✗")
        ok_cpu = "" if per_cpu is None else ("✓" if per_cpu >= 3 * t else "✗")
        counts["run"] += per_cpu is not None
        counts["avg_ok"] += ok_avg == "✓"
        counts["cpu_ok"] += ok_cpu == "✓"
        counts["up"] += key in upstream
        ratio = f"{avg / uavg:.1f}×" if avg and uavg else ""
        print(f"| {key} | {t:g} | {3 * t:g} | {cell} | {_num(per_cpu)} | {load} | {ok_avg} | {ok_cpu} | "
              f"{ucell} | {udur} | {uload} | {ratio} |")
    print(f"\n{len(rows)} workloads with a v1.37.2 threshold; kubesched ran {counts['run']}: "
          f"{counts['avg_ok']} at or above 3× by Average (wall clock, shared machine), {counts['cpu_ok']} by "
          f"pods per CPU-second; upstream ran {counts['up']}.")
    print("\n| workload without a threshold | kubesched Average (P50 / P90), pods/s | pods/CPU-s | load | "
          "upstream Average (P50 / P90), pods/s | upstream SchedulingDuration, s | upstream load |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    not_run = []
    for key in sorted((k for k, v in thr.items() if v is None), key=str.lower):
        if key not in results and key not in upstream:
            not_run.append(key)
            continue
        cell, _, per_cpu, load = _ks_cells(results.get(key))
        ucell, _, udur, uload = _up_cells(upstream.get(key))
        print(f"| {key} | {cell} | {_num(per_cpu)} | {load} | {ucell} | {udur} | {uload} |")
    if not_run:
        print(f"\nNot run ({len(not_run)} without a threshold): {', '.join(not_run)}.")


def run_benches(out: Path, *, every: bool, timeout: float, only: list[str] | None = None) -> int:
    """``kubesched bench --json`` per workload (thresholded, or ``every``; with ``only``, those whose
    name starts with one of its prefixes), appending to ``out``."""
    import subprocess
    import time

    thr = _v137_thresholds()
    done = load_results([out]) if out.exists() else {}
    todo = [k for k in sorted(thr) if (every or thr[k] is not None) and k in WORKLOADS and k not in done
            and (not only or any(k.startswith(o) for o in only))]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for i, key in enumerate(todo, 1):
        run: dict[str, Any] = {"workload": key, "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "load_start": os.getloadavg()[0]}
        try:
            r = subprocess.run([sys.executable, "-m", "kubesched.sim.bench", "--json", "-w", key], env=env,
                               capture_output=True, text=True, timeout=timeout)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            rec = json.loads(lines[-1]) if r.returncode == 0 and lines else {
                "_run": {"error": f"exit {r.returncode}: {r.stderr.strip()[-200:]}"}}
        except subprocess.TimeoutExpired:
            rec = {"_run": {"error": f"timeout after {timeout:g} s"}}
        rec["_run"] = {**run, **rec.get("_run", {}), "load_end": os.getloadavg()[0]}
        with out.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"[{i}/{len(todo)}] {key}: {rec['_run'].get('error', 'ok')}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", type=Path, default=DEFAULT, help="the k8s.io/kubernetes@v1.37.2 module directory")
    ap.add_argument("--missing", action="store_true", help="name the missing workloads")
    ap.add_argument("--thresholds", action="store_true", help="list the performance workloads and thresholds")
    ap.add_argument("--write-thresholds", action="store_true",
                    help=f"regenerate {THRESHOLDS_FILE.relative_to(ROOT)} from the module cache's "
                         f"v{', v'.join(THRESHOLD_VERSIONS.values())} and exit")
    ap.add_argument("--table", type=Path, nargs="+", metavar="JSONL",
                    help="print the thresholded workloads' table from `kubesched bench --json` lines")
    ap.add_argument("--upstream-results", type=Path, default=DEFAULT_RESULTS,
                    help="run_scheduler_perf.sh's output folders (default %(default)s)")
    ap.add_argument("--run", type=Path, metavar="JSONL", help="bench the thresholded workloads into JSONL")
    ap.add_argument("--all", action="store_true", help="with --run: every workload, not only thresholded ones")
    ap.add_argument("--timeout", type=float, default=900.0, help="with --run: seconds per workload")
    ap.add_argument("--only", action="append", metavar="PREFIX",
                    help="with --run: only workloads whose Case/Workload starts with PREFIX (repeatable)")
    args = ap.parse_args(argv)
    if args.run:
        return run_benches(args.run, every=args.all, timeout=args.timeout, only=args.only)
    if args.table:
        missing = [str(p) for p in args.table if not p.is_file()]
        if missing:
            print(f"--table: no such file: {', '.join(missing)}", file=sys.stderr)
            return 2
        thr = _v137_thresholds()
        results = load_results(args.table)
        namespaces = {k: name.rsplit("/", 1)[-1] for k, d in results.items()
                      if (name := str(((d.get("dataItems") or [{}])[0].get("labels") or {}).get("Name", "")))
                      .startswith("BenchmarkPerfScheduling/")}
        print_table(results, load_upstream(args.upstream_results, set(thr), namespaces))
        return 0
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
