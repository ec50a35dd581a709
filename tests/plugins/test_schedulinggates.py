"""SchedulingGates: PreEnqueue message and code, and the gates-eliminated hint."""

from __future__ import annotations

import pytest

from kubesched.framework.events import ActionType, QueueingHint
from kubesched.framework.interface import Code
from kubesched.plugins import schedulinggates
from kubesched.testing.wrappers import MakePod


@pytest.mark.parametrize("gates,want", [
    ((), None),
    (("foo",), "waiting for scheduling gates: [foo]"),
    (("foo", "bar"), "waiting for scheduling gates: [foo bar]"),
], ids=["no-gates", "one-gate", "two-gates"])
def test_pre_enqueue(gates, want):
    pl = schedulinggates.new(None, None)
    pod = MakePod().scheduling_gates(*gates).obj() if gates else MakePod().obj()
    st = pl.pre_enqueue(pod)
    if want is None:
        assert st is None
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == (want,)


@pytest.mark.parametrize("other_uid,want", [("uid1", QueueingHint.QUEUE), ("uid2", QueueingHint.SKIP)],
                         ids=["same-pod", "other-pod"])
def test_hint(other_uid, want):
    pod = MakePod().name("p").uid("uid1").scheduling_gates("g").obj()
    new = MakePod().name("p2").uid(other_uid).obj()
    assert schedulinggates.SchedulingGates.is_schedulable_after_gates_eliminated(pod, pod, new) == want


def test_events():
    (ev,) = schedulinggates.new(None, None).events_to_register()
    assert ev.event.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
