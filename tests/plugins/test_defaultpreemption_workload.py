"""Single-pod preemption with victim units (GenericWorkload, v1.37), ported from upstream
v1.37.2 ``plugins/defaultpreemption/default_preemption_test.go`` (the workload-aware cases of
TestSelectVictimsOnNode, TestCustomSelection, TestCustomOrdering, TestPodEligibleToPreemptOthers)
and ``framework/preemption`` ``util_test.go`` (TestMoreImportantVictim,
TestFilterVictimsWithPDBViolation) and ``types_test.go`` (TestNewVictim, getCrossNodesVictims).

Quantities and helpers are those of ``test_defaultpreemption.py`` (upstream's small/medium/large,
nodes of ``veryLargeRes`` = 500m/500 with 32 pods). PodGroups reach the evaluator through
``handle.pod_group_manager`` (as the scheduler sets it with GenericWorkload).
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.plugins.test_defaultpreemption import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    SMALL,
    VERY_HIGH,
    Env,
    mk,
    node,
    pdb,
    t,
)

from kubesched.features import default_feature_gate
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.framework.preemption import (
    PodGroupIndex,
    Victim,
    filter_victims_with_pdb_violation,
    more_important_victim,
    new_victim,
    pod_start_time_ns,
)

GW = default_feature_gate().with_overrides(GenericWorkload=True)
E = t(0)


def PG(name: str, prio: int | None = None, mode: str | None = "all", ns: str = "default") -> dict[str, Any]:  # noqa: N802
    spec: dict[str, Any] = {}
    if mode:
        spec["disruptionMode"] = {mode: {}}
    if prio is not None:
        spec["priority"] = prio
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": name}, "spec": spec}


class Manager:
    """``handle.pod_group_manager``: the PodGroups the scheduler observed."""

    def __init__(self, pgs: list[dict]) -> None:
        self.pgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in pgs}

    def pod_group(self, namespace: str, name: str) -> dict | None:
        return self.pgs.get((namespace, name))

    def pod_group_state(self, namespace: str, name: str) -> None:
        return None


def gp(name: str, prio: int, node_name: str | None, group: str | None, req: dict | None = None,
       labels: dict | None = None, start: str | None = E, ns: str = "default") -> Any:
    p = mk(name, prio, node_name, req, start, labels, ns)
    if group:
        p.spec(schedulingGroup={"podGroupName": group})
    return p


def wl_env(nodes: list, pods: list, pgs: list, *, features: Any = GW, **kw: Any) -> Env:
    env = Env(nodes, [p.obj() for p in pods], features=features, **kw)
    env.handle.pod_group_manager = Manager(pgs)
    cluster = env.cluster

    def record_event(obj: Any, event_type: str, reason: str, action: str, note: str, related: Any = None) -> None:
        # the related object of a pod-group preemption is the raw PodGroup
        cluster.events.append((obj.metadata.name, event_type, reason, action, note))
        cluster.related.append(related["metadata"]["name"] if isinstance(related, dict)
                               else related.metadata.name if related is not None else None)

    cluster.record_event = record_event  # type: ignore[method-assign]
    return env


# ─────────────────────────── TestSelectVictimsOnNode (workload-aware cases) ───────────────────────────

def zone_node(spec: str) -> Any:
    """``name/zone`` as upstream's ``node-a/zone1`` (labels hostname, zone)."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return node(parts[0], labels=labels)


def anti_affinity_foo_zone(p: Any) -> Any:
    return p.pod_affinity("podAntiAffinity", {"labelSelector": {"matchExpressions": [
        {"key": "foo", "operator": "Exists"}]}, "topologyKey": "zone"})


