"""Pod groups on the real v1.37.2, hand-written scenarios: ``data/podgroup_truths.yaml`` holds each
scenario's inputs and what the real kube-scheduler/kube-apiserver did with them (recorded by
``python tools/upstream/diff_groups.py --record tests/upstream/data/podgroup_truths.yaml``, gates
GenericWorkload, TopologyAwareWorkloadScheduling, PodGroupPreemptionPolicy on, v1beta1 served).

- ``test_upstream_still_does_this`` re-runs every scenario on the binaries (skipped without them)
  and checks the recorded truths: per step how many pods were bound and on which nodes (as a
  multiset: a gang's members are interchangeable), each unbound pod's PodScheduled message, the
  PodGroup's ``PodGroupInitiallyScheduled`` condition, the victims, the create errors, and the
  set of events.
- ``test_engine_replays_the_truths`` replays each step through kubesched's engine from the
  state upstream had before it (tools/upstream/diff_groups.py ``engine_group_step``) and holds it
  to the same truths.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.testing.upstream import UpstreamNotBuilt, find_binaries, format_feature_gates

ROOT = Path(__file__).resolve().parents[2]
TRUTHS = Path(__file__).resolve().parent / "data" / "podgroup_truths.yaml"
DIFF_GROUPS = ROOT / "tools" / "upstream" / "diff_groups.py"
SCENARIOS: list[dict[str, Any]] = yaml.safe_load(TRUTHS.read_text())["scenarios"]


@pytest.fixture(scope="module")
def dg() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_diff_groups", DIFF_GROUPS)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _normal(step: dict[str, Any]) -> dict[str, Any]:
    """What a step's truth is made of (module doc); timings and node identities of
    interchangeable members left out."""
    if "create_error" in step:
        return {"create_error": step["create_error"]}
    pods = step["pods"]
    return {
        "bound": sorted(n for n, v in pods.items() if v["node"]),
        "nodes": sorted(Counter(v["node"] for v in pods.values() if v["node"]).values()),
        "messages": {n: v["message"] for n, v in pods.items() if not v["node"]},
        "group_condition": step["group_condition"],
        "victims": step["victims"],
        "settled": step["settled"],
    }


def _inputs(scn: dict[str, Any]) -> dict[str, Any]:
    return {k: scn[k] for k in ("name", "objects", "steps", "gates") if k in scn}


def test_truths_cover_the_cases_the_brief_names() -> None:
    names = {s["name"] for s in SCENARIOS}
    assert {"gang-fits", "gang-4-where-3-fit", "gang-rack-only-one-fits", "gang-preempts-low-pods",
            "basic-group-3-where-2-fit"} <= names
    for s in SCENARIOS:
        assert len(s["observed"]["steps"]) == len(s["steps"]), s["name"]


def test_recorded_gang_of_4_where_3_fit_binds_nothing() -> None:
    """The headline truth, read off the record: no member bound, the PodGroup Unschedulable."""
    scn = next(s for s in SCENARIOS if s["name"] == "gang-4-where-3-fit")
    step = scn["observed"]["steps"][0]
    assert not any(v["node"] for v in step["pods"].values())
    assert step["group_condition"]["status"] == "False"
    assert step["group_condition"]["reason"] == "Unschedulable"


@pytest.mark.parametrize("scn", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_upstream_still_does_this(scn: dict[str, Any], dg: ModuleType) -> None:
    try:
        find_binaries("1.37")
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    got = dg.run_scenario(_inputs(scn))
    assert [_normal(s) for s in got["steps"]] == [_normal(s) for s in scn["observed"]["steps"]]
    nodes = [o["metadata"]["name"] for o in scn["objects"] if o["kind"] == "Node"]
    assert _events(got["events"], nodes) == _events(scn["observed"]["events"], nodes)


def _events(events: list[dict[str, Any]], nodes: list[str]) -> list[tuple[str, ...]]:
    """Events as a sorted list with node names masked (which of equal nodes a pod gets is a
    score tie; the harness compares nodes as multisets)."""
    pat = re.compile(r"\b(" + "|".join(map(re.escape, sorted(nodes, key=len, reverse=True))) + r")\b")
    return sorted({(e["reason"], e["kind"], e["name"], pat.sub("<node>", e["message"])) for e in events
                   if e["kind"] in ("Pod", "PodGroup")})  # not the API server's own (ClusterIPNotAllocated)


def _strip(p: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"] = {k: v for k, v in out["metadata"].items() if k in ("name", "namespace", "labels")}
    out.pop("status", None)
    return out


@pytest.mark.parametrize("scn", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_engine_replays_the_truths(scn: dict[str, Any], dg: ModuleType) -> None:
    """Each step from upstream's state before it: the nodes, the pods upstream had bound (pre-bound
    ones and earlier steps' members on the nodes upstream chose, victims gone), the PodGroups as
    upstream stored them (defaulted, admitted)."""
    gates = {**dg.GROUP_GATES, **(scn.get("gates") or {})}
    features = FeatureGate.from_flags(emulated_version="1.37", feature_gates=format_feature_gates(gates))
    config = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                            "parallelism": 1}, features=features)
    objs = [o for o in scn["objects"] if o["kind"] == "PriorityClass"]
    nodes = [o for o in scn["objects"] if o["kind"] == "Node"]
    bound = {o["metadata"]["name"]: o for o in scn["objects"] if o["kind"] == "Pod" and o["spec"].get("nodeName")}
    groups: list[dict[str, Any]] = []
    problems = []
    every_pod = {p["metadata"]["name"]: p for st in scn["steps"] for p in st["pods"]}
    for step, obs in zip(scn["steps"], scn["observed"]["steps"], strict=True):
        if "create_error" in obs:
            continue
        g = step.get("podGroup")
        stored = None
        if g:
            stored = {**copy.deepcopy(g), "spec": obs["stored_pod_group_spec"]}
        # the step's pods and, for members joining a group, its members still pending (as recorded)
        step_pods = [every_pod[n] for n in obs["pods"]]
        ks, top = dg.engine_group_step(config, features, objs, nodes, list(bound.values()), groups, stored,
                                       step_pods, _strip, group_name=step.get("group"))
        r = dg.compare_group(g["metadata"]["name"] if g else step["pods"][0]["metadata"]["name"], set(), obs, ks, top)
        if not r.agree:
            problems.append(f"{r.kind}: {r.detail}")
        for v in obs["victims"]:
            bound.pop(v, None)
        for p in step_pods:
            node = obs["pods"][p["metadata"]["name"]]["node"]
            if node:
                bound[p["metadata"]["name"]] = {**p, "spec": {**p["spec"], "nodeName": node}}
        if stored:
            groups.append(stored)
    assert not problems, "\n".join(problems)
