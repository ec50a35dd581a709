"""TaintToleration, ported from upstream taint_toleration_test.go (v1.34), plus batch == reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import tainttoleration as tt
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NS, PNS, NE = "NoSchedule", "PreferNoSchedule", "NoExecute"


def node(name, *taints):
    b = MakeNode().name(name)
    for key, value, effect in taints:
        b = b.taint(key, value, effect)
    return b.obj()


def pod(*tols):
    b = MakePod().name("p").uid("p-uid")
    for t in tols:
        b = b.toleration(*t)
    return b.obj()


def state_for(p):
    return CycleState(PodInfo(p))


def batch_statuses(plugin, st_, p, table, rows):
    res = plugin.filter_nodes(st_, p, table, rows)
    if res is None:
        return [None] * len(rows)
    return [None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]


FILTER_CASES = [
    ("no tolerations, NoSchedule taint", pod(), [("dedicated", "user1", NS)], UU),
    ("toleration for user1 NoSchedule", pod(("dedicated", "Equal", "user1", NS)), [("dedicated", "user1", NS)], None),
    ("toleration for user2, taint user1", pod(("dedicated", "Equal", "user2", NS)), [("dedicated", "user1", NS)], UU),
    ("Exists toleration", pod(("foo", "Exists", "", NS)), [("foo", "bar", NS)], None),
    ("multiple tolerations, all taints tolerated",
     pod(("dedicated", "Equal", "user2", NS), ("foo", "Exists", "", NS)),
     [("dedicated", "user2", NS), ("foo", "bar", NS)], None),
    ("key/value match, effect differs", pod(("foo", "Equal", "bar", PNS)), [("foo", "bar", NS)], UU),
    ("empty toleration effect matches NoSchedule", pod(("foo", "Equal", "bar", "")), [("foo", "bar", NS)], None),
    ("PreferNoSchedule taint is ignored by Filter", pod(("dedicated", "Equal", "user2", NS)),
     [("dedicated", "user1", PNS)], None),
    ("no toleration, PreferNoSchedule taint", pod(), [("dedicated", "user1", PNS)], None),
    ("no toleration, NoExecute taint", pod(), [("dedicated", "user1", NE)], UU),
    ("tolerate-everything toleration", pod(("", "Exists", "", "")), [("a", "b", NS), ("c", "", NE)], None),
    ("second taint untolerated", pod(("a", "Exists", "", NS)), [("a", "x", NS), ("b", "y", NS)], UU),
]


@pytest.mark.parametrize("p,taints,want", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(p, taints, want):
    table = build_table([node("n1", *taints)])
    pl = tt.new(None, None)
    st_ = state_for(p)
    got = pl.filter(st_, p, table.get("n1"))
    if want is None:
        assert got is None
        assert pl.filter_nodes(st_, p, table, table.order()) is None
    else:
        assert got.code == want and got.reasons == ("node(s) had untolerated taint(s)",)
        assert batch_statuses(pl, st_, p, table, table.order()) == [got]


SCORE_CASES = [
    ("tolerated taints score higher", pod(("foo", "Equal", "bar", PNS)),
     [[("foo", "bar", PNS)], [("foo", "blah", PNS)]], [100, 0]),
    ("all taints tolerated → same score",
     pod(("cpu-type", "Equal", "arm64", PNS), ("disk-type", "Equal", "ssd", PNS)),
     [[], [("cpu-type", "arm64", PNS)], [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)]], [100, 100, 100]),
    ("more intolerable taints → lower score", pod(("foo", "Equal", "bar", PNS)),
     [[], [("cpu-type", "arm64", PNS)], [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)]], [100, 50, 0]),
    ("only PreferNoSchedule taints/tolerations count",
     pod(("cpu-type", "Equal", "arm64", NS), ("disk-type", "Equal", "ssd", "")),
     [[], [("cpu-type", "arm64", NS)], [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)]], [100, 100, 0]),
    ("no taints and tolerations", pod(), [[], [("cpu-type", "arm64", PNS)]], [100, 0]),
]


@pytest.mark.parametrize("p,node_taints,want", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(p, node_taints, want):
    nodes = [node(f"n{i}", *ts) for i, ts in enumerate(node_taints)]
    table = build_table(nodes)
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    pl = tt.new(None, None)
    st_ = state_for(p)
    assert pl.pre_score(st_, p, table, rows) is None
    raw = pl.score_nodes(st_, p, table, rows)
    ref = [pl.score(st_, p, table.node_info(r))[0] for r in rows.tolist()]
    assert raw.tolist() == ref
    assert pl.normalize_score(st_, p, raw) is None
    assert raw.tolist() == want


def test_score_without_prescore_is_an_error():
    table = build_table([node("n1")])
    with pytest.raises(Exception):
        tt.new(None, None).score_nodes(state_for(pod()), pod(), table, table.order())


def test_untolerated_mask_effects_and_cache_growth():
    table = build_table([node("a", ("k", "v", NS)), node("b", ("k", "v", PNS)), node("c")])
    rows = np.asarray([table.row_of[n] for n in "abc"], np.int64)
    assert tt.untolerated_mask(table, rows, []).tolist() == [True, False, False]
    assert tt.untolerated_mask(table, rows, [], {PNS}).tolist() == [False, True, False]
    # a new taint set appears after the cache was filled
    table.set_node(node("c", ("z", "", NE)))
    assert tt.untolerated_mask(table, rows, []).tolist() == [True, False, True]


def test_hints():
    pl = tt.new(None, None)
    p = pod(("foo", "Exists", "", NS))
    tainted, clean = node("n", ("bar", "", NS)), node("n")
    assert pl.is_schedulable_after_node_change(p, None, clean) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_node_change(p, None, tainted) == QueueingHint.SKIP
    assert pl.is_schedulable_after_node_change(p, tainted, clean) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_node_change(p, clean, clean) == QueueingHint.SKIP
    other = MakePod().name("q").uid("q-uid").obj()
    assert pl.is_schedulable_after_pod_toleration_change(p, p, p) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_toleration_change(p, other, other) == QueueingHint.SKIP
    events = pl.events_to_register()
    assert len(events) == 2


# ───────────────────────────── property ─────────────────────────────

taint_st = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["", "x", "y"]), st.sampled_from([NS, PNS, NE]))
tol_st = st.tuples(st.sampled_from(["", "a", "b"]), st.sampled_from(["", "Equal", "Exists", "Bogus"]),
                   st.sampled_from(["", "x", "y"]), st.sampled_from(["", NS, PNS, NE]))


@settings(max_examples=150, deadline=None)
@given(node_taints=st.lists(st.lists(taint_st, max_size=3), min_size=1, max_size=10),
       tols=st.lists(tol_st, max_size=3))
def test_batch_equals_reference(node_taints, tols):
    nodes = [node(f"n{i}", *ts) for i, ts in enumerate(node_taints)]
    table = build_table(nodes)
    rows = table.order()
    p = pod(*tols)
    pl = tt.new(None, None)
    st_ = state_for(p)
    ref = [pl.filter(st_, p, table.node_info(r)) for r in rows.tolist()]
    assert batch_statuses(pl, st_, p, table, rows) == ref
    pl.pre_score(st_, p, table, rows)
    assert pl.score_nodes(st_, p, table, rows).tolist() == [pl.score(st_, p, table.node_info(r))[0] for r in rows.tolist()]
