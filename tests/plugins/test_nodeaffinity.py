"""NodeAffinity, ported from upstream node_affinity_test.go (v1.34), plus batch == reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api import objects as o
from kubesched.config.args import NodeAffinityArgs
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import Code, PreFilterResult, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import nodeaffinity as na
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
POD = Status(UU, ("node(s) didn't match Pod's node affinity/selector",))
ENFORCED = Status(UU, ("node(s) didn't match scheduler-enforced node affinity",))
CONFLICT = Status(UU, ("pod affinity terms conflict",))
SKIP = Status(Code.SKIP)


def expr(key, op, *values):
    d = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def name_in(*names):
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def req_pod(*terms, node_selector=None):
    b = MakePod().name("p").uid("p-uid").node_affinity_terms(list(terms))
    if node_selector:
        b = b.node_selector(node_selector)
    return b.obj()


def args(required_terms=None, preferred=None):
    aff = {}
    if required_terms is not None:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return NodeAffinityArgs(added_affinity=o.decode(o.NodeAffinity, aff))


def batch_statuses(plugin, st_, p, table, rows):
    res = plugin.filter_nodes(st_, p, table, rows)
    if res is None:
        return [None] * len(rows)
    return [None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]


NO_AFFINITY_NIL_REQUIRED = MakePod().spec(affinity={"nodeAffinity": {}}).obj()

FILTER_CASES = [
    # name, pod, labels, node name, want filter, want prefilter status, want prefilter result, args
    ("missing labels", MakePod().node_selector({"foo": "bar"}).obj(), {}, "node1", POD, None, None, None),
    ("same labels", MakePod().node_selector({"foo": "bar"}).obj(), {"foo": "bar"}, "node1", None, None, None, None),
    ("node labels are superset", MakePod().node_selector({"foo": "bar"}).obj(), {"foo": "bar", "baz": "blah"},
     "node1", None, None, None, None),
    ("node labels are subset", MakePod().node_selector({"foo": "bar", "baz": "blah"}).obj(), {"foo": "bar"},
     "node1", POD, None, None, None),
    ("In matches", req_pod({"matchExpressions": [expr("foo", "In", "bar", "value2")]}), {"foo": "bar"},
     "node1", None, None, None, None),
    ("Gt matches", req_pod({"matchExpressions": [expr("kernel-version", "Gt", "0204")]}),
     {"kernel-version": "0206"}, "node1", None, None, None, None),
    ("NotIn matches", req_pod({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}),
     {"mem-type": "DDR3"}, "node1", None, None, None, None),
    ("Exists matches", req_pod({"matchExpressions": [expr("GPU", "Exists")]}), {"GPU": "NVIDIA-GRID-K1"},
     "node1", None, None, None, None),
    ("affinity doesn't match labels", req_pod({"matchExpressions": [expr("foo", "In", "value1", "value2")]}),
     {"foo": "bar"}, "node1", POD, None, None, None),
    ("empty MatchExpressions matches nothing", req_pod({"matchExpressions": []}), {"foo": "bar"}, "node1",
     POD, None, None, None),
    ("no affinity", MakePod().obj(), {"foo": "bar"}, "node1", None, SKIP, None, None),
    ("affinity with nil required selector", NO_AFFINITY_NIL_REQUIRED, {"foo": "bar"}, "node1", None, SKIP, None, None),
    ("multiple expressions ANDed, match",
     req_pod({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "node1", None, None, None, None),
    ("multiple expressions ANDed, no match",
     req_pod({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "node1", POD, None, None, None),
    ("terms ORed", req_pod({"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                           {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]}),
     {"foo": "bar"}, "node1", None, None, None, None),
    ("affinity and nodeSelector both satisfied",
     req_pod({"matchExpressions": [expr("foo", "Exists")]}, node_selector={"foo": "bar"}),
     {"foo": "bar"}, "node1", None, None, None, None),
    ("affinity matches but nodeSelector does not",
     req_pod({"matchExpressions": [expr("foo", "Exists")]}, node_selector={"foo": "bar"}),
     {"foo": "barrrrrr"}, "node1", POD, None, None, None),
    ("invalid value in term", req_pod({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}),
     {"foo": "bar"}, "node1", POD, None, None, None),
    ("matchFields In matches", req_pod({"matchFields": [name_in("node1")]}), {}, "node1", None, None,
     PreFilterResult(frozenset({"node1"})), None),
    ("matchFields In does not match", req_pod({"matchFields": [name_in("node1")]}), {}, "node2", POD, None,
     PreFilterResult(frozenset({"node1"})), None),
    ("two terms: matchFields no, matchExpressions yes",
     req_pod({"matchFields": [name_in("node1"), name_in("node2")]},
             {"matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", None, None, None, None),
    ("one term: matchFields no, matchExpressions yes",
     req_pod({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", POD, None, PreFilterResult(frozenset({"node1"})), None),
    ("one term: both match",
     req_pod({"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node1", None, None, PreFilterResult(frozenset({"node1"})), None),
    ("two terms: neither matches",
     req_pod({"matchFields": [name_in("node1")]}, {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}),
     {"foo": "bar"}, "node2", POD, None, None, None),
    ("two terms of node.Name affinity", req_pod({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}),
     {}, "node2", None, None, PreFilterResult(frozenset({"node1", "node2"})), None),
    ("two conflicting matchFields requirements", req_pod({"matchFields": [name_in("node1"), name_in("node2")]}),
     {"foo": "bar"}, "node2", POD, CONFLICT, None, None),
    ("matches added affinity and pod's affinity", req_pod({"matchExpressions": [expr("zone", "In", "foo")]}),
     {"zone": "foo"}, "node2", None, None, None, args([{"matchFields": [name_in("node2")]}])),
    ("matches added affinity but not pod's", req_pod({"matchExpressions": [expr("zone", "In", "bar")]}),
     {"zone": "foo"}, "node2", POD, None, None, args([{"matchFields": [name_in("node2")]}])),
    ("doesn't match added affinity", MakePod().obj(), {"zone": "foo"}, "node2", ENFORCED, None, None,
     args([{"matchExpressions": [expr("zone", "In", "bar")]}])),
]


@pytest.mark.parametrize("p,labels,node_name,want,want_pf_status,want_pf_result,plargs",
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
@pytest.mark.parametrize("run_pre_filter", [True, False], ids=["prefilter", "no-prefilter"])
def test_filter(p, labels, node_name, want, want_pf_status, want_pf_result, plargs, run_pre_filter):
    table = build_table([MakeNode().name(node_name).labels(labels).obj()])
    pl = na.new(plargs, None)
    st_ = CycleState(PodInfo(p))
    if run_pre_filter:
        result, status = pl.pre_filter(st_, p, table)
        assert status == want_pf_status
        assert result == want_pf_result
        if status is not None and status.is_skip():
            return
    assert pl.filter(st_, p, table.get(node_name)) == want
    assert batch_statuses(pl, st_, p, table, table.order()) == [want]


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
PREF1 = [{"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}]
PREF2 = [
    {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}},
    {"weight": 4, "preference": {"matchExpressions": [expr("key", "In", "value")]}},
    {"weight": 5, "preference": {"matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"),
                                                      expr("az", "In", "az1")]}},
]


def pref_pod(prefs):
    b = MakePod()
    for t in prefs:
        b = b.preferred_node_affinity(t["weight"], t["preference"])
    return b.obj()


SCORE_CASES = [
    ("no NodeAffinity → all 0 (PreScore skips)", MakePod().obj(), [LABEL1, LABEL2, LABEL3], [0, 0, 0], None, True),
    ("no node matches → all 0", pref_pod(PREF1), [LABEL4, LABEL2, LABEL3], [0, 0, 0], None, False),
    ("only node1 matches", pref_pod(PREF1), [LABEL1, LABEL2, LABEL3], [100, 0, 0], None, False),
    ("different priorities", pref_pod(PREF2), [LABEL1, LABEL5, LABEL2], [18, 100, 36], None, False),
    ("added affinity", MakePod().obj(), [LABEL1, LABEL2], [100, 0], args(preferred=PREF1), False),
    ("added affinity and pod affinity", pref_pod(PREF1), [LABEL1, LABEL2, LABEL5], [40, 60, 100],
     args(preferred=[{"weight": 3, "preference": {"matchExpressions": [expr("key", "In", "value")]}}]), False),
]


@pytest.mark.parametrize("p,label_sets,want,plargs,want_skip", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["prescore", "no-prescore"])
def test_score(p, label_sets, want, plargs, want_skip, run_pre_score):
    nodes = [MakeNode().name(f"node{i}").labels(ls).obj() for i, ls in enumerate(label_sets)]
    table = build_table(nodes)
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    pl = na.new(plargs, None)
    st_ = CycleState(PodInfo(p))
    if run_pre_score:
        status = pl.pre_score(st_, p, table, rows)
        if want_skip:
            assert status == SKIP
            return
        assert status is None
    raw = pl.score_nodes(st_, p, table, rows)
    assert raw.tolist() == [pl.score(st_, p, table.node_info(r))[0] for r in rows.tolist()]
    assert pl.normalize_score(st_, p, raw) is None
    assert raw.tolist() == want


def test_pre_score_error_on_invalid_preferred_terms():
    p = pref_pod([{"weight": 1, "preference": {"matchExpressions": [expr("foo", "Bogus", "x")]}}])
    table = build_table([MakeNode().name("n").obj()])
    st_ = CycleState(PodInfo(p))
    status = pl_status = na.new(None, None).pre_score(st_, p, table, table.order())
    assert pl_status.code == Code.ERROR and "Unsupported value" in status.message()


def test_invalid_added_affinity_is_rejected():
    with pytest.raises(InputError):
        na.new(args([{"matchExpressions": [expr("foo", "Bogus", "x")]}]), None)
    with pytest.raises(InputError):
        na.new(args(preferred=[{"weight": 1, "preference": {"matchFields": [expr("metadata.name", "In", "a", "b")]}}]),
               None)


def test_added_affinity_alone_runs_filter():
    pl = na.new(args([{"matchExpressions": [expr("zone", "In", "a")]}]), None)
    p = MakePod().obj()
    table = build_table([MakeNode().name("n").obj()])
    assert pl.pre_filter(CycleState(PodInfo(p)), p, table) == (None, None)


def test_parsed_selectors_are_cached_on_pod_info():
    p = req_pod({"matchExpressions": [expr("zone", "In", "a")]})
    pi = PodInfo(p)
    table = build_table([MakeNode().name("n").obj()])
    pl = na.new(None, None)
    pl.pre_filter(CycleState(pi), p, table)
    cached = pi.extra[na.NAME]
    pl.pre_filter(CycleState(pi), p, table)
    assert pi.extra[na.NAME] is cached


HINT_CASES = [
    ("added node matches", None, {"foo": "bar"}, QueueingHint.QUEUE),
    ("added node doesn't match", None, {"foo": "baz"}, QueueingHint.SKIP),
    ("update: label added that matches", {}, {"foo": "bar"}, QueueingHint.QUEUE),
    ("update: already matched", {"foo": "bar"}, {"foo": "bar", "x": "y"}, QueueingHint.SKIP),
    ("update: still doesn't match", {}, {"x": "y"}, QueueingHint.SKIP),
]


@pytest.mark.parametrize("old,new,want", [c[1:] for c in HINT_CASES], ids=[c[0] for c in HINT_CASES])
def test_hint(old, new, want):
    pl = na.new(None, None)
    p = req_pod({"matchExpressions": [expr("foo", "In", "bar")]})
    old_n = None if old is None else MakeNode().name("n").labels(old).obj()
    assert pl.is_schedulable_after_node_change(p, old_n, MakeNode().name("n").labels(new).obj()) == want


def test_hint_added_affinity():
    pl = na.new(args([{"matchExpressions": [expr("zone", "In", "a")]}]), None)
    p = MakePod().obj()
    assert pl.is_schedulable_after_node_change(p, None, MakeNode().name("n").label("zone", "b").obj()) == QueueingHint.SKIP
    assert pl.is_schedulable_after_node_change(p, None, MakeNode().name("n").label("zone", "a").obj()) == QueueingHint.QUEUE


# ───────────────────────────── property ─────────────────────────────

KEYS = ["zone", "gen", "disk"]
VALUES = ["a", "b", "1", "5", "12", "x"]
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def term(draw):
    exprs = []
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
        key = draw(st.sampled_from(KEYS))
        if op in ("Exists", "DoesNotExist"):
            exprs.append(expr(key, op))
        elif op in ("Gt", "Lt"):
            exprs.append(expr(key, op, draw(st.sampled_from(["1", "4", "x"]))))
        else:
            exprs.append(expr(key, op, *draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=2))))
    out = {"matchExpressions": exprs}
    if draw(st.booleans()):
        out["matchFields"] = [{"key": "metadata.name", "operator": draw(st.sampled_from(["In", "NotIn"])),
                               "values": [draw(st.sampled_from(["n0", "n1", "n2", "nx"]))]}]
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.lists(label_sets, min_size=1, max_size=8),
       req_terms=st.none() | st.lists(term(), max_size=3),
       node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1),
       prefs=st.lists(st.tuples(st.integers(1, 10), term()), max_size=3),
       added=st.none() | st.lists(term(), min_size=1, max_size=2),
       added_pref=st.none() | st.lists(st.tuples(st.integers(1, 10), term()), min_size=1, max_size=2))
def test_batch_equals_reference(nodes, req_terms, node_selector, prefs, added, added_pref):
    table = build_table([MakeNode().name(f"n{i}").labels(ls).obj() for i, ls in enumerate(nodes)])
    b = MakePod().node_selector(node_selector)
    if req_terms is not None:
        b = b.node_affinity_terms(req_terms)
    for w, t in prefs:
        b = b.preferred_node_affinity(w, t)
    p = b.obj()
    plargs = None
    if added is not None or added_pref is not None:
        plargs = args(added, None if added_pref is None else [{"weight": w, "preference": t} for w, t in added_pref])
    try:
        pl = na.new(plargs, None)
    except InputError:
        return  # invalid addedAffinity: the plugin refuses to start, as upstream
    st_ = CycleState(PodInfo(p))
    rows = table.order()
    _, status = pl.pre_filter(st_, p, table)
    if status is None:
        ref = [pl.filter(st_, p, table.node_info(r)) for r in rows.tolist()]
        assert batch_statuses(pl, st_, p, table, rows) == ref
    if pl.pre_score(st_, p, table, rows) is None:
        raw = pl.score_nodes(st_, p, table, rows)
        assert raw.tolist() == [pl.score(st_, p, table.node_info(r))[0] for r in rows.tolist()]
