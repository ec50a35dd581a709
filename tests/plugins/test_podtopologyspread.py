"""PodTopologySpread: tables ported from upstream filtering_test.go / scoring_test.go, system
defaults from Services/ReplicaSets, PreFilter extensions, queueing hints, the incremental index,
and the vectorised plugin == the per-node reference on random clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api import objects as o
from kubesched.config.args import PodTopologySpreadArgs, TopologySpreadConstraint
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    new,
    spread_index,
)
from kubesched.plugins.podtopologyspread.gomath import go_log
from kubesched.plugins.podtopologyspread.reference import reference_filter, reference_scores
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

HOST = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class FakeLister:
    def __init__(self, objs: list[Any] = ()) -> None:  # type: ignore[assignment]
        self.objs = list(objs)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return [x for x in self.objs if x.kind == kind and (namespace is None or x.metadata.namespace == namespace)]

    def get(self, kind: str, namespace: str, name: str) -> Any:
        for x in self.list(kind, namespace):
            if x.metadata.name == name:
                return x
        return None


def node(name: str, **labels: str) -> o.Node:
    """A node whose labels are exactly ``labels`` (no automatic hostname label)."""
    n = MakeNode().name(name).obj()
    n.metadata.labels = dict(labels)
    return n


def zn(name: str, zone: str | None) -> o.Node:
    lab = {"node": name}
    if zone is not None:
        lab["zone"] = zone
    return node(name, **lab)


def epod(name: str, node_name: str, ns: str = "default", terminating: bool = False, **labels: str) -> o.Pod:
    p = MakePod().name(name).namespace(ns).node(node_name).labels(labels or {"foo": ""})
    if terminating:
        p = p.terminating()
    return p.obj()


def run_filter(pl, table, pod) -> dict[str, tuple[Code, tuple[str, ...]]]:  # noqa: ANN001
    state = CycleState(PodInfo(pod))
    _, st_ = pl.pre_filter(state, pod, table)
    assert st_ is None, st_
    rows = table.order()
    res = pl.filter_nodes(state, pod, table, rows)
    out = {}
    for i, row in enumerate(rows.tolist()):
        bits = 0 if res is None else int(res.failed[i])
        out[table.names[row]] = (S, ()) if not bits else (res.status_for(bits).code, res.status_for(bits).reasons)
    return out


# ───────────────────────────── Filter (upstream TestSingleConstraint / TestMultipleConstraints) ─────────────────────────────

ABXY = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
SPREAD_2103 = [epod("p-a1", "node-a"), epod("p-a2", "node-a"), epod("p-b1", "node-b"),
               epod("p-y1", "node-y"), epod("p-y2", "node-y"), epod("p-y3", "node-y")]


def cpod(*cons: tuple, labels: dict[str, str] | None = None, **kw: Any) -> o.Pod:
    p = MakePod().name("p").labels({"foo": ""} if labels is None else labels)
    for c in cons:
        extra = c[4] if len(c) > 4 else {}
        p = p.spread_constraint(c[0], c[1], c[2], c[3], **extra)
    for k, v in kw.items():
        getattr(p, k)(*v)
    return p.obj()


FILTER_CASES = [
    ("no existing pods", cpod((1, "zone", DNS, FOO)), ABXY, [], dict(a=S, b=S, x=S, y=S)),
    ("incoming pod doesn't match itself", cpod((1, "zone", DNS, {"matchExpressions": [
        {"key": "bar", "operator": "Exists"}]})), ABXY, [], dict(a=S, b=S, x=S, y=S)),
    ("existing pods in a different namespace do not count", cpod((1, "zone", DNS, FOO)), ABXY,
     [epod("p-a1", "node-a", ns="ns1"), epod("p-b1", "node-a", ns="ns2"), epod("p-x1", "node-x"),
      epod("p-y1", "node-y")], dict(a=S, b=S, x=U, y=U)),
    ("pods spread across zones as 3/3, all nodes fit", cpod((1, "zone", DNS, FOO)), ABXY,
     [epod("p-a1", "node-a"), epod("p-a2", "node-a"), epod("p-b1", "node-b"), epod("p-y1", "node-y"),
      epod("p-y2", "node-y"), epod("p-y3", "node-y")], dict(a=S, b=S, x=S, y=S)),
    ("spread 1/2 due to absence of label 'zone' on node-b", cpod((1, "zone", DNS, FOO)),
     [zn("node-a", "zone1"), node("node-b", zon="zone1", node="node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")],
     [epod("p-a1", "node-a"), epod("p-b1", "node-b"), epod("p-x1", "node-x"), epod("p-y1", "node-y")],
     dict(a=S, b=UU, x=U, y=U)),
    ("all nodes lack label 'rack'", cpod((1, "rack", DNS, FOO)), [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
     dict(a=UU, x=UU)),
    ("spread across nodes as 2/1/0/3, only node-x fits", cpod((1, "node", DNS, FOO)), ABXY, SPREAD_2103,
     dict(a=U, b=U, x=S, y=U)),
    ("2/1/0/3, maxSkew is 2, node-b and node-x fit", cpod((2, "node", DNS, FOO)), ABXY, SPREAD_2103,
     dict(a=U, b=S, x=S, y=U)),
    ("2/1/0/3, pod doesn't match itself", cpod((1, "node", DNS, FOO), labels={"bar": ""}), ABXY, SPREAD_2103,
     dict(a=U, b=S, x=S, y=U)),
    ("incoming pod has nodeAffinity, 2/~1~/~0~/3, node-a fits",
     cpod((1, "node", DNS, FOO), node_affinity_in=("node", ["node-a", "node-y"])), ABXY, SPREAD_2103,
     dict(a=S, b=S, x=S, y=U)),
    ("terminating pods are excluded", cpod((1, "node", DNS, FOO)), [node("node-a", node="node-a"), node("node-b", node="node-b")],
     [epod("p-a", "node-a", terminating=True), epod("p-b", "node-b")], dict(a=S, b=U)),
    ("two constraints on zone and node, spreads [3/3, 2/1/0/3]",
     cpod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)), ABXY, SPREAD_2103, dict(a=U, b=U, x=S, y=U)),
    ("two constraints, spreads [3/4, 2/1/0/4]",
     cpod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)), ABXY, SPREAD_2103 + [epod("p-y4", "node-y")],
     dict(a=U, b=U, x=U, y=U)),
    ("two constraints, spreads [1/2, 1/~1~/1/1], node-b missing 'zone'",
     cpod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
     [zn("node-a", "zone1"), node("node-b", node="node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")],
     [epod("p-a1", "node-a"), epod("p-b1", "node-b"), epod("p-x1", "node-x"), epod("p-y1", "node-y")],
     dict(a=S, b=UU, x=U, y=U)),
    ("minDomains 3 > 2 zones: global minimum is 0",
     cpod((2, "zone", DNS, FOO, {"minDomains": 3})), ABXY,
     [epod("p-a1", "node-a"), epod("p-a2", "node-a"), epod("p-x1", "node-x")], dict(a=U, b=U, x=S, y=S)),
    ("minDomains 2 <= 2 zones: global minimum is the real one",
     cpod((2, "zone", DNS, FOO, {"minDomains": 2})), ABXY,
     [epod("p-a1", "node-a"), epod("p-a2", "node-a"), epod("p-x1", "node-x")], dict(a=S, b=S, x=S, y=S)),
    ("nodeAffinityPolicy Ignore counts nodes outside the affinity",
     cpod((1, "node", DNS, FOO, {"nodeAffinityPolicy": "Ignore"}), node_affinity_in=("node", ["node-a", "node-y"])),
     ABXY, SPREAD_2103, dict(a=U, b=U, x=S, y=U)),
    # node-x is no domain (minimum 1 from node-b); the Filter itself doesn't re-check taints
    ("nodeTaintsPolicy Honor ignores the tainted node-x",
     cpod((1, "node", DNS, FOO, {"nodeTaintsPolicy": "Honor"})),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2"),
      MakeNode().name("node-x").labels({"zone": "zone2", "node": "node-x"}).taint("t", "v").obj()],
     SPREAD_2103, dict(a=U, b=S, x=S, y=U)),
    ("nodeTaintsPolicy Honor, tolerated taint counts",
     cpod((1, "node", DNS, FOO, {"nodeTaintsPolicy": "Honor"}), toleration=("t", "Equal", "v", "NoSchedule")),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2"),
      MakeNode().name("node-x").labels({"zone": "zone2", "node": "node-x"}).taint("t", "v").obj()],
     SPREAD_2103, dict(a=U, b=U, x=S, y=U)),
    ("matchLabelKeys narrow the selector", cpod((1, "node", DNS, FOO, {"matchLabelKeys": ["rev"]}),
                                               labels={"foo": "", "rev": "2"}), ABXY,
     [epod("p-a1", "node-a", foo="", rev="1"), epod("p-b1", "node-b", foo="", rev="2")],
     dict(a=S, b=U, x=S, y=S)),
]


@pytest.mark.parametrize("pod,nodes,pods,want", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(pod, nodes, pods, want) -> None:  # noqa: ANN001
    table = build_table(nodes, pods)
    pl = new(None, Handle(table))
    got = run_filter(pl, table, pod)
    reasons = {U: (ERR_REASON_CONSTRAINTS_NOT_MATCH,), UU: (ERR_REASON_NODE_LABEL_NOT_MATCH,), S: ()}
    assert got == {f"node-{k}": (v, reasons[v]) for k, v in want.items()}
    ref = reference_filter(pl, table, pod)
    assert {table.names[r]: (S if s is None else s.code) for r, s in ref.items()} == {k: v[0] for k, v in got.items()}
    # the per-node shape agrees
    state = CycleState(PodInfo(pod))
    pl.pre_filter(state, pod, table)
    for row in table.order().tolist():
        st_ = pl.filter(state, pod, table.node_info(row))
        assert (S if st_ is None else st_.code) == got[table.names[row]][0]


def test_pre_filter_skips_without_hard_constraints() -> None:
    table = build_table(ABXY)
    pl = new(None, Handle(table))
    pod = cpod((1, "zone", SA, FOO))
    assert pl.pre_filter(CycleState(PodInfo(pod)), pod, table)[1].code == Code.SKIP
    bare = MakePod().name("p").obj()  # no constraints, no services → no defaults
    assert pl.pre_filter(CycleState(PodInfo(bare)), bare, table)[1].code == Code.SKIP


def test_invalid_selector_is_an_error() -> None:
    table = build_table(ABXY)
    pl = new(None, Handle(table))
    pod = cpod((1, "zone", DNS, {"matchExpressions": [{"key": "foo", "operator": "Bogus"}]}))
    _, st_ = pl.pre_filter(CycleState(PodInfo(pod)), pod, table)
    assert st_.code == Code.ERROR and "obtaining pod's hard topology spread constraints" in st_.message()


# ───────────────────────────── Score (upstream TestPodTopologySpreadScore) ─────────────────────────────

def hn(name: str, zone: str | None = None) -> o.Node:
    lab = {HOST: name}
    if zone:
        lab["zone"] = zone
    return node(name, **lab)


def pods_on(spec: dict[str, int]) -> list[o.Pod]:
    return [epod(f"p-{n}{i}", f"node-{n}") for n, k in spec.items() for i in range(k)]


SCORE_CASES = [
    ("one constraint on node, no existing pods", cpod((1, HOST, SA, FOO)), [hn("node-a"), hn("node-b")], [], [], [],
     [100, 100]),
    ("only one node is candidate", cpod((1, HOST, SA, FOO)), [hn("node-a")], [hn("node-b")],
     pods_on({"a": 2, "b": 1}), [], [100]),
    ("all nodes have the same number of matching pods", cpod((1, HOST, SA, FOO)), [hn("node-a"), hn("node-b")], [],
     pods_on({"a": 1, "b": 1}), [], [100, 100]),
    ("2/1/0/3, all 4 nodes are candidates", cpod((1, HOST, SA, FOO)),
     [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], pods_on({"a": 2, "b": 1, "d": 3}), [],
     [20, 60, 100, 0]),
    ("null selector", cpod((1, HOST, SA, None)), [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [],
     pods_on({"a": 2, "b": 1, "d": 3}), [], [100, 100, 100, 100]),
    ("maxSkew=2", cpod((2, HOST, SA, FOO)), [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [],
     pods_on({"a": 2, "b": 1, "d": 3}), [], [33, 66, 100, 16]),
    ("maxSkew=3", cpod((3, HOST, SA, FOO)), [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [],
     pods_on({"a": 4, "b": 3, "c": 2, "d": 1}), [], [44, 66, 77, 100]),
    ("system defaulting, nodes don't have zone, pods match service", MakePod().name("p").label("foo", "").obj(),
     [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], pods_on({"a": 4, "b": 3, "c": 2, "d": 1}),
     [o.Service(metadata=o.ObjectMeta(name="svc", namespace="default"), spec=o.ServiceSpec(selector={"foo": ""}))],
     [44, 66, 77, 100]),
    ("3 out of 4 nodes are candidates", cpod((1, HOST, SA, FOO)), [hn("node-a"), hn("node-b"), hn("node-x")],
     [hn("node-y")], pods_on({"a": 4, "b": 2, "x": 1, "y": 3}), [], [33, 83, 100]),
    ("one node doesn't match topology key", cpod((1, HOST, SA, FOO)),
     [hn("node-a"), node("node-b", n="node-b"), hn("node-x")], [hn("node-y")],
     pods_on({"a": 4, "b": 2, "x": 1, "y": 3}), [], [16, 0, 100]),
    ("one constraint on zone, 3 out of 4 nodes are candidates", cpod((1, "zone", SA, FOO)),
     [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")], [hn("node-y", "zone2")],
     pods_on({"a": 4, "b": 2, "x": 1, "y": 3}), [], [75, 75, 100]),
]


@pytest.mark.parametrize("pod,nodes,failed,pods,objs,want", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(pod, nodes, failed, pods, objs, want) -> None:  # noqa: ANN001
    table = build_table(nodes + failed, pods)
    pl = new(None, Handle(table, lister=FakeLister(objs)))
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    state = CycleState(PodInfo(pod))
    assert pl.pre_score(state, pod, table, rows) is None
    raw = pl.score_nodes(state, pod, table, rows)
    norm = raw.copy()
    assert pl.normalize_score(state, pod, norm) is None
    assert norm.tolist() == want
    ref_raw, ref_norm = reference_scores(pl, table, pod, rows.tolist())
    assert raw.tolist() == ref_raw and norm.tolist() == ref_norm
    per_node = [pl.score(state, pod, table.node_info(r))[0] for r in rows.tolist()]
    assert per_node == raw.tolist()


def test_pre_score_skips() -> None:
    table = build_table([hn("node-a")])
    pl = new(None, Handle(table))
    pod = cpod((1, HOST, DNS, FOO))
    assert pl.pre_score(CycleState(PodInfo(pod)), pod, table, table.order()).code == Code.SKIP
    empty = build_table([])
    pl2 = new(None, Handle(empty))
    pod2 = cpod((1, HOST, SA, FOO))
    assert pl2.pre_score(CycleState(PodInfo(pod2)), pod2, empty, np.zeros(0, np.int64)).code == Code.SKIP


@pytest.mark.parametrize("x,want", [(3, 1.0986122886681096), (14, 2.6390573296152589), (48, 3.8712010109078907),
                                    (74, 4.3040650932041693), (176, 5.1704839950381523), (5002, None)])
def test_go_log_matches_go(x: int, want: float | None) -> None:
    """Values printed by Go 1.19 ``math.Log`` on amd64 — where glibc's ``log`` is 1 ulp off."""
    import math
    if want is None:
        want = math.log(x)  # agrees here
    assert go_log(float(x)) == want


