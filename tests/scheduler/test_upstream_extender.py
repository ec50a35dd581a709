"""Upstream's extender tests, ported (kubernetes/kubernetes v1.34 ``pkg/scheduler/extender_test.go``:
``TestSchedulerWithExtenders``, ``TestIsInterested``; the scheduler's extender bind path of
``schedule_one.go``; ``callExtenders`` of ``framework/preemption/preemption.go``).

The extenders here are in-process fakes (upstream's ``FakeExtender``); the HTTP client is tested
against a real server in ``test_extender_http.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_upstream_schedule_one import (
    FakePreScoreAndScore,
    SchedulePodError,
    TrueFilter,
    _bare_node,
    _schedule_pod,
    _scheduler,
)

from kubesched.config.types import Extender as ExtenderConfig
from kubesched.config.types import ExtenderManagedResource
from kubesched.framework.diagnosis import FitError
from kubesched.framework.extender import ExtenderError
from kubesched.framework.preemption import Candidate, Evaluator, Victims
from kubesched.scheduler.extender import HTTPExtender
from kubesched.testing.extenders import (
    FakeExtender,
    PriorityConfig,
    error_predicate_extender,
    error_prioritizer_extender,
    false_predicate_extender,
    node1_predicate_extender,
    node1_prioritizer_extender,
    node2_predicate_extender,
    node2_prioritizer_extender,
    true_predicate_extender,
)
from kubesched.testing.wrappers import MakePod


class Node2Prioritizer:
    """``tf.NewNode2PrioritizerPlugin``: 100 on node2, 10 elsewhere."""

    name = "Node2Prioritizer"

    def score(self, state, pod, node_info):
        return (100 if node_info.node.metadata.name == "node2" else 10), None


def _ext(name: str, **kw: Any) -> FakeExtender:
    return FakeExtender(name, **kw)


_TRUE = {"filter": ["TrueFilter"]}
_TRUE_EQ = {"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]}

CASES: list[tuple[str, dict, list[FakeExtender], list[str], tuple[str, int, int] | None]] = [
    ("test 1", _TRUE, [_ext("FakeExtender1", predicates=[true_predicate_extender]),
                       _ext("FakeExtender2", predicates=[error_predicate_extender])], ["node1", "node2"], None),
    ("test 2", _TRUE, [_ext("FakeExtender1", predicates=[true_predicate_extender]),
                       _ext("FakeExtender2", predicates=[false_predicate_extender])], ["node1", "node2"], None),
    ("test 3", _TRUE_EQ, [_ext("FakeExtender1", predicates=[true_predicate_extender]),
                          _ext("FakeExtender2", predicates=[node1_predicate_extender])], ["node1", "node2"],
     ("node1", 2, 1)),
    ("test 4", _TRUE, [_ext("FakeExtender1", predicates=[node2_predicate_extender]),
                       _ext("FakeExtender2", predicates=[node1_predicate_extender])], ["node1", "node2"], None),
    ("test 5", _TRUE, [_ext("FakeExtender1", predicates=[true_predicate_extender], weight=1,
                            prioritizers=[PriorityConfig(error_prioritizer_extender, 10)])], ["node1"],
     ("node1", 1, 1)),
    ("test 6", _TRUE, [_ext("FakeExtender1", predicates=[true_predicate_extender], weight=1,
                            prioritizers=[PriorityConfig(node1_prioritizer_extender, 10)]),
                       _ext("FakeExtender2", predicates=[true_predicate_extender], weight=5,
                            prioritizers=[PriorityConfig(node2_prioritizer_extender, 10)])], ["node1", "node2"],
     ("node2", 2, 2)),
    ("test 7", {"filter": ["TrueFilter"], "score": [("Node2Prioritizer", 20)]},
     [_ext("FakeExtender1", predicates=[true_predicate_extender], weight=1,
           prioritizers=[PriorityConfig(node1_prioritizer_extender, 10)])], ["node1", "node2"], ("node2", 2, 2)),
    ("test 8", {"filter": ["TrueFilter"], "score": [("Node2Prioritizer", 1)]},
     [_ext("FakeExtender1", predicates=[error_predicate_extender], un_interested=True,
           prioritizers=[PriorityConfig(error_prioritizer_extender, 10)])], ["node1", "node2"], ("node2", 2, 2)),
    ("test 9", _TRUE_EQ, [_ext("FakeExtender1", predicates=[error_predicate_extender], ignorable=True),
                          _ext("FakeExtender2", predicates=[node1_predicate_extender])], ["node1", "node2"],
     ("node1", 2, 1)),
    ("test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated", _TRUE,
     [_ext("FakeExtender1", predicates=[true_predicate_extender]),
      _ext("FakeExtender2", predicates=[node1_predicate_extender])], ["node1", "node2"], ("node1", 2, 1)),
    ("test 11 - no scoring, no prefilters or  extender filters configured, a single feasible node is evaluated",
     {}, [_ext("FakeExtender1", binder=lambda: None)], ["node1", "node2"], ("node1", 1, 1)),
]


@pytest.mark.parametrize(("points", "extenders", "nodes", "want"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_scheduler_with_extenders(points: dict, extenders: list[FakeExtender], nodes: list[str],
                                  want: tuple[str, int, int] | None) -> None:
    """Upstream ``TestSchedulerWithExtenders``: SchedulePod's result (host, evaluated, feasible)
    or an error (a FitError or an extender error)."""
    plugins = {"TrueFilter": TrueFilter(), "EqualPrioritizerPlugin": FakePreScoreAndScore(),
               "Node2Prioritizer": Node2Prioritizer()}
    sched = _scheduler(points, plugins, [_bare_node(n) for n in nodes], extenders=extenders)
    pod = MakePod().name("ignored").obj()
    if want is None:
        with pytest.raises((FitError, SchedulePodError)):
            _schedule_pod(sched, pod)
        return
    res = _schedule_pod(sched, pod)
    assert (res.suggested_host, res.evaluated_nodes, res.feasible_nodes) == want


def test_extender_error_is_the_scheduling_error() -> None:
    """A filter error (not ignorable) fails the cycle with its message, as upstream's
    ``fwk.AsStatus(err)`` (``Error scheduling pod; retrying``)."""
    sched = _scheduler(_TRUE, {"TrueFilter": TrueFilter()}, [_bare_node("node1"), _bare_node("node2")],
                       extenders=[_ext("X", predicates=[error_predicate_extender])])
    with pytest.raises(SchedulePodError) as ei:
        _schedule_pod(sched, MakePod().name("p").obj())
    assert ei.value.status.message() == "some error"


def test_unresolvable_wins_and_extender_marks_unschedulable_plugins() -> None:
    """failedAndUnresolvableNodes → UnschedulableAndUnresolvable (no preemption on them); the
    pod's UnschedulablePlugins gets ``Extender`` (requeued by any event)."""

    def pred(pod, node):
        from kubesched.framework.interface import Code, Status
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x") if node.metadata.name == "node1" else \
            Status.of(Code.UNSCHEDULABLE, "y")

    sched = _scheduler(_TRUE, {"TrueFilter": TrueFilter()}, [_bare_node("node1"), _bare_node("node2")],
                       extenders=[_ext("X", predicates=[pred])])
    with pytest.raises(FitError) as ei:
        _schedule_pod(sched, MakePod().name("p").obj())
    d = ei.value.diagnosis
    st = d.node_to_status(sched.table.names)
    assert st["node1"].code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"
    assert st["node1"].reasons == ('FakeExtender: node "node1" failed and unresolvable',)
    assert st["node2"].code.name == "UNSCHEDULABLE"
    assert d.unschedulable_plugins == {"Extender"}


