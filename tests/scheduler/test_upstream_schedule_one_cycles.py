"""Upstream ``TestSchedulerScheduleOne`` (``pkg/scheduler/schedule_one_test.go``), ported.

One node ``node1``, one pod ``foo``; each case registers fake Reserve / Permit / PreBind
plugins (``tf.NewFakeReservePlugin`` …) or injects a scheduling or binding error, runs one
``ScheduleOne`` and checks what upstream's table checks: the error (the status message handed
to ``handleSchedulingFailure``), the event reason, whether a binding was made, where the pod
ends (backoffQ / unschedulablePods / gone), that nothing is left assumed or in flight, and the
nominating info (failures clear the nominated node). As upstream's test registers no informer
handlers, the queue is checked before the store delivers the writes' events. Upstream's mocked
``SchedulePod`` is
replaced by patching :func:`kubesched.scheduler.schedule_pod.schedule_pod` as imported by
``schedule_one``. The v1.37 cases with NominatedNodeNameForExpectation on or off (PreBindPreFlight,
the binding cycle's nominatedNodeName patch, a pod cancelled in PreBind) are ported; the pod-group
and async-API-call variants are not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.errors import BindError
from kubesched.features import FeatureGate
from kubesched.framework.clock import SimFuture
from kubesched.framework.interface import Code, PreBindPreFlightResult, Status, as_status
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import ScheduledPod, Scheduler
from kubesched.scheduler import schedule_one as so_module
from kubesched.scheduler.schedule_pod import ScheduleResult
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod


class FakeReserve:
    """``tf.NewFakeReservePlugin(status)``."""

    name = "FakeReserve"

    def __init__(self, status: Status | None) -> None:
        self.status = status
        self.unreserved = 0

    def reserve(self, state, pod, node_name):
        return self.status

    def unreserve(self, state, pod, node_name):
        self.unreserved += 1


class FakePermit:
    """``tf.NewFakePermitPlugin(status, timeout)``."""

    name = "FakePermit"

    def __init__(self, status: Status | None, timeout_s: float) -> None:
        self.status = status
        self.timeout_s = timeout_s

    def permit(self, state, pod, node_name):
        return self.status, self.timeout_s


class FakePreBind:
    """``tf.NewFakePreBindPlugin(preFlightStatus, preBindStatus)``."""

    name = "FakePreBind"

    def __init__(self, status: Status | None, pre_flight: Status | None = None) -> None:
        self.status = status
        self.pre_flight = pre_flight
        self.called = 0

    def pre_bind_pre_flight(self, state, pod, node_name):
        return PreBindPreFlightResult(allow_parallel=False), self.pre_flight

    def pre_bind(self, state, pod, node_name):
        self.called += 1
        return self.status


class BlockingPreBind:
    """Upstream ``BlockingPreBindPlugin``: PreBind blocks until its context is cancelled and
    returns the context's error (here: until the PodInPreBind is cancelled)."""

    name = "BlockingPreBindPlugin"

    def __init__(self) -> None:
        self.started = False

    def pre_bind_pre_flight(self, state, pod, node_name):
        return PreBindPreFlightResult(), None

    async def _wait(self, fut: SimFuture) -> Status:
        return await fut

    def pre_bind(self, state, pod, node_name):
        fut = SimFuture()
        self.started = True
        state.pod_in_pre_bind.on_cancel(lambda cause: fut.set_result(as_status(RuntimeError("context canceled"))))
        return self._wait(fut)


class RecordingStore(ClusterStore):
    """The fake clientset: records the binding, optionally fails it (``injectBindError``)."""

    def __init__(self, bind_error: Exception | None = None) -> None:
        super().__init__()
        self.bind_error = bind_error
        self.bindings: list[tuple[str, str]] = []
        self.nominations: list[str | None] = []
        self.nnn_patches: list[str] = []

    async def bind(self, pod, node_name):
        self.bindings.append((pod.metadata.name, node_name))
        if self.bind_error is not None:
            raise self.bind_error
        await super().bind(pod, node_name)

    def update_pod_condition(self, pod, status, reason, message, nominated_node_name=None):
        self.nominations.append(nominated_node_name)
        super().update_pod_condition(pod, status, reason, message, nominated_node_name)

    async def set_nominated_node_name(self, pod, node_name):
        self.nnn_patches.append(node_name)  # upstream's reactor on the status patch
        await super().set_nominated_node_name(pod, node_name)