def test_go_log_is_within_one_ulp() -> None:
    import math
    for n in range(0, 6000):
        want = math.log(n + 2)
        assert abs(go_log(float(n + 2)) - want) <= math.ulp(want)


# ───────────────────────────── system / list defaults ─────────────────────────────

def _svc(sel: dict[str, str], ns: str = "default", name: str = "svc") -> o.Service:
    return o.Service(metadata=o.ObjectMeta(name=name, namespace=ns), spec=o.ServiceSpec(selector=sel))


def test_system_defaults_from_service() -> None:
    nodes = [hn("node-a", "z1"), hn("node-b", "z1"), hn("node-c", "z2")]
    table = build_table(nodes, pods_on({"a": 3, "b": 1}) + [epod("other", "node-c", app="x")])
    lister = FakeLister([_svc({"foo": ""}), _svc({"app": "x"}, name="unrelated"), _svc({"foo": ""}, ns="elsewhere")])
    pl = new(None, Handle(table, lister=lister))
    pod = MakePod().name("p").label("foo", "").obj()
    cons = pl.get_constraints(pod, SA)
    assert [(c.topology_key, c.max_skew, str(c.selector)) for c in cons] == [
        (HOST, 3, "foo="), ("topology.kubernetes.io/zone", 5, "foo=")]
    assert pl.get_constraints(pod, DNS) == []
    # nodes carry no topology.kubernetes.io/zone label: system defaults don't require all keys
    rows = table.order()
    state = CycleState(PodInfo(pod))
    assert pl.pre_score(state, pod, table, rows) is None
    raw = pl.score_nodes(state, pod, table, rows)
    norm = raw.copy()
    pl.normalize_score(state, pod, norm)
    ref = reference_scores(pl, table, pod, rows.tolist())
    assert (raw.tolist(), norm.tolist()) == ref
    by_name = dict(zip([table.names[r] for r in rows], norm.tolist()))
    assert by_name["node-c"] == 100 and by_name["node-a"] < by_name["node-b"] < 100
    # a pod no Service selects gets no default constraints
    lone = MakePod().name("q").label("zzz", "1").obj()
    assert pl.pre_score(CycleState(PodInfo(lone)), lone, table, rows).code == Code.SKIP