# ───────────────────────────── bind ─────────────────────────────


def _run_one(sched: Any) -> Any:
    return sched.schedule_one()


def test_binder_extender_binds_instead_of_default_binder() -> None:
    """Upstream ``extendersBinding``: an interested binder extender binds; DefaultBinder does not."""
    ext = _ext("B")
    sched = _scheduler({}, {}, [_bare_node("node1")], extenders=[ext])
    store = sched.client
    store.add("Pod", MakePod().name("p").namespace("default").uid("u1").obj())
    attempt = _run_one(sched)
    assert attempt.result == "scheduled"
    assert ext.bound == [("default", "p", "node1")]
    # offline, the store stands for the API server the extender wrote the binding to
    assert store.get("Pod", "default", "p").spec.node_name == "node1"


def test_binder_extender_failure_fails_the_binding_and_requeues() -> None:
    def boom() -> None:
        raise ExtenderError("bind refused")

    ext = _ext("B", binder=boom)
    sched = _scheduler({}, {}, [_bare_node("node1")], extenders=[ext])
    sched.client.add("Pod", MakePod().name("p").namespace("default").uid("u1").obj())
    attempt = _run_one(sched)
    assert attempt.result == "error"
    assert attempt.message == "bind refused"
    assert not sched.cache.is_assumed("default/p")  # forgotten, nothing left assumed
    assert ext.bound == []


def test_ignorable_binder_failure_falls_back_to_default_binder() -> None:
    def boom() -> None:
        raise ExtenderError("down")

    sched = _scheduler({}, {}, [_bare_node("node1")], extenders=[_ext("B", binder=boom, ignorable=True)])
    store = sched.client
    store.add("Pod", MakePod().name("p").namespace("default").uid("u1").obj())
    attempt = _run_one(sched)
    assert attempt.result == "scheduled"
    store.flush()
    assert store.get("Pod", "default", "p").spec.node_name == "node1"