SELECT_CASES = [
    ("Workload Aware: Atomic preemption of PodGroup", ["node1"], "node1", [PG("pg1", LOW)],
     [gp("g1-1", LOW, "node1", "pg1", SMALL), gp("g1-2", LOW, "node1", "pg1", MEDIUM)], [],
     mk("p", HIGH, req=LARGE), (), {"g1-1", "g1-2"}, 0, Code.SUCCESS),
    ("Workload Aware: prefer single pod over podGroup for preemption candidate", ["node1"], "node1", [PG("pg1", LOW)],
     [gp("p1", LOW, "node1", None, SMALL), gp("g1-1", LOW, "node1", "pg1", SMALL),
      gp("g1-2", LOW, "node1", "pg1", SMALL)], [],
     mk("p", HIGH, req=LARGE), (), {"p1"}, 0, Code.SUCCESS),
    ("Workload Aware: preempt lower priority pod group instead of higher priority single pod", ["node1"], "node1",
     [PG("pg1", LOW)], [gp("p1", HIGH, "node1", None, MEDIUM), gp("g1-1", LOW, "node1", "pg1", MEDIUM)], [],
     mk("p", VERY_HIGH, req=LARGE), (), {"g1-1"}, 0, Code.SUCCESS),
    ("Workload Aware: preempt lower priority single pod instead of higher priority pod group", ["node1"], "node1",
     [PG("pg1", HIGH)], [gp("p1", LOW, "node1", None, MEDIUM), gp("g1-1", HIGH, "node1", "pg1", MEDIUM)], [],
     mk("p", VERY_HIGH, req=LARGE), (), {"p1"}, 0, Code.SUCCESS),
    ("Workload Aware: PDB: PodGroup as victim with 2 PDB violations", ["node1"], "node1", [PG("pg1", LOW)],
     [gp("g1-1", LOW, "node1", "pg1", MEDIUM, {"app": "foo"}), gp("g1-2", LOW, "node1", "pg1", MEDIUM, {"app": "foo"})],
     [pdb({"app": "foo"})], mk("p", HIGH, req=LARGE), (), {"g1-1", "g1-2"}, 2, Code.SUCCESS),
    ("Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup (DisruptionModeAll)",
     ["node1"], "node1", [PG("pg-violating", LOW), PG("pg-non-violating", MID)],
     [gp("g1-1", LOW, "node1", "pg-violating", MEDIUM, {"app": "foo"}),
      gp("g2-1", MID, "node1", "pg-non-violating", MEDIUM)],
     [pdb({"app": "foo"})], mk("p", HIGH, req=LARGE), (), {"g2-1"}, 0, Code.SUCCESS),
    ("Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup "
     "(DisruptionModeSingle)", ["node1"], "node1",
     [PG("pg-violating", LOW, "single"), PG("pg-non-violating", MID, "single")],
     [gp("g1-1", LOW, "node1", "pg-violating", MEDIUM, {"app": "foo"}),
      gp("g2-1", MID, "node1", "pg-non-violating", MEDIUM)],
     [pdb({"app": "foo"})], mk("p", HIGH, req=LARGE), (), {"g2-1"}, 0, Code.SUCCESS),
    ("Failure: Cannot preempt the victim with higher priority", ["node1"], "node1", [],
     [gp("victim", HIGH, "node1", None)], [], mk("p", MID), (), set(), 0, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Failure: Cannot preempt if node is empty", ["node1"], "node1", [], [], [], mk("p", MID), (), set(), 0,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-a",
     ["node-a/zone1", "node-b/zone1"], "node-a", [PG("pg1", LOW)],
     [gp("pod-x", LOW, "node-a", "pg1"), gp("pod-y", LOW, "node-b", "pg1", labels={"foo": ""})], [],
     anti_affinity_foo_zone(mk("p", HIGH)), ("InterPodAffinity",), {"pod-x", "pod-y"}, 0, Code.SUCCESS),
    ("Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-b",
     ["node-a/zone1", "node-b/zone1"], "node-b", [PG("pg1", LOW)],
     [gp("pod-x", LOW, "node-a", "pg1"), gp("pod-y", LOW, "node-b", "pg1", labels={"foo": ""})], [],
     anti_affinity_foo_zone(mk("p", HIGH)), ("InterPodAffinity",), {"pod-x", "pod-y"}, 0, Code.SUCCESS),
    ("Cross-node PodGroup: zone anti-affinity reprieve succeeds when remote pod lacks constraint label "
     "(negative control)", ["node-a/zone1", "node-b/zone1"], "node-a", [PG("pg1", LOW)],
     [gp("pod-x", LOW, "node-a", "pg1"), gp("pod-y", LOW, "node-b", "pg1")], [],
     anti_affinity_foo_zone(mk("p", HIGH)), ("InterPodAffinity",), set(), 0, Code.SUCCESS),
    ("Cross-node PodGroup: topology spread blocks reprieve via PreFilterExtension on node-a",
     ["node-a/zone1", "node-b/zone1", "node-c/zone2"], "node-a", [PG("pg1", LOW)],
     [gp("pod-a", LOW, "node-a", "pg1", labels={"foo": ""}), gp("pod-b", LOW, "node-b", "pg1", labels={"foo": ""}),
      gp("pod-c", VERY_HIGH, "node-c", None, labels={"foo": ""})], [],
     mk("p", HIGH, labels={"foo": ""}).spread_constraint(1, "zone", "DoNotSchedule", {"matchExpressions": [
         {"key": "foo", "operator": "Exists"}]}), ("PodTopologySpread",), {"pod-a", "pod-b"}, 0, Code.SUCCESS),
    ("Cross-node PodGroup: topology spread blocks reprieve via PreFilterExtension on node-c",
     ["node-a/zone1", "node-b/zone1", "node-c/zone2"], "node-c", [PG("pg1", LOW)],
     [gp("pod-a", LOW, "node-a", "pg1", labels={"foo": ""}), gp("pod-b", LOW, "node-b", "pg1", labels={"foo": ""}),
      gp("pod-c", VERY_HIGH, "node-c", None, labels={"foo": ""})], [],
     mk("p", HIGH, labels={"foo": ""}).spread_constraint(1, "zone", "DoNotSchedule", {"matchExpressions": [
         {"key": "foo", "operator": "Exists"}]}), ("PodTopologySpread",), set(), 0,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Cross-node PodGroup: whole pod group across multiple nodes expected to be preempted", ["node-a", "node-b"],
     "node-a", [PG("pg1", LOW)],
     [gp("pod-a", LOW, "node-a", "pg1", LARGE), gp("pod-b", LOW, "node-b", "pg1", LARGE)], [],
     mk("p", HIGH, req=LARGE), (), {"pod-a", "pod-b"}, 0, Code.SUCCESS),
]


