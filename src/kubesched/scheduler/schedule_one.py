"""One scheduling attempt end to end (upstream ``pkg/scheduler/schedule_one.go``: ``ScheduleOne``,
``schedulingCycle``, ``bindingCycle``, ``handleBindingCycleError``, ``handleSchedulingFailure``).

The binding cycle runs synchronously right after the scheduling cycle (the simulator has no
bind latency unless its driver models one); a Permit ``Wait`` is not supported yet and is
treated as a rejection with a clear message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from kubesched.api.objects import pod_key
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import FitError, NodeToStatus
from kubesched.framework.events import EVENT_ASSIGNED_POD_DELETE
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import QueuedPodInfo
from kubesched.framework.record import build_record
from kubesched.framework.runtime import FilterError, ScoreError
from kubesched.scheduler.scheduling_cycle import NoNodesAvailable, PreFilterError, schedule_pod

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler.scheduler import Attempt, Scheduler

__all__ = ["NOTE_LENGTH_LIMIT", "schedule_one", "truncate_message"]

NOTE_LENGTH_LIMIT = 1024
"""Upstream ``validation.NoteLengthLimit``: events carry at most this many characters."""


def truncate_message(message: str) -> str:
    """Upstream ``truncateMessage``: cut to 1024 characters ending in ``" ..."``."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


def schedule_one(sched: Scheduler) -> Attempt | None:
    from kubesched.scheduler.scheduler import Attempt

    qpi = sched.queue.pop()
    if qpi is None:
        return None
    pod = qpi.pod
    key = qpi.key
    fw = sched.profiles.get(pod.spec.scheduler_name or "default-scheduler")
    if fw is None:  # the profile vanished: drop, as upstream logs and skips
        sched.queue.done(key)
        return Attempt(key, "skipped", message=f'profile not found for scheduler name "{pod.spec.scheduler_name}"')
    if pod.metadata.deletion_timestamp is not None or sched.cache.is_assumed(key):
        if pod.metadata.deletion_timestamp is not None and sched.client is not None:
            sched.client.record_event(pod, "Warning", "FailedScheduling", "Scheduling",
                                      f"skip schedule deleting pod: {pod.metadata.namespace}/{pod.metadata.name}")
        sched.queue.done(key)
        return Attempt(key, "skipped")

    state = CycleState(qpi.pod_info)
    now = sched.clock.now()
    try:
        res = schedule_pod(fw, state, pod, sched.table, sched.sampler, sched.rng, record=sched.record)
    except FitError as fe:
        return _unschedulable(sched, fw, state, qpi, fe, now)
    except NoNodesAvailable as e:
        return _failed(sched, fw, qpi, Status(Code.UNSCHEDULABLE, (str(e),)), str(e), now, rejected=True)
    except (FilterError, ScoreError, PreFilterError) as e:
        return _failed(sched, fw, qpi, e.status, e.status.message(), now, rejected=False)

    node = res.suggested_host
    record = None
    if sched.record:
        record = build_record(pod=key, profile=fw.profile_name, attempt=qpi.attempts, time=now,
                              table=sched.table, chunks=res.chunks, scores=res.scores,
                              selected=node, result="scheduled")
    # assume: the cache accounts the pod on the node before it is bound
    assumed_pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))
    sched.cache.assume_pod(qpi.pod_info.with_pod(assumed_pod), node)
    sched.queue.delete_nominated_pod(key)

    st = fw.run_reserve_plugins_reserve(state, assumed_pod, node)
    if st is not None:
        return _forget_and_fail(sched, fw, state, qpi, assumed_pod, node, st, now, record)
    st, _timeout = fw.run_permit_plugins(state, assumed_pod, node)
    if st is not None and st.is_wait():
        st = Status(Code.UNSCHEDULABLE, ("Permit Wait is not supported by this engine yet",), None, st.plugin)
    if st is not None:
        return _forget_and_fail(sched, fw, state, qpi, assumed_pod, node, st, now, record)

    # binding cycle
    st = fw.run_pre_bind_plugins(state, assumed_pod, node)
    if st is None:
        st = fw.run_bind_plugins(state, assumed_pod, node)
    if st is not None:
        return _forget_and_fail(sched, fw, state, qpi, assumed_pod, node, st, now, record, binding=True)
    sched.cache.finish_binding(key)
    sched.queue.done(key)
    fw.run_post_bind_plugins(state, assumed_pod, node)
    if sched.client is not None:
        sched.client.record_event(pod, "Normal", "Scheduled", "Binding",
                                  f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {node}")
    sched.stats.bound += 1
    return _report(sched, Attempt(key, "scheduled", node, "", record))


def _forget_and_fail(sched: Scheduler, fw: Framework, state: CycleState, qpi: QueuedPodInfo, assumed_pod,  # noqa: ANN001
                     node: str, st: Status, now: float, record, binding: bool = False) -> Attempt:  # noqa: ANN001
    """Unreserve, forget the assumed pod and fail (upstream ``handleBindingCycleError`` and the
    Reserve/Permit failure paths)."""
    fw.run_reserve_plugins_unreserve(state, assumed_pod, node)
    sched.cache.forget_pod(qpi.key)
    rejected = st.is_rejected()
    if not rejected:
        # the assumed pod occupied resources: other pods may fit now
        sched.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed_pod, None)
        return _failed(sched, fw, qpi, st, st.message(), now, rejected=False, record=record)
    if st.plugin:
        qpi.unschedulable_plugins = {st.plugin} if st.code != Code.PENDING else set()
        qpi.pending_plugins = {st.plugin} if st.code == Code.PENDING else set()
    attempt = _failed(sched, fw, qpi, st, st.message(), now, rejected=True, record=record)
    # deferred until the pod is requeued, and not applied to the pod itself (upstream)
    sched.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed_pod, None,
                                              lambda p: pod_key(p) != qpi.key)
    return attempt


