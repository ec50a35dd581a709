"""``kubesched up`` on the quickstart cluster makes the decisions ``simulate`` makes when the
objects arrive in the order the live scheduler sees them (the API's list order: namespace, name).
One engine, two worlds: this is the end-to-end check that nothing in the live path (the box,
informers, binder, status writes) changes a decision."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kubesched.config import load_config
from kubesched.sim.manifests import RawObject, load_manifests
from kubesched.sim.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "examples" / "quickstart")


def _simulate_in_list_order(seed: int) -> tuple[dict[str, str], dict[str, str]]:
    raws = load_manifests([QUICKSTART])
    listed = sorted((r for r in raws if r.kind in ("Node", "Pod")),
                    key=lambda r: (r.kind == "Pod", r.namespace or "", r.name))
    ordered = [r for r in raws if r.kind not in ("Node", "Pod")] + listed
    raws = [RawObject(r.kind, r.api_version, r.data, r.source, i) for i, r in enumerate(ordered)]
    pending_in = {f"{r.namespace}/{r.name}" for r in raws
                  if r.kind == "Pod" and not r.data["spec"].get("nodeName")}
    res = simulate(raws, load_config(None), seed=seed)
    bound, pending = {}, {}
    for o in res.output_objects():
        key = f"{o['metadata'].get('namespace')}/{o['metadata']['name']}"
        if o["kind"] != "Pod" or key not in pending_in:
            continue
        if o["spec"].get("nodeName"):
            bound[key] = o["spec"]["nodeName"]
        else:
            conds = [c for c in o.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"]
            if conds:
                pending[key] = conds[0]["message"]
    return bound, pending


def test_quickstart_live_matches_simulate_in_list_order() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "up", "-f", QUICKSTART, "--until-idle",
                        "--seed", "1"], capture_output=True, text=True, env=env, timeout=180, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    bound = dict(re.findall(r"^pod (\S+) bound to (\S+)$", p.stdout, re.MULTILINE))
    pending = dict(re.findall(r"^  pending (\S+): (.*)$", p.stdout, re.MULTILINE))
    assert "85 pod(s) to schedule: 78 bound, 7 pending; 118 already bound at start" in p.stdout
    assert "default/custom-scheduled-app-zxsz54vpb-hrfcd (other-scheduler)" in p.stdout
    sim_bound, sim_pending = _simulate_in_list_order(1)
    assert bound == sim_bound
    assert pending == sim_pending