def test_default_selector_from_replicaset_and_rc() -> None:
    table = build_table([hn("node-a", "z1")])
    rs = o.ReplicaSet(metadata=o.ObjectMeta(name="rs", namespace="default"),
                      spec=o.ReplicaSetSpec(selector=o.LabelSelector(match_labels={"app": "web"})))
    rc = o.ReplicationController(metadata=o.ObjectMeta(name="rc", namespace="default"),
                                 spec=o.ReplicationControllerSpec(selector={"tier": "fe"}))
    pl = new(None, Handle(table, lister=FakeLister([rs, rc, _svc({"app": "web"})])))

    def owned(kind: str, api: str, name: str) -> o.Pod:
        p = MakePod().name("p").labels({"app": "web", "tier": "fe"}).obj()
        p.metadata.owner_references = [o.OwnerReference(api_version=api, kind=kind, name=name, controller=True)]
        return p

    sel = lambda p: str(pl.get_constraints(p, SA)[0].selector)  # noqa: E731
    assert sel(owned("ReplicaSet", "apps/v1", "rs")) == "app=web,app=web"
    assert sel(owned("ReplicationController", "v1", "rc")) == "app=web,tier=fe"
    assert sel(owned("ReplicaSet", "extensions/v1beta1", "rs")) == "app=web"  # not apps/v1: ignored


