"""InterPodAffinity: tables ported from upstream interpodaffinity/filtering_test.go and
scoring_test.go (v1.34), plus hypothesis comparisons of the vectorised plugin with the plain
per-node reference on random clusters (with pod removals, node relabels and AddPod/RemovePod)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Namespace, ObjectMeta
from kubesched.features import FeatureGate
from kubesched.config.args import InterPodAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.features import FeatureGate
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import interpodaffinity as ipa
from kubesched.plugins.interpodaffinity.reference import ReferenceInterPodAffinity
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

AFF, ANTI = "podAffinity", "podAntiAffinity"
UU, U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE
R_AFF = ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH
R_ANTI = ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
R_EXIST = ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH


class _Lister:
    def __init__(self, namespaces: list[Namespace]) -> None:
        self.namespaces = namespaces

    def list(self, kind: str, namespace: str | None = None) -> list:
        return list(self.namespaces) if kind == "Namespace" else []

    def get(self, kind: str, namespace: str, name: str):  # noqa: ANN201
        return next((n for n in self.namespaces if n.metadata.name == name), None) if kind == "Namespace" else None


def ns_obj(name: str, **labels: str) -> Namespace:
    return Namespace(metadata=ObjectMeta(name=name, labels=dict(labels)))


def term(tk: str = "region", *, match: dict | None = None, exprs: list | None = None, namespaces: list | None = None,
         ns_selector: dict | None = None, nil_selector: bool = False, **extra) -> dict:
    t: dict = {"topologyKey": tk}
    if not nil_selector:
        sel: dict = {}
        if match:
            sel["matchLabels"] = match
        if exprs:
            sel["matchExpressions"] = [{"key": k, "operator": op, "values": v} if v is not None
                                       else {"key": k, "operator": op} for k, op, v in exprs]
        t["labelSelector"] = sel
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    t.update(extra)
    return t


def pod(name: str = "p", labels: dict | None = None, node: str | None = None, ns: str = "default",
        terms: list | None = None, terminating: bool = False):
    b = MakePod().name(name).namespace(ns).labels(labels or {})
    for kind, t, w in terms or ():
        b.pod_affinity(kind, t, weight=w)
    if node:
        b.node(node)
    if terminating:
        b.terminating()
    return b.obj()


def node(name: str, **labels: str):
    return MakeNode().name(name).labels(labels).capacity(cpu="4", memory="8Gi", pods="110").obj()


def setup(nodes, pods, namespaces=(), args=None):  # noqa: ANN001, ANN201
    table = build_table(list(nodes), list(pods))
    handle = Handle(nodes=table, lister=_Lister(list(namespaces)))
    return table, ipa.new(args, handle)


def run_filter(table, pl, p):  # noqa: ANN001, ANN201
    """Per node name: None (pass) or (code, reason), from the batch path; checks the per-node path agrees."""
    state = CycleState(PodInfo(p))
    _, st = pl.pre_filter(state, p, table)
    rows = table.order()
    if st is not None:
        if st.code == Code.SKIP:
            return {table.names[r]: None for r in rows.tolist()}
        return {table.names[r]: (st.code, st.reasons[0]) for r in rows.tolist()}
    res = pl.filter_nodes(state, p, table, rows)
    out = {}
    for i, r in enumerate(rows.tolist()):
        bits = 0 if res is None else int(res.failed[i])
        got = None if bits == 0 else (lambda s: (s.code, s.reasons[0]))(res.status_for(bits))
        single = pl.filter(state, p, table.node_info(r))
        assert got == (None if single is None else (single.code, single.reasons[0]))
        out[table.names[r]] = got
    return out


def run_score(table, pl, p):  # noqa: ANN001, ANN201
    """Per node name: normalized score (0 everywhere when PreScore skips)."""
    state = CycleState(PodInfo(p))
    rows = table.order()
    st = pl.pre_score(state, p, table, rows)
    if st is not None and st.code == Code.SKIP:
        return {table.names[r]: 0 for r in rows.tolist()}, True
    assert st is None
    raw = pl.score_nodes(state, p, table, rows)
    assert [pl.score(state, p, table.node_info(r))[0] for r in rows.tolist()] == raw.tolist()
    pl.normalize_score(state, p, raw)
    return dict(zip((table.names[r] for r in rows.tolist()), raw.tolist())), False


L1 = {"region": "r1", "zone": "z11"}
SEC = {"security": "S1"}
SCAN = {"service": "securityscan"}

# ───────────────────────────── filtering_test.go: TestRequiredAffinitySingleNode ─────────────────────────────

SINGLE = [
    ("no affinity, empty node", pod(labels=SCAN), [], None),
    ("affinity In matches existing pod", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan", "value2"])]), None)]),
     [pod("e", SCAN, "n1")], None),
    ("affinity NotIn matches existing pod", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "NotIn", ["securityscan3", "value3"])]), None)]),
     [pod("e", SCAN, "n1")], None),
    ("affinity with different namespace does not match", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan", "value2"])], namespaces=["DiffNameSpace"]), None)]),
     [pod("e", SCAN, "n1", ns="ns")], (UU, R_AFF)),
    ("affinity In unmatched", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["antivirusscan", "value2"])]), None)]),
     [pod("e", SCAN, "n1")], (UU, R_AFF)),
    ("multiple expressions ANDed, matched", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "Exists", None), ("wrongkey", "DoesNotExist", None)]), None),
                                                                   (AFF, term(exprs=[("service", "In", ["securityscan"]), ("service", "NotIn", ["WrongValue"])]), None)]),
     [pod("e", SCAN, "n1")], None),
    ("multiple terms must all be matched by one pod", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "Exists", None), ("wrongkey", "DoesNotExist", None)]), None),
                                                                             (AFF, term(exprs=[("service", "In", ["securityscan2"]), ("service", "NotIn", ["WrongValue"])]), None)]),
     [pod("e", SCAN, "n1")], (UU, R_AFF)),
    ("affinity and anti-affinity both satisfied", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan", "value2"])]), None),
                                                                         (ANTI, term("node", exprs=[("service", "In", ["antivirusscan", "value2"])]), None)]),
     [pod("e", SCAN, "n1")], None),
    ("anti-affinity violated", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan", "value2"])]), None),
                                                      (ANTI, term("zone", exprs=[("service", "In", ["securityscan", "value2"])]), None)]),
     [pod("e", SCAN, "n1")], (U, R_ANTI)),
    ("existing pod's anti-affinity violated (symmetry)", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan", "value2"])]), None)]),
     [pod("e", SCAN, "n1", terms=[(ANTI, term("zone", exprs=[("service", "In", ["securityscan", "value2"])]), None)])], (U, R_EXIST)),
    ("existing anti-affinity respected without own constraints", pod(labels=SCAN),
     [pod("e", SCAN, "n1", terms=[(ANTI, term("zone", exprs=[("service", "In", ["securityscan", "value2"])]), None)])], (U, R_EXIST)),
    ("existing anti-affinity on a key the node lacks is ignored", pod(labels=SCAN),
     [pod("e", SCAN, "n1", terms=[(ANTI, term("rack", exprs=[("service", "In", ["securityscan"])]), None)])], None),
    ("existing anti-affinity not matching the pod", pod(labels=SEC),
     [pod("e", SCAN, "n1", terms=[(ANTI, term("zone", exprs=[("service", "In", ["securityscan"])]), None)])], None),
    ("first pod of a group matching its own affinity passes", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan"])]), None)]),
     [], None),
    ("first pod not matching its own affinity fails", pod(labels=SEC, terms=[(AFF, term(exprs=[("service", "In", ["securityscan"])]), None)]),
     [], (UU, R_AFF)),
    ("self-match exception needs no match anywhere", pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "In", ["securityscan"])]), None)]),
     [pod("e", SCAN, "n2")], (UU, R_AFF)),
    ("affinity term on a key the node lacks fails even if self-matching", pod(labels=SCAN, terms=[(AFF, term("rack", match=SCAN), None)]),
     [], (UU, R_AFF)),
    ("affinity failure is reported before anti-affinity", pod(labels=SCAN, terms=[(AFF, term(match={"x": "y"}), None), (ANTI, term("zone", match=SCAN), None)]),
     [pod("e", SCAN, "n1")], (UU, R_AFF)),
    ("anti-affinity reported before existing pods' anti-affinity", pod(labels=SCAN, terms=[(ANTI, term("zone", match=SCAN), None)]),
     [pod("e", SCAN, "n1", terms=[(ANTI, term("zone", match=SCAN), None)])], (U, R_ANTI)),
    ("nil labelSelector matches nothing", pod(labels=SCAN, terms=[(ANTI, term("zone", nil_selector=True), None)]),
     [pod("e", SCAN, "n1")], None),
    ("empty labelSelector matches every pod of the namespace", pod(labels=SCAN, terms=[(ANTI, term("zone"), None)]),
     [pod("e", {"other": "x"}, "n1")], (U, R_ANTI)),
    ("terminating pods still count", pod(labels=SCAN, terms=[(ANTI, term("zone", match=SCAN), None)]),
     [pod("e", SCAN, "n1", terminating=True)], (U, R_ANTI)),
    ("empty namespaceSelector selects all namespaces", pod(labels=SCAN, terms=[(AFF, term(match=SCAN, ns_selector={}), None)]),
     [pod("e", SCAN, "n1", ns="team1"), pod("x", SCAN, "n2")], None),
    ("namespaceSelector by namespace labels", pod(labels=SCAN, terms=[(AFF, term(match=SCAN, ns_selector={"matchLabels": {"team": "team1"}}), None)]),
     [pod("e", SCAN, "n1", ns="team1"), pod("x", SCAN, "n2")], None),
    ("namespaceSelector not matching", pod(labels=SCAN, terms=[(AFF, term(match=SCAN, ns_selector={"matchLabels": {"team": "team2"}}), None)]),
     [pod("e", SCAN, "n1", ns="team1"), pod("x", SCAN, "n2")], (UU, R_AFF)),
    ("namespaces union namespaceSelector", pod(labels=SCAN, terms=[(AFF, term(match=SCAN, namespaces=["subteam"], ns_selector={"matchLabels": {"team": "team2"}}), None)]),
     [pod("e", SCAN, "n1", ns="subteam"), pod("x", SCAN, "n2")], None),
    ("existing pod's namespaceSelector matches the incoming pod's namespace labels", pod(labels=SCAN, ns="team1"),
     [pod("e", SCAN, "n1", ns="other", terms=[(ANTI, term("zone", match=SCAN, ns_selector={"matchLabels": {"team": "team1"}}), None)])], (U, R_EXIST)),
    ("existing pod's term defaults to its own namespace", pod(labels=SCAN, ns="team1"),
     [pod("e", SCAN, "n1", ns="other", terms=[(ANTI, term("zone", match=SCAN), None)])], None),
    ("matchLabelKeys merged into the selector", pod(labels={"app": "a", "ver": "1"}, terms=[(ANTI, term("zone", match={"app": "a"}, matchLabelKeys=["ver"]), None)]),
     [pod("e", {"app": "a", "ver": "2"}, "n1")], None),
    ("mismatchLabelKeys merged into the selector", pod(labels={"app": "a", "tenant": "t1"}, terms=[(ANTI, term("zone", match={"app": "a"}, mismatchLabelKeys=["tenant"]), None)]),
     [pod("e", {"app": "a", "tenant": "t2"}, "n1")], (U, R_ANTI)),
]


@pytest.mark.parametrize(("p", "existing", "want"), [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_required_affinity_single_node(p, existing, want) -> None:  # noqa: ANN001
    nodes = [node("n1", **L1), node("n2", region="r2", zone="z21")]
    nss = [ns_obj("team1", team="team1"), ns_obj("team2", team="team2"), ns_obj("subteam", team="team1")]
    table, pl = setup(nodes, existing, nss)
    assert run_filter(table, pl, p)["n1"] == want


def test_invalid_selector_is_unresolvable_at_prefilter() -> None:
    p = pod(labels=SCAN, terms=[(AFF, term(exprs=[("service", "Foo", ["x"])]), None)])
    table, pl = setup([node("n1", **L1)], [])
    _, st = pl.pre_filter(CycleState(PodInfo(p)), p, table)
    assert st.code == UU and st.reasons[0].startswith("parsing pod: ")


def test_prefilter_skips_without_terms_or_matching_existing_anti_affinity() -> None:
    table, pl = setup([node("n1", **L1)], [pod("e", SCAN, "n1", terms=[(ANTI, term("zone", match={"x": "y"}), None)])])
    p = pod(labels=SCAN)
    _, st = pl.pre_filter(CycleState(PodInfo(p)), p, table)
    assert st == Status(Code.SKIP)


# ───────────────────────────── filtering_test.go: TestRequiredAffinityMultipleNodes ─────────────────────────────

MULTI = [
    ("all nodes of the matching domain pass",
     pod(labels=SEC, terms=[(AFF, term("region", match=SEC), None)]),
     [pod("e", SEC, "m1")],
     [node("m1", region="r1", zone="z1"), node("m2", region="r1", zone="z2"), node("m3", region="r2", zone="z3")],
     {"m1": None, "m2": None, "m3": (UU, R_AFF)}),
    ("the first pod of the collection is not blocked, but needs the key",
     pod(labels=SEC, terms=[(AFF, term("zone", match=SEC), None)]),
     [],
     [node("m1", zone="z1"), node("m2", region="r1")],
     {"m1": None, "m2": (UU, R_AFF)}),
    ("anti-affinity blocks every node of the domain",
     pod(labels=SCAN, terms=[(ANTI, term("zone", match=SEC), None)]),
     [pod("e", SEC, "nodeA")],
     [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az1", hostname="h2"), node("nodeC", zone="az2")],
     {"nodeA": (U, R_ANTI), "nodeB": (U, R_ANTI), "nodeC": None}),
    ("existing anti-affinity on hostname blocks only that node",
     pod(labels=SEC),
     [pod("e", SCAN, "nodeA", terms=[(ANTI, term("kubernetes.io/hostname", match=SEC), None)])],
     [node("nodeA", zone="az1"), node("nodeB", zone="az1")],
     {"nodeA": (U, R_EXIST), "nodeB": None}),
    ("affinity to pods of another domain and anti-affinity to own",
     pod(labels={"foo": "abc"}, terms=[(AFF, term("region", match={"foo": "abc"}), None), (ANTI, term("zone", match={"foo": "abc"}), None)]),
     [pod("e", {"foo": "abc"}, "nodeA")],
     [node("nodeA", region="r1", zone="z1"), node("nodeB", region="r1", zone="z2"), node("nodeC", region="r2", zone="z3")],
     {"nodeA": (U, R_ANTI), "nodeB": None, "nodeC": (UU, R_AFF)}),
    ("two existing pods' anti-affinity on different keys",
     pod(labels={"foo": "abc"}),
     [pod("e1", {"x": "1"}, "nodeA", terms=[(ANTI, term("zone", match={"foo": "abc"}), None)]),
      pod("e2", {"x": "2"}, "nodeC", terms=[(ANTI, term("kubernetes.io/hostname", match={"foo": "abc"}), None)])],
     [node("nodeA", zone="z1"), node("nodeB", zone="z1"), node("nodeC", zone="z2"), node("nodeD", zone="z2")],
     {"nodeA": (U, R_EXIST), "nodeB": (U, R_EXIST), "nodeC": (U, R_EXIST), "nodeD": None}),
]


@pytest.mark.parametrize(("p", "existing", "nodes", "want"), [c[1:] for c in MULTI], ids=[c[0] for c in MULTI])
def test_required_affinity_multiple_nodes(p, existing, nodes, want) -> None:  # noqa: ANN001
    table, pl = setup(nodes, existing)
    assert run_filter(table, pl, p) == want


# ───────────────────────────── scoring_test.go: TestPreferredAffinity ─────────────────────────────

CHINA, INDIA = {"region": "China"}, {"region": "India"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
NODES3 = [node("m1", **CHINA), node("m2", **INDIA), node("m3", **AZ1)]
S1, S2 = {"security": "S1"}, {"security": "S2"}

SCORING = [
    ("no affinity: all nodes the same (Skip)", pod(labels=S1), [], NODES3, None, {"m1": 0, "m2": 0, "m3": 0}, True),
    ("preferred affinity to a pod in region China",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 5)]), [pod("e", S1, "m1")], NODES3, None,
     {"m1": 100, "m2": 0, "m3": 0}, False),
    ("same region value on two nodes scores both",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 5)]), [pod("e", S1, "m1")],
     [node("m1", **CHINA), node("m2", **INDIA), node("m3", region="China", az="az1")], None,
     {"m1": 100, "m2": 0, "m3": 100}, False),
    ("weights: 8 on region, 2 on az",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 8), (AFF, term("az", match=S2), 2)]),
     [pod("e1", S1, "m1"), pod("e2", S2, "m3"), pod("e3", S2, "m2")],
     [node("m1", region="China"), node("m2", region="India"), node("m3", az="az1", region="China")], None,
     {"m1": 80, "m2": 0, "m3": 100}, False),
    ("preferred anti-affinity",
     pod(labels=S1, terms=[(ANTI, term("region", match=S1), 5)]), [pod("e", S1, "m1")], NODES3, None,
     {"m1": 0, "m2": 100, "m3": 100}, False),
    ("affinity and anti-affinity together",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 5), (ANTI, term("az", match=S2), 5)]),
     [pod("e1", S1, "m1"), pod("e2", S2, "m3")], NODES3, None,
     {"m1": 100, "m2": 50, "m3": 0}, False),
    ("symmetry: existing pod's preferred affinity matches the incoming pod",
     pod(labels=S1), [pod("e", S2, "m1", terms=[(AFF, term("region", match=S1), 5)])], NODES3, None,
     {"m1": 100, "m2": 0, "m3": 0}, False),
    ("symmetry: existing pod's preferred anti-affinity",
     pod(labels=S1), [pod("e", S2, "m1", terms=[(ANTI, term("region", match=S1), 5)])], NODES3, None,
     {"m1": 0, "m2": 100, "m3": 100}, False),
    ("symmetry: existing pod's required affinity with hardPodAffinityWeight 1",
     pod(labels=S1), [pod("e", S2, "m1", terms=[(AFF, term("region", match=S1), None)])], NODES3, None,
     {"m1": 100, "m2": 0, "m3": 0}, False),
    ("hardPodAffinityWeight 0 ignores existing required affinity",
     pod(labels=S1), [pod("e", S2, "m1", terms=[(AFF, term("region", match=S1), None)])], NODES3,
     InterPodAffinityArgs(hard_pod_affinity_weight=0), {"m1": 0, "m2": 0, "m3": 0}, True),
    ("ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
     pod(labels=S1), [pod("e", S2, "m1", terms=[(AFF, term("region", match=S1), 5)])], NODES3,
     InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True), {"m1": 0, "m2": 0, "m3": 0}, True),
    ("ignorePreferredTermsOfExistingPods still counts them when the pod has preferred terms",
     pod(labels=S1, terms=[(AFF, term("region", match={"x": "y"}), 1)]),
     [pod("e", S2, "m1", terms=[(AFF, term("region", match=S1), 5)])], NODES3,
     InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True), {"m1": 100, "m2": 0, "m3": 0}, False),
    ("float normalization truncates",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 1)]),
     [pod("e1", S1, "m2"), pod("e2", S1, "m3"), pod("e3", S1, "m3"), pod("e4", S1, "m3")],
     [node("m1", region="a"), node("m2", region="b"), node("m3", region="c")], None,
     {"m1": 0, "m2": 33, "m3": 100}, False),
    ("preferred term with a namespace list",
     pod(labels=S1, terms=[(AFF, term("region", match=S1, namespaces=["ns1"]), 5)]),
     [pod("e1", S1, "m1", ns="ns1"), pod("e2", S1, "m2", ns="default")], NODES3, None,
     {"m1": 100, "m2": 0, "m3": 0}, False),
    ("matching pods with zero total still score 0 (entries present)",
     pod(labels=S1, terms=[(AFF, term("region", match=S1), 5), (ANTI, term("region", match=S1), 5)]),
     [pod("e", S1, "m1")], NODES3, None, {"m1": 0, "m2": 0, "m3": 0}, False),
]


@pytest.mark.parametrize(("p", "existing", "nodes", "args", "want", "skip"), [c[1:] for c in SCORING],
                         ids=[c[0] for c in SCORING])
def test_preferred_affinity(p, existing, nodes, args, want, skip) -> None:  # noqa: ANN001
    table, pl = setup(nodes, existing, args=args)
    got, skipped = run_score(table, pl, p)
    assert (got, skipped) == (want, skip)


@pytest.mark.parametrize(("scores", "want"), [([0, 0, 0], [0, 0, 0]), ([-3, 0, 7], [0, 30, 100]),
                                              ([0, 1, 3], [0, 33, 100]), ([5, -5], [100, 0]), ([2, 1, 2, 0], [100, 50, 100, 0])])
def test_normalize_min_max(scores, want) -> None:  # noqa: ANN001
    a = np.asarray(scores, np.int64)
    ipa.normalize_min_max(a)
    assert a.tolist() == want == ReferenceInterPodAffinity.normalize(scores)


# ───────────────────────────── events and hints ─────────────────────────────

def test_events_to_register() -> None:
    table, pl = setup([node("n1")], [])
    evs = pl.events_to_register()  # 1.37
    assert [(e.event.resource, e.event.action) for e in evs] == [
        (EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]
    pl.handle.features = FeatureGate(emulated_version=(1, 34))
    evs = pl.events_to_register()
    assert [(e.event.resource, e.event.action) for e in evs] == [
        (EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]


def test_pod_change_hint() -> None:
    target = pod(labels={}, terms=[(AFF, term("zone", match={"a": "1"}), None), (ANTI, term("zone", match={"b": "1"}), None)])
    h = ipa.is_schedulable_after_pod_change  # 1.34
    assert h(target, None, pod("x", {"a": "1"}, "n1")) == QueueingHint.QUEUE
    assert h(target, None, pod("x", {"a": "2"}, "n1")) == QueueingHint.SKIP
    assert h(target, None, pod("x", {"a": "1"})) == QueueingHint.SKIP  # unscheduled
    assert h(target, pod("x", {"b": "1"}, "n1"), None) == QueueingHint.QUEUE
    assert h(target, pod("x", {"b": "2"}, "n1"), None) == QueueingHint.SKIP
    assert h(target, pod("x", {"a": "2"}, "n1"), pod("x", {"a": "1"}, "n1")) == QueueingHint.QUEUE
    assert h(target, pod("x", {"b": "1"}, "n1"), pod("x", {"b": "2"}, "n1")) == QueueingHint.QUEUE
    assert h(target, pod("x", {"c": "1"}, "n1"), pod("x", {"c": "2"}, "n1")) == QueueingHint.SKIP


def test_node_change_hint() -> None:
    target = pod(terms=[(ANTI, term("zone", match={"b": "1"}), None)])
    assert ipa.is_schedulable_after_node_change(target, None, node("n", zone="z")) == QueueingHint.QUEUE
    assert ipa.is_schedulable_after_node_change(target, None, node("n", region="r")) == QueueingHint.SKIP


def test_registered_in_tree() -> None:
    from kubesched.plugins.registry import in_tree_registry
    assert "InterPodAffinity" in in_tree_registry()


# ───────────────────────────── batch == reference on random clusters ─────────────────────────────

KEYS = ["zone", "region", "kubernetes.io/hostname"]
NSS = ["default", "ns1", "ns2"]
NS_OBJS = [ns_obj("default"), ns_obj("ns1", team="a"), ns_obj("ns2", team="b")]
labels_st = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b"]), max_size=2)


@st.composite
def term_st(draw):  # noqa: ANN001, ANN201
    kind = draw(st.sampled_from([0, 1, 2, 3]))
    if kind == 0:
        sel = {"match": draw(labels_st)}
    elif kind == 1:
        sel = {"exprs": [(draw(st.sampled_from(["app", "tier"])), draw(st.sampled_from(["In", "NotIn"])),
                          draw(st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2)))]}
    elif kind == 2:
        sel = {"exprs": [(draw(st.sampled_from(["app", "tier"])), draw(st.sampled_from(["Exists", "DoesNotExist"])), None)]}
    else:
        sel = {"nil_selector": draw(st.booleans())}
    nsk = draw(st.sampled_from(["own", "list", "all", "sel"]))
    extra: dict = {}
    if nsk == "list":
        extra["namespaces"] = draw(st.lists(st.sampled_from(NSS), min_size=1, max_size=2))
    elif nsk == "all":
        extra["ns_selector"] = {}
    elif nsk == "sel":
        extra["ns_selector"] = draw(st.sampled_from([
            {"matchLabels": {"team": draw(st.sampled_from(["a", "b"]))}},
            # selectors that match the empty label set: 1.34-1.36 kept them (see terms.merge_namespaces)
            {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
            {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}]))
    return term(draw(st.sampled_from(KEYS)), **sel, **extra)


@st.composite
def terms_st(draw):  # noqa: ANN001, ANN201
    out = []
    for kind in (AFF, ANTI):
        for t in draw(st.lists(term_st(), max_size=2)):
            out.append((kind, t, None))
        for t in draw(st.lists(term_st(), max_size=2)):
            out.append((kind, t, draw(st.integers(1, 100))))
    return out


@st.composite
def cluster_st(draw):  # noqa: ANN001, ANN201
    n = draw(st.integers(1, 7))
    nodes = []
    for i in range(n):
        lab = {}
        if draw(st.booleans()):
            lab["zone"] = draw(st.sampled_from(["z1", "z2", "z3"]))
        if draw(st.booleans()):
            lab["region"] = draw(st.sampled_from(["r1", "r2"]))
        nodes.append(node(f"n{i}", **lab))
    pods = []
    for j in range(draw(st.integers(0, 10))):
        pods.append(pod(f"e{j}", draw(labels_st), f"n{draw(st.integers(0, n - 1))}", draw(st.sampled_from(NSS)),
                        draw(terms_st()) if draw(st.booleans()) else None, draw(st.booleans())))
    incoming = pod("incoming", draw(labels_st), None, draw(st.sampled_from(NSS)), draw(terms_st()))
    extra = pod("extra", draw(labels_st), f"n{draw(st.integers(0, n - 1))}", draw(st.sampled_from(NSS)),
                draw(terms_st()) if draw(st.booleans()) else None)
    removals = draw(st.lists(st.integers(0, 9), max_size=3))
    relabel = draw(st.one_of(st.none(), st.tuples(st.integers(0, n - 1), st.sampled_from(["z1", "z2", "z4"]))))
    hard = draw(st.sampled_from([0, 1, 5]))
    ignore = draw(st.booleans())
    return nodes, pods, incoming, extra, removals, relabel, hard, ignore


def _ref_filter(ref, table, p):  # noqa: ANN001, ANN201
    s = ref.pre_filter(p)
    rows = table.order().tolist()
    if isinstance(s, Status):
        assert s.code == Code.SKIP
        return {table.names[r]: None for r in rows}
    out = {}
    for r in rows:
        st_ = ref.filter(s, table.node_info(r))
        out[table.names[r]] = None if st_ is None else (st_.code, st_.reasons[0])
    return out


def _ref_score(ref, table, p):  # noqa: ANN001, ANN201
    topo = ref.pre_score(p)
    rows = table.order().tolist()
    if topo is None:
        return {table.names[r]: 0 for r in rows}, True
    raw = [ref.score(topo, table.node_info(r)) for r in rows]
    return dict(zip((table.names[r] for r in rows), ref.normalize(raw))), False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st(), st.sampled_from([(1, 34), (1, 37)]))
def test_batch_equals_reference(cluster, version) -> None:  # noqa: ANN001
    nodes, pods, incoming, extra, removals, relabel, hard, ignore = cluster
    args = InterPodAffinityArgs(hard_pod_affinity_weight=hard, ignore_preferred_terms_of_existing_pods=ignore)
    # plugin built on a table, then mutated: exercises the incremental index
    table = build_table(nodes, [])
    pl = ipa.new(args, Handle(nodes=table, lister=_Lister(NS_OBJS), features=FeatureGate(emulated_version=version)))
    replace = version >= (1, 37)
    pl.pre_filter(CycleState(PodInfo(incoming)), incoming, table)  # intern the incoming targets early
    infos = [PodInfo(p) for p in pods]
    for pi in infos:
        table.add_pod(pi, table.row_of[pi.pod.spec.node_name])
    for j in sorted(set(removals)):
        if j < len(infos):
            table.remove_pod(infos[j], table.row_of[infos[j].pod.spec.node_name])
    if relabel is not None:
        i, z = relabel
        old = nodes[i]
        table.set_node(node(old.metadata.name, **{**old.metadata.labels, "zone": z}))
    ref = ReferenceInterPodAffinity(table, NS_OBJS, hard, ignore, replace)
    want = _ref_filter(ref, table, incoming)
    got = run_filter(table, pl, incoming)
    assert got == want
    assert run_score(table, pl, incoming) == _ref_score(ref, table, incoming)

    # AddPod / RemovePod on the cycle state == reference on the cluster with / without the pod
    state = CycleState(PodInfo(incoming))
    _, st_ = pl.pre_filter(state, incoming, table)
    row = table.row_of[extra.spec.node_name]
    if st_ is None:
        cloned = state.clone()
        assert pl.add_pod(cloned, incoming, PodInfo(extra), table.node_info(row)) is None
        before = _eval_state(pl, table, cloned, incoming)
        table.add_pod(PodInfo(extra), row)
        after = _ref_filter(ReferenceInterPodAffinity(table, NS_OBJS, hard, ignore, replace), table, incoming)
        assert before == after
        # the original (un-cloned) state is untouched by the clone's AddPod
        table.remove_pod(PodInfo(extra), row)
        assert _eval_state(pl, table, state, incoming) == want
        assert pl.remove_pod(cloned, incoming, PodInfo(extra), table.node_info(row)) is None
        assert _eval_state(pl, table, cloned, incoming) == want


def _eval_state(pl, table, state, p):  # noqa: ANN001, ANN201
    rows = table.order()
    res = pl.filter_nodes(state, p, table, rows)
    out = {}
    for i, r in enumerate(rows.tolist()):
        bits = 0 if res is None else int(res.failed[i])
        s = None if bits == 0 else res.status_for(bits)
        out[table.names[r]] = None if s is None else (s.code, s.reasons[0])
    return out


# ───────────── the incoming pod's namespaceSelector: kept in 1.34–1.36, replaced since 1.37 ─────────────

def _ns_selector_case(version):  # noqa: ANN001, ANN202
    """ns "a" (team=x) runs app=db on n1 (zone z1); the incoming pod (ns "b", no labels) has a
    required anti-affinity (resp. preferred affinity) term app=db with namespaceSelector
    ``team DoesNotExist``, which selects only "b". 1.34–1.36 kept the selector and matched the
    incoming pod's terms with nil namespace labels (DoesNotExist matches them), so the db pod in
    "a" counted; 1.37 replaced the selector by {b} and it does not."""
    nss = [ns_obj("a", team="x"), ns_obj("b")]
    nodes = [node("n1", zone="z1"), node("n2", zone="z2")]
    table = build_table(nodes, [pod("db", {"app": "db"}, "n1", ns="a")])
    pl = ipa.new(None, Handle(nodes=table, lister=_Lister(nss), features=FeatureGate(emulated_version=version)))
    sel = {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}
    anti = pod("p", {}, None, "b", [(ANTI, term("zone", match={"app": "db"}, ns_selector=sel), None)])
    pref = pod("p", {}, None, "b", [(AFF, term("zone", match={"app": "db"}, ns_selector=sel), 10)])
    ref = ReferenceInterPodAffinity(table, nss, replace_ns_selector=version >= (1, 37))
    return table, pl, anti, pref, ref


@pytest.mark.parametrize("version,filtered,scores", [
    ((1, 34), {"n1": (Code.UNSCHEDULABLE, "node(s) didn't match pod anti-affinity rules"), "n2": None},
     {"n1": 100, "n2": 0}),
    ((1, 36), {"n1": (Code.UNSCHEDULABLE, "node(s) didn't match pod anti-affinity rules"), "n2": None},
     {"n1": 100, "n2": 0}),
    ((1, 37), {"n1": None, "n2": None}, {"n1": 0, "n2": 0}),
], ids=["1.34", "1.36", "1.37"])
def test_incoming_namespace_selector_replacement(version, filtered, scores) -> None:  # noqa: ANN001
    table, pl, anti, pref, ref = _ns_selector_case(version)
    assert run_filter(table, pl, anti) == filtered == _ref_filter(ref, table, anti)
    got, _ = run_score(table, pl, pref)
    assert got == scores == _ref_score(ref, table, pref)[0]