@dataclass
class Case:
    name: str
    plugins: dict[str, Any] = field(default_factory=dict)
    points: dict[str, str] = field(default_factory=dict)
    send_pod: Any = None
    inject_scheduling_error: str | None = None
    inject_bind_error: str | None = None
    admit: str | None = None
    expect_error: str | None = None
    expect_bind: bool = False
    expect_in: str | None = None  # "backoff" | "unschedulable" | None (not in the queue)
    expect_nominated: str | None = None
    event_reason: str = ""
    nnn_gate: bool | None = None  # NominatedNodeNameForExpectation (None: the default, on since v1.35)
    expect_nnn_patch: str = ""  # upstream expectNominatedNodeName: what the binding cycle patched
    cancel_in_pre_bind: str | None = None


def _pod(nnn: str = "") -> Any:
    b = MakePod().name("foo").uid("foo")
    if nnn:
        b.nominated_node_name(nnn)
    return b.obj()


CASES = [
    Case("schedule pod failed", inject_scheduling_error="scheduler", expect_error="scheduler",
         expect_in="backoff", event_reason="FailedScheduling"),
    Case("reserve failed with status code error",
         plugins={"FakeReserve": FakeReserve(as_status(RuntimeError("reserve error")))}, points={"FakeReserve": "reserve"},
         expect_error='running Reserve plugin "FakeReserve": reserve error', expect_in="backoff",
         event_reason="FailedScheduling"),
    Case("reserve failed with status code rejected",
         plugins={"FakeReserve": FakeReserve(Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "rejected on reserve"))},
         points={"FakeReserve": "reserve"},
         expect_error="0/1 nodes are available: 1 rejected on reserve.", expect_in="unschedulable",
         event_reason="FailedScheduling"),
    Case("permit failed with status code error",
         plugins={"FakePermit": FakePermit(as_status(RuntimeError("permit error")), 60)}, points={"FakePermit": "permit"},
         expect_error='running Permit plugin "FakePermit": permit error', expect_in="backoff",
         event_reason="FailedScheduling"),
    Case("permit failed with status code rejected",
         plugins={"FakePermit": FakePermit(Status.of(Code.UNSCHEDULABLE, "rejected on permit"), 60)},
         points={"FakePermit": "permit"},
         expect_error="0/1 nodes are available: 1 rejected on permit.", expect_in="unschedulable",
         event_reason="FailedScheduling"),
    Case("nominated node name is not set, permit plugin is working, but the feature gate "
         "NominatedNodeNameForExpectation is disabled",
         plugins={"FakePermit": FakePermit(Status.of(Code.WAIT, "rejected on permit"), 60)},
         points={"FakePermit": "permit"}, admit="FakePermit", expect_bind=True, event_reason="Scheduled",
         nnn_gate=False),
    Case("nominated node name is set, permit plugin is working in wait on permit phase",
         plugins={"FakePermit": FakePermit(Status.of(Code.WAIT, "rejected on permit"), 60)},
         points={"FakePermit": "permit"}, admit="FakePermit", expect_bind=True, event_reason="Scheduled",
         nnn_gate=True, expect_nnn_patch="node1"),
    Case("prebindpreflight failed with status code error",
         plugins={"FakePreBind": FakePreBind(None, as_status(RuntimeError("on PreBindPreFlight")))},
         points={"FakePreBind": "preBind"}, nnn_gate=True,
         expect_error='running PreBindPreFlight "FakePreBind": on PreBindPreFlight', expect_in="backoff",
         event_reason="FailedScheduling"),
    Case("prebindpreflight failed with status code unschedulable",
         plugins={"FakePreBind": FakePreBind(None, Status.of(Code.UNSCHEDULABLE, "rejected on prebindpreflight"))},
         points={"FakePreBind": "preBind"}, nnn_gate=True,
         expect_error='PreBindPreFlight FakePreBind returned "Unschedulable", which is unsupported. '
                      "It is supposed to return Success, Skip, or Error status",
         expect_in="backoff", event_reason="FailedScheduling"),
    Case("prebind isn't called and nominated node name isn't set, if preflight returns skip",
         plugins={"FakePreBind": FakePreBind(Status.of(Code.ERROR, "rejected on prebind"), Status(Code.SKIP))},
         points={"FakePreBind": "preBind"}, nnn_gate=True, expect_bind=True, event_reason="Scheduled"),
    Case("prebind is called and nominated node name is set, if preflight returns success",
         plugins={"FakePreBind": FakePreBind(None, None)}, points={"FakePreBind": "preBind"}, nnn_gate=True,
         expect_nnn_patch="node1", expect_bind=True, event_reason="Scheduled"),
    Case("prebind failed with status code error",
         plugins={"FakePreBind": FakePreBind(as_status(RuntimeError("on PreBind")))}, points={"FakePreBind": "preBind"},
         expect_error='running PreBind plugin "FakePreBind": on PreBind', expect_in="backoff",
         event_reason="FailedScheduling", nnn_gate=True, expect_nnn_patch="node1"),
    Case("prebind failed with status code error, NominatedNodeNameForExpectation disabled",
         plugins={"FakePreBind": FakePreBind(as_status(RuntimeError("on PreBind")))}, points={"FakePreBind": "preBind"},
         expect_error='running PreBind plugin "FakePreBind": on PreBind', expect_in="backoff",
         event_reason="FailedScheduling", nnn_gate=False),
    Case("prebind pod cancelled during prebind (external preemption)",
         plugins={"BlockingPreBindPlugin": BlockingPreBind()}, points={"BlockingPreBindPlugin": "preBind"},
         nnn_gate=True, cancel_in_pre_bind="context cancelled externally", expect_nnn_patch="node1",
         expect_error='running PreBind plugin "BlockingPreBindPlugin": context cancelled externally',
         expect_in="backoff", event_reason="FailedScheduling"),
    Case("binding failed", inject_bind_error="binder", expect_bind=True,
         expect_error='running Bind plugin "DefaultBinder": binder', expect_in="backoff",
         event_reason="FailedScheduling"),
    Case("bind assumed pod scheduled", expect_bind=True, event_reason="Scheduled"),
    Case("deleting pod", send_pod=MakePod().name("foo").uid("foo").terminating().obj(), event_reason="FailedScheduling"),
    Case("pod with existing nominated node name on scheduling error clears nomination",
         send_pod=_pod("existing-node"), inject_scheduling_error="scheduler", expect_error="scheduler",
         expect_in="backoff", expect_nominated="", event_reason="FailedScheduling"),
]