@pytest.mark.parametrize("case", SELECT_CASES, ids=[c[0] for c in SELECT_CASES])
def test_select_victims_on_node(case: tuple) -> None:
    _, nodes, main, pgs, pods, pdbs, preemptor, plugins, want, want_violating, want_code = case
    env = wl_env([zone_node(n) for n in nodes], pods, pgs, plugins=("NodeResourcesFit", *plugins), pdbs=pdbs)
    pod = preemptor.obj()
    state = env.state(pod)
    before = env.snapshot()
    victims, violating, st = env.ev.select_victims_on_node(state.clone(), pod, env.table.row_of[main], pdbs)
    assert env.snapshot() == before
    assert st.code == want_code, st
    if want_code != Code.SUCCESS:
        return
    assert {p.metadata.name for p in victims} == want
    assert violating == want_violating


def test_gate_off_pod_groups_are_plain_pods() -> None:
    """Without GenericWorkload a member of a disruptionMode-all group is a victim of its own."""
    pods = [gp("g1-1", LOW, "node1", "pg1", SMALL), gp("g1-2", LOW, "node2", "pg1", SMALL),
            gp("p1", LOW, "node1", None, MEDIUM)]
    env = wl_env([node("node1"), node("node2")], pods, [PG("pg1", LOW)], features=default_feature_gate())
    pod = mk("p", HIGH, req=LARGE).obj()
    victims, _, st = env.ev.select_victims_on_node(env.state(pod), pod, env.table.row_of["node1"], [])
    assert st.is_success() and [p.metadata.name for p in victims] == ["p1"]
    env = wl_env([node("node1"), node("node2")], pods, [PG("pg1", LOW)])
    victims, _, st = env.ev.select_victims_on_node(env.state(pod), pod, env.table.row_of["node1"], [])
    assert st.is_success() and [p.metadata.name for p in victims] == ["p1"]  # a lone pod is less important


