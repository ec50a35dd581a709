"""One scheduling attempt (upstream ``pkg/scheduler/schedule_one.go`` v1.37.2: ``ScheduleOne``,
``schedulingCycle``, ``bindingCycle``, ``handleBindingCycleError``, ``handleSchedulingFailure``;
v1.34–v1.36 behaviour by ``sched.features``).

Per version: failures clear the nominated node on every path since v1.35
(:func:`failure_nominating_info`); the binding cycle runs PreBindPreFlights and patches
``status.nominatedNodeName`` with NominatedNodeNameForExpectation (beta, on since v1.35); pods in
PreBind can be cancelled by preemption since v1.36; handleSchedulingFailure patches against the
informer's pod since v1.36.

* :func:`scheduling_cycle` — synchronous: pop, ``schedulePod`` (PreFilter … Score), assume,
  Reserve, Permit (a ``Wait`` parks the pod in the waiting-pods map). Returns a
  :class:`~kubesched.scheduler.attempt.ScheduledPod` (the pod is assumed) or, after
  :func:`~kubesched.scheduler.attempt.handle_scheduling_failure`, the failed
  :class:`~kubesched.scheduler.core.Attempt`. A popped pod group goes to
  :func:`~kubesched.scheduler.schedule_one_compositepodgroup.schedule_pod_group_entity` (its
  root CompositePodGroup's tree, or the group's own cycle).
* :func:`binding_cycle` — a coroutine: WaitOnPermit, PreBind, Bind, PostBind; a failure runs
  :func:`handle_binding_cycle_error` (Unreserve, forget, move, requeue).
* :func:`drive` — runs a binding-cycle coroutine without asyncio: it awaits only
  :class:`~kubesched.framework.clock.SimFuture` s (or nothing) and is resumed from their
  done-callbacks; the simulator and tests use it, the live adapter uses ``asyncio.create_task``.

Errors travel as :class:`~kubesched.framework.interface.Status` (a FitError is the ``error`` of
an ``Unschedulable`` status, as upstream's ``NewStatus(Unschedulable).WithError(fitErr)``).
Reserve and Permit rejections are wrapped into a one-node FitError (``0/1 nodes are available:
1 <reason>.``); only the binding-cycle error path moves unschedulable pods (AssignedPodDelete),
as upstream.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api.objects import pod_key
from kubesched.framework.clock import SimFuture
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import FitError, NodeToStatus
from kubesched.framework.events import EVENT_ASSIGNED_POD_DELETE
from kubesched.framework.interface import Code, NominatingMode, Status, as_status
from kubesched.framework.metrics import PLUGIN_METRICS_SAMPLE_PERCENT
from kubesched.framework.record import build_record
from kubesched.framework.waiting_pods import waiting_pod_key
from kubesched.queue.podgroups import QueuedPodGroupInfo
from kubesched.scheduler.attempt import (
    CLEAR_NOMINATED_NODE,
    ScheduledPod,
    failure_nominating_info,
    handle_scheduling_failure,
    node_fit_error,
    report,
    should_record,
    skip_pod_schedule,
)
from kubesched.scheduler.core import Attempt
from kubesched.scheduler.schedule_one_compositepodgroup import schedule_pod_group_entity
from kubesched.scheduler.schedule_one_podgroup import PodGroupCycleResult
from kubesched.scheduler.schedule_pod import NoNodesAvailable, schedule_pod

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.node_info import QueuedPodInfo
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler.core import SchedulerCore

__all__ = ["DrivenTask", "binding_cycle", "drive", "handle_binding_cycle_error", "schedule_one", "scheduling_cycle"]

_log = logging.getLogger("kubesched.scheduler")


# ───────────────────────────── the trampoline ─────────────────────────────


class DrivenTask:
    """The handle :func:`drive` returns: ``done()``, ``result()`` (raises the coroutine's
    exception, or ``RuntimeError`` while it is still suspended)."""

    __slots__ = ("_done", "_exc", "_result")

    def __init__(self) -> None:
        self._done = False
        self._result: Any = None
        self._exc: BaseException | None = None

    def done(self) -> bool:
        return self._done

    def result(self) -> Any:
        if not self._done:
            raise RuntimeError("the coroutine is still waiting")
        if self._exc is not None:
            raise self._exc
        return self._result


_held = 0
"""> 0 while a scheduling cycle runs: resumptions wait in ``_ready`` until it ends."""
_ready: deque[Callable[[], None]] = deque()


def _resume(fn: Callable[[], None]) -> None:
    if _held:
        _ready.append(fn)
    else:
        fn()


def _release() -> None:
    while _ready and not _held:
        _ready.popleft()()


def drive(coro: Coroutine[Any, Any, Any]) -> DrivenTask:
    """Run ``coro`` as far as it can go now; when it awaits a pending
    :class:`~kubesched.framework.clock.SimFuture`, resume it from that future's done-callback —
    at once, or, when the future completes during a scheduling cycle (a plugin allowing or
    rejecting a waiting pod, preemption rejecting one), right after that cycle, so the cache
    never changes under a cycle (as a binding goroutine wakes after the scheduler's own step).

    Anything else awaited must complete without suspending (plain coroutines do); a coroutine
    that yields a foreign awaitable (an asyncio future) gets a ``TypeError`` thrown in. An
    exception raised by ``coro`` is kept in the task (``result()`` re-raises it).
    """
    task = DrivenTask()

    def step(value: Any = None, exc: BaseException | None = None) -> None:
        while True:
            try:
                fut = coro.throw(exc) if exc is not None else coro.send(value)
            except StopIteration as stop:
                task._done = True
                task._result = stop.value
                return
            except BaseException as e:  # noqa: BLE001 - kept for result()
                task._done = True
                task._exc = e
                return
            exc = None
            if not isinstance(fut, SimFuture):
                exc = TypeError(f"drive() can only wait on SimFuture, got {type(fut).__name__}")
                continue
            if fut.done():
                value = fut.result()
                continue
            fut.add_done_callback(lambda f: _resume(lambda: step(f.result())))
            return

    step()
    return task


# ───────────────────────────── ScheduleOne ─────────────────────────────


def schedule_one(sched: SchedulerCore) -> Attempt | None:
    """Upstream ``ScheduleOne``: the scheduling cycle, then the binding cycle driven by
    :func:`drive`. Returns the attempt once it is decided (the scheduling failure, or the
    binding's result if it finished synchronously); a binding still waiting on Permit returns
    a ``waiting`` attempt (its result comes later through ``sched.on_attempt``). None when no
    pod is ready."""
    out = scheduling_cycle(sched)
    if isinstance(out, PodGroupCycleResult):
        # one binding cycle per member, started once the pod-group cycle is over
        first: Attempt | None = None
        for sp in out.scheduled:
            task = drive(binding_cycle(sched, sp))
            a = task.result() if task.done() else Attempt(sp.key, "waiting", sp.node, "", sp.record)
            first = first or a
        return first or (out.attempts[0] if out.attempts else Attempt(out.entity.key, "skipped"))
    if not isinstance(out, ScheduledPod):
        return out
    task = drive(binding_cycle(sched, out))
    if task.done():
        done: Attempt = task.result()
        return done
    return Attempt(out.key, "waiting", out.node, "", out.record)


def scheduling_cycle(sched: SchedulerCore) -> ScheduledPod | Attempt | PodGroupCycleResult | None:
    """Upstream ``ScheduleOne`` up to the binding goroutine plus ``schedulingCycle``. See the
    module docstring. Binding cycles driven by :func:`drive` that a plugin of this cycle
    unblocks resume when it ends."""
    global _held
    _held += 1
    try:
        return _scheduling_cycle(sched)
    finally:
        _held -= 1
        if _ready and not _held:
            _release()


def _scheduling_cycle(sched: SchedulerCore) -> ScheduledPod | Attempt | PodGroupCycleResult | None:
    qpi = sched.queue.pop()
    if qpi is None:
        return None
    if isinstance(qpi, QueuedPodGroupInfo):  # GenericWorkload: upstream ScheduleOne → scheduleOnePodGroup
        return schedule_pod_group_entity(sched, qpi)
    pod = qpi.pod
    key = qpi.key
    fw = sched.profiles.get(pod.spec.scheduler_name or "default-scheduler")
    if fw is None:  # the profile vanished: drop, as upstream logs and skips
        sched.queue.done(key)
        return Attempt(key, "skipped", message=f'profile not found for scheduler name "{pod.spec.scheduler_name}"')
    if skip_pod_schedule(sched, pod, key):
        sched.queue.done(key)
        return Attempt(key, "skipped")

    state = CycleState(qpi.pod_info)
    start = sched.clock.now()
    recorder = sched.metrics
    t0 = 0.0
    if recorder is not None:  # upstream: SetRecordPluginMetrics(rand.Intn(100) < pluginMetricsSamplePercent)
        state.record_plugin_metrics = sched.sample_rng.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT
        t0 = time.perf_counter()
    # PreFilter … Score: the snapshot must not change under the cycle (checked with KUBESCHED_DEBUG=1)
    with sched.table.frozen("the scheduling cycle"):
        res = schedule_pod(fw, state, pod, sched.table, sched.sampler, sched.rng, record=should_record(sched, key),
                           extenders=sched.extenders, signature=qpi.pod_signature,
                           cycle=sched.queue.scheduling_cycle)
    if isinstance(res, Status):
        return _schedule_pod_failed(sched, fw, state, qpi, res, start)
    if recorder is not None:  # upstream SchedulingAlgorithmLatency: successful SchedulePod only, wall time
        recorder.observe_algorithm(time.perf_counter() - t0)

    node = res.suggested_host
    record = None
    if should_record(sched, key):
        record = build_record(pod=key, profile=fw.profile_name, attempt=qpi.attempts, time=start,
                              table=sched.table, chunks=res.chunks, scores=res.scores,
                              selected=node, result="scheduled", extender_statuses=res.extender_statuses)
    # assume: the cache accounts the pod on the node before it is bound
    assumed_pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))
    try:
        sched.cache.assume_pod(qpi.pod_info.with_pod(assumed_pod), node)
    except ValueError as e:
        # upstream assumeAndReserve (schedule_one.go L328-337): the cache refuses a pod it already
        # has — e.g. a running pod whose deferred resize fits (alpha gate) — an Error status
        return handle_scheduling_failure(sched, fw, qpi, as_status(e), failure_nominating_info(sched), start, record)
    sched.queue.delete_nominated_pod(key)

    st = fw.run_reserve_plugins_reserve(state, assumed_pod, node)
    if st is None:
        st = fw.run_permit_plugins(state, assumed_pod, node)
        if st is not None and st.is_wait():
            st = None  # parked in the waiting-pods map: WaitOnPermit in the binding cycle
        elif st is not None:
            fw.run_reserve_plugins_unreserve(state, assumed_pod, node)
            sched.cache.forget_pod(key)
    else:
        fw.run_reserve_plugins_unreserve(state, assumed_pod, node)
        sched.cache.forget_pod(key)
    if st is not None:
        if st.is_rejected():
            st = node_fit_error(key, node, st)
        return handle_scheduling_failure(sched, fw, qpi, st, failure_nominating_info(sched), start, record)
    return ScheduledPod(qpi, fw, state, assumed_pod, node, record, start,
                        res.evaluated_nodes, res.feasible_nodes, key)


def _schedule_pod_failed(sched: SchedulerCore, fw: Framework, state: CycleState, qpi: QueuedPodInfo, st: Status,
                         start: float) -> Attempt:
    """``schedulingAlgorithm`` when ``schedulePod`` failed (``schedule_one.go`` L250-311): PostFilter
    for a FitError (its message, v1.37 preemption's "found a potential placement …" included,
    is appended to the FitError's), then ``handleSchedulingFailure`` with the nominating info:
    the PostFilter result's (None without one), else :func:`failure_nominating_info`."""
    fe = st.error
    if not isinstance(fe, FitError):
        if isinstance(fe, NoNodesAvailable):
            st = Status(st.code, (str(fe),), fe, st.plugin)
        return handle_scheduling_failure(sched, fw, qpi, st, failure_nominating_info(sched), start, None)
    diagnosis = fe.diagnosis
    # no PostFilter plugins: v1.35+ clearNominatedNode (L292); v1.34 an empty ScheduleResult (keep)
    nominated: str | None = CLEAR_NOMINATED_NODE if sched.features.at_least(1, 35) else None
    post: dict[str, Any] = {}
    if fw.post_filter_plugins:
        nominated = None
        result, pst = fw.run_post_filter_plugins(state, qpi.pod, NodeToStatus(diagnosis, sched.table.names,
                                                                             sched.table.row_of))
        diagnosis.post_filter_msg = pst.message()
        post = {"status": str(pst.code), "message": pst.message(), "plugin": pst.plugin}
        info = result.nominating_info if result is not None else None
        if info is not None and info.mode == NominatingMode.OVERRIDE:
            nominated = info.nominated_node_name
            post["nominatedNodeName"] = nominated
    record = None
    if should_record(sched, qpi.key):
        record = build_record(pod=qpi.key, profile=fw.profile_name, attempt=qpi.attempts, time=start,
                              table=sched.table, chunks=diagnosis.chunks, scores=None, selected=None,
                              result="unschedulable", message=str(fe),
                              pre_filter={diagnosis.absent_status.plugin: diagnosis.pre_filter_msg}
                              if diagnosis.pre_filter_msg and diagnosis.absent_status is not None else None,
                              post_filter=post, nominated=nominated if fw.post_filter_plugins else None,
                              extender_statuses=diagnosis.extra_statuses)
    return handle_scheduling_failure(sched, fw, qpi, st, nominated, start, record)


# ───────────────────────────── the binding cycle ─────────────────────────────


async def binding_cycle(sched: SchedulerCore, sp: ScheduledPod) -> Attempt:
    """Upstream ``bindingCycle`` (``schedule_one.go`` L399-508, + ``bind``): with
    NominatedNodeNameForExpectation (beta, on since v1.35) first PreBindPreFlights — an Error
    fails the binding; when some PreBind plugin has work or the pod waits on Permit,
    ``status.nominatedNodeName`` is patched to the node (a failure is only logged) — then
    WaitOnPermit, PreBind (v1.36+: registered in the pods-in-PreBind map, and failing with the
    cancel cause if preemption cancelled it meanwhile), Bind, PostBind; on failure
    :func:`handle_binding_cycle_error`. Returns the attempt (also handed to
    ``sched.on_attempt``)."""
    fw = sp.framework
    pre_flight: Status | None = None  # upstream: a nil status (Success) when the gate is off
    if sched.features.enabled("NominatedNodeNameForExpectation"):
        pre_flight = fw.run_pre_bind_pre_flights(sp.state, sp.assumed_pod, sp.node)
        if pre_flight is not None and (pre_flight.code == Code.ERROR or pre_flight.is_rejected()):
            return handle_binding_cycle_error(sched, sp, pre_flight)
        if pre_flight is None or fw.will_wait_on_permit(sp.assumed_pod):
            # tell external components (cluster autoscaler) where the pod is about to be bound,
            # only when Permit waits or PreBind has work (else it is bound soon anyway)
            await _set_nominated_node_name(sched, sp.assumed_pod, sp.node)
    st = await fw.wait_on_permit(sp.assumed_pod) if len(fw.waiting_pods) else None
    if st is not None:
        if st.is_rejected():
            st = node_fit_error(sp.key, sp.node, st, unschedulable_plugins={st.plugin})
        return handle_binding_cycle_error(sched, sp, st)
    # upstream calls Done here: past Permit the pod can no longer be "unschedulable", so the
    # events recorded while it was in flight are no longer needed
    sched.queue.done_in_flight(sp.key)
    in_pre_bind = None
    uid = waiting_pod_key(sp.assumed_pod)
    if pre_flight is None and sched.features.at_least(1, 36):
        # v1.36+: preemption may cancel the pod in memory while PreBind runs (L457-476)
        in_pre_bind = sp.state.pod_in_pre_bind = fw.pods_in_pre_bind.add(uid)
    try:
        st = await fw.run_pre_bind_plugins(sp.state, sp.assumed_pod, sp.node) if fw.pre_bind_plugins else None
        if st is None and in_pre_bind is not None and not in_pre_bind.mark_prebound():
            st = Status(Code.ERROR, (in_pre_bind.cause,))  # preempted during PreBind: context.Cause
    finally:
        if in_pre_bind is not None:
            sp.state.pod_in_pre_bind = None
            fw.pods_in_pre_bind.remove(uid)
    if st is None:
        bound, st = await _extenders_binding(sched, sp.assumed_pod, sp.node) if sched.extenders else (False, None)
        if not bound:
            st = await fw.run_bind_plugins(sp.state, sp.assumed_pod, sp.node)
        if st is None and sched.client is not None:
            pod = sp.assumed_pod
            sched.client.record_event(pod, "Normal", "Scheduled", "Binding",
                                      f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} "
                                      f"to {sp.node}")
    if st is not None:
        return handle_binding_cycle_error(sched, sp, st)
    sched.queue.done(sp.key, bound=True)
    fw.run_post_bind_plugins(sp.state, sp.assumed_pod, sp.node)
    sched.stats.bound += 1
    return report(sched, Attempt(sp.key, "scheduled", sp.node, "", sp.record))


async def _extenders_binding(sched: SchedulerCore, pod: Pod, node: str) -> tuple[bool, Status | None]:
    """Upstream ``extendersBinding``: the first binder extender interested in the pod binds it
    instead of the Bind plugins; an ignorable one that fails is skipped. ``(bound, status)``.

    The HTTP call blocks: live, ``sched.offload`` runs it off the event loop. Offline (no
    ``offload``: simulate, replay) the in-memory store stands for the API server the extender
    writes the binding to, so the binding is also recorded there."""
    meta = pod.metadata
    for ext in sched.extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue

        def call(ext: Any = ext) -> None:
            ext.bind(meta.namespace or "", meta.name, meta.uid or "", node)

        try:
            if sched.offload is not None:
                await sched.offload(call)
            else:
                call()
        except Exception as e:  # noqa: BLE001 - ExtenderError, or a crash of the extender client
            if ext.is_ignorable():
                continue
            return True, as_status(e)
        if sched.offload is None and sched.client is not None:
            try:
                await sched.client.bind(pod, node)
            except Exception as e:  # noqa: BLE001 - the store refusing the binding
                return True, as_status(e)
        return True, None
    return False, None


async def _set_nominated_node_name(sched: SchedulerCore, pod: Pod, node: str) -> None:
    """Upstream ``updatePod(assumedPod, nil, {node, ModeOverride})``, synchronous in the binding
    cycle: patch only when the pod's nomination differs; an error is only logged."""
    client = sched.client
    if client is None or (pod.status.nominated_node_name or "") == node:
        return
    setter = getattr(client, "set_nominated_node_name", None)
    if setter is None:  # a ClusterClient from before v1.35
        return
    try:
        res = setter(pod, node)
        if inspect.isawaitable(res):
            await res
    except Exception:  # noqa: BLE001 - upstream logs and goes on with the binding
        _log.exception("failed to update the nominated node name in the binding cycle of %s", pod_key(pod))


def handle_binding_cycle_error(sched: SchedulerCore, sp: ScheduledPod, st: Status) -> Attempt:
    """Upstream ``handleBindingCycleError``: Unreserve, forget the assumed pod (an
    AssignedPodDelete for the other unschedulable pods — deferred past the requeue and not
    applied to the pod itself when it was rejected), then ``handleSchedulingFailure`` with the
    nominated node cleared."""
    fw = sp.framework
    fw.run_reserve_plugins_unreserve(sp.state, sp.assumed_pod, sp.node)
    forgotten = sched.cache.is_assumed(sp.key)
    if forgotten:
        sched.cache.forget_pod(sp.key)
    deferred = False
    if forgotten:
        if st.is_rejected():
            deferred = True
        else:
            sched.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, sp.assumed_pod, None)
    attempt = handle_scheduling_failure(sched, fw, sp.qpi, st, failure_nominating_info(sched), sp.start, sp.record)
    if deferred:
        key = sp.key
        sched.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, sp.assumed_pod, None,
                                                  lambda p: _key(p) != key)
    return attempt


def _key(pod: Pod) -> str:
    return pod_key(pod)