def _unschedulable(sched: Scheduler, fw: Framework, state: CycleState, qpi: QueuedPodInfo,
                   fe: FitError, now: float) -> Attempt:
    diagnosis = fe.diagnosis
    nominated: str | None = None
    post: dict = {}
    if fw.post_filter_plugins:
        result, st = fw.run_post_filter_plugins(state, qpi.pod, NodeToStatus(diagnosis, sched.table.names, sched.table.row_of))
        diagnosis.post_filter_msg = st.message()
        post = {"status": str(st.code), "message": st.message(), "plugin": st.plugin}
        if result is not None and result.nominating_info is not None and result.nominating_info.mode == 1:
            nominated = result.nominating_info.nominated_node_name
            post["nominatedNodeName"] = nominated
    qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
    qpi.pending_plugins = set(diagnosis.pending_plugins)
    message = str(fe)
    record = None
    if sched.record:
        record = build_record(pod=qpi.key, profile=fw.profile_name, attempt=qpi.attempts, time=now,
                              table=sched.table, chunks=diagnosis.chunks, scores=None, selected=None,
                              result="unschedulable", message=message,
                              pre_filter={diagnosis.absent_status.plugin: diagnosis.pre_filter_msg}
                              if diagnosis.pre_filter_msg and diagnosis.absent_status is not None else None,
                              post_filter=post, nominated=nominated)
    return _failed(sched, fw, qpi, Status(Code.UNSCHEDULABLE), message, now, rejected=True,
                   record=record, nominated=nominated, keep_plugins=True)


def _failed(sched: Scheduler, fw: Framework, qpi: QueuedPodInfo, st: Status, message: str, now: float, *,
            rejected: bool, record=None, nominated: str | None = None,  # noqa: ANN001
            keep_plugins: bool = False) -> Attempt:
    """Upstream ``handleSchedulingFailure``: requeue, event, PodScheduled=False condition."""
    from kubesched.scheduler.scheduler import Attempt

    result = "unschedulable" if rejected else "error"
    reason = "Unschedulable" if rejected else "SchedulerError"
    if not keep_plugins and not rejected:
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
    if nominated is not None:
        qpi.pod_info.pod = msgspec.structs.replace(
            qpi.pod, status=msgspec.structs.replace(qpi.pod.status, nominated_node_name=nominated))
    sched.queue.add_unschedulable_if_not_present(qpi)
    # upstream AddNominatedPod: the PostFilter's nomination, else the pod's own
    sched.queue.add_nominated_pod(qpi.pod_info, nominated if nominated is not None
                                  else qpi.pod.status.nominated_node_name)
    if sched.client is not None:
        sched.client.record_event(qpi.pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message))
        sched.client.update_pod_condition(qpi.pod, "False", reason, message, nominated)
    if record is None and sched.record:
        record = build_record(pod=qpi.key, profile=fw.profile_name, attempt=qpi.attempts, time=now,
                              table=sched.table, chunks=[], scores=None, selected=None, result=result,
                              message=message)
    elif record is not None:
        record.result = result
        record.message = message
        record.selected_node = None
    return _report(sched, Attempt(qpi.key, result, None, message, record))


def _report(sched: Scheduler, attempt: Attempt) -> Attempt:
    """Count the attempt by result and hand it to ``sched.on_attempt``."""
    sched.stats.attempts[attempt.result] += 1
    if sched.on_attempt is not None:
        sched.on_attempt(attempt)
    return attempt