def test_preempt_evicts_the_whole_group_across_nodes() -> None:
    """PostFilter end to end: the candidate's victims include the member on the other node; the
    events name the candidate node."""
    pods = [gp("pod-a", LOW, "node-a", "pg1", LARGE), gp("pod-b", LOW, "node-b", "pg1", LARGE)]
    env = wl_env([node("node-a"), node("node-b")], pods, [PG("pg1", LOW)])
    pod = mk("p", HIGH, req=LARGE).obj()
    env.cluster.pods["default/p"] = pod
    res, st = env.pl.post_filter(env.state(pod), pod, env.statuses({"node-a": Code.UNSCHEDULABLE}))
    assert st.code == Code.SUCCESS
    assert st.message() == "preemption: found a potential placement for pod on node node-a, preempting 2 victims"
    assert sorted(env.cluster.deleted) == ["pod-a", "pod-b"]
    assert {e[4] for e in env.cluster.events} == {"Preempted by pod p on node node-a"}


# ─────────────────────────── TestCustomSelection / TestCustomOrdering (pod groups) ───────────────────────────

def labels_are(key: str, val: str) -> Any:
    return lambda ni, victim, preemptor: all(pi.pod.metadata.labels.get(key) == val for pi in victim.pods)


@pytest.mark.parametrize("name,eligible,pods,expected", [
    ("filter for matching pod group: all affected nodes eligible", labels_are("preemptible", "yes"),
     [gp("v1", LOW, "node1", "pg1", LARGE, {"preemptible": "yes"}),
      gp("v2", LOW, "node2", "pg1", LARGE, {"preemptible": "yes"})],
     {"node1": ["v1", "v2"], "node2": ["v1", "v2"]}),
    ("filter for matching pod group: one node ineligible rejects entire pod group", lambda ni, v, p: ni.name == "node1",
     [gp("v1", LOW, "node1", "pg1", SMALL), gp("v2", LOW, "node2", "pg1", SMALL), gp("v3", MID, "node1", None, LARGE)],
     {"node1": ["v3"]}),
])
def test_custom_selection_pod_groups(name: str, eligible: Any, pods: list, expected: dict) -> None:
    env = wl_env([node("node1"), node("node2")], pods, [PG("pg1")])
    env.ev.is_eligible_victim = eligible
    pod = mk("p1", HIGH, req=LARGE).obj()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, env.table.order(), [], 0, 2)
    assert len(cands) == len(expected)
    while cands:
        sel = env.ev.select_candidate(cands)
        assert sorted(p.metadata.name for p in sel.victims.pods) == expected[sel.name]
        cands = [c for c in cands if c.name != sel.name]


def _names(v: Victim) -> list[str]:
    return sorted(pi.pod.metadata.name for pi in v.pods)


def standalone_over_group(a: Victim, b: Victim) -> bool:
    if a.is_group != b.is_group:
        return not a.is_group
    return more_important_victim(a, b)


def smaller_group_over_larger(a: Victim, b: Victim) -> bool:
    if a.is_group and b.is_group and len(a.members) != len(b.members):
        return len(a.members) < len(b.members)
    return more_important_victim(a, b)


def by_group_name(a: Victim, b: Victim) -> bool:
    if a.is_group and b.is_group:
        ga = a.pods[0].pod.spec.scheduling_group.pod_group_name
        gb = b.pods[0].pod.spec.scheduling_group.pod_group_name
        if ga != gb:
            return ga < gb
    return more_important_victim(a, b)


