"""tools/upstream/diff_groups.py's parts that need no binaries: the group generator keeps the
rules the real API server and the pod-group cycle impose (so a step is never lost to a 4xx or a
SchedulerError by accident), and the whole-group comparison."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

DIFF_GROUPS = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "diff_groups.py"


@pytest.fixture(scope="module")
def dg() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_diff_groups_t", DIFF_GROUPS)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_generated_groups_keep_the_api_and_cycle_rules(dg: ModuleType) -> None:
    sizes, areas = set(), set()
    for seed in range(1, 60):
        objs, steps = dg.generate(seed)
        classes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PriorityClass"}
        labels = [o["metadata"]["labels"] for o in objs if o["kind"] == "Node"]
        for st in steps:
            areas |= st.areas
            if st.group is None:
                assert len(st.pods) == 1 and "schedulingGroup" not in st.pods[0]["spec"]
                continue
            spec = st.group["spec"]
            name = st.group["metadata"]["name"]
            gang = spec["schedulingPolicy"].get("gang")
            assert (gang is None) == ("basic" in spec["schedulingPolicy"])
            if gang:
                sizes.add(len(st.pods) if "quorum" not in st.areas else gang["minCount"])
                assert 1 <= gang["minCount"] <= 16
                assert len(st.pods) >= gang["minCount"] or "quorum" in st.areas
            for p in st.pods:
                # every member names the group and has its priority (validatePodGroup)
                assert p["spec"]["schedulingGroup"] == {"podGroupName": name}
                assert p["spec"].get("priorityClassName") == spec.get("priorityClassName")
            pc = classes.get(spec.get("priorityClassName", ""))
            if pc is not None and pc.get("preemptionPolicy") == "Never":
                # defaulting fills PreemptLowerPriority, which the Priority admission then refuses
                assert spec.get("preemptionPolicy") == "Never"
            for t in (spec.get("schedulingConstraints") or {}).get("topology", []):
                assert all(t["key"] in lb for lb in labels)
    assert min(sizes) == 2 and max(sizes) == 16
    assert {"gang", "basic", "topology", "priorities", "disruption-all", "quorum", "single"} <= areas


def _out(nodes: dict[str, str | None], cond: dict[str, Any] | None = None, victims: list[str] | None = None,
         msg: str = "m") -> dict[str, Any]:
    return {"pods": {n: {"node": v, "message": "" if v else msg} for n, v in nodes.items()},
            "group_condition": cond, "victims": victims or []}


def test_compare_group(dg: ModuleType) -> None:
    ok = {"status": "True", "reason": "Scheduled", "message": ""}
    up = _out({"a": "n1", "b": "n2"}, ok)
    # the same nodes, members swapped: interchangeable
    r = dg.compare_group("g", set(), up, _out({"a": "n2", "b": "n1"}, ok), {})
    assert r.agree and r.kind == "bound" and (r.both_bound, r.exact) == (2, 0)
    # other nodes, not tied in the engine's scores
    r = dg.compare_group("g", set(), up, _out({"a": "n3", "b": "n1"}, ok), {})
    assert not r.agree and r.kind == "node"
    # other nodes, but both in the engine's top-score set for that pod
    r = dg.compare_group("g", set(), up, _out({"a": "n3", "b": "n2"}, ok), {"a": ["n1", "n3"]})
    assert r.agree
    # partial vs none: the whole-group outcome
    bad = {"status": "False", "reason": "Unschedulable", "message": "x"}
    r = dg.compare_group("g", set(), up, _out({"a": None, "b": None}, bad), {})
    assert not r.agree and r.kind == "outcome" and "condition" in r.detail
    # messages of unbound pods must be equal
    r = dg.compare_group("g", set(), _out({"a": None}, bad, msg="m1"), _out({"a": None}, bad, msg="m2"), {})
    assert not r.agree and r.kind == "message"
    r = dg.compare_group("g", set(), _out({"a": None}, bad), _out({"a": None}, bad), {})
    assert r.agree and r.kind == "unschedulable"
    r = dg.compare_group("p", set(), _out({"p": "n1"}, None, ["v"]), _out({"p": "n1"}, None, []), {})
    assert not r.agree and r.kind == "victims"