def test_uninterested_binder_is_skipped() -> None:
    ext = _ext("B", un_interested=True)
    sched = _scheduler({}, {}, [_bare_node("node1")], extenders=[ext])
    sched.client.add("Pod", MakePod().name("p").namespace("default").uid("u1").obj())
    assert _run_one(sched).result == "scheduled"
    assert ext.bound == []


# ───────────────────────────── preemption ─────────────────────────────


def _evaluator(extenders: list[Any]) -> Evaluator:
    sched = _scheduler({}, {}, [_bare_node("node1"), _bare_node("node2")], extenders=extenders)
    return Evaluator("DefaultPreemption", sched.profiles["default-scheduler"].handle)


def _cands() -> list[Candidate]:
    v = MakePod().name("v").uid("v").obj()
    return [Candidate("node1", Victims([v])), Candidate("node2", Victims([v]))]


def test_call_extenders_narrows_candidates() -> None:
    ev = _evaluator([_ext("E", predicates=[node2_predicate_extender])])
    got, st = ev.call_extenders(MakePod().name("p").obj(), _cands())
    assert st is None
    assert [c.name for c in got] == ["node2"]


def test_call_extenders_error_and_ignorable() -> None:
    pod = MakePod().name("p").obj()
    ev = _evaluator([_ext("E", predicates=[error_predicate_extender])])
    got, st = ev.call_extenders(pod, _cands())
    assert st is not None and st.message() == "some error" and got == []
    ev = _evaluator([_ext("E", predicates=[error_predicate_extender], ignorable=True)])
    got, st = ev.call_extenders(pod, _cands())
    assert st is None and [c.name for c in got] == ["node1", "node2"]


def test_call_extenders_node_without_victims() -> None:
    class NoVictims(FakeExtender):
        def process_preemption(self, pod, node_to_victims, node_info):
            return {n: Victims([]) for n in node_to_victims}

    pod = MakePod().name("p").obj()
    got, st = _evaluator([NoVictims("E")]).call_extenders(pod, _cands())
    assert st is not None and st.message() == 'expected at least one victim pod on node "node1"'
    got, st = _evaluator([NoVictims("E", ignorable=True)]).call_extenders(pod, _cands())
    assert st is None and got == []


# ───────────────────────────── IsInterested ─────────────────────────────


@pytest.mark.parametrize(("managed", "pod", "want"), [
    pytest.param([], MakePod().obj(), True, id="Empty managed resources"),
    pytest.param(["memory"], MakePod().container("app").obj(), False, id="Managed memory, empty resources"),
    pytest.param(["memory"], MakePod().req(memory="0").obj(), True,
                 id="Managed memory, container memory with Requests"),
    pytest.param(["memory"], MakePod().container(limits={"memory": "0"}).obj(), True,
                 id="Managed memory, container memory with Limits"),
    pytest.param(["memory"], MakePod().container("app").init_req(memory="0").obj(), True,
                 id="Managed memory, init container memory"),
])
def test_is_interested(managed: list[str], pod: Any, want: bool) -> None:
    """Upstream ``TestIsInterested``."""
    ext = HTTPExtender(ExtenderConfig(url_prefix="http://127.0.0.1:1",
                                      managed_resources=[ExtenderManagedResource(m) for m in managed]))
    try:
        assert ext.is_interested(pod) is want
    finally:
        ext.close()



def test_build_extenders_puts_ignorable_last_and_sets_fit_ignored_resources() -> None:
    """Upstream ``buildExtenders``: ignorable extenders go to the tail; the ignoredByScheduler
    managed resources become every profile's NodeResourcesFit ``ignoredResources``."""
    from kubesched.config import decode_config
    from kubesched.scheduler.extender import build_extenders

    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
                         "extenders": [
                             {"urlPrefix": "http://127.0.0.1:1/one", "ignorable": True},
                             {"urlPrefix": "http://127.0.0.1:1/two", "managedResources": [
                                 {"name": "example.com/fpga", "ignoredByScheduler": True},
                                 {"name": "example.com/tpu"}]},
                             {"urlPrefix": "http://127.0.0.1:1/three"}]})
    exts, out = build_extenders(cfg)
    try:
        assert [e.name() for e in exts] == ["http://127.0.0.1:1/two", "http://127.0.0.1:1/three",
                                            "http://127.0.0.1:1/one"]
        for prof in out.profiles:
            fit = next(pc.args for pc in prof.plugin_config if pc.name == "NodeResourcesFit")
            assert fit.ignored_resources == ["example.com/fpga"]
    finally:
        for e in exts:
            e.close()