@pytest.mark.parametrize("order,pods,pgs,want", [
    (lambda a, b: pod_start_time_ns(a.pods[0].pod) < pod_start_time_ns(b.pods[0].pod),
     [gp("v1", LOW, "node1", None, MEDIUM, start=t(2)), gp("v2", LOW, "node1", None, MEDIUM, start=t(0)),
      gp("v3", LOW, "node1", None, MEDIUM, start=t(1))], [], ["v3", "v1"]),
    (lambda a, b: _names(a)[0] < _names(b)[0],
     [gp("foo", LOW, "node1", None, MEDIUM), gp("bar", LOW, "node1", None, MEDIUM),
      gp("baz", MID, "node1", None, MEDIUM)], [], ["baz", "foo"]),
    (standalone_over_group,
     [gp("v1", LOW, "node1", None, MEDIUM), gp("v2", LOW, "node1", "pg1", SMALL), gp("v3", LOW, "node1", "pg1", SMALL)],
     [PG("pg1")], ["v2", "v3"]),
    (smaller_group_over_larger,
     [gp("v1", LOW, "node1", "pg-small", SMALL), gp("v2", LOW, "node1", "pg-large", SMALL),
      gp("v3", LOW, "node1", "pg-large", SMALL)], [PG("pg-small"), PG("pg-large")], ["v2", "v3"]),
    (by_group_name,
     [gp("v1", LOW, "node1", "pg-a", MEDIUM, start=t(1)), gp("v2", LOW, "node1", "pg-z", MEDIUM, start=t(0))],
     [PG("pg-a"), PG("pg-z")], ["v2"]),
], ids=["select newest pods", "select alphabetically-last pods", "select pod group over standalone pod due to "
        "custom ordering", "select larger pod group over smaller pod group due to custom ordering",
        "select pod group by name alphabetically due to custom ordering"])
def test_custom_ordering_victims(order: Any, pods: list, pgs: list, want: list[str]) -> None:
    env = wl_env([node("node1")], pods, pgs)
    env.ev.more_important_victim = order
    pod = mk("p2", HIGH, req=LARGE).obj()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, env.table.order(), [], 0, 1)
    assert len(cands) == 1
    assert [p.metadata.name for p in cands[0].victims.pods] == want


# ─────────────────────────── TestPodEligibleToPreemptOthers (pod groups) ───────────────────────────

def test_pod_eligible_victim_priority_from_its_pod_group() -> None:
    """"Preemptor with SchedulingGroup, victim priority overridden by PodGroup in victim namespace":
    the terminating victim's own priority is very high, its group's low → not eligible."""
    victim = gp("v1", VERY_HIGH, "node1", "pg1", ns="ns2").terminating().condition(
        "DisruptionTarget", "True", "PreemptionByScheduler").obj()
    env = Env([node("node1")], [victim], features=GW)
    env.handle.pod_group_manager = Manager([PG("pg1", LOW, None, ns="ns2")])
    pod = gp("p", HIGH, None, "pg1", ns="ns1").nominated_node_name("node1").obj()
    assert env.ev.pod_eligible_to_preempt_others(pod, None) == (
        False, "not eligible due to a terminating pod on the nominated node.")
    env = Env([node("node1")], [victim], features=default_feature_gate())  # gate off: the pod's own priority
    assert env.ev.pod_eligible_to_preempt_others(pod, None) == (True, "")


# ─────────────────────────── util_test.go / types_test.go ───────────────────────────

def V(prio: int, kind: str = "pod", n: int = 1, start: int = 0) -> Victim:  # noqa: N802
    pods = [(0, PodInfo(mk(f"x{i}", prio, start=t(start)).obj())) for i in range(n)]
    return new_victim(pods, prio, kind)


@pytest.mark.parametrize("a,b,want", [
    (V(HIGH), V(LOW), True),
    (V(LOW), V(HIGH), False),
    (V(LOW, "podgroup"), V(LOW, "pod"), True),
    (V(LOW, "compositepodgroup"), V(LOW, "podgroup", 5), True),
    (V(LOW, "podgroup", 3), V(LOW, "podgroup", 2), True),
    (V(LOW, "podgroup", 2, start=1), V(LOW, "podgroup", 2, start=2), True),
    (V(LOW, "pod", start=2), V(LOW, "pod", start=1), False),
    (V(LOW), V(LOW), False),
])
def test_more_important_victim(a: Victim, b: Victim, want: bool) -> None:
    assert more_important_victim(a, b) is want