def _scheduler(case: Case, features: FeatureGate | None = None) -> tuple[Scheduler, RecordingStore]:
    reg = dict(in_tree_registry())
    for name, pl in case.plugins.items():
        reg[name] = lambda a, h, pl=pl: pl
    points: dict[str, Any] = {"queueSort": {"enabled": [{"name": "PrioritySort"}]},
                              "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    for name, point in case.points.items():
        points[point] = {"enabled": [{"name": name}]}
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"multiPoint": {"disabled": [{"name": "*"}]}, **points}}]})
    store = RecordingStore(BindError(case.inject_bind_error) if case.inject_bind_error else None)
    if features is None and case.nnn_gate is not None:
        features = FeatureGate(overrides={"NominatedNodeNameForExpectation": case.nnn_gate})
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, features=features)
    store.scheduler = sched
    store.add("Node", MakeNode().name("node1").obj())
    store.add("Pod", case.send_pod if case.send_pod is not None else _pod())
    return sched, store


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_scheduler_schedule_one(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    sched, store = _scheduler(case)
    if case.inject_scheduling_error is not None:
        err = as_status(RuntimeError(case.inject_scheduling_error))
        monkeypatch.setattr(so_module, "schedule_pod", lambda *a, **k: err)
    else:
        monkeypatch.setattr(so_module, "schedule_pod", lambda *a, **k: ScheduleResult("node1", 1, 1))
    handled: list[Status] = []
    real = so_module.handle_scheduling_failure

    def spy(sched, fw, qpi, st, nominated, start, record=None):
        handled.append((st, nominated))
        return real(sched, fw, qpi, st, nominated, start, record)

    monkeypatch.setattr(so_module, "handle_scheduling_failure", spy)

    out = sched.scheduling_cycle()
    if case.admit is not None:
        assert isinstance(out, ScheduledPod)
        wp = sched.profiles["default-scheduler"].handle.get_waiting_pod("foo")
        assert wp is not None and wp.get_pending_plugins() == [case.admit]
        wp.allow(case.admit)
    if isinstance(out, ScheduledPod):
        task = so_module.drive(sched.binding_cycle(out))
        if case.cancel_in_pre_bind is not None:
            # the plugin blocks in PreBind; "preemption from outside" cancels the pod
            assert not task.done() and case.plugins["BlockingPreBindPlugin"].started
            bp = sched.profiles["default-scheduler"].pods_in_pre_bind.get("foo")
            assert bp is not None and bp.cancel_pod(case.cancel_in_pre_bind)
        assert task.done()
    assert len(sched.pods_in_pre_bind) == 0
    # upstream's test wires no informer handlers: check the queue before the writes' events
    assert sched.queue.where("default/foo") == case.expect_in
    store.flush()

    assert [e[1] for e in store.events][:1] == [case.event_reason]
    if case.name == "deleting pod":
        assert store.events[0][3] == "skip schedule deleting pod: default/foo"
    if case.expect_error is None:
        assert handled == []
    else:
        assert len(handled) == 1
        st, nominated = handled[0]
        assert st.message() == case.expect_error
        assert nominated == ""  # clearNominatedNode
    assert bool(store.bindings) == case.expect_bind
    if case.expect_bind:
        assert store.bindings == [("foo", "node1")]
    assert not sched.queue._in_flight  # in-flight pods always empty after ScheduleOne
    assert sched.cache.assumed_count() == 0
    assert len(sched.waiting_pods) == 0
    if case.expect_nominated is not None:
        assert store.pods["default/foo"].status.nominated_node_name == case.expect_nominated
    assert (store.nnn_patches[-1] if store.nnn_patches else "") == case.expect_nnn_patch
    for pl in case.plugins.values():
        if isinstance(pl, FakePreBind) and pl.pre_flight is not None and pl.pre_flight.is_skip():
            assert pl.called == 0  # a plugin whose PreBindPreFlight skipped is not run
    if case.event_reason == "Scheduled":
        assert store.pods["default/foo"].spec.node_name == "node1"
        assert "default/foo" in {k for k in sched.cache.pod_states}  # confirmed by the bind's event


class RejectingPreFilter:
    name = "FakePreFilter"

    def pre_filter(self, state, pod, nodes):  # noqa: ANN001, ANN201
        return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "injected unschedulable status")