def test_list_defaulting_and_require_all_keys() -> None:
    args = PodTopologySpreadArgs(defaulting_type="List", default_constraints=[
        TopologySpreadConstraint(max_skew=1, topology_key="zone", when_unsatisfiable=DNS)])
    nodes = [hn("node-a", "z1"), hn("node-b", "z2"), hn("node-c")]
    table = build_table(nodes, pods_on({"a": 1}))
    pl = new(args, Handle(table, lister=FakeLister([_svc({"foo": ""})])))
    pod = MakePod().name("p").label("foo", "").obj()
    got = run_filter(pl, table, pod)
    assert {k: v[0] for k, v in got.items()} == {"node-a": U, "node-b": S, "node-c": UU}
    assert pl.get_constraints(pod, SA) == []


# ───────────────────────────── PreFilter extensions ─────────────────────────────

def test_add_remove_pod_updates_state() -> None:
    table = build_table(ABXY, SPREAD_2103)
    pl = new(None, Handle(table))
    pod = cpod((1, "node", DNS, FOO))
    state = CycleState(PodInfo(pod))
    pl.pre_filter(state, pod, table)
    ext = pl.pre_filter_extensions()
    x = table.get("node-x")
    clone = state.clone()
    ext.add_pod(clone, pod, PodInfo(epod("new", "node-x")), x)
    assert {k: v[0] for k, v in _filter_with(pl, table, pod, clone).items()} == dict(
        **{"node-a": U, "node-b": S, "node-x": S, "node-y": U})
    # the original state is untouched by the clone's update
    assert {k: v[0] for k, v in _filter_with(pl, table, pod, state).items()}["node-b"] == U
    y = table.get("node-y")
    for name in ("p-y1", "p-y2", "p-y3"):
        ext.remove_pod(state, pod, PodInfo(epod(name, "node-y")), y)
    ext.add_pod(state, pod, PodInfo(epod("other-ns", "node-b", ns="ns2")), table.get("node-b"))  # ignored
    got = {k: v[0] for k, v in _filter_with(pl, table, pod, state).items()}
    assert got == {"node-a": U, "node-b": U, "node-x": S, "node-y": S}


