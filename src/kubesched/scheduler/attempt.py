"""What both scheduling cycles (one pod: :mod:`kubesched.scheduler.schedule_one`, a pod group:
:mod:`kubesched.scheduler.schedule_one_podgroup`) share about an attempt, from upstream
``pkg/scheduler/schedule_one.go`` v1.37.2: the assumed pod handed to the binding cycle
(:class:`ScheduledPod`), ``skipPodSchedule``, the one-node FitError of a Reserve/Permit rejection,
the nominating info of a failure, ``handleSchedulingFailure`` and the reporting of an
:class:`~kubesched.scheduler.core.Attempt`.

Its own module so that the two cycles import it and not each other (docs/architecture.md,
contract ``acyclic``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from kubesched.framework.diagnosis import Diagnosis, FitError
from kubesched.framework.interface import Status
from kubesched.framework.record import DecisionRecord, build_record
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred
from kubesched.scheduler.core import Attempt

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import QueuedPodInfo
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler.core import SchedulerCore

__all__ = ["CLEAR_NOMINATED_NODE", "NOTE_LENGTH_LIMIT", "ScheduledPod", "failure_nominating_info", "should_record",
           "handle_scheduling_failure", "node_fit_error", "report", "skip_pod_schedule",
           "truncate_message"]

NOTE_LENGTH_LIMIT = 1024
"""Upstream ``validation.NoteLengthLimit``: events carry at most this many characters."""

CLEAR_NOMINATED_NODE = ""
"""Upstream ``clearNominatedNode`` (ModeOverride, ""); None stands for no nominating info."""


def failure_nominating_info(sched: SchedulerCore) -> str | None:
    """The nominating info of a failed cycle: upstream v1.35+ ``clearNominatedNode`` on every
    failure path (``schedule_one.go`` L166); v1.34 ``newFailureNominatingInfo`` — None (keep
    the nomination) when NominatedNodeNameForExpectation (alpha in v1.34) is enabled, else clear."""
    features = sched.features
    if not features.at_least(1, 35) and features.enabled("NominatedNodeNameForExpectation"):
        return None
    return CLEAR_NOMINATED_NODE


def truncate_message(message: str) -> str:
    """Upstream ``truncateMessage``: cut to 1024 characters ending in ``" ..."``."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


@dataclass(slots=True)
class ScheduledPod:
    """A pod whose scheduling cycle succeeded: assumed on ``node`` (upstream ``ScheduleResult``
    + ``assumedPodInfo`` + the cycle's state), ready for
    :func:`~kubesched.scheduler.schedule_one.binding_cycle`.

    ``start``: clock time the attempt began (seconds); ``evaluated_nodes`` / ``feasible_nodes``
    as upstream's ScheduleResult.
    """

    qpi: QueuedPodInfo
    framework: Framework
    state: CycleState
    assumed_pod: Pod
    node: str
    record: DecisionRecord | None = None
    start: float = 0.0
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    key: str = ""
    """The pod's ``namespace/name`` (``qpi.key``)."""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.qpi.key


def skip_pod_schedule(sched: SchedulerCore, pod: Pod, key: str) -> bool:
    """Upstream ``skipPodSchedule``: a deleting pod (with an event) or an assumed one."""
    if pod.metadata.deletion_timestamp is not None:
        if sched.client is not None:
            sched.client.record_event(pod, "Warning", "FailedScheduling", "Scheduling",
                                      f"skip schedule deleting pod: {pod.metadata.namespace}/{pod.metadata.name}")
        return True
    return sched.cache.is_assumed(key)


def node_fit_error(key: str, node: str, st: Status, *, unschedulable_plugins: set[str] | None = None) -> Status:
    """Upstream: a Reserve/Permit rejection becomes a FitError over one node (``NumAllNodes:
    1``) whose only status is ``st``; the status keeps ``st``'s code."""
    diagnosis = Diagnosis(extra_statuses={node: st})
    if unschedulable_plugins is not None:
        diagnosis.unschedulable_plugins = unschedulable_plugins
    else:
        diagnosis.add_plugin_status(st)
    return Status(st.code, (), FitError(key, 1, diagnosis))


def should_record(sched: SchedulerCore, key: str) -> bool:
    """Whether this attempt of ``key`` gets a DecisionRecord (``sched.record`` and ``sched.record_pods``)."""
    return sched.record and (sched.record_pods is None or sched.record_pods(key))


