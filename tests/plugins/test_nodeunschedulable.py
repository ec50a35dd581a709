"""NodeUnschedulable, ported from upstream node_unschedulable_test.go (v1.34), plus batch == reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import nodeunschedulable as nu
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

UNSCHED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))
KEY = "node.kubernetes.io/unschedulable"


def batch_statuses(plugin, st_, p, table, rows):
    res = plugin.filter_nodes(st_, p, table, rows)
    if res is None:
        return [None] * len(rows)
    return [None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]


CASES = [
    ("does not schedule pod to unschedulable node", MakePod(), True, UNSCHED),
    ("schedules pod to normal node", MakePod(), False, None),
    ("schedules pod with toleration to unschedulable node", MakePod().toleration(KEY, "Exists", "", "NoSchedule"), True, None),
    ("empty-effect toleration also tolerates", MakePod().toleration(KEY, "Exists"), True, None),
    ("tolerate-all toleration", MakePod().toleration("", "Exists"), True, None),
    ("NoExecute toleration does not help", MakePod().toleration(KEY, "Exists", "", "NoExecute"), True, UNSCHED),
    ("Equal with empty value tolerates", MakePod().toleration(KEY, "Equal", "", "NoSchedule"), True, None),
]


@pytest.mark.parametrize("pb,unschedulable,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(pb, unschedulable, want):
    p = pb.obj()
    table = build_table([MakeNode().name("n1").unschedulable(unschedulable).obj()])
    pl = nu.new(None, None)
    st_ = CycleState(PodInfo(p))
    assert pl.filter(st_, p, table.get("n1")) == want
    assert batch_statuses(pl, st_, p, table, table.order()) == [want]


def test_hints():
    pl = nu.new(None, None)
    p = MakePod().name("p").uid("u1").obj()
    sched, unsched = MakeNode().name("n").obj(), MakeNode().name("n").unschedulable().obj()
    assert pl.is_schedulable_after_node_change(p, None, sched) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_node_change(p, None, unsched) == QueueingHint.SKIP
    assert pl.is_schedulable_after_node_change(p, unsched, sched) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_node_change(p, sched, sched) == QueueingHint.SKIP
    assert pl.is_schedulable_after_node_change(p, sched, unsched) == QueueingHint.SKIP
    tolerating = MakePod().name("p").uid("u1").toleration(KEY, "Exists", "", "NoSchedule").obj()
    unrelated = MakePod().name("p").uid("u1").toleration("other", "Exists").obj()
    other_pod = MakePod().name("q").uid("u2").toleration(KEY, "Exists").obj()
    assert pl.is_schedulable_after_pod_toleration_change(p, p, tolerating) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_toleration_change(p, p, unrelated) == QueueingHint.SKIP
    assert pl.is_schedulable_after_pod_toleration_change(p, other_pod, other_pod) == QueueingHint.SKIP


@settings(max_examples=60, deadline=None)
@given(flags=st.lists(st.booleans(), min_size=1, max_size=10),
       tol=st.sampled_from([None, (KEY, "Exists", "", "NoSchedule"), ("x", "Exists", "", ""), (KEY, "Equal", "v", "")]))
def test_batch_equals_reference(flags, tol):
    table = build_table([MakeNode().name(f"n{i}").unschedulable(f).obj() for i, f in enumerate(flags)])
    pb = MakePod()
    if tol:
        pb = pb.toleration(*tol)
    p = pb.obj()
    pl = nu.new(None, None)
    st_ = CycleState(PodInfo(p))
    rows = table.order()
    assert batch_statuses(pl, st_, p, table, rows) == [pl.filter(st_, p, table.node_info(r)) for r in rows.tolist()]