def _filter_with(pl, table, pod, state):  # noqa: ANN001, ANN202
    rows = table.order()
    res = pl.filter_nodes(state, pod, table, rows)
    return {table.names[r]: ((S, ()) if res is None or not res.failed[i] else
                             (res.status_for(int(res.failed[i])).code, ())) for i, r in enumerate(rows.tolist())}


# ───────────────────────────── queueing hints ─────────────────────────────

def test_events_and_hints() -> None:
    table = build_table(ABXY)
    pl = new(None, Handle(table, features=FeatureGate(emulated_version=(1, 34))))
    events = pl.events_to_register()
    assert [e.event.resource.value for e in events] == ["Pod", "Node"]
    pod = cpod((1, "zone", DNS, FOO))
    pod.metadata.uid = "uid-p"  # upstream compares UIDs: give every pod its own
    pod_hint, node_hint = events[0].hint, events[1].hint

    def epod(*a: Any, **kw: Any) -> o.Pod:
        p = globals()["epod"](*a, **kw)
        p.metadata.uid = "uid-" + p.metadata.name
        return p

    assigned = epod("e", "node-a")
    assert pod_hint(pod, None, assigned) == QueueingHint.QUEUE
    assert pod_hint(pod, None, epod("e", "node-a", bar="")) == QueueingHint.SKIP
    assert pod_hint(pod, None, epod("e", "node-a", ns="other")) == QueueingHint.SKIP
    assert pod_hint(pod, assigned, None) == QueueingHint.QUEUE
    assert pod_hint(pod, assigned, epod("e", "node-a", bar="")) == QueueingHint.QUEUE
    assert pod_hint(pod, assigned, epod("e", "node-a", foo="1")) == QueueingHint.SKIP
    assert node_hint(pod, None, zn("n", "z")) == QueueingHint.QUEUE
    assert node_hint(pod, None, node("n", other="1")) == QueueingHint.SKIP
    assert node_hint(pod, zn("n", "z"), None) == QueueingHint.QUEUE
    assert node_hint(pod, zn("n", "z"), zn("n", "z2")) == QueueingHint.QUEUE
    assert node_hint(pod, zn("n", "z"), zn("n", "z")) == QueueingHint.SKIP
    assert node_hint(pod, node("n"), zn("n", "z")) == QueueingHint.QUEUE


