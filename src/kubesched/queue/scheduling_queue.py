"""The scheduling queue (upstream ``pkg/scheduler/backend/queue/scheduling_queue.go``; v1.37.2
for single pods, the 1.34–1.36 differences keyed by ``features``: event names and the pod's own
update as a ``TargetPod`` event, the implicit ``Node/UpdateNodeTaint`` registration before 1.37,
the leftover-flush bookkeeping of 1.36/1.37). Pod groups (GenericWorkload) are not modelled.

Three places a pending pod can be:

* **activeQ** — a heap ordered by the profile's QueueSort plugin (``sort_key``), then arrival;
* **backoffQ** — pods waiting out their backoff, in two heaps as upstream (v1.33+): ``podBackoffQ``
  for pods rejected by plugins, ordered by backoff expiry truncated to 1 s windows, then by
  QueueSort; ``podErrorBackoffQ`` for pods that failed with an error (no rejecting plugin). With
  ``SchedulerPopFromBackoffQ`` (on since v1.33) ``pop()`` takes the head of ``podBackoffQ`` — never
  of the error heap — when activeQ is empty;
* **unschedulablePods** — pods rejected by plugins (and pods gated by PreEnqueue), waiting for a
  cluster event that one of their rejecting plugins says may help (queueing hints), or for
  ``pod_max_in_unschedulable_pods_s`` (5 min) to pass.

Backoff: ``initial * 2**(count-1)`` capped at ``max`` seconds (1, 2, 4, 8, 10, …), where
``count`` is the number of consecutive errors if the last attempt was an error, else the number of
unschedulable attempts. The expiry ``timestamp + d`` is truncated to its 1 s window, and a pod is
backing off while that window is not before the current (truncated) time: it leaves backoff at the
start of the *next* window (upstream ``alignToWindow``/``isPodBackingoff``). Time comes from an
injected clock (``now()`` in seconds); the queue never reads the wall clock itself.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import pod_key, pod_priority
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.events import (
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    event_label,
    pod_update_events,
)
from kubesched.framework.node_info import PodInfo, QueuedPodInfo

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework

__all__ = ["SchedulingQueue"]

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED = "active", "backoff", "unschedulable", "gated"
BACKOFF_WINDOW_S = 1.0
QUEUE_SKIP, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = 0, 1, 2
"""Upstream ``queueingStrategy``: leave in unschedulablePods / backoffQ (or activeQ when the
backoff is over) / activeQ."""
_STRATEGY_QUEUE = {QUEUE_SKIP: UNSCHEDULABLE, QUEUE_AFTER_BACKOFF: BACKOFF, QUEUE_IMMEDIATELY: ACTIVE}
"""Upstream ``strategyToQueueLabel``."""
_WILDCARD_RESOURCES = (EventResource.WILDCARD, EventResource.UNSCHEDULABLE_TIMEOUT, EventResource.FORCE_ACTIVATE)


class SchedulingQueue:
    """Pending pods of every profile. See the module docstring.

    Args:
        frameworks: scheduler name → Framework (all share one QueueSort, as upstream requires).
        now: the clock, seconds.
        pod_initial_backoff_s / pod_max_backoff_s: ``podInitialBackoffSeconds`` / ``podMaxBackoffSeconds``.
        pod_max_in_unschedulable_pods_s: upstream's 5-minute leftover flush.
        features: the emulated version and gates (default: :func:`default_feature_gate`).
    """

    def __init__(self, frameworks: dict[str, Framework], now: Callable[[], float], *,
                 pod_initial_backoff_s: float = 1.0, pod_max_backoff_s: float = 10.0,
                 pod_max_in_unschedulable_pods_s: float = 300.0, features: FeatureGate | None = None) -> None:
        self.features = features if features is not None else default_feature_gate()
        self._ev_pod_add = event_label(EVENT_UNSCHEDULED_POD_ADD, self.features)
        self._ev_pod_update = event_label(EVENT_UNSCHEDULED_POD_UPDATE, self.features)
        self.frameworks = frameworks
        self.now = now
        self.initial_backoff = pod_initial_backoff_s
        self.max_backoff = pod_max_backoff_s
        self.max_in_unschedulable = pod_max_in_unschedulable_pods_s
        any_fw = next(iter(frameworks.values()))
        self._sort_key = any_fw.queue_sort_key
        self._active: list[tuple[Any, int, QueuedPodInfo]] = []
        self._backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        """``podBackoffQ``: pods rejected by plugins (the only backoff heap ``pop()`` takes from)."""
        self._error_backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        """``podErrorBackoffQ``: pods whose last attempt failed with an error."""
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}
        self._entries: dict[str, QueuedPodInfo] = {}
        self._seq = 0
        self.scheduling_cycle = 0
        self._events: dict[str, list[ClusterEventWithHint]] = {}
        wildcard = [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*"))]
        for fw in frameworks.values():
            for pl in fw.plugins.values():
                if pl.name in self._events:
                    continue
                reg = getattr(pl, "events_to_register", None)
                # upstream: a plugin without EnqueueExtensions is registered for every event
                self._events[pl.name] = self._hint_registrations(list(reg())) if callable(reg) else wildcard
        self._in_flight: dict[str, list[tuple[ClusterEvent, Any, Any]]] = {}
        """pod key → cluster events received while the pod was being scheduled (upstream
        ``inFlightEvents``); replayed against the pod's hints when it fails."""
        self._nominated: dict[str, dict[str, PodInfo]] = {}
        self._nominated_node: dict[str, str] = {}
        self.incoming_entities: dict[tuple[str, str], int] = {}
        """``(queue, event)`` → count, upstream ``queue_incoming_entities_total{type="pod"}`` (1.37)."""
        self.incoming: dict[tuple[str, str], int] = {}
        """``(queue, event)`` → count, upstream ``queue_incoming_pods_total`` (and, since 1.37,
        ``queue_incoming_entities_total{type="pod"}``)."""
        self.pre_queueing_hint_evaluations: dict[tuple[str, str], int] = {}
        """``(plugin, "all_pods"|"narrowed")`` → count, upstream
        ``scheduler_pre_queueing_hint_evaluations_total`` (1.37, SchedulerPreQueueingHints)."""
        self.scheduled_after_flush = 0
        """Upstream ``pod_scheduled_after_flush_total`` (1.36+): pods bound after the leftover
        flush last moved them (counted by :meth:`done` when told the pod was bound)."""

    def _hint_registrations(self, events: list[ClusterEventWithHint]) -> list[ClusterEventWithHint]:
        """A plugin's registrations as upstream ``buildQueueingHintMap`` (``scheduler.go``) keeps
        them. Before 1.37 a plugin registering ``Node/Add`` but not ``Node/UpdateNodeTaint`` also
        got ``Node/UpdateNodeTaint`` with the default hint (always Queue; issue #109437), 1.34.12
        ``scheduler.go`` L475-515; 1.37 dropped it. (1.37 also unrolls ``Pod`` registrations into
        AssignedPod/UnscheduledPod/TargetPod ones, which :func:`match_cluster_events` does.)"""
        if not events or self.features.at_least(1, 37):
            return events
        node_add = any(e.event.resource == EventResource.NODE and e.event.action & ActionType.ADD for e in events)
        node_taint = any(e.event.resource == EventResource.NODE and e.event.action & ActionType.UPDATE_NODE_TAINT
                         for e in events)
        if node_add and not node_taint:
            return [*events, ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT))]
        return events

    # ───────────────────────────── bookkeeping ─────────────────────────────

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def where(self, key: str) -> str | None:
        """Which sub-queue holds the pod: ``active``, ``backoff``, ``unschedulable``, ``gated``."""
        return self._where.get(key)

    def counts(self) -> dict[str, int]:
        """Upstream ``pending_pods{queue=...}``."""
        out = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
        for w in self._where.values():
            out[w] += 1
        return out

    def has_schedulable(self) -> bool:
        """Whether ``pop()`` would return a pod: activeQ (after moving completed backoffs) or the
        rejection backoffQ is non-empty. Pods in the error backoffQ wait for their backoff."""
        self.flush_backoff_completed()
        return bool(self._active) or bool(self._backoff)

    def pending(self) -> Iterator[QueuedPodInfo]:
        return iter(self._entries.values())

    def _count(self, queue: str, event: str, strategy: int | None = None) -> None:
        """Upstream ``recordIncomingEntitiesMetrics`` (scheduling_queue.go L2226): every arrival
        counts in ``queue_incoming_pods_total``; ``queue_incoming_entities_total`` (1.37) only
        when the pod is new (no ``strategy``) or lands in another queue than ``strategy`` names."""
        k = (queue, event)
        self.incoming[k] = self.incoming.get(k, 0) + 1
        if strategy is None or _STRATEGY_QUEUE[strategy] != queue:
            self.incoming_entities[k] = self.incoming_entities.get(k, 0) + 1

    def _push_active(self, qpi: QueuedPodInfo, event: str, strategy: int | None = None) -> None:
        heapq.heappush(self._active, (self._sort_key(qpi), qpi.seq, qpi))
        self._where[qpi.key] = ACTIVE
        self._count(ACTIVE, event, strategy)

    def _push_backoff(self, qpi: QueuedPodInfo, event: str, strategy: int | None = None) -> None:
        heap = self._backoff if qpi.unschedulable_plugins or qpi.pending_plugins else self._error_backoff
        heapq.heappush(heap, (self.backoff_time(qpi), self._sort_key(qpi), qpi.seq, qpi))
        self._where[qpi.key] = BACKOFF
        self._count(BACKOFF, event, strategy)

    def _park(self, qpi: QueuedPodInfo, event: str, strategy: int | None = None) -> None:
        self.unschedulable[qpi.key] = qpi
        self._where[qpi.key] = GATED if qpi.gated else UNSCHEDULABLE
        self._count(UNSCHEDULABLE, event, strategy)

    # ───────────────────────────── backoff ─────────────────────────────

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        count = qpi.consecutive_errors_count or qpi.unschedulable_count
        if count <= 0:
            return 0.0
        d = self.initial_backoff * 2.0 ** min(count - 1, 1000)  # float: no overflow, like upstream's shift check
        return min(d, self.max_backoff)

    def backoff_time(self, qpi: QueuedPodInfo) -> float:
        """Upstream ``getBackoffTime``: ``timestamp + backoff_duration`` truncated to its 1 s
        ordering window (v1.33+ ``alignToWindow``); ``-inf`` for a pod that never failed."""
        d = self.backoff_duration(qpi)
        if d == 0:
            return -math.inf
        return math.floor((qpi.timestamp + d) / BACKOFF_WINDOW_S) * BACKOFF_WINDOW_S

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Upstream ``isPodBackingoff``: the pod's backoff window is not before the current window
        (so a pod whose expiry is in the current window is still backing off)."""
        return self.backoff_time(qpi) >= math.floor(self.now() / BACKOFF_WINDOW_S) * BACKOFF_WINDOW_S

    # ───────────────────────────── informer events for pending pods ─────────────────────────────

    def add(self, pod: Pod) -> QueuedPodInfo:
        """A new pending pod (upstream ``Add``): PreEnqueue, then activeQ or gated."""
        self._seq += 1
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self.now(), seq=self._seq, pod_signature=self._sign(pod))
        self._entries[qpi.key] = qpi
        self._move_to_active(qpi, self._ev_pod_add)
        return qpi

    def _sign(self, pod: Pod) -> bytes | None:
        """Upstream ``signPod`` (scheduling_queue.go L2183-2201): the pod's profile's signature
        when OpportunisticBatching is on (v1.36+; 1.35 signed in the cycle), else None."""
        fw = self._framework(pod)
        if fw is None or getattr(fw, "batch", None) is None or not self.features.at_least(1, 36):
            return None
        return fw.sign_pod(pod)

    def _framework(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name or "default-scheduler")

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePlugins``: a rejecting plugin gates the pod and is added to its
        UnschedulablePlugins (so that its events can ungate it); all passing ungates it."""
        fw = self._framework(qpi.pod)
        st = fw.run_pre_enqueue_plugins(qpi.pod) if fw is not None else None
        if st is not None:
            qpi.gated = True
            qpi.gating_plugin = st.plugin
            if st.plugin:
                qpi.unschedulable_plugins = qpi.unschedulable_plugins | {st.plugin}
        else:
            qpi.gated = False
            qpi.gating_plugin = ""

    def _move_to_active(self, qpi: QueuedPodInfo, event: str, *, from_backoff: bool = False,
                        strategy: int | None = None) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue (skipped for a pod coming straight from backoffQ,
        which passed it on the way in), then activeQ, or unschedulablePods as gated. True if added."""
        if not from_backoff:
            self._run_pre_enqueue(qpi)
        if qpi.gated:
            self._clear_flush_if_gated(qpi)
            if self._where.get(qpi.key) is None:
                self._park(qpi, event, strategy)
            return False
        if self._where.get(qpi.key) in (UNSCHEDULABLE, GATED):
            del self.unschedulable[qpi.key]
        elif self._where.get(qpi.key) == BACKOFF:
            self._remove_from_heaps(qpi.key)
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.now()
        self._push_active(qpi, event, strategy)
        if event in (self._ev_pod_add, self._ev_pod_update):
            # upstream AddNominatedPod(pInfo, nil): the pod's own status.nominatedNodeName
            self.add_nominated_pod(qpi.pod_info, qpi.pod.status.nominated_node_name)
        return True

    def _clear_flush_if_gated(self, qpi: QueuedPodInfo) -> None:
        """1.37 ``moveToActiveQ``/``moveToBackoffQ`` (scheduling_queue.go L825, L858): a flushed pod
        that is gated again never attempts scheduling, so its flush mark is cleared here."""
        if self.features.at_least(1, 37):
            qpi.was_flushed_from_unschedulable = False

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: str, strategy: int | None = None) -> bool:
        """Upstream ``moveToBackoffQ`` (SchedulerPopFromBackoffQ): PreEnqueue runs on the way in;
        a gated pod goes to unschedulablePods instead. True if added."""
        self._run_pre_enqueue(qpi)
        if qpi.gated:
            self._clear_flush_if_gated(qpi)
            self._park(qpi, event, strategy)
            return False
        if self._where.get(qpi.key) in (UNSCHEDULABLE, GATED):
            del self.unschedulable[qpi.key]
        self._push_backoff(qpi, event, strategy)
        return True

    def update(self, old: Pod, new: Pod) -> None:
        """A pending pod changed (upstream ``Update``, scheduling_queue.go L1563): the update is
        split into events (:func:`pod_update_events`; the pod's own update is a ``TargetPod``
        event since 1.37, an ``UnschedulablePod`` one before). In flight: recorded for replay.
        In activeQ/backoffQ: updated in place. In unschedulablePods: each event in turn goes
        through the rejecting plugins' hints until one moves the pod to activeQ/backoffQ. Not
        queued: added (label ``UnscheduledPodAdd`` since 1.37, ``…Update`` before)."""
        key = pod_key(new)
        qpi = self._entries.get(key)
        if qpi is None:
            self._seq += 1
            qpi = QueuedPodInfo(PodInfo(new), timestamp=self.now(), seq=self._seq, pod_signature=self._sign(new))
            self._entries[key] = qpi
            self._move_to_active(qpi, self._ev_pod_add if self.features.at_least(1, 37) else self._ev_pod_update)
            return
        if new.spec is old.spec and new.metadata.labels is old.metadata.labels:
            qpi.pod_info.pod = new  # status-only change: the derived data stands
        else:
            qpi.pod_info.update(new)
        events = pod_update_events(old, new, target=True, features=self.features)
        if key in self._in_flight:
            # being scheduled: record the update, it is replayed through the hints if the pod
            # comes back rejected (upstream addEventsIfPodInFlight)
            for ev in events:
                self._record_in_flight(ev, old, new)
            return
        self._update_nominated(old, qpi.pod_info)
        qpi.pod_signature = self._sign(new)
        where = self._where.get(key)
        if where in (UNSCHEDULABLE, GATED):
            # QueueingHints decide whether the update may make the pod schedulable
            for ev in events:
                strategy = self._strategy(qpi, ev, old, new)
                if strategy == QUEUE_SKIP:
                    continue
                del self.unschedulable[key]
                del self._where[key]
                if self._requeue(qpi, strategy, event_label(ev, self.features)) in (ACTIVE, BACKOFF):
                    break
        elif where in (ACTIVE, BACKOFF) and pod_priority(old) != qpi.pod_info.priority:
            # the heaps order by priority (then timestamps, which an update keeps): re-sort in
            # place (upstream activeQ/backoffQ ``update``: no incoming-pods metric)
            self._remove_from_heaps(key)
            if where == ACTIVE:
                heapq.heappush(self._active, (self._sort_key(qpi), qpi.seq, qpi))
            else:
                heap = self._backoff if qpi.unschedulable_plugins or qpi.pending_plugins else self._error_backoff
                heapq.heappush(heap, (self.backoff_time(qpi), self._sort_key(qpi), qpi.seq, qpi))
            self._where[key] = where

    def delete(self, pod: Pod) -> None:
        """A pending pod was deleted or got assigned elsewhere: forget it everywhere."""
        key = pod_key(pod)
        self.delete_nominated_pod(key)
        self._in_flight.pop(key, None)
        if self._entries.pop(key, None) is None:
            return
        where = self._where.pop(key, None)
        if where in (UNSCHEDULABLE, GATED):
            self.unschedulable.pop(key, None)
        elif where in (ACTIVE, BACKOFF):
            self._remove_from_heaps(key)

    def _remove_from_heaps(self, key: str) -> None:
        self._active = [e for e in self._active if e[2].key != key]
        heapq.heapify(self._active)
        self._backoff = [e for e in self._backoff if e[3].key != key]
        heapq.heapify(self._backoff)
        self._error_backoff = [e for e in self._error_backoff if e[3].key != key]
        heapq.heapify(self._error_backoff)

    # ───────────────────────────── the scheduler's side ─────────────────────────────

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None. Moves completed backoffs first; takes the head of the
        rejection backoffQ when activeQ is empty (SchedulerPopFromBackoffQ; upstream ``popBackoff``
        never takes from the error backoffQ)."""
        self.flush_backoff_completed()
        if self._active:
            _, _, qpi = heapq.heappop(self._active)
        elif self._backoff:
            qpi = heapq.heappop(self._backoff)[3]
            self._count(ACTIVE, "PopFromBackoffQ")  # upstream activeQueue.pop (active_queue.go L349)
        else:
            return None
        del self._where[qpi.key]
        self._in_flight[qpi.key] = []
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.now()
        self.scheduling_cycle += 1
        return qpi

    def done(self, key: str, *, bound: bool = False) -> None:
        """The pod's scheduling attempt is over (upstream ``Done``); if it was bound it leaves
        the queue for good. ``bound``: the binding cycle succeeded — a pod the leftover flush had
        moved counts in :attr:`scheduled_after_flush` (schedule_one.go L490, 1.36+)."""
        qpi = self._entries.get(key)
        if bound and qpi is not None and qpi.was_flushed_from_unschedulable:
            self.scheduled_after_flush += 1
        self._in_flight.pop(key, None)
        self._entries.pop(key, None)
        self._where.pop(key, None)

    def done_in_flight(self, key: str) -> None:
        """Upstream ``Done`` called in the binding cycle once Permit has passed: the events
        recorded while the pod was in flight are freed (a PreBind/Bind failure after this point
        sends the pod to backoff whatever happened meanwhile); the pod's entry stays until
        :meth:`done` or :meth:`add_unschedulable_if_not_present`."""
        self._in_flight.pop(key, None)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """After a failed attempt (upstream ``AddUnschedulableIfNotPresent``). An error (no
        rejecting plugin) bumps ConsecutiveErrorsCount, a rejection bumps UnschedulableCount and
        resets it; then the events received while the pod was in flight decide, through the
        hints, between activeQ (a Pending plugin's hint said Queue), backoffQ/activeQ (Queue from
        another plugin, or an error) and unschedulablePods (every hint said Skip)."""
        events = self._in_flight.pop(qpi.key, None)
        if qpi.key not in self._entries or qpi.key in self._where:
            return
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            qpi.consecutive_errors_count += 1
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        qpi.timestamp = self.now()
        # upstream (1.36+): the pod is back after an attempt, so it no longer counts as flushed
        qpi.was_flushed_from_unschedulable = False
        qpi.flush_timestamp = None
        # no longer in flight (Done already called): upstream's clusterEventsForPod fails and
        # determineSchedulingHintForInFlightPod falls back to queueAfterBackoff
        strategy = QUEUE_AFTER_BACKOFF if events is None else self._strategy_for_in_flight(qpi, events)
        self._requeue(qpi, strategy, "ScheduleAttemptFailure")

    def _strategy_for_in_flight(self, qpi: QueuedPodInfo, events: list[tuple[ClusterEvent, Any, Any]]) -> int:
        """Upstream ``determineSchedulingHintForInFlightPod``."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP
        for event, old, new in events:
            s = self._strategy(qpi, event, old, new)
            if s == QUEUE_IMMEDIATELY:
                return s
            if s == QUEUE_AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return s
        return strategy

    def activate(self, keys: list[str]) -> None:
        """Move the given pods to activeQ now (upstream ``Activate``, podsToActivate)."""
        for key in keys:
            qpi = self._entries.get(key)
            where = self._where.get(key)
            if qpi is None or where == ACTIVE:
                continue
            if where is None:
                if key in self._in_flight:
                    # requeue it when it comes back (ForceActivate targets this pod only)
                    self._record_in_flight(EVENT_FORCE_ACTIVATE, None, qpi.pod)
                continue
            if where in (UNSCHEDULABLE, GATED):
                del self.unschedulable[key]
            else:
                self._remove_from_heaps(key)
            del self._where[key]
            self._move_to_active(qpi, EVENT_FORCE_ACTIVATE.label, from_backoff=where == BACKOFF)

    def register_events(self, name: str, events: list[ClusterEventWithHint]) -> None:
        """Register the cluster events that may make pods rejected by ``name`` schedulable (for
        rejectors that are not plugins: upstream's ``defaultEnqueueExtension`` for
        ``framework.ExtenderName``)."""
        self._events[name] = list(events)

    # ───────────────────────────── moving on events ─────────────────────────────

    def _strategy(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                  narrowed: dict[str, set[str]] | None = None) -> int:
        """Upstream ``isPodWorthRequeuing``: evaluate the hints of the plugins that rejected the pod
        (UnschedulablePlugins ∪ PendingPlugins). Queue from a Pending plugin → queueImmediately;
        Queue from another → queueAfterBackoff; a hint that raises counts as Queue; no hint said
        Queue → queueSkip. A wildcard event (UnschedulableTimeout, ForceActivate) queues after
        backoff, unless it targets another pod. ``narrowed`` (SchedulerPreQueueingHints): plugin →
        the pod keys its PreQueueingHint named; such a plugin's hint is skipped for other pods
        (scheduling_queue.go L632-640)."""
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return QUEUE_AFTER_BACKOFF
        if event.resource in _WILDCARD_RESOURCES:
            if new is not None and (not hasattr(new, "spec") or not hasattr(new, "metadata")
                                    or pod_key(new) != qpi.key):
                return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP
        for plugin, regs in self._events.items():
            if plugin not in rejectors:
                continue
            if narrowed is not None and plugin in narrowed and qpi.key not in narrowed[plugin]:
                continue
            for reg in regs:
                if not event.matches(reg.event):
                    continue
                if reg.hint is not None:
                    try:
                        hint = reg.hint(qpi.pod, old, new)
                    except Exception:  # noqa: BLE001 - upstream: an error counts as Queue
                        hint = QueueingHint.QUEUE
                    if hint == QueueingHint.SKIP:
                        continue
                if plugin in qpi.pending_plugins:
                    return QUEUE_IMMEDIATELY
                if not qpi.pending_plugins:
                    return QUEUE_AFTER_BACKOFF
                strategy = QUEUE_AFTER_BACKOFF
        return strategy

    def _requeue(self, qpi: QueuedPodInfo, strategy: int, event: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns where the pod went."""
        if strategy == QUEUE_SKIP:
            self._park(qpi, event, strategy)
            return self._where[qpi.key]
        if strategy == QUEUE_AFTER_BACKOFF and self.is_backing_off(qpi):
            self._move_to_backoff(qpi, event, strategy)
        else:
            self._move_to_active(qpi, event, strategy=strategy)
        return self._where[qpi.key]

    def _gating_plugin_interested(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Upstream: an event moves a gated pod only if its gating plugin registered for it."""
        return any(event.matches(reg.event) for reg in self._events.get(qpi.gating_plugin, ()))

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      pre_check: Callable[[Pod], bool] | None = None) -> int:
        """A cluster event happened (upstream ``MoveAllToActiveOrBackoffQueue``): requeue the
        unschedulable pods it may help. Returns how many left unschedulablePods."""
        self._record_in_flight(event, old, new)
        if not self.unschedulable:
            return 0
        narrowed = self._run_pre_queueing_hints(event, old, new)
        if narrowed is not None:
            # collectEntitiesToEvaluate's narrowed branch: only the named pods are evaluated (in
            # unschedulablePods' order; upstream's is a Go map's)
            candidates = set().union(*narrowed.values())
            return self._move_pods([q for key, q in self.unschedulable.items() if key in candidates
                                    and (pre_check is None or pre_check(q.pod))], event, old, new, narrowed)
        return self._move_pods([q for q in self.unschedulable.values()
                                if pre_check is None or pre_check(q.pod)], event, old, new)

    def _run_pre_queueing_hints(self, event: ClusterEvent, old: Any, new: Any) -> dict[str, set[str]] | None:
        """Upstream ``runPreQueueingHintPlugins`` (scheduling_queue.go L2276-2330, 1.37,
        SchedulerPreQueueingHints α; skipped with CompositePodGroup on, L1828-1830): once per event,
        each matching registration's PreQueueingHint names the pods worth evaluating. Returns
        plugin → pod keys, or None (no narrowing: gate off, both objects None, a wildcard event,
        no registration has a pre-hint, or any pre-hint answered AllPods or raised)."""
        if not self.features.enabled("SchedulerPreQueueingHints") or self.features.enabled("CompositePodGroup"):
            return None
        if (old is None and new is None) or event.resource in _WILDCARD_RESOURCES:
            return None
        per_plugin: dict[str, set[str]] = {}
        for plugin, regs in self._events.items():
            for reg in regs:
                if reg.pre_hint is None or not event.matches(reg.event):
                    continue
                try:
                    res = reg.pre_hint(old, new)
                except Exception:  # noqa: BLE001 - upstream: an error falls back to every pod
                    return None
                result = "all_pods" if res.all_pods else "narrowed"
                self.pre_queueing_hint_evaluations[(plugin, result)] = \
                    self.pre_queueing_hint_evaluations.get((plugin, result), 0) + 1
                if res.all_pods:
                    return None
                keys = {f"{ns}/{name}" if ns else name for ns, name in res.pods}
                per_plugin.setdefault(plugin, set()).update(keys)
        return per_plugin or None

    def _record_in_flight(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """Upstream ``inFlightEvents``: every pod in flight sees the events received after its Pop."""
        for events in self._in_flight.values():
            events.append((event, old, new))

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any,
                   narrowed: dict[str, set[str]] | None = None) -> int:
        """Upstream ``movePodsToActiveOrBackoffQueue``."""
        moved = 0
        for qpi in pods:
            if qpi.gated and not self._gating_plugin_interested(qpi, event):
                continue
            strategy = self._strategy(qpi, event, old, new, narrowed)
            if strategy == QUEUE_SKIP:
                continue
            del self.unschedulable[qpi.key]
            del self._where[qpi.key]
            if self._requeue(qpi, strategy, event_label(event, self.features)) not in (UNSCHEDULABLE, GATED):
                moved += 1
        return moved

    def flush_backoff_completed(self) -> None:
        """Both backoff heaps → activeQ for pods whose backoff ended (upstream
        ``flushBackoffQCompleted``, run at every 1 s window boundary)."""
        window = math.floor(self.now() / BACKOFF_WINDOW_S) * BACKOFF_WINDOW_S
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] < window:
                qpi = heapq.heappop(heap)[3]
                self._push_active(qpi, "BackoffComplete")

    def flush_unschedulable_leftover(self) -> int:
        """Requeue pods that stayed in unschedulablePods longer than the limit (upstream
        ``flushUnschedulableEntitiesLeftover``, scheduling_queue.go L1306, every 30 s) with the
        UnschedulableTimeout event. Since 1.36 the moved pods are marked
        ``was_flushed_from_unschedulable``; since 1.37 the limit is measured from the later of
        the pod's timestamp and its last flush (a pod flushed but gated again waits another full
        period instead of being flushed at every run)."""
        now = self.now()
        mark, since_flush = self.features.at_least(1, 36), self.features.at_least(1, 37)
        stale = []
        for q in self.unschedulable.values():
            if now - self._unschedulable_since(q) > self.max_in_unschedulable:
                if mark:
                    q.was_flushed_from_unschedulable = True
                if since_flush:
                    q.flush_timestamp = now
                stale.append(q)
        return self._move_pods(stale, EVENT_UNSCHEDULABLE_TIMEOUT, None, None) if stale else 0

    def _unschedulable_since(self, qpi: QueuedPodInfo) -> float:
        """Start of the leftover period: ``timestamp``, or the last flush if later (1.37+)."""
        ts = qpi.timestamp
        if qpi.flush_timestamp is not None and qpi.flush_timestamp > ts and self.features.at_least(1, 37):
            ts = qpi.flush_timestamp
        return ts

    def next_backoff_expiry(self) -> float | None:
        """When the earliest backoff completes: the start of the window after its expiry window."""
        heads = [h[0][0] for h in (self._backoff, self._error_backoff) if h]
        return min(heads) + BACKOFF_WINDOW_S if heads else None

    def next_unschedulable_timeout(self) -> float | None:
        """Earliest time an unschedulable pod that UnschedulableTimeout can move exceeds the leftover
        limit (a gated pod moves only if its gating plugin registered for every event)."""
        ts = [self._unschedulable_since(q) for q in self.unschedulable.values()
              if not q.gated or self._gating_plugin_interested(q, EVENT_UNSCHEDULABLE_TIMEOUT)]
        return min(ts) + self.max_in_unschedulable if ts else None

    # ───────────────────────────── nominator ─────────────────────────────
    # upstream nominator (backend/queue/nominator.go): pods nominated to a node by preemption
    # occupy it in the filters of pods with lower or equal priority.

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Record (or clear, with ``node_name=""``) the pod's nomination."""
        self.delete_nominated_pod(pod_info.key)
        if node_name:
            self._nominated.setdefault(node_name, {})[pod_info.key] = pod_info
            self._nominated_node[pod_info.key] = node_name

    def delete_nominated_pod(self, key: str) -> None:
        node = self._nominated_node.pop(key, None)
        if node is not None:
            pods = self._nominated.get(node)
            if pods is not None:
                pods.pop(key, None)
                if not pods:
                    del self._nominated[node]

    def _update_nominated(self, old: Pod, pod_info: PodInfo) -> None:
        """Upstream ``UpdateNominatedPod``: an update without nominatedNodeName keeps a nomination
        made in memory; otherwise the pod's status decides."""
        key = pod_info.key
        nnn = pod_info.pod.status.nominated_node_name
        if not old.status.nominated_node_name and not nnn and key in self._nominated_node:
            nnn = self._nominated_node[key]
        self.add_nominated_pod(pod_info, nnn)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._nominated.get(node_name)
        return list(pods.values()) if pods else []

    def has_nominated_pods(self) -> bool:
        return bool(self._nominated)

    def nominated_nodes(self) -> list[str]:
        """Names of the nodes that have nominated pods."""
        return list(self._nominated)

    def nominated_node(self, key: str) -> str | None:
        return self._nominated_node.get(key)
