"""The scheduling queue (upstream ``pkg/scheduler/backend/queue/scheduling_queue.go``; v1.37.2
for single pods, the 1.34–1.36 differences keyed by ``features``: event names and the pod's own
update as a ``TargetPod`` event, the implicit ``Node/UpdateNodeTaint`` registration before 1.37,
the leftover-flush bookkeeping of 1.36/1.37). With GenericWorkload, the members of a PodGroup
queue as one entity (:class:`~kubesched.queue.podgroups.QueuedPodGroupInfo`, upstream §2.9):
see "pod groups" below.

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

Pod groups (GenericWorkload on; upstream ``backend/queue/scheduling_queue.go`` v1.37.2): a
pod with ``spec.schedulingGroup`` never queues alone. Its PodGroup not observed yet → the
``incompletePodGroupPods`` pool; its group's entity queued → added to it (requeued where it
was); its group in flight (the last popped entity) → ``pendingPodGroupPods``, merged back by
:meth:`SchedulingQueue.add_attempted_pod_group`; else a new entity goes to activeQ. PreEnqueue
runs for every member (one gated member gates the entity), the entity backs off as a unit
(max backoff × √size), activating a member activates the entity, and a popped entity is one
scheduling cycle whose members are in flight one by one.

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
from collections.abc import Callable, Iterator, Sequence
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
from kubesched.framework.interface import EXTENSION_POINTS, Code, as_status, implements
from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.framework.podgroup import POD_GROUP_KEY_TYPE, entity_key
from kubesched.queue.podgroups import QueuedPodGroupInfo
from kubesched.queue.unschedulable import UnschedulableEntities

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework

__all__ = ["Entity", "SchedulingQueue"]

Entity = QueuedPodInfo | QueuedPodGroupInfo
"""A queued entity (upstream ``QueuedEntityInfo``): a pod, or a pod group (GenericWorkload)."""

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED = "active", "backoff", "unschedulable", "gated"
INCOMPLETE, PENDING = "incomplete", "pending"
"""Upstream ``pending_pods{queue}`` labels of the two pod-group pools (GenericWorkload)."""
BACKOFF_WINDOW_S = 1.0
QUEUE_SKIP, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = 0, 1, 2
"""Upstream ``queueingStrategy``: leave in unschedulablePods / backoffQ (or activeQ when the
backoff is over) / activeQ."""
_STRATEGY_QUEUE = {QUEUE_SKIP: UNSCHEDULABLE, QUEUE_AFTER_BACKOFF: BACKOFF, QUEUE_IMMEDIATELY: ACTIVE}
"""Upstream ``strategyToQueueLabel``."""
_ENQUEUE_EXTENSION_POINTS = tuple(ep for ep in EXTENSION_POINTS
                                  if ep.config_name in ("pre_enqueue", "pre_filter", "filter", "reserve", "permit"))
"""Upstream ``shouldHaveEnqueueExtensions`` (pkg/scheduler/framework/runtime/framework.go): the
extension points whose plugins register cluster events; a Score-, Bind- or QueueSort-only plugin
registers none (so it does not make every event "of interest")."""
_WILDCARD_RESOURCES = (EventResource.WILDCARD, EventResource.UNSCHEDULABLE_TIMEOUT, EventResource.FORCE_ACTIVATE)

_Hints = tuple[tuple[Any, bool], ...]
_Plan = dict[str, _Hints]
"""What one kind of event asks of the queue: plugin → its registrations' hints that match the
event, as ``(hint or None, takes_pod_info)`` in registration order; the plugins (keys) in
:attr:`SchedulingQueue._events` order."""


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
        self._active: list[tuple[Any, int, Entity]] = []
        self._backoff: list[tuple[float, Any, int, Entity]] = []
        """``podBackoffQ``: pods rejected by plugins (the only backoff heap ``pop()`` takes from)."""
        self._error_backoff: list[tuple[float, Any, int, Entity]] = []
        """``podErrorBackoffQ``: pods whose last attempt failed with an error."""
        self.unschedulable = UnschedulableEntities()
        """Upstream ``unschedulableEntities``: key → entity, with gated ones (``where`` = gated),
        indexed by the plugins whose events can move them (:mod:`kubesched.queue.unschedulable`)."""
        self._v137 = self.features.at_least(1, 37)
        self._plans: dict[ClusterEvent, _Plan] = {}
        """event → :data:`_Plan`, computed once per kind of event (cleared by :meth:`register_events`)."""
        self._where: dict[str, str] = {}
        self._entries: dict[str, Any] = {}
        """key → the queued entity: a :class:`QueuedPodInfo` (pods, in the queue or in flight) or a
        :class:`QueuedPodGroupInfo` (pod groups, while queued)."""
        self._seq = 0
        self.scheduling_cycle = 0
        self._events: dict[str, list[ClusterEventWithHint]] = {}
        wildcard = [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*"))]
        for fw in frameworks.values():
            for pl in fw.plugins.values():
                if pl.name in self._events or not any(implements(pl, ep) for ep in _ENQUEUE_EXTENSION_POINTS):
                    # upstream fillEnqueueExtensions (framework.go): only PreEnqueue, PreFilter,
                    # Filter, Reserve and Permit plugins register events (others never reject a pod)
                    continue
                reg = getattr(pl, "events_to_register", None)
                # upstream: a plugin without EnqueueExtensions is registered for every event
                self._events[pl.name] = self._hint_registrations(list(reg())) if callable(reg) else wildcard
        self._in_flight: dict[str, int] = {}
        """pod key → where its events start in :attr:`_in_flight_events` (an absolute index; keys in
        Pop order, so the first is the oldest). Upstream ``inFlightPods``."""
        self._in_flight_events: list[tuple[ClusterEvent, Any, Any]] = []
        """Cluster events received while any pod was being scheduled (upstream ``inFlightEvents``):
        one shared log, each pod sees the events from its Pop on, replayed against its hints when
        it fails. Recording is O(1) per event whatever the number of pods in flight (a pod group
        puts all its members in flight at once)."""
        self._in_flight_base = 0
        """Absolute index of ``_in_flight_events[0]`` (events no pod in flight can see are dropped)."""
        self._force_activated: dict[str, int] = {}
        """pod key → absolute index of the last ForceActivate recorded for it (see
        :meth:`_record_force_activate`)."""
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
        # ───── pod groups (GenericWorkload) ─────
        self._gw = self.features.enabled("GenericWorkload")
        self._pod_groups: dict[tuple[str, str], dict[str, Any]] = {}
        """Observed PodGroup objects (upstream ``workloadForest``), by (namespace, name)."""
        self._incomplete: dict[str, QueuedPodInfo] = {}
        """Upstream ``incompletePodGroupPods``: members whose PodGroup is not observed yet."""
        self._pending_members: dict[str, dict[str, QueuedPodInfo]] = {}
        """Upstream ``pendingPodGroupPods``: group key → members added while the group was in flight."""
        self._member_group: dict[str, str] = {}
        """pod key → group entity key, for members queued in an entity, pending or in flight."""
        self._last_popped: str | None = None
        self._tree_in_flight: set[str] = set()
        """Entity keys of the sibling PodGroups taken with :meth:`take_pod_group_entity` for a
        CompositePodGroup's tree-wide cycle (in flight like the popped one)."""
        """Upstream ``lastPoppedEntityKey``."""

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
        if not self._gw:
            return len(self._entries)
        return (sum(e.size() if isinstance(e, QueuedPodGroupInfo) else 1 for e in self._entries.values())
                + len(self._incomplete) + sum(len(p) for p in self._pending_members.values()))

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def where(self, key: str) -> str | None:
        """Which sub-queue holds the pod: ``active``, ``backoff``, ``unschedulable``, ``gated``."""
        return self._where.get(key)

    def counts(self) -> dict[str, int]:
        """Upstream ``pending_pods{queue=...}``."""
        out = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
        if not self._gw:
            for w in self._where.values():
                out[w] += 1
            return out
        for key, w in self._where.items():
            e = self._entries[key]
            out[w] += e.size() if isinstance(e, QueuedPodGroupInfo) else 1
        out[INCOMPLETE] = len(self._incomplete)
        out[PENDING] = sum(len(p) for p in self._pending_members.values())
        return out

    def entity_counts(self) -> dict[tuple[str, str], int]:
        """Upstream ``queued_entities{queue, type}`` (1.37): entities per sub-queue, a pod group
        counting once as ``podgroup`` and a pod outside any group as ``pod``."""
        out = {(q, t): 0 for q in (ACTIVE, BACKOFF, UNSCHEDULABLE, GATED) for t in ("pod", "podgroup")}
        for key, w in self._where.items():
            t = "podgroup" if isinstance(self._entries[key], QueuedPodGroupInfo) else "pod"
            out[(w, t)] += 1
        return out

    def has_schedulable(self) -> bool:
        """Whether ``pop()`` would return a pod: activeQ (after moving completed backoffs) or the
        rejection backoffQ is non-empty. Pods in the error backoffQ wait for their backoff."""
        self.flush_backoff_completed()
        return bool(self._active) or bool(self._backoff)

    def pending(self) -> Iterator[QueuedPodInfo]:
        """Every pending pod's :class:`QueuedPodInfo` (a group entity's members one by one)."""
        if not self._gw:
            return iter(self._entries.values())
        return self._pending_pods()

    def _pending_pods(self) -> Iterator[QueuedPodInfo]:
        for e in list(self._entries.values()):
            if isinstance(e, QueuedPodGroupInfo):
                yield from e.members
            else:
                yield e
        yield from list(self._incomplete.values())
        for p in list(self._pending_members.values()):
            yield from p.values()

    def _count(self, queue: str, event: str, strategy: int | None = None) -> None:
        """Upstream ``recordIncomingEntitiesMetrics`` (scheduling_queue.go L2226): every arrival
        counts in ``queue_incoming_pods_total``; ``queue_incoming_entities_total`` (1.37) only
        when the pod is new (no ``strategy``) or lands in another queue than ``strategy`` names."""
        k = (queue, event)
        self.incoming[k] = self.incoming.get(k, 0) + 1
        if strategy is None or _STRATEGY_QUEUE[strategy] != queue:
            self.incoming_entities[k] = self.incoming_entities.get(k, 0) + 1

    def _push_active(self, qpi: Entity, event: str, strategy: int | None = None) -> None:
        heapq.heappush(self._active, (self._sort_key(qpi), qpi.seq, qpi))
        self._where[qpi.key] = ACTIVE
        self._count(ACTIVE, event, strategy)

    def _push_backoff(self, qpi: Entity, event: str, strategy: int | None = None) -> None:
        heap = self._backoff if qpi.unschedulable_plugins or qpi.pending_plugins else self._error_backoff
        heapq.heappush(heap, (self.backoff_time(qpi), self._sort_key(qpi), qpi.seq, qpi))
        self._where[qpi.key] = BACKOFF
        self._count(BACKOFF, event, strategy)

    def _park(self, qpi: Entity, event: str, strategy: int | None = None) -> None:
        self.unschedulable[qpi.key] = qpi
        self._where[qpi.key] = GATED if qpi.gated else UNSCHEDULABLE
        self._count(UNSCHEDULABLE, event, strategy)

    # ───────────────────────────── backoff ─────────────────────────────

    def backoff_duration(self, qpi: Any) -> float:
        """Upstream ``calculateBackoffDuration`` (backoff_queue.go L249-266): a pod group's max
        backoff is multiplied by √(its size)."""
        count = qpi.consecutive_errors_count or qpi.unschedulable_count
        if count <= 0:
            return 0.0
        d = self.initial_backoff * 2.0 ** min(count - 1, 1000)  # float: no overflow, like upstream's shift check
        max_backoff = self.max_backoff
        if isinstance(qpi, QueuedPodGroupInfo) and qpi.size() > 1:
            max_backoff *= math.sqrt(qpi.size())
        backoff: float = min(d, max_backoff)
        return backoff

    def backoff_time(self, qpi: Entity) -> float:
        """Upstream ``getBackoffTime``: ``timestamp + backoff_duration`` truncated to its 1 s
        ordering window (v1.33+ ``alignToWindow``); ``-inf`` for a pod that never failed."""
        if isinstance(qpi, QueuedPodGroupInfo) and qpi.backoff_expiration is not None:
            return qpi.backoff_expiration
        d = self.backoff_duration(qpi)
        if d == 0:
            return -math.inf
        t = math.floor((qpi.timestamp + d) / BACKOFF_WINDOW_S) * BACKOFF_WINDOW_S
        if isinstance(qpi, QueuedPodGroupInfo):
            qpi.backoff_expiration = t  # upstream SetBackoffExpiration: computed once per failure
        return t

    def is_backing_off(self, qpi: Entity) -> bool:
        """Upstream ``isPodBackingoff``: the pod's backoff window is not before the current window
        (so a pod whose expiry is in the current window is still backing off)."""
        return self.backoff_time(qpi) >= math.floor(self.now() / BACKOFF_WINDOW_S) * BACKOFF_WINDOW_S

    # ───────────────────────────── informer events for pending pods ─────────────────────────────

    def add(self, pod: Pod) -> QueuedPodInfo:
        """A new pending pod (upstream ``Add``): PreEnqueue, then activeQ or gated."""
        self._seq += 1
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self.now(), seq=self._seq, pod_signature=self._sign(pod))
        if self._gw and self.is_pod_group_member(pod):
            # upstream addPod: the nominator first, then addPodGroupMember
            self.add_nominated_pod(qpi.pod_info, pod.status.nominated_node_name)
            self._add_group_member(qpi)
            return qpi
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

    def _run_pre_enqueue(self, qpi: Any) -> None:
        """Upstream ``runPreEnqueuePlugins``: a rejecting plugin gates the pod and is added to its
        UnschedulablePlugins (so that its events can ungate it); all passing ungates it. For a
        pod group every member runs them; any gated member gates the entity (its gating plugin
        is copied, scheduling_queue.go L707-729)."""
        if isinstance(qpi, QueuedPodGroupInfo):
            gated_member = None
            for m in qpi.members:
                self._run_pre_enqueue(m)
                if m.gated:
                    gated_member = m
            qpi.gated = gated_member is not None
            qpi.gating_plugin = gated_member.gating_plugin if gated_member is not None else ""
        else:
            self._run_pre_enqueue_for_pod(qpi)
        if qpi.key in self.unschedulable:  # gate or rejectors changed in place: keep the index true
            self.unschedulable.reindex(qpi.key)

    def _run_pre_enqueue_for_pod(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePluginsForPod`` (scheduling_queue.go L731-763): the plugin that
        gated the pod last time runs first and, still gating, ends the run; then the profile's
        PreEnqueue plugins in order (that one skipped), the first that does not pass ends it — so
        the reported gating plugin (and the events that can ungate the pod) stays the one already
        gating while it still does. A gating plugin (an exception reads as an Error status, which
        gates too) is recorded as ``gating_plugin`` and added to ``unschedulable_plugins``; all
        passing ungate the pod."""
        pod = qpi.pod
        fw = self._framework(pod)
        plugins = (getattr(fw, "pre_enqueue_plugins", None) or ()) if fw is not None else ()
        gating = qpi.gating_plugin
        first = None
        if gating:
            for pl in plugins:
                if pl.name == gating:
                    first = pl
                    break
            # a gang member stays gated by the same plugin until its group is complete: that
            # plugin alone runs (upstream returns after it too)
            if first is not None and self._gates(qpi, first, pod):
                return
        for pl in plugins:
            if pl is not first and self._gates(qpi, pl, pod):
                return
        qpi.gated = False
        qpi.gating_plugin = ""

    @staticmethod
    def _gates(qpi: QueuedPodInfo, pl: Any, pod: Pod) -> bool:
        """Run one PreEnqueue plugin for ``qpi``; a status other than Success gates the pod (see
        :meth:`_run_pre_enqueue_for_pod`). True when gated."""
        try:
            st = pl.pre_enqueue(pod)
        except Exception as e:  # noqa: BLE001 - a plugin error is a status, not a crash
            st = as_status(e)
        if st is None or st.code == Code.SUCCESS:
            return False
        name = pl.name
        qpi.gated = True
        qpi.gating_plugin = name
        if name not in qpi.unschedulable_plugins:
            qpi.unschedulable_plugins = qpi.unschedulable_plugins | {name}
        return True

    def _move_to_active(self, qpi: Entity, event: str, *, from_backoff: bool = False,
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
        if event in (self._ev_pod_add, self._ev_pod_update) and not isinstance(qpi, QueuedPodGroupInfo):
            # upstream AddNominatedPod(pInfo, nil): the pod's own status.nominatedNodeName
            self.add_nominated_pod(qpi.pod_info, qpi.pod.status.nominated_node_name)
        return True

    def _clear_flush_if_gated(self, qpi: Entity) -> None:
        """1.37 ``moveToActiveQ``/``moveToBackoffQ`` (scheduling_queue.go L825, L858): a flushed pod
        that is gated again never attempts scheduling, so its flush mark is cleared here."""
        if self.features.at_least(1, 37):
            qpi.was_flushed_from_unschedulable = False

    def _move_to_backoff(self, qpi: Entity, event: str, strategy: int | None = None) -> bool:
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
        if self._gw and (key in self._member_group or key in self._incomplete):
            if self._update_group_member(key, old, new):
                return
        qpi = self._entries.get(key)
        if qpi is None:
            if self._gw and self.is_pod_group_member(new):
                self.add(new)  # upstream Update → addPod → addPodGroupMember
                return
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
        self._leave_flight(key)
        if self._gw and (key in self._member_group or key in self._incomplete):
            self._delete_group_member(key)
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
        self._last_popped = qpi.key
        if isinstance(qpi, QueuedPodGroupInfo):
            # upstream unlockedMoveEntityToInFlight: every member is in flight; one cycle
            del self._entries[qpi.key]
            qpi.inc_attempts(self.now())
            for m in qpi.members:
                self._entries[m.key] = m
                self._enter_flight(m.key)
            self.scheduling_cycle += 1
            return qpi  # type: ignore[return-value]  # the caller dispatches on the type
        self._enter_flight(qpi.key)
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
        self._leave_flight(key)
        self._entries.pop(key, None)
        self._where.pop(key, None)
        if self._gw:
            self._member_group.pop(key, None)

    def done_in_flight(self, key: str) -> None:
        """Upstream ``Done`` called in the binding cycle once Permit has passed: the events
        recorded while the pod was in flight are freed (a PreBind/Bind failure after this point
        sends the pod to backoff whatever happened meanwhile); the pod's entry stays until
        :meth:`done` or :meth:`add_unschedulable_if_not_present`."""
        self._leave_flight(key)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """After a failed attempt (upstream ``AddUnschedulableIfNotPresent``). An error (no
        rejecting plugin) bumps ConsecutiveErrorsCount, a rejection bumps UnschedulableCount and
        resets it; then the events received while the pod was in flight decide, through the
        hints, between activeQ (a Pending plugin's hint said Queue), backoffQ/activeQ (Queue from
        another plugin, or an error) and unschedulablePods (every hint said Skip)."""
        events = self._leave_flight(qpi.key, events=True)
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
        if self._gw and self.is_pod_group_member(qpi.pod):
            # upstream L1106-1114: Done, then addUnschedulablePodGroupMember → addPodGroupMember
            self.done(qpi.key)
            self._add_group_member(qpi)
            return
        # no longer in flight (Done already called): upstream's clusterEventsForPod fails and
        # determineSchedulingHintForInFlightPod falls back to queueAfterBackoff
        strategy = QUEUE_AFTER_BACKOFF if events is None else self._strategy_for_in_flight(qpi, events)
        self._requeue(qpi, strategy, "ScheduleAttemptFailure")

    def _strategy_for_in_flight(self, qpi: QueuedPodInfo,
                                events: Sequence[tuple[ClusterEvent, Any, Any]]) -> int:
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
            gk = self._member_group.get(key) if self._gw else None
            if gk is not None:
                # upstream Activate (L970-1000): a member activates its whole group entity
                where = self._where.get(gk)
                if where in (UNSCHEDULABLE, GATED, BACKOFF):
                    entity = self._entries[gk]
                    if where == BACKOFF:
                        self._remove_from_heaps(gk)
                    else:
                        del self.unschedulable[gk]
                    del self._where[gk]
                    self._move_to_active(entity, EVENT_FORCE_ACTIVATE.label, from_backoff=where == BACKOFF)
                elif where is None and key in self._in_flight:
                    self._record_force_activate(key)
                continue
            qpi = self._entries.get(key)
            where = self._where.get(key)
            if qpi is None or where == ACTIVE:
                continue
            if where is None:
                if key in self._in_flight:
                    # requeue it when it comes back (ForceActivate targets this pod only)
                    self._record_force_activate(key)
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
        self._plans.clear()

    def _plan(self, event: ClusterEvent) -> _Plan:
        """The plugins interested in ``event`` and their matching hints (see :data:`_Plan`): what
        upstream's ``isEventOfInterest``, ``GatingPluginEvents`` and ``isPodWorthRequeuing`` match
        per entity, matched once per kind of event."""
        plan = self._plans.get(event)
        if plan is None:
            plan = {}
            for plugin, regs in self._events.items():
                hints = tuple((reg.hint, bool(getattr(reg.hint, "takes_pod_info", False)))
                              for reg in regs if event.matches(reg.event))
                if hints:
                    plan[plugin] = hints
            self._plans[event] = plan
        return plan

    # ───────────────────────────── moving on events ─────────────────────────────

    def _strategy(self, qpi: Entity, event: ClusterEvent, old: Any, new: Any,
                  narrowed: dict[str, set[str]] | None = None, plan: _Plan | None = None) -> int:
        """Upstream ``isPodWorthRequeuing``: evaluate the hints of the plugins that rejected the pod
        (UnschedulablePlugins ∪ PendingPlugins). Queue from a Pending plugin → queueImmediately;
        Queue from another → queueAfterBackoff; a hint that raises counts as Queue; no hint said
        Queue → queueSkip. A wildcard event (UnschedulableTimeout, ForceActivate) queues after
        backoff, unless it targets another pod. ``narrowed`` (SchedulerPreQueueingHints): plugin →
        the pod keys its PreQueueingHint named; such a plugin's hint is skipped for other pods
        (scheduling_queue.go L632-640). ``plan``: the event's :meth:`_plan`, if the caller has it.
        A hint marked ``takes_pod_info`` (:func:`~kubesched.framework.events.pod_info_hint`) is
        given the queued pod's :class:`PodInfo` (its parsed terms cached in ``extra``), any other
        the pod, as upstream."""
        if isinstance(qpi, QueuedPodGroupInfo):
            # upstream isEntityWorthRequeuing (L563-585): the best strategy over the members. Only
            # a member with PendingPlugins can answer queueImmediately: without one, the first
            # queueAfterBackoff is already the best (same answer, one hint per member fewer)
            best = QUEUE_SKIP
            top = QUEUE_IMMEDIATELY if any(m.pending_plugins for m in qpi.members) else QUEUE_AFTER_BACKOFF
            for m in qpi.members:
                best = max(best, self._strategy(m, event, old, new, narrowed, plan))
                if best >= top:
                    break
            return best
        unsched, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if not unsched and not pending:
            return QUEUE_AFTER_BACKOFF
        if event.resource in _WILDCARD_RESOURCES:
            if new is not None and (not hasattr(new, "spec") or not hasattr(new, "metadata")
                                    or pod_key(new) != qpi.key):
                return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        if plan is None:
            plan = self._plan(event)
        if not pending and len(unsched) == 1:
            # the common case, one rejecting plugin: its hints only (same calls, same answer)
            for plugin in unsched:
                hints = plan.get(plugin)
                if hints is None or (narrowed is not None and plugin in narrowed
                                     and qpi.key not in narrowed[plugin]):
                    return QUEUE_SKIP
                for hint, takes_pod_info in hints:
                    if hint is None:
                        return QUEUE_AFTER_BACKOFF
                    try:
                        answer = hint(qpi.pod_info if takes_pod_info else qpi.pod, old, new)
                    except Exception:  # noqa: BLE001 - upstream: an error counts as Queue
                        return QUEUE_AFTER_BACKOFF
                    if answer != QueueingHint.SKIP:
                        return QUEUE_AFTER_BACKOFF
            return QUEUE_SKIP
        strategy = QUEUE_SKIP
        for plugin, hints in plan.items():
            if plugin not in unsched and plugin not in pending:
                continue
            if narrowed is not None and plugin in narrowed and qpi.key not in narrowed[plugin]:
                continue
            for hint, takes_pod_info in hints:
                if hint is not None:
                    try:
                        answer = hint(qpi.pod_info if takes_pod_info else qpi.pod, old, new)
                    except Exception:  # noqa: BLE001 - upstream: an error counts as Queue
                        answer = QueueingHint.QUEUE
                    if answer == QueueingHint.SKIP:
                        continue
                if plugin in pending:
                    return QUEUE_IMMEDIATELY
                if not pending:
                    return QUEUE_AFTER_BACKOFF
                strategy = QUEUE_AFTER_BACKOFF
        return strategy

    def _requeue(self, qpi: Entity, strategy: int, event: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns where the pod went."""
        if strategy == QUEUE_SKIP:
            self._park(qpi, event, strategy)
            return self._where[qpi.key]
        if strategy == QUEUE_AFTER_BACKOFF and self.is_backing_off(qpi):
            self._move_to_backoff(qpi, event, strategy)
        else:
            self._move_to_active(qpi, event, strategy=strategy)
        return self._where[qpi.key]

    def _gating_plugin_interested(self, qpi: Entity, event: ClusterEvent) -> bool:
        """Upstream (scheduling_queue.go L1927-1933): an event moves a gated entity only if its
        gating plugin registered for it, or (1.37+) if it is a wildcard event (UnschedulableTimeout,
        ForceActivate), which re-runs PreEnqueue on every gated entity."""
        if self._v137 and event.resource in _WILDCARD_RESOURCES:
            return True
        return qpi.gating_plugin in self._plan(event)

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      pre_check: Callable[[Pod], bool] | None = None) -> int:
        """A cluster event happened (upstream ``MoveAllToActiveOrBackoffQueue``): requeue the
        unschedulable pods it may help. Returns how many left unschedulablePods."""
        self._record_in_flight(event, old, new)
        if not self.unschedulable:
            return 0
        wildcard = event.resource in _WILDCARD_RESOURCES
        interested = self._plan(event)
        if not interested and not wildcard:
            return 0  # upstream isEventOfInterest: no plugin registered for the event
        narrowed = self._run_pre_queueing_hints(event, old, new)
        if narrowed is not None:
            # collectEntitiesToEvaluate's narrowed branch: only the named pods are evaluated (in
            # unschedulablePods' order; upstream's is a Go map's)
            pods = self.unschedulable.in_order(set().union(*narrowed.values()))
        elif wildcard:
            pods = list(self.unschedulable.values())
        else:
            # every entity whose rejecting (or gating) plugin registered for the event: the
            # others would all answer Skip without running a hint (module unschedulable.py)
            pods = self.unschedulable.candidates(interested)
        if pre_check is not None:
            pods = [q for q in pods if _passes(pre_check, q)]
        return self._move_pods(pods, event, old, new, narrowed)

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
        """Upstream ``inFlightEvents``: every pod in flight sees the events received after its Pop
        (kept only while some pod is in flight, as upstream ``addEventsIfAnyInFlight``)."""
        if self._in_flight:
            self._in_flight_events.append((event, old, new))

    def _record_force_activate(self, key: str) -> None:
        """Upstream ``addEventsIfPodInFlight(nil, pod, EventForceActivate)`` for the in-flight pod
        ``key``; not recorded again while every pod in flight already sees an earlier
        ForceActivate for it. That leaves every decision as it was: a pod's requeue strategy
        (:meth:`_strategy_for_in_flight`) is the strongest over the events it saw, and a
        ForceActivate's answer depends only on the pod it names. It keeps GangScheduling's Permit,
        which activates every unscheduled member of a gang whose members are all in flight, from
        logging members² events per cycle."""
        at = self._force_activated.get(key)
        if at is not None and at >= next(reversed(self._in_flight.values())):
            return
        self._force_activated[key] = self._in_flight_base + len(self._in_flight_events)
        self._record_in_flight(EVENT_FORCE_ACTIVATE, None, self._entries[key].pod)

    def _enter_flight(self, key: str) -> None:
        """The pod was popped: it sees the events recorded from now on."""
        self._in_flight.pop(key, None)  # re-inserted last: the dict stays in Pop order
        self._in_flight[key] = self._in_flight_base + len(self._in_flight_events)

    def _leave_flight(self, key: str, *, events: bool = False) -> list[tuple[ClusterEvent, Any, Any]] | None:
        """The pod is no longer in flight; with ``events``, return the events it saw (None if it
        was not in flight). Events no pod in flight can see any more are dropped (upstream
        ``Done``)."""
        start = self._in_flight.pop(key, None)
        if start is None:
            return None
        log = self._in_flight_events
        seen = log[start - self._in_flight_base:] if events else None
        if not self._in_flight:
            self._in_flight_base += len(log)
            log.clear()
            self._force_activated.clear()
        else:
            drop = next(iter(self._in_flight.values())) - self._in_flight_base
            if drop > 256 and 2 * drop >= len(log):  # amortised: trim once the dead prefix is half the log
                del log[:drop]
                self._in_flight_base += drop
        return seen

    def _move_pods(self, pods: list[Entity], event: ClusterEvent, old: Any, new: Any,
                   narrowed: dict[str, set[str]] | None = None) -> int:
        """Upstream ``moveEntitiesToActiveOrBackoffQueue`` (scheduling_queue.go L1919-1961)."""
        interested = self._plan(event)
        all_gated = self._v137 and event.resource in _WILDCARD_RESOURCES
        label = event_label(event, self.features)
        unschedulable, where = self.unschedulable, self._where
        moved = 0
        for qpi in pods:
            if qpi.gated and not all_gated and qpi.gating_plugin not in interested:
                continue
            strategy = self._strategy(qpi, event, old, new, narrowed, interested)
            if strategy == QUEUE_SKIP:
                continue
            del unschedulable[qpi.key]
            del where[qpi.key]
            if self._requeue(qpi, strategy, label) not in (UNSCHEDULABLE, GATED):
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

    def _unschedulable_since(self, qpi: Entity) -> float:
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
        limit (before 1.37 a gated pod moves only if its gating plugin registered for every event)."""
        ts = [self._unschedulable_since(q) for q in self.unschedulable.values()
              if not q.gated or self._gating_plugin_interested(q, EVENT_UNSCHEDULABLE_TIMEOUT)]
        return min(ts) + self.max_in_unschedulable if ts else None

    # ───────────────────────────── pod groups (GenericWorkload) ─────────────────────────────

    def is_pod_group_member(self, pod: Pod) -> bool:
        """Upstream ``isPodGroupMember``: GenericWorkload on and ``spec.schedulingGroup`` set (an
        assigned pod — a deferred resize — is queued alone)."""
        return self._gw and pod.spec.scheduling_group is not None and not pod.spec.node_name

    @staticmethod
    def _group_ref(pod: Pod) -> tuple[str, str]:
        sg = pod.spec.scheduling_group
        return (pod.metadata.namespace or "", (sg.pod_group_name if sg is not None else None) or "")

    def pod_group_entity(self, namespace: str, name: str) -> QueuedPodGroupInfo | None:
        """The queued entity of a PodGroup (activeQ, backoffQ or gated), or None."""
        e = self._entries.get(entity_key(POD_GROUP_KEY_TYPE, namespace, name))
        return e if isinstance(e, QueuedPodGroupInfo) else None

    def _group_in_flight(self, gk: str) -> bool:
        """A group entity is in flight: the last popped one, or taken for a tree-wide cycle."""
        return self._last_popped == gk or gk in self._tree_in_flight

    def take_pod_group_entity(self, namespace: str, name: str) -> QueuedPodGroupInfo | None:
        """CompositePodGroup's tree-wide cycle: take a sibling PodGroup's queued entity (activeQ,
        backoffQ or unschedulable; not a gated one) into flight, as :meth:`pop` does for the
        popped one, so that the root's whole tree is one scheduling cycle (upstream v1.37.2 keeps
        one entity per root in ``backend/queue/workload_forest.go``; here the leaves keep their own
        entities and are gathered at pop). Returns None when the group has no such entity. Every
        taken entity goes back through :meth:`add_attempted_pod_group`."""
        gk = entity_key(POD_GROUP_KEY_TYPE, namespace, name)
        entity = self._entries.get(gk)
        where = self._where.get(gk)
        if not isinstance(entity, QueuedPodGroupInfo) or where not in (ACTIVE, BACKOFF, UNSCHEDULABLE):
            return None
        if where == UNSCHEDULABLE:
            self.unschedulable.pop(gk, None)
        else:
            self._remove_from_heaps(gk)
        del self._where[gk]
        del self._entries[gk]
        self._tree_in_flight.add(gk)
        entity.inc_attempts(self.now())
        for m in entity.members:
            self._entries[m.key] = m
            self._enter_flight(m.key)
        return entity

    def _add_group_member(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``addPodGroupMember`` (scheduling_queue.go L900-931)."""
        ref = self._group_ref(qpi.pod)
        pg = self._pod_groups.get(ref)
        key = qpi.key
        if pg is None:
            self._incomplete[key] = qpi
            self._member_group.pop(key, None)
            return
        gk = entity_key(POD_GROUP_KEY_TYPE, *ref)
        self._member_group[key] = gk
        entity = self._entries.get(gk)
        if isinstance(entity, QueuedPodGroupInfo):
            # addToPodGroupIfExists: taken out of its queue, the pod added, requeued the same way
            where = self._where.pop(gk, None)
            if where in (UNSCHEDULABLE, GATED):
                del self.unschedulable[gk]
                strategy = QUEUE_SKIP
            elif where == BACKOFF:
                self._remove_from_heaps(gk)
                strategy = QUEUE_AFTER_BACKOFF
            else:
                self._remove_from_heaps(gk)
                strategy = QUEUE_IMMEDIATELY
            entity.add(qpi)
            self._requeue_entity(entity, strategy, self._ev_pod_add)
            return
        if self._group_in_flight(gk):
            self._pending_members.setdefault(gk, {})[key] = qpi
            return
        self._seq += 1
        entity = QueuedPodGroupInfo(ref[0], ref[1], pg, timestamp=self.now(), seq=self._seq)
        entity.add(qpi)
        self._entries[gk] = entity
        self._move_to_active(entity, self._ev_pod_add)

    def _requeue_entity(self, entity: QueuedPodGroupInfo, strategy: int, event: str) -> str:
        """Upstream ``requeueEntityWithQueueingStrategy`` (L1894-1917): unschedulable → the
        unschedulable pool, backoff → backoffQ if backing off, else activeQ."""
        if strategy == QUEUE_SKIP:
            self._park(entity, event, strategy)
            return self._where[entity.key]
        return self._requeue(entity, strategy, event)

    def _update_group_member(self, key: str, old: Pod, new: Pod) -> bool:
        """Upstream ``Update`` for a pod group member: the pod is updated inside its entity (or
        pool); a gated entity re-runs PreEnqueue and the hints of the update. False when the
        member is in flight (handled as a plain pod's in-flight update)."""
        qpi = self._incomplete.get(key)
        if qpi is not None:
            qpi.pod_info.update(new)
            return True
        gk = self._member_group.get(key)
        if gk is None:
            return False
        pend = self._pending_members.get(gk)
        if pend is not None and key in pend:
            pend[key].pod_info.update(new)
            return True
        entity = self._entries.get(gk)
        if not isinstance(entity, QueuedPodGroupInfo):
            return False  # in flight
        m = entity.get(key)
        if m is None:
            return False
        m.pod_info.update(new)
        self._update_nominated(old, m.pod_info)
        if self._where.get(gk) in (UNSCHEDULABLE, GATED):
            for ev in pod_update_events(old, new, target=True, features=self.features):
                strategy = self._strategy(entity, ev, old, new)
                if strategy == QUEUE_SKIP:
                    continue
                del self.unschedulable[gk]
                del self._where[gk]
                if self._requeue(entity, strategy, event_label(ev, self.features)) in (ACTIVE, BACKOFF):
                    break
        return True

    def _delete_group_member(self, key: str) -> None:
        """Upstream ``deletePodGroupMember`` (L1485-1534): the pod leaves its entity (an emptied
        entity leaves the queue) or its pool."""
        if self._incomplete.pop(key, None) is not None:
            return
        gk = self._member_group.pop(key, None)
        if gk is None:
            return
        pend = self._pending_members.get(gk)
        if pend is not None and pend.pop(key, None) is not None:
            if not pend:
                del self._pending_members[gk]
            return
        entity = self._entries.get(gk)
        if not isinstance(entity, QueuedPodGroupInfo):
            return
        entity.remove(key)
        if not entity.members:
            where = self._where.pop(gk, None)
            del self._entries[gk]
            if where in (UNSCHEDULABLE, GATED):
                self.unschedulable.pop(gk, None)
            elif where in (ACTIVE, BACKOFF):
                self._remove_from_heaps(gk)

    def add_attempted_pod_group(self, entity: QueuedPodGroupInfo, status: Any) -> None:
        """Upstream ``AddAttemptedPodGroupIfNeeded`` (scheduling_queue.go L1166-1270): after a
        pod-group cycle, the members that came back (failed, or added meanwhile) form the group's
        entity again with the popped entity's queueing parameters. After a success it goes straight
        to activeQ (keeping the old timestamp if a member of this attempt failed, so that its
        preemption comes next); after a rejection ``unschedulable_count`` + 1 and backoff; after an
        error ``consecutive_errors_count`` + 1 and backoff. ``status``: the root status (None = Success)."""
        gk = entity.key
        if self._last_popped == gk:
            self._last_popped = None
        self._tree_in_flight.discard(gk)
        pending = list(self._pending_members.pop(gk, {}).values())
        if not pending:
            return
        popped = {m.key for m in entity.members}
        had_failures = any(m.key in popped for m in pending)
        pg = self._pod_groups.get((entity.namespace, entity.name))
        if pg is None:
            for m in pending:
                self._member_group.pop(m.key, None)
                self._incomplete[m.key] = m
            return
        root = QueuedPodGroupInfo(entity.namespace, entity.name, pg)
        root.copy_queueing_params(entity)
        for m in pending:
            root.add(m)
        without_backoff = preserve_timestamp = False
        if status is None or status.is_success():
            without_backoff = True
            preserve_timestamp = had_failures
            root.consecutive_errors_count = root.unschedulable_count = 0
        elif status.is_rejected():
            root.unschedulable_count += 1
            root.consecutive_errors_count = 0
        else:
            root.consecutive_errors_count += 1
        root.backoff_expiration = None
        if not preserve_timestamp:
            root.timestamp = self.now()
        root.was_flushed_from_unschedulable = False
        root.flush_timestamp = None
        self._entries[gk] = root
        if not without_backoff and self.is_backing_off(root):
            self._move_to_backoff(root, "ScheduleAttemptFailure")
        else:
            self._move_to_active(root, "ScheduleAttemptFailure")

    def add_pod_group(self, pg: dict[str, Any]) -> None:
        """Upstream ``AddPodGroup`` (L1563-1599): observe the object; the members waiting in the
        incomplete pool join the queue."""
        meta = pg.get("metadata") or {}
        ref = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self._pod_groups[ref] = pg
        entity = self.pod_group_entity(*ref)
        if entity is not None:
            entity.pod_group = pg
        waiting = [q for q in self._incomplete.values() if self._group_ref(q.pod) == ref]
        for q in waiting:
            del self._incomplete[q.key]
            self._add_group_member(q)

    def update_pod_group(self, pg: dict[str, Any]) -> None:
        """Upstream ``UpdatePodGroup`` (L1601-1622): the queued entity sees the new object."""
        meta = pg.get("metadata") or {}
        ref = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if ref not in self._pod_groups:
            self.add_pod_group(pg)
            return
        self._pod_groups[ref] = pg
        entity = self.pod_group_entity(*ref)
        if entity is not None:
            entity.pod_group = pg

    def delete_pod_group(self, pg: dict[str, Any]) -> None:
        """Upstream ``DeletePodGroup`` (L1624-1673): the queued (or pending) members go to the
        incomplete pool."""
        meta = pg.get("metadata") or {}
        ref = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if self._pod_groups.pop(ref, None) is None:
            return
        gk = entity_key(POD_GROUP_KEY_TYPE, *ref)
        entity = self._entries.get(gk)
        members: list[QueuedPodInfo] = []
        if isinstance(entity, QueuedPodGroupInfo):
            where = self._where.pop(gk, None)
            del self._entries[gk]
            if where in (UNSCHEDULABLE, GATED):
                self.unschedulable.pop(gk, None)
            elif where in (ACTIVE, BACKOFF):
                self._remove_from_heaps(gk)
            members = entity.members
        elif self._group_in_flight(gk):
            members = list(self._pending_members.pop(gk, {}).values())
        for m in members:
            self._member_group.pop(m.key, None)
            self._incomplete[m.key] = m

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


def _passes(pre_check: Callable[[Pod], bool], entity: Any) -> bool:
    """A pre-check on an entity: any member of a pod group passing it."""
    if isinstance(entity, QueuedPodGroupInfo):
        return any(pre_check(m.pod) for m in entity.members)
    return pre_check(entity.pod)