# ───────────────────────────── the index ─────────────────────────────

def test_index_is_incremental() -> None:
    table = build_table(ABXY, SPREAD_2103)
    idx = spread_index(table)
    sel = new(None, Handle(table)).get_constraints(cpod((1, "zone", DNS, FOO)))[0].selector
    col = idx.counts("default", sel)
    assert [int(col[table.row_of[f"node-{n}"]]) for n in "abxy"] == [2, 1, 0, 3]
    pi = PodInfo(epod("new", "node-x"))
    table.add_pod(pi, table.row_of["node-x"])
    table.add_pod(PodInfo(epod("dying", "node-x", terminating=True)), table.row_of["node-x"])
    table.add_pod(PodInfo(epod("elsewhere", "node-x", ns="ns2")), table.row_of["node-x"])
    col = idx.counts("default", sel)
    assert int(col[table.row_of["node-x"]]) == 1
    table.remove_pod(pi, table.row_of["node-x"])
    table.remove_pod(table.pods[table.row_of["node-a"]][0], table.row_of["node-a"])
    col = idx.counts("default", sel)
    assert [int(col[table.row_of[f"node-{n}"]]) for n in "abxy"] == [1, 1, 0, 3]
    for i in range(40):  # growing the table keeps the counts
        table.set_node(zn(f"extra-{i}", "zone3"))
        table.add_pod(PodInfo(epod(f"e{i}", f"extra-{i}")), table.row_of[f"extra-{i}"])
    col = idx.counts("default", sel)
    assert int(col[table.row_of["extra-39"]]) == 1 and int(col[table.row_of["node-y"]]) == 3


