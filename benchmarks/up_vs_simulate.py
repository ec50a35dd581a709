"""`kubesched up --until-idle` (live, through the box API server) against `kubesched simulate`
on the same manifests: wall time of `up`, counts, pending reasons, placements.

    PYTHONPATH=src python benchmarks/up_vs_simulate.py [-f examples/quickstart] [--seed 1] [--runs 3]

`simulate` is run twice: on the input order (what `kubesched simulate` does) and on the order
the live scheduler sees — the API's list order (namespace, name) for nodes and pods.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)

from kubesched.config import load_config
from kubesched.sim.manifests import RawObject, load_manifests
from kubesched.sim.simulate import simulate


def run_up(paths: list[str], seed: int) -> tuple[float, dict[str, str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    args = [sys.executable, "-m", "kubesched.cli.main", "up", "--until-idle", "--seed", str(seed)]
    for p in paths:
        args += ["-f", p]
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"kubesched up failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    bound: dict[str, str] = {}
    pending: dict[str, str] = {}
    for line in p.stdout.splitlines():
        m = re.match(r"pod (\S+) bound to (\S+)$", line)
        if m:
            bound[m[1]] = m[2]
        m = re.match(r"  pending (\S+): (.*)$", line)
        if m:
            pending[m[1]] = m[2]
    return wall, bound, pending


def run_sim(paths: list[str], seed: int, list_order: bool) -> tuple[dict[str, str], dict[str, str]]:
    raws = load_manifests(paths)
    if list_order:
        def key(r: RawObject) -> tuple[int, str, str]:
            rank = {"Node": 1, "Pod": 2}.get(r.kind, 0)
            return (rank, r.namespace or "", r.name) if rank else (0, "", "")

        others = [r for r in raws if r.kind not in ("Node", "Pod")]
        ordered = others + sorted((r for r in raws if r.kind in ("Node", "Pod")), key=key)
        raws = [RawObject(r.kind, r.api_version, r.data, r.source, i) for i, r in enumerate(ordered)]
    pending_in = {f"{r.namespace}/{r.name}" for r in raws
                  if r.kind == "Pod" and not (r.data.get("spec") or {}).get("nodeName")}
    res = simulate(raws, load_config(None), seed=seed)
    bound: dict[str, str] = {}
    pending: dict[str, str] = {}
    for o in res.output_objects():
        if o.get("kind") != "Pod":
            continue
        k = f"{o['metadata']['namespace']}/{o['metadata']['name']}"
        if k not in pending_in:
            continue
        node = (o.get("spec") or {}).get("nodeName")
        if node:
            bound[k] = node
        else:
            conds = [c for c in (o.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
            if conds:
                pending[k] = conds[0].get("message", "")
    return bound, pending


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-f", dest="paths", action="append", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    paths = a.paths or ["examples/quickstart"]
    sims = {name: run_sim(paths, a.seed, lo) for name, lo in (("input order", False), ("list order", True))}
    for i in range(a.runs):
        wall, bound, pending = run_up(paths, a.seed)
        print(f"run {i + 1}: kubesched up --until-idle: {wall:.2f} s wall, {len(bound)} bound, {len(pending)} pending")
        for name, (sb, sp) in sims.items():
            same_node = sum(1 for k, n in bound.items() if sb.get(k) == n)
            same_reason = sum(1 for k, m in pending.items() if sp.get(k) == m)
            print(f"  vs simulate ({name}): {len(sb)} bound, {len(sp)} pending; same bound set: "
                  f"{set(bound) == set(sb)}; same node {same_node}/{len(bound)}; "
                  f"same pending message {same_reason}/{len(pending)}")


if __name__ == "__main__":
    main()