def test_new_victim_earliest_start() -> None:
    pods = [(0, PodInfo(mk("a", LOW, start=t(5)).obj())), (1, PodInfo(mk("b", LOW, start=t(3)).obj())),
            (0, PodInfo(mk("c", LOW).obj()))]
    v = new_victim(pods, 7, "podgroup")
    assert (v.earliest_start_ns, v.priority, v.rows, v.is_group) == (3, 7, [0, 1], True)


def test_filter_victims_with_pdb_violation() -> None:
    """A unit violates when any member does; its count is its violating members; budgets are
    spent across units in order."""
    def unit(*specs: tuple[str, dict]) -> Victim:
        return new_victim([(0, PodInfo(mk(n, LOW, labels=lab).obj())) for n, lab in specs], LOW, "podgroup")

    a = unit(("a1", {"app": "x"}), ("a2", {"app": "x"}))
    b = unit(("b1", {}))
    c = unit(("c1", {"app": "x"}))
    violating, ok = filter_victims_with_pdb_violation([a, b, c], [pdb({"app": "x"}, allowed=2)])
    assert [(_names(v), n) for v, n in violating] == [(["c1"], 1)]
    assert [_names(v) for v in ok] == [["a1", "a2"], ["b1"]]
    violating, ok = filter_victims_with_pdb_violation([a, b, c], [pdb({"app": "x"}, allowed=1)])
    assert [(_names(v), n) for v, n in violating] == [(["a1", "a2"], 1), (["c1"], 1)]


def test_cross_node_victims() -> None:
    """getCrossNodesVictims: a disruptionMode-all member brings the group's scheduled members from
    every node (once); a single-mode member is a pod victim typed podgroup with the group's priority."""
    pods = [gp("a1", MID, "n1", "all-pg"), gp("a2", MID, "n2", "all-pg"), gp("s1", MID, "n1", "single-pg"),
            gp("lone", MID, "n1", None), gp("unknown", MID, "n1", "missing-pg")]
    env = wl_env([node("n1"), node("n2")], pods, [PG("all-pg", LOW), PG("single-pg", HIGH, "single")])
    units = PodGroupIndex(env.handle).victims_on_rows([env.table.row_of["n1"]])
    got = [(_names(v), v.priority, v.key_type, sorted(env.table.names[r] for r in v.rows)) for v in units]
    assert got == [(["a1", "a2"], LOW, "podgroup", ["n1", "n2"]), (["s1"], HIGH, "podgroup", ["n1"]),
                   (["lone"], MID, "pod", ["n1"]), (["unknown"], MID, "podgroup", ["n1"])]



@pytest.mark.parametrize("seed", range(12))
def test_gate_on_without_groups_matches_gate_off(seed: int) -> None:
    """With no pod in a PodGroup every unit is a lone pod: the dry run must give the same
    candidates, victims (in order), PDB counts and statuses with and without GenericWorkload."""
    import random

    rnd = random.Random(seed)
    sizes = [SMALL, MEDIUM, LARGE]
    nodes = [node(f"n{i}") for i in range(rnd.randint(1, 6))]
    pods = [mk(f"v{i}", rnd.choice([LOW, MID, HIGH]), f"n{rnd.randrange(len(nodes))}", rnd.choice(sizes),
               t(rnd.randrange(5)), {"app": rnd.choice(["a", "b"])}) for i in range(rnd.randint(0, 14))]
    pdbs = [pdb({"app": "a"}, allowed=rnd.randint(0, 2))]
    preemptor = mk("p", rnd.choice([MID, HIGH, VERY_HIGH]), req=rnd.choice(sizes)).obj()
    got = []
    for features in (default_feature_gate(), GW):
        env = Env(nodes, [p.obj() for p in pods], pdbs=pdbs, features=features)
        cands, statuses, errs = env.ev.dry_run_preemption(env.state(preemptor), preemptor, env.table.order(), pdbs,
                                                          0, len(nodes))
        got.append(([(c.name, [p.metadata.name for p in c.victims.pods], c.victims.num_pdb_violations)
                     for c in cands], {k: (v.code, v.reasons) for k, v in statuses.items()}, errs))
    assert got[0] == got[1]


