"""``Scheduler``: profiles, cache, queue and the event handlers that feed them.

Follows ``pkg/scheduler/scheduler.go`` (wiring) and ``eventhandlers.go`` (what each informer
event does). The engine does no I/O: whoever drives it (the simulator's event loop or the live
adapter) calls the ``on_*`` handlers for cluster changes, :meth:`Scheduler.scheduling_cycle`
(synchronous) and awaits :meth:`Scheduler.binding_cycle` (a coroutine), or
:meth:`Scheduler.schedule_one` for both with :func:`~kubesched.scheduler.schedule_one.drive`.
Decisions leave through the injected :class:`~kubesched.framework.handle.ClusterClient`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.objects import Node, Pod, pod_key, pod_priority
from kubesched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    EVENT_POD_GROUP_ADD,
    EVENT_POD_GROUP_DELETE,
    EVENT_POD_GROUP_UPDATE,
    EVENT_UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
    node_update_events,
    pod_update_events,
)
from kubesched.framework.interface import Status
from kubesched.framework.node_info import QueuedPodInfo
from kubesched.framework.runtime import Framework
from kubesched.framework.waiting_pods import waiting_pod_key
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred
from kubesched.scheduler.attempt import ScheduledPod, handle_scheduling_failure
from kubesched.scheduler.core import Attempt, SchedulerCore, SchedulerStats
from kubesched.scheduler.schedule_one import binding_cycle, handle_binding_cycle_error, schedule_one, scheduling_cycle
from kubesched.scheduler.schedule_one_podgroup import PodGroupCycleResult

__all__ = ["Attempt", "Scheduler", "SchedulerStats"]


class Scheduler(SchedulerCore):
    """One scheduler: a Framework per profile over one cache and one queue (see
    :class:`~kubesched.scheduler.core.SchedulerCore` for the arguments), fed by the informer
    handlers (``on_*``) and driven by :meth:`schedule_one` / :meth:`run_until_idle`."""

    def _deferred_resize(self, pod: Pod) -> bool:
        """InPlacePodVerticalScalingSchedulerPreemption (alpha) is on and the pod's resize is deferred."""
        return deferred_resize_enabled(self.features) and is_pod_resize_deferred(pod)

    def on_pod_add(self, pod: Pod) -> None:
        """Upstream ``addPod`` (v1.37.2 eventhandlers.go L129-143): an assigned pod goes to the
        cache — and, when its resize is deferred (alpha gate) and this scheduler owns it, also to
        the queue; an unassigned pod this scheduler owns goes to the queue."""
        if pod.spec.node_name:
            if self._deferred_resize(pod) and self.responsible_for(pod):
                self.queue.add(pod)
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod):
            pgm = self.pod_group_manager
            if pgm is None:
                self.queue.add(pod)
                return
            # v1.37.2 addPodToSchedulingQueue (eventhandlers.go L237-247): the pod group member
            # state first, then the queue, then UnscheduledPodAdd for the gated/unschedulable pods
            if pod.spec.scheduling_group is not None:
                pgm.add_pod(pod)
            self.queue.add(pod)
            self.queue.move_all_to_active_or_backoff(EVENT_UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """Upstream ``updatePod`` (eventhandlers.go L145-194). A bound pod's update is split into
        AssignedPod events (:func:`pod_update_events`), each moving the pods whose rejecting
        plugins' hints say Queue. A pending pod's update goes to the queue, except for a pod the
        cache has as assumed: it is ignored, unless (1.35+) it just got a deletionTimestamp, which
        is handled as the assumed pod's deletion (:meth:`_handle_assumed_pod_deletion`)."""
        if new.spec.node_name:
            if not old.spec.node_name:  # just bound (by us or someone else)
                self.queue.delete(new)
                self.cache.add_pod(new)
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, new)
            else:
                if deferred_resize_enabled(self.features) and self.responsible_for(new):
                    # v1.37.2 eventhandlers.go L160-179: an assigned pod entering a deferred
                    # resize joins the queue, leaving it leaves the queue, staying updates it
                    was, now = is_pod_resize_deferred(old), is_pod_resize_deferred(new)
                    if now and not was:
                        self.queue.add(new)
                    elif was and not now:
                        self.queue.delete(new)
                    elif was and now:
                        self.queue.update(old, new)
                self.cache.update_pod(old, new)
                if _pod_updated(old, new):
                    for ev in pod_update_events(old, new, features=self.features):
                        self.queue.move_all_to_active_or_backoff(ev, old, new)
        elif self.responsible_for(new):
            if self.pod_group_manager is not None and new.spec.scheduling_group is not None:
                self.pod_group_manager.update_pod(old, new)  # UpdatePodGroupMember (L330)
            if self.cache.is_assumed(pod_key(new)):
                if (self.features.at_least(1, 35) and new.metadata.deletion_timestamp is not None
                        and old.metadata.deletion_timestamp is None):
                    self._handle_assumed_pod_deletion(new)
                return
            # with QueueingHints every update, status-only ones included (the general Update
            # event), goes through the rejecting plugins' hints; isPodUpdated is the hints-off path
            self.queue.update(old, new)
            if old.status.nominated_node_name and old.status.nominated_node_name != new.status.nominated_node_name:
                # hasNominatedNodeNameChanged: lower/equal-priority pods saw it as assigned there
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, old, None,
                                                         _le_priority(pod_priority(old)))

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod was deleted (``pod`` may be the last state known, e.g. from a tombstone).

        Assigned: leaves the cache (AssignedPodDelete). Unassigned (upstream
        ``deletePodFromSchedulingQueue``): leaves the queue. Since 1.35 an assumed pod's deletion
        is :meth:`_handle_assumed_pod_deletion`. Before (1.34.12 eventhandlers.go L361-380): a
        pod waiting on Permit is rejected (AssignedPodDelete), an assumed pod past Permit stays
        in the cache until its binding fails. A pod the cache has as bound (a stale tombstone)
        leaves the cache either way."""
        if pod.spec.node_name:
            removed = self.cache.remove_pod(pod) is not None
            if self._deferred_resize(pod) and self.responsible_for(pod):
                self.queue.delete(pod)  # v1.37.2 eventhandlers.go L205-209 (alpha gate)
            if removed:
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
            return
        self.queue.delete(pod)
        key = pod_key(pod)
        if (self.pod_group_manager is not None and pod.spec.scheduling_group is not None
                and not self.cache.is_assumed(key)):
            self.pod_group_manager.remove_pod(pod)  # RemovePodGroupMember (eventhandlers.go L384)
        if self.features.at_least(1, 35):
            if self.cache.is_assumed(key):
                self._handle_assumed_pod_deletion(pod)
                return
        else:
            fw = self.profiles.get(pod.spec.scheduler_name or "default-scheduler")
            if fw is not None and fw.reject_waiting_pod(waiting_pod_key(pod)):
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
                return
            if self.cache.is_assumed(key):
                self._nominated_pod_gone(pod)
                return
        if self.cache.remove_pod(pod) is not None:
            # a stale tombstone of a pod the cache has as bound
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
            return
        self._nominated_pod_gone(pod)

    def _nominated_pod_gone(self, pod: Pod) -> None:
        """A deleted pending pod with a nominated node no longer occupies it for lower or equal
        priority pods: AssignedPodDelete for those only (eventhandlers.go ``getLEPriorityPreCheck``)."""
        if pod.status.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None,
                                                     _le_priority(pod_priority(pod)))

    def _handle_assumed_pod_deletion(self, pod: Pod) -> None:
        """Upstream ``handleAssumedPodDeletion`` (eventhandlers.go L268-304, 1.35+): a pod waiting
        on Permit is rejected (its binding cycle fails and cleans up); otherwise (in PreBind or
        Bind) the assumed pod is removed from the cache at once (1.37 ``RemoveAssumedPod``) so it
        stops holding resources. Then AssignedPodDelete moves the pods it may have blocked."""
        key = pod_key(pod)
        st = self.cache.pod_states.get(key)
        if st is None:
            return  # already forgotten: its binding cycle finished
        assumed = st.pod_info.pod
        fw = self.profiles.get(assumed.spec.scheduler_name or "default-scheduler")
        if fw is None:
            return
        if not fw.reject_waiting_pod(waiting_pod_key(assumed)):
            self.cache.remove_assumed_pod(key)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed, None)

    def on_object_event(self, kind: str, old: Any, new: Any) -> None:
        """Any other watched kind changed (upstream ``addAllEventHandlers``: objects that only
        move pods): ``old`` None = Add, ``new`` None = Delete, else Update. The event
        ``ClusterEvent(kind, action)`` requeues the unschedulable pods whose rejecting plugins
        registered for it; kinds no plugin can register for (not an ``EventResource``) are
        ignored, as upstream only watches kinds some plugin asked for."""
        for listener in self.object_listeners:
            listener(kind, old, new)
        if kind == "PodGroup":
            if self.pod_group_manager is not None:
                self._on_pod_group_event(old, new)
            return
        if kind == "CompositePodGroup":
            if self.pod_group_manager is not None and self.pod_group_manager.composite_enabled:
                self._on_composite_pod_group_event(old, new)
            return
        try:
            resource = EventResource(kind)
        except ValueError:
            return
        if old is None:
            action, label = ActionType.ADD, "Add"
        elif new is None:
            action, label = ActionType.DELETE, "Delete"
        else:
            action, label = ActionType.UPDATE, "Update"
        self.queue.move_all_to_active_or_backoff(ClusterEvent(resource, action, f"{kind}{label}"), old, new)

    def _on_pod_group_event(self, old: Any, new: Any) -> None:
        """Upstream ``addPodGroup``/``updatePodGroup``/``deletePodGroup`` (eventhandlers.go
        L468-533): the cache and the queue see the object, then the PodGroup event moves the
        pods whose rejecting plugins registered for it. An update with the same (non-empty)
        ``resourceVersion`` is ignored (the simulator's objects may carry none)."""
        pgm = self.pod_group_manager
        assert pgm is not None
        if old is None:
            pgm.set_pod_group(new)
            self.queue.add_pod_group(new)
            self.queue.move_all_to_active_or_backoff(EVENT_POD_GROUP_ADD, None, new)
        elif new is None:
            pgm.remove_pod_group(old)
            self.queue.delete_pod_group(old)
            self.queue.move_all_to_active_or_backoff(EVENT_POD_GROUP_DELETE, old, None)
        else:
            rv_old = (old.get("metadata") or {}).get("resourceVersion")
            if rv_old and rv_old == (new.get("metadata") or {}).get("resourceVersion"):
                return
            pgm.set_pod_group(new)
            self.queue.update_pod_group(new)
            self.queue.move_all_to_active_or_backoff(EVENT_POD_GROUP_UPDATE, old, new)

    def _on_composite_pod_group_event(self, old: Any, new: Any) -> None:
        """Upstream ``add/update/deleteCompositePodGroup`` (eventhandlers.go L536-602): the cache's
        hierarchy (:meth:`~kubesched.cache.podgroups.PodGroupManagerImpl.set_composite_pod_group`),
        then the ``scheduling.k8s.io/CompositePodGroup`` event moves the pods whose rejecting
        plugins registered for it. (Upstream's queue also files the object in its workload
        forest; kubesched's queue does not model composite groups yet.)"""
        pgm = self.pod_group_manager
        assert pgm is not None
        if new is None:
            pgm.remove_composite_pod_group(old)
            action = ActionType.DELETE
        else:
            rv_old = ((old or {}).get("metadata") or {}).get("resourceVersion")
            if old is not None and rv_old and rv_old == (new.get("metadata") or {}).get("resourceVersion"):
                return
            pgm.set_composite_pod_group(new)
            action = ActionType.ADD if old is None else ActionType.UPDATE
        self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.COMPOSITE_POD_GROUP, action), old, new)

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)

    def on_nodes_add(self, nodes: Sequence[Node]) -> None:
        """:meth:`on_node_add` for each node, in order (an initial LIST): with no pod waiting in
        unschedulablePods the cache is filled in bulk (:meth:`Cache.add_nodes`) and the NodeAdd
        events follow (they move nothing then; pods in flight still record them); otherwise one
        by one, so each event's hints see the cache as upstream's informer leaves it."""
        if self.queue.unschedulable:
            for node in nodes:
                self.on_node_add(node)
            return
        self.cache.add_nodes(nodes)
        for node in nodes:
            self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        """Upstream ``updateNodeInCache``: one queue move per changed property
        (:func:`node_update_events`), in upstream's order."""
        self.cache.update_node(new)
        for ev in node_update_events(old, new, self.features):
            self.queue.move_all_to_active_or_backoff(ev, old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node.metadata.name)

    # ───────────────────────────── the loop ─────────────────────────────

    def scheduling_cycle(self) -> ScheduledPod | Attempt | PodGroupCycleResult | None:
        """Pop one pod and run its scheduling cycle: the assumed :class:`ScheduledPod`, the failed
        (already handled) :class:`Attempt`, or None when no pod is ready. With GenericWorkload a
        popped pod group gives a :class:`PodGroupCycleResult` (a binding cycle to run for each
        of its ``scheduled`` members)."""
        return scheduling_cycle(self)

    async def binding_cycle(self, sp: ScheduledPod) -> Attempt:
        """WaitOnPermit, PreBind, Bind, PostBind for ``sp``; failures are handled
        (:meth:`handle_binding_cycle_error`). Await it, ``asyncio.create_task`` it, or
        :func:`~kubesched.scheduler.schedule_one.drive` it."""
        return await binding_cycle(self, sp)

    def handle_scheduling_failure(self, fw: Framework, qpi: QueuedPodInfo, status: Status,
                                  nominated_node_name: str | None = None, start: float | None = None) -> Attempt:
        """Upstream ``handleSchedulingFailure`` (see :mod:`kubesched.scheduler.schedule_one`)."""
        return handle_scheduling_failure(self, fw, qpi, status, nominated_node_name,
                                         self.clock.now() if start is None else start)

    def handle_binding_cycle_error(self, sp: ScheduledPod, status: Status) -> Attempt:
        """Upstream ``handleBindingCycleError``: Unreserve, forget, move, requeue."""
        return handle_binding_cycle_error(self, sp, status)

    def schedule_one(self) -> Attempt | None:
        """Pop one pod and run its scheduling cycle, then drive its binding cycle. None when
        nothing is ready; a ``waiting`` attempt when the binding waits on Permit."""
        return schedule_one(self)

    def run_until_idle(self, max_attempts: int | None = None, *,
                       after_each: Callable[[], object] | None = None) -> int:
        """Schedule until activeQ and backoffQ are empty. Returns the number of attempts.
        ``after_each`` runs after every attempt (a simulator delivers its store's events there)."""
        n = 0
        while self.queue.has_schedulable():
            if max_attempts is not None and n >= max_attempts:
                break
            if self.schedule_one() is None:
                break
            n += 1
            if after_each is not None:
                after_each()
        return n


def _le_priority(priority: int) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of lower or equal priority."""
    return lambda p: pod_priority(p) <= priority


def _pod_updated(old: Pod, new: Pod) -> bool:
    """Upstream ``isPodUpdated``: anything but resourceVersion, generation and status changed."""
    if old.spec != new.spec:
        return True
    om, nm = old.metadata, new.metadata
    return (om.labels != nm.labels or om.annotations != nm.annotations
            or om.deletion_timestamp != nm.deletion_timestamp or om.owner_references != nm.owner_references)



