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


def test_choice_alternatives_enumerate_what_the_run_offered(dg: ModuleType) -> None:
    # nothing random offered and one node: no alternative
    assert dg.choice_alternatives(dg.EngineChoices(nodes=1)) == []
    seen = dg.EngineChoices(start_index=1, nodes=3, generated=2, generated_preempt=2, tied=0, candidates=0)
    alts = dg.choice_alternatives(seen)
    key = [(a.start_index, a.rotation, a.preempt_rotation, a.pick, a.candidate) for a in alts]
    # first the random choices from upstream's own start index, then the other start indices
    assert key[:3] == [(1, 0, 1, None, 0), (1, 1, 0, None, 0), (1, 1, 1, None, 0)]
    assert key[3:5] == [(0, 0, 0, None, 0), (2, 0, 0, None, 0)]
    assert (1, 0, 0, None, 0) not in key and len(set(key)) == len(key)
    assert "placement #2 first" in alts[1].describe()
    tied = dg.choice_alternatives(dg.EngineChoices(nodes=1, tied=2, candidates=3))
    assert {(a.pick, a.candidate) for a in tied} == {(p, c) for p in (0, 1) for c in range(3)}


def _engine(dg: ModuleType) -> tuple[Any, Any]:
    from kubesched.config import decode_config
    from kubesched.features import FeatureGate
    from kubesched.testing.upstream import format_feature_gates

    features = FeatureGate.from_flags(emulated_version="1.37", feature_gates=format_feature_gates(dg.GROUP_GATES))
    config = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                            "parallelism": 1}, features=features)
    return config, features