@pytest.mark.parametrize(("features", "want_nnn"), [
    (None, ""),  # v1.37: clearNominatedNode, no PostFilter plugins included (schedule_one.go L292)
    (FeatureGate(emulated_version=(1, 35)), ""),
    (FeatureGate(emulated_version=(1, 34)), "n9"),  # v1.34: an empty ScheduleResult keeps the nomination
])
def test_prefilter_rejection_is_a_fit_error_over_all_nodes(features: FeatureGate | None, want_nnn: str) -> None:
    """Not mocked: a PreFilter rejection is upstream's FitError with ``PreFilterMsg`` (``0/N
    nodes are available: <msg>.``), the pod parked in unschedulablePods with the plugin
    recorded; the nominated node is cleared since v1.35 (no PostFilter plugin), kept in v1.34."""
    case = Case("prefilter", plugins={"FakePreFilter": RejectingPreFilter()}, points={"FakePreFilter": "preFilter"},
                send_pod=_pod("n9"))
    sched, store = _scheduler(case, features)
    a = sched.schedule_one()
    assert (a.result, a.message) == ("unschedulable", "0/1 nodes are available: injected unschedulable status.")
    assert sched.queue.where("default/foo") == "unschedulable"
    assert sched.queue._entries["default/foo"].unschedulable_plugins == {"FakePreFilter"}
    store.flush()
    pod = store.pods["default/foo"]
    assert pod.status.nominated_node_name == want_nnn
    assert sched.queue.nominated_pods_for_node("n9") == ([] if not want_nnn else [sched.queue._entries[
        "default/foo"].pod_info])
    assert [(e[1], e[3]) for e in store.events] == [("FailedScheduling", a.message)]


@pytest.mark.parametrize(("features", "want"), [
    (None, ""),
    (FeatureGate(emulated_version=(1, 35), overrides={"NominatedNodeNameForExpectation": False}), ""),
    (FeatureGate(emulated_version=(1, 34)), ""),
    # v1.34 newFailureNominatingInfo: with the (alpha) gate on, failures keep the nomination
    (FeatureGate(emulated_version=(1, 34), overrides={"NominatedNodeNameForExpectation": True}), None),
])
def test_failure_nominating_info_per_version(features: FeatureGate, want: str | None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``pod with existing nominated node name on scheduling error clears nomination`` across
    versions: v1.35+ always ``clearNominatedNode``; v1.34 only with the gate off."""
    case = Case("scheduling error", send_pod=_pod("existing-node"))
    sched, store = _scheduler(case, features)
    monkeypatch.setattr(so_module, "schedule_pod", lambda *a, **k: as_status(RuntimeError("scheduler")))
    assert so_module.failure_nominating_info(sched) == want
    a = sched.schedule_one()
    assert a.result == "error"
    store.flush()
    assert store.pods["default/foo"].status.nominated_node_name == ("existing-node" if want is None else "")