# ─────────────────────── PodGroupPostFilter with the real Filter plugins ───────────────────────

def fit_scheduling_func(env: Env, members: list, min_count: int) -> Any:
    """A stand-in for the pod-group cycle's algorithm: each member in order goes to the first node
    (``order()``) that passes the framework's PreFilter/Filter, assumed in the table so the next
    member sees it; every assumption is reverted before returning, as the cycle does."""
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import TableEdit
    from kubesched.framework.podgroup import PodGroupAssignments, ProposedAssignment

    def run() -> Any:
        fw, table = env.fw, env.table
        out = []
        with TableEdit(table) as edit:
            for p in members:
                state = CycleState(PodInfo(p))
                _, st, _ = fw.run_pre_filter_plugins(state, p)
                if st is not None and not st.is_success():
                    break
                rows = table.order()
                chunk = fw.run_filter_plugins(state, p, rows)
                ok = [int(r) for r, f in zip(rows.tolist(), chunk.fail_plugin.tolist(), strict=True) if f < 0]
                if not ok:
                    break
                pi = PodInfo(p)
                edit.add(pi, ok[0])
                out.append(ProposedAssignment(p, pi, table.names[ok[0]], state))
        if len(out) >= min_count:
            return PodGroupAssignments(None, out), None
        from kubesched.framework.interface import Status as St

        return None, St(Code.UNSCHEDULABLE, (f"minCount ({min_count}) cannot be satisfied",))
    return run


def test_pod_group_post_filter_with_node_resources_fit() -> None:
    from kubesched.framework.podgroup import PodGroupCycleState, PodGroupInfo

    pods = [gp("v-a", LOW, "node1", "train", LARGE), gp("v-b", LOW, "node2", "train", LARGE),
            gp("lone", MID, "node3", None, LARGE)]
    env = wl_env([node("node1"), node("node2"), node("node3")], pods, [PG("train", LOW)])
    members = [gp("m1", HIGH, None, "gang", LARGE).obj(), gp("m2", HIGH, None, "gang", LARGE).obj()]
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "gang", "namespace": "default", "uid": "gang-uid"},
             "spec": {"priority": HIGH, "schedulingPolicy": {"gang": {"minCount": 2}}}}
    before = env.snapshot()
    res, st = env.fw.run_pod_group_post_filter_plugins(
        PodGroupCycleState(), PodGroupInfo("gang", "default", pod_group=group, unscheduled_pods=members),
        fit_scheduling_func(env, members, 2))
    assert env.snapshot() == before
    assert st.message() == "pod group preemption: found a placement for podgroup, preempting 2 victims"
    assert res is not None
    assert {k: v.nominated_node_name for k, v in res.nominating_infos.items()} == {
        "default/m1": "node1", "default/m2": "node2"}
    assert sorted(env.cluster.deleted) == ["v-a", "v-b"]  # "lone" (more important) was reprieved
    assert {e[4] for e in env.cluster.events} == {"Preempted by podgroup gang-uid on node cluster"}
    assert env.cluster.related == ["gang", "gang"]