def _strip(p: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": dict(p["metadata"]), "spec": dict(p["spec"])}


def test_placement_order_is_a_choice(dg: ModuleType) -> None:
    """A rack gang that fits no rack: upstream reports the status of whichever placement it ranged
    over first (Go map order); the engine's sorted order gives rack-a's, rotation 1 rack-b's, and
    the cycle's member messages follow the same placement."""
    config, features = _engine(dg)
    nodes = [dg.node(f"{r}-{i}", cpu=cpu, labels={dg.RACK: r}) for r, cpu in (("rack-a", "4"), ("rack-b", "8"))
             for i in range(2)]
    group = dg.pod_group("g", 12, topology=dg.RACK)
    group["spec"]["priority"] = 0
    members = [dg.pod(f"g-{i:02d}", cpu="2", group="g") for i in range(12)]

    def run(choices: Any) -> str:
        out, _ = dg.engine_group_step(config, features, [], nodes, [], [], group, members, _strip, choices=choices)
        return out["group_condition"]["message"]

    seen = dg.EngineChoices()
    assert "4 scheduled, 7 remaining" in run(seen)  # rack-a: 2 × 4 cpu hold 4 members
    assert (seen.generated, seen.nodes) == (2, 4)
    assert "8 scheduled, 3 remaining" in run(dg.EngineChoices(rotation=1))  # rack-b: 2 × 8 cpu hold 8


class _FakeCP:
    """Records the requests create_step makes; answers as the API server would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.tokens = {"kubesched": "t"}

    def request(self, method: str, path: str, body: Any = None, **_: Any) -> tuple[int, dict[str, str], Any]:
        self.calls.append((method, path, body))
        if method == "POST":
            return 201, {}, body
        name = path.rsplit("/", 1)[1]
        return 200, {}, {"metadata": {"name": name}, "spec": {k: v for k, v in body["spec"].items() if v}}


class _FakeMetrics:
    def __init__(self, values: list[float]) -> None:
        self.values = values

    def pending(self, queue: str) -> float | None:
        assert queue == "gated"
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


def test_create_step_holds_members_until_all_are_queued(dg: ModuleType) -> None:
    cp = _FakeCP()
    group = dg.pod_group("g", 2)
    members = [dg.pod(f"g-{i}", group="g") for i in range(2)]
    # one pod gated before; both members seen at the 4th read, the ungating at the 6th
    metrics = _FakeMetrics([1.0, 1.0, 2.0, 3.0, 2.0, 1.0])
    stored, created = dg.create_step(cp, group, members, metrics)  # type: ignore[arg-type]
    kinds = [(m, p.rsplit("/", 2)[-2] if m == "PATCH" else p.rsplit("/", 1)[1]) for m, p, _ in cp.calls]
    assert kinds == [("POST", "podgroups"), ("POST", "pods"), ("POST", "pods"), ("PATCH", "pods"), ("PATCH", "pods")]
    assert all(b["spec"]["schedulingGates"] == [{"name": dg.HOLD_GATE}] for m, _, b in cp.calls[1:3])
    assert all(b == {"spec": {"schedulingGates": None}} for m, _, b in cp.calls[3:])
    assert metrics.values == [1.0] and stored is not None
    assert [p["metadata"]["name"] for p in created] == ["g-0", "g-1"]
    assert not any("schedulingGates" in p["spec"] for p in created)
    # a single pod: created as it is
    cp2 = _FakeCP()
    _, single = dg.create_step(cp2, None, [dg.pod("s")], None)
    assert [m for m, _, _ in cp2.calls] == ["POST"] and "schedulingGates" not in single[0]["spec"]


class _StaticCP:
    """An API server whose pods and PodGroups never change (settle_step only reads)."""

    def __init__(self, pods: list[dict[str, Any]]) -> None:
        self.pods = pods

    def request(self, method: str, path: str, body: Any = None, **_: Any) -> tuple[int, dict[str, str], Any]:
        assert method == "GET"
        return 200, {}, {"items": self.pods if path.endswith("/pods") else []}


class _Queues:
    def __init__(self, gated: float) -> None:
        self.gated = gated

    def pending(self, queue: str) -> float | None:
        return self.gated if queue == "gated" else 0.0


def _unattempted_pod(dg: ModuleType, name: str, group: str | None) -> dict[str, Any]:
    p = dg.pod(name, group=group)
    p["metadata"]["resourceVersion"] = "1"
    return p


def test_settle_step_reads_no_condition_as_held_only_when_the_queue_gates_it(dg: ModuleType) -> None:
    # a pod outside any group with no PodScheduled condition is in flight (popped, its cycle or
    # binding running), never held: seed 19 single-08 had "settled" unbound after 1.7 s
    single = dg.settle_step(_StaticCP([_unattempted_pod(dg, "s", None)]), ["s"], None, stable=0.0, timeout=0.3)
    assert not single.settled
    # group members with no condition: held by GangScheduling's PreEnqueue only when the queue
    # counts them gated; assumed members still binding are not (seed 17 pg-01 bound 1/4)
    members = [_unattempted_pod(dg, f"g-{i}", "g") for i in range(3)]
    names = [p["metadata"]["name"] for p in members]
    held = dg.settle_step(_StaticCP(members), names, None, stable=0.0, timeout=2.0, metrics=_Queues(3.0))
    assert held.settled and held.seconds < 1.0
    binding = dg.settle_step(_StaticCP(members), names, None, stable=0.0, timeout=0.3, metrics=_Queues(1.0))
    assert not binding.settled


def test_condition_race_is_a_choice(dg: ModuleType) -> None:
    """A basic group partly placed: its first cycle writes PodGroupInitiallyScheduled=True and
    the leftover member's retry fails. The engine's no-regress check (schedule_one_podgroup.go
    L943-968) keeps True; with the informer one write behind (upstream's race) the retry's False
    overwrites it — the alternative is offered only because the check dropped a regression."""
    config, features = _engine(dg)
    nodes = [dg.node("n-0", cpu="4")]
    group = dg.pod_group("g")
    group["spec"]["priority"] = 0
    members = [dg.pod(f"g-{i}", cpu="2", group="g") for i in range(3)]

    def run(choices: Any) -> dict[str, Any]:
        out, _ = dg.engine_group_step(config, features, [], nodes, [], [], group, members, _strip, choices=choices)
        return out

    seen = dg.EngineChoices()
    own = run(seen)
    assert sum(bool(v["node"]) for v in own["pods"].values()) == 2
    assert own["group_condition"]["status"] == "True" and seen.regressions > 0
    alts = dg.choice_alternatives(seen)
    assert alts[0].stale_status and "condition race" in alts[0].describe()
    raced = run(alts[0])
    assert sum(bool(v["node"]) for v in raced["pods"].values()) == 2
    assert (raced["group_condition"]["status"], raced["group_condition"]["reason"]) == ("False", "Unschedulable")
    assert raced["group_condition"]["message"].startswith("pod group is unschedulable")
