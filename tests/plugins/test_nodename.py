"""NodeName, ported from upstream node_name_test.go (v1.34), plus batch == reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import nodename
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",))


def batch_statuses(plugin, st_, p, table, rows):
    res = plugin.filter_nodes(st_, p, table, rows)
    if res is None:
        return [None] * len(rows)
    return [None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]


@pytest.mark.parametrize("node_name,want", [("", None), ("foo", None), ("bar", MISMATCH)],
                         ids=["no host specified", "host matches", "host doesn't match"])
def test_filter(node_name, want):
    p = MakePod().node(node_name).obj() if node_name else MakePod().obj()
    table = build_table([MakeNode().name("foo").obj()])
    pl = nodename.new(None, None)
    st_ = CycleState(PodInfo(p))
    assert pl.filter(st_, p, table.get("foo")) == want
    assert batch_statuses(pl, st_, p, table, table.order()) == [want]


def test_no_prefilter_in_v134_and_events():
    from kubesched.features import FeatureGate
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

    pl = nodename.new(None, Handle(nodes=NodeTable(), features=FeatureGate(emulated_version=(1, 34))))
    assert not hasattr(pl, "pre_filter")  # v1.37's PreFilter: tests/plugins/test_filter_plugins_137.py
    (ev,) = pl.events_to_register()
    assert ev.event.resource == EventResource.NODE and ev.event.action == ActionType.ADD and ev.hint is None


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 8), want=st.sampled_from(["", "n0", "n3", "zz"]))
def test_batch_equals_reference(n, want):
    table = build_table([MakeNode().name(f"n{i}").obj() for i in range(n)])
    p = MakePod().node(want).obj() if want else MakePod().obj()
    pl = nodename.new(None, None)
    st_ = CycleState(PodInfo(p))
    rows = table.order()
    assert batch_statuses(pl, st_, p, table, rows) == [pl.filter(st_, p, table.node_info(r)) for r in rows.tolist()]
    sub = np.asarray(rows[::-1])
    assert batch_statuses(pl, st_, p, table, sub) == [pl.filter(st_, p, table.node_info(r)) for r in sub.tolist()]