def test_pod_group_post_filter_group_does_not_fit_even_without_victims() -> None:
    from kubesched.framework.podgroup import PodGroupCycleState, PodGroupInfo

    env = wl_env([node("node1")], [gp("low", LOW, "node1", None, SMALL)], [])
    members = [gp("m1", HIGH, None, "gang", LARGE).obj(), gp("m2", HIGH, None, "gang", LARGE).obj()]
    group = {"metadata": {"name": "gang", "namespace": "default", "uid": "g"},
             "spec": {"priority": HIGH, "schedulingPolicy": {"gang": {"minCount": 2}}}}
    before = env.snapshot()
    res, st = env.fw.run_pod_group_post_filter_plugins(
        PodGroupCycleState(), PodGroupInfo("gang", "default", pod_group=group, unscheduled_pods=members),
        fit_scheduling_func(env, members, 2))
    assert env.snapshot() == before
    assert (res, st.code, st.message()) == (None, Code.UNSCHEDULABLE,
                                            "pod group preemption: minCount (2) cannot be satisfied")
    assert env.cluster.deleted == []


@pytest.mark.parametrize("seed", range(15))
def test_pod_group_preemption_invariants(seed: int) -> None:
    """Randomised clusters of pods in PodGroups (all / single disruption) and lone pods: the table
    is left as found; every victim's unit has a lower priority than the preemptor group; a group
    with disruptionMode all is evicted whole or not at all; and with the victims gone the members
    fit their nominated nodes, placed in order (what the reprieve guaranteed)."""
    import random

    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import TableEdit
    from kubesched.framework.podgroup import PodGroupCycleState, PodGroupInfo

    rnd = random.Random(seed)
    n_nodes = rnd.randint(2, 5)
    groups = {f"g{i}": (rnd.choice([LOW, MID, HIGH]), rnd.choice(["all", "single"])) for i in range(3)}
    pods = []
    for i in range(rnd.randint(2, 3 * n_nodes)):
        g = rnd.choice([None, *groups])
        prio = groups[g][0] if g else rnd.choice([LOW, MID, HIGH])
        pods.append(gp(f"v{i}", prio, f"n{rnd.randrange(n_nodes)}", g, rnd.choice([SMALL, MEDIUM, LARGE])))
    env = wl_env([node(f"n{i}") for i in range(n_nodes)], pods, [PG(g, p, m) for g, (p, m) in groups.items()])
    gprio = rnd.choice([MID, HIGH, VERY_HIGH])
    members = [gp(f"m{i}", gprio, None, "gang", rnd.choice([SMALL, MEDIUM, LARGE])).obj()
               for i in range(rnd.randint(1, 4))]
    min_count = rnd.randint(1, len(members))
    group = {"metadata": {"name": "gang", "namespace": "default", "uid": "gang"},
             "spec": {"priority": gprio, "schedulingPolicy": {"gang": {"minCount": min_count}}}}
    before = env.snapshot()
    res, st = env.fw.run_pod_group_post_filter_plugins(
        PodGroupCycleState(), PodGroupInfo("gang", "default", pod_group=group, unscheduled_pods=members),
        fit_scheduling_func(env, members, min_count))
    assert env.snapshot() == before
    deleted = set(env.cluster.deleted)
    by_name = {p.metadata.name: p for p in (q.obj() for q in pods)}
    for name in deleted:
        g = by_name[name].spec.scheduling_group
        unit_prio = groups[g.pod_group_name][0] if g else by_name[name].spec.priority
        assert unit_prio < gprio
    for g, (_, mode) in groups.items():
        names = {n for n, p in by_name.items()
                 if p.spec.scheduling_group and p.spec.scheduling_group.pod_group_name == g}
        if mode == "all":
            assert names <= deleted or not (names & deleted)
    if not st.is_success():
        assert not deleted
        return
    assert res is not None and len(res.nominating_infos) >= min_count
    table = env.table
    with TableEdit(table) as edit:
        for name in deleted:
            pi = next(pi for pi in table.pods[table.pod_row[f"default/{name}"]] if pi.pod.metadata.name == name)
            edit.remove(pi, table.pod_row[pi.key])
        for m in members:
            info = res.nominating_infos.get(f"default/{m.metadata.name}")
            if info is None:
                continue
            state = CycleState(PodInfo(m))
            env.fw.run_pre_filter_plugins(state, m)
            row = table.row_of[info.nominated_node_name]
            assert env.ev.filter_row_with_nominated_pods(state, m, row).is_success()
            edit.add(PodInfo(m), row)
