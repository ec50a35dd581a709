"""examples/gang: the committed YAML is what its generate.py writes, and ``simulate`` does with it
what the real v1.37.2 did (tests/upstream/data/gang_example_truths.yaml, recorded by
``python tools/upstream/diff_groups.py --example examples/gang``).

Nodes are compared by what matters for the story, not by name: empty GPU nodes tie on every
score, and which of them a pod gets depends on the order pods arrive (upstream took them in three
arrivals, ``simulate`` all at once) — so per job: how many workers are bound, whether a job's
workers share one rack / one block, the PodGroup conditions, and the messages of the pods left
pending (their set, numbers masked: they count nodes the tie-broken batch left free)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any

import yaml

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate

REPO = Path(__file__).resolve().parents[2]
GANG = REPO / "examples" / "gang"
TRUTHS = yaml.safe_load((REPO / "tests" / "upstream" / "data" / "gang_example_truths.yaml").read_text())
GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,PodGroupPreemptionPolicy=true"
RACK = "topology.example.com/rack"
BLOCK = "topology.example.com/block"
#: the jobs that are gangs with a topology constraint (40-podgroups.yaml)
GANGS = ("b-llm-train", "c-finetune")


def _racks() -> dict[str, dict[str, str]]:
    nodes = yaml.safe_load_all((GANG / "cluster" / "10-nodes.yaml").read_text())
    return {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes if n}


def _shape(pods: dict[str, str], groups: dict[str, Any], *, topology: bool = False) -> dict[str, Any]:
    """Per job (name prefix): bound count, the pending pods' messages, with ``topology`` how many
    racks/blocks its bound pods are in (the gangs' constraint; without it incidental); and the
    PodGroups' conditions."""
    labels = _racks()
    jobs: dict[str, Any] = {}
    for name, where in sorted(pods.items()):
        job = name.split("-worker-")[0] if "-worker-" in name else name.rsplit("-", 1)[0]
        j = jobs.setdefault(job, {"bound": 0, "racks": set(), "blocks": set(), "pending": {}})
        if where in labels:
            j["bound"] += 1
            j["racks"].add(labels[where][RACK])
            j["blocks"].add(labels[where][BLOCK])
        else:
            j["pending"][name] = where
    for job, j in jobs.items():
        j["racks"], j["blocks"] = len(j["racks"]), len(j["blocks"])
        if not topology or job not in GANGS:
            del j["racks"], j["blocks"]
        # which member fails its own Filter first, and the counts in "minCount (8) cannot be
        # satisfied: 1 scheduled, 6 remaining" (so how many members were tried), follow from which
        # empty nodes the batch took (ties): the set of messages, numbers masked
        j["pending"] = sorted({re.sub(r"\d+", "#", m) for m in j["pending"].values()})
    return {"jobs": jobs, "pod_groups": {n: c and {"status": c["status"], "reason": c["reason"],
                                                   "message": re.sub(r"\d+", "#", c["message"])}
                                         for n, c in groups.items()}}


def _simulate(gates: str) -> dict[str, Any]:
    fg = FeatureGate.from_flags(feature_gates=gates)
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                        features=fg)
    # without the gates the PodGroups are not served (the README's `-f examples/gang/cluster`)
    res = simulate(load_manifests([str(GANG if gates else GANG / "cluster")]), cfg, features=fg)
    pods = {o.key.split("/", 1)[1]: (o.node or o.message) for o in res.outcomes}
    groups = {}
    for (_, name), g in res.store.objects.get("PodGroup", {}).items():
        c = next((c for c in ((g.get("status") or {}).get("conditions") or [])
                  if c["type"] == "PodGroupInitiallyScheduled"), None)
        groups[name] = {k: c.get(k) for k in ("status", "reason", "message")} if c else None
    return _shape(pods, groups if gates else {}, topology=bool(gates))


def test_gang_yaml_is_what_generate_writes() -> None:
    files = runpy.run_path(str(GANG / "generate.py"))["render_all"]()
    for name, text in files.items():
        assert (GANG / name).read_text() == text, f"{name} is stale: run examples/gang/generate.py"


def test_without_gates_the_training_job_is_half_placed_as_upstream() -> None:
    """Gates off (1.37 default): workers are scheduled one by one; 4 of the 8 LLM workers get
    whole nodes and hold 32 GPUs while the rest wait, and the fine-tuning job starves."""
    up = TRUTHS["without gates"]
    got = _simulate("")
    assert got == _shape(up["pods"], {})
    assert got["jobs"]["b-llm-train"]["bound"] == 4
    assert got["jobs"]["c-finetune"]["bound"] == 0


def test_with_gates_all_or_nothing_and_rack_local_as_upstream() -> None:
    """GenericWorkload + TopologyAwareWorkloadScheduling: the LLM job (one block) binds nothing,
    the fine-tuning job (one rack) gets both its workers into one rack."""
    up = TRUTHS["with GenericWorkload,TopologyAwareWorkloadScheduling,PodGroupPreemptionPolicy"]
    got = _simulate(GATES)
    assert got == _shape(up["pods"], up["pod_groups"], topology=True)
    assert got["jobs"]["b-llm-train"]["bound"] == 0
    assert got["jobs"]["c-finetune"] == {**got["jobs"]["c-finetune"], "bound": 2, "racks": 1}


def test_the_readme_commands_run() -> None:
    """examples/gang/README.md's two commands: without the gates the PodGroups are left out
    (``-f examples/gang/cluster``; the API would refuse them), with the gates the whole folder."""
    from click.testing import CliRunner

    from kubesched.cli.main import main

    off = CliRunner().invoke(main, ["simulate", "-f", str(GANG / "cluster"), "-o", "json"])
    assert off.exit_code == 0, off.output
    on = CliRunner().invoke(main, ["simulate", "-f", str(GANG), "-o", "json", "--feature-gates",
                                   "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"])
    assert on.exit_code == 0, on.output
    refused = CliRunner().invoke(main, ["simulate", "-f", str(GANG), "-o", "json"])
    assert refused.exit_code != 0 and 'no matches for kind "PodGroup"' in refused.output