# ───────────────────────────── vectorised == reference on random clusters ─────────────────────────────

KEYS = ["zone", "rack", HOST]


@st.composite
def clusters(draw):  # noqa: ANN001, ANN201
    n_nodes = draw(st.integers(1, 12))
    nodes = []
    for i in range(n_nodes):
        labels = {}
        if draw(st.integers(0, 9)) > 0:
            labels["zone"] = draw(st.sampled_from(["z1", "z2", "z3", ""]))
        if draw(st.booleans()):
            labels["rack"] = draw(st.sampled_from(["r1", "r2"]))
        if draw(st.integers(0, 9)) > 0:
            labels[HOST] = f"n{i}"
        if draw(st.booleans()):
            labels["pool"] = draw(st.sampled_from(["a", "b"]))
        b = MakeNode().name(f"n{i}").obj()
        b.metadata.labels = labels
        if draw(st.integers(0, 3)) == 0:
            b.spec.taints = [o.Taint(key="t", value=draw(st.sampled_from(["v", "w"])),
                                     effect=draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"])))]
        nodes.append(b)
    pods = []
    for j in range(draw(st.integers(0, 25))):
        labels = {}
        if draw(st.integers(0, 3)) > 0:
            labels["app"] = draw(st.sampled_from(["a", "b"]))
        if draw(st.booleans()):
            labels["rev"] = draw(st.sampled_from(["1", "2"]))
        p = MakePod().name(f"e{j}").namespace(draw(st.sampled_from(["default", "default", "other"]))).labels(labels)
        p = p.node(f"n{draw(st.integers(0, n_nodes - 1))}")
        if draw(st.integers(0, 5)) == 0:
            p = p.terminating()
        pods.append(p.obj())
    return nodes, pods


@st.composite
def incoming(draw):  # noqa: ANN001, ANN201
    p = MakePod().name("incoming").labels(draw(st.sampled_from([{"app": "a"}, {"app": "a", "rev": "1"}, {"app": "b"}, {}])))
    for _ in range(draw(st.integers(0, 3))):
        extra: dict[str, Any] = {}
        when = draw(st.sampled_from([DNS, SA]))
        if when == DNS and draw(st.booleans()):
            extra["minDomains"] = draw(st.integers(1, 5))
        if draw(st.booleans()):
            extra["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        if draw(st.booleans()):
            extra["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        if draw(st.booleans()):
            extra["matchLabelKeys"] = ["rev"]
        sel = draw(st.sampled_from([{"matchLabels": {"app": "a"}}, {"matchExpressions": [
            {"key": "app", "operator": "Exists"}]}, {}, None]))
        p = p.spread_constraint(draw(st.integers(1, 3)), draw(st.sampled_from(KEYS)), when, sel, **extra)
    if draw(st.booleans()):
        p = p.node_selector({"pool": draw(st.sampled_from(["a", "b"]))})
    if draw(st.booleans()):
        p = p.toleration("t", "Equal", "v", "")
    return p.obj()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), incoming(), st.data(), st.booleans())
def test_batch_equals_reference(cluster, pod, data, with_service) -> None:  # noqa: ANN001
    nodes, pods = cluster
    table = build_table(nodes, pods)
    lister = FakeLister([_svc({"app": "a"})] if with_service else [])
    pl = new(None, Handle(table, lister=lister))
    state = CycleState(PodInfo(pod))
    order = table.order()
    _, st_ = pl.pre_filter(state, pod, table)
    ref = reference_filter(pl, table, pod)
    if st_ is not None:
        assert st_.code == Code.SKIP and ref is None
    else:
        res = pl.filter_nodes(state, pod, table, order)
        for i, row in enumerate(order.tolist()):
            want = ref[row]
            bits = 0 if res is None else int(res.failed[i])
            got = None if not bits else res.status_for(bits)
            assert (want is None) == (got is None), (table.names[row], want, got)
            if want is not None:
                assert (want.code, want.reasons) == (got.code, got.reasons)
    # score over a random feasible subset, in table order
    keep = data.draw(st.lists(st.booleans(), min_size=len(order), max_size=len(order)))
    rows = order[np.asarray(keep, bool)] if len(order) else order
    st2 = pl.pre_score(state, pod, table, rows)
    ref_s = reference_scores(pl, table, pod, rows.tolist())
    if st2 is not None:
        assert st2.code == Code.SKIP and ref_s is None
        return
    raw = pl.score_nodes(state, pod, table, rows)
    norm = raw.copy()
    pl.normalize_score(state, pod, norm)
    assert (raw.tolist(), norm.tolist()) == ref_s


def test_index_is_owned_by_the_table_and_dies_with_it() -> None:
    import gc
    import weakref

    table = build_table(ABXY, SPREAD_2103)
    idx = spread_index(table)
    assert spread_index(table) is idx  # one per table
    idx.counts("default", new(None, Handle(table)).get_constraints(cpod((1, "zone", DNS, FOO)))[0].selector)
    ref, idx_ref = weakref.ref(table), weakref.ref(idx)
    del table, idx
    gc.collect()
    assert ref() is None and idx_ref() is None


# ───────────── nodeTaintsPolicy Honor with toleration operators Lt/Gt (gate TaintTolerationComparisonOperators) ─────────────

@pytest.mark.parametrize("gate,want", [(True, dict(a=U, x=S)), (False, dict(a=S, x=S))], ids=["gate on", "gate off"])
def test_node_taints_policy_honours_comparison_operators(gate, want) -> None:  # noqa: ANN001
    """node-a (zone1) has taint sla=950:NoSchedule and two matching pods, node-x (zone2) none.
    The pod tolerates ``sla Gt 750``: with the gate node-a is tolerated, counted (2 vs 0) and
    node-a violates maxSkew 1; without it node-a is excluded from the spreading (v1.37.2
    podtopologyspread/common.go matchNodeInclusionPolicies with enableTaintTolerationComparisonOperators)."""
    from kubesched.features import FeatureGate

    fg = FeatureGate.from_flags(feature_gates=f"TaintTolerationComparisonOperators={str(gate).lower()}")
    tainted = zn("node-a", "zone1")
    tainted.spec.taints = [o.Taint(key="sla", value="950", effect="NoSchedule")]
    table = build_table([tainted, zn("node-x", "zone2")], [epod("p-a1", "node-a"), epod("p-a2", "node-a")])
    pod = cpod((1, "zone", DNS, FOO, {"nodeTaintsPolicy": "Honor"}), toleration=("sla", "Gt", "750", "NoSchedule"))
    pl = new(None, Handle(table, features=fg))
    got = run_filter(pl, table, pod)
    assert {k: v[0] for k, v in got.items()} == {f"node-{k}": v for k, v in want.items()}
    ref = reference_filter(pl, table, pod)
    assert {table.names[r]: (S if s is None else s.code) for r, s in ref.items()} == {k: v[0] for k, v in got.items()}