def handle_scheduling_failure(sched: SchedulerCore, fw: Framework, qpi: QueuedPodInfo, st: Status,
                              nominated_node_name: str | None, start: float,
                              record: DecisionRecord | None = None) -> Attempt:
    """Upstream ``handleSchedulingFailure``: remember a FitError's rejecting plugins, requeue the
    pod unless it is gone or already assigned (``Abort adding it back to queue``), update the
    nominator, emit ``FailedScheduling`` and patch ``PodScheduled=False`` (reason
    ``Unschedulable`` for a rejection, ``SchedulerError`` otherwise) with the nominated node.

    ``nominated_node_name``: upstream's NominatingInfo — None (no info: keep), ``""`` (clear) or
    a node (override).
    """
    rejected = st.is_rejected()
    reason = "Unschedulable" if rejected else "SchedulerError"
    result = "unschedulable" if rejected else "error"
    err = st.error
    if isinstance(err, FitError):
        qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
        qpi.pending_plugins = set(err.diagnosis.pending_plugins)
    else:  # upstream clears them at Pop; only a FitError sets them
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
    message = st.message()
    pod = original = qpi.pod  # the patch is computed against the status the server has
    # a running pod whose resize the kubelet deferred (alpha gate): requeued although assigned,
    # and nothing else — no nomination, event or status patch (v1.37.2 schedule_one.go L1179-1240)
    deferred = deferred_resize_enabled(sched.features) and is_pod_resize_deferred(pod)
    if (nominated_node_name is not None and pod.status.nominated_node_name != nominated_node_name
            and not deferred):
        qpi.pod_info.pod = pod = msgspec.structs.replace(
            pod, status=msgspec.structs.replace(pod.status, nominated_node_name=nominated_node_name))

    # upstream checks the informer cache: gone → Done; assigned → "Abort adding it back to queue"
    live = sched.lister.get("Pod", pod.metadata.namespace or "", pod.metadata.name)
    if live is not None and live.spec.node_name and not deferred:
        sched.queue.done(qpi.key)
    else:
        if (live is not None and live.metadata.uid and pod.metadata.uid
                and live.metadata.uid != pod.metadata.uid):
            # "Pod was recreated while handling scheduling failure. Skip requeueing and status updates."
            sched.queue.done(qpi.key)
            return report(sched, Attempt(qpi.key, result, None, message, record))
        if live is not None and sched.features.at_least(1, 36):
            # v1.36+ (L72-74): the event and the status patch are about the cached pod, so the
            # patch is computed against the status the informer has (e.g. the nominatedNodeName
            # the binding cycle set)
            original = live
        sched.queue.add_unschedulable_if_not_present(qpi)  # Done when the pod left the queue
    if deferred:
        if record is None and should_record(sched, qpi.key):
            record = build_record(pod=qpi.key, profile=fw.profile_name, attempt=qpi.attempts, time=start,
                                  table=sched.table, chunks=[], scores=None, selected=None, result=result,
                                  message=message)
        elif record is not None:
            record.result, record.message, record.selected_node = result, message, None
        return report(sched, Attempt(qpi.key, result, None, message, record))
    # upstream AddNominatedPod: the nominating info's node, else the pod's own
    sched.queue.add_nominated_pod(qpi.pod_info, nominated_node_name if nominated_node_name is not None
                                  else pod.status.nominated_node_name)
    if sched.client is not None:
        sched.client.record_event(pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message))
        sched.client.update_pod_condition(original, "False", reason, message, nominated_node_name)
    if record is None and should_record(sched, qpi.key):
        record = build_record(pod=qpi.key, profile=fw.profile_name, attempt=qpi.attempts, time=start,
                              table=sched.table, chunks=[], scores=None, selected=None, result=result,
                              message=message)
    elif record is not None:
        record.result = result
        record.message = message
        record.selected_node = None
    return report(sched, Attempt(qpi.key, result, None, message, record))


def report(sched: SchedulerCore, attempt: Attempt) -> Attempt:
    """Count the attempt by result and hand it to ``sched.on_attempt``."""
    sched.stats.attempts[attempt.result] += 1
    if sched.on_attempt is not None:
        sched.on_attempt(attempt)
    return attempt
