"""GangScheduling (upstream ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``
v1.37.2; GenericWorkload). All-or-nothing scheduling of a PodGroup with a ``gang`` policy:

* **PreEnqueue** (L208-275, pods with ``spec.schedulingGroup`` only): the PodGroup not observed →
  UnschedulableAndUnresolvable ``waiting for pods's pod group "<name>" to appear in scheduling
  queue`` (the typo is upstream's); a Basic policy passes; fewer known members than ``minCount``
  → UnschedulableAndUnresolvable ``waiting for minCount pods from a gang to appear in scheduling
  queue``.
* **Permit** (L356-425): while fewer than ``minCount`` members are assumed or assigned, Wait 5 min
  (``waiting for minCount pods from a gang to be scheduled``) and activate the group's unscheduled
  members; at quorum, Allow every assumed member waiting on Permit. A timeout rejects the pod with
  ``rejected due to timeout after waiting 5m0s at plugin GangScheduling`` (the framework's timer).
* **PlacementFeasible** (L489-507): with ``min`` = ``minCount`` (Basic: 1), ``remaining +
  scheduled < min`` → Unschedulable ``minCount (%d) cannot be satisfied: %d scheduled, %d
  remaining``; ``scheduled < min`` → Wait ``minCount (%d) is not yet satisfied: …``; else Success.
* **EventsToRegister** (L75-96): UnscheduledPod/Add and AssignedPod/Add (a pod of the same
  group), PodGroup/Add (the same group), PodGroup/Update (gang ``minCount`` decreased).

With CompositePodGroup (alpha) on (``preEnqueueWithHierarchies`` L231-265, ``permitPodForHierarchy``
L427-443, :mod:`kubesched.plugins.helper.hierarchy`): PreEnqueue builds the pod's hierarchy
(failure → UnschedulableAndUnresolvable ``failed to build hierarchy snapshot: <why>``); a PodGroup
without parent needs ``minCount`` (Basic: 1) known members, one with a parent needs its root
CompositePodGroup's tree ready — each CompositePodGroup ``minGroupCount`` (Basic: 1) ready children
— else ``waiting for composite pod group "<root>" tree to meet quorum``. Permit waits on the same
tree quorum counted in scheduled members (activating the unscheduled members of the whole tree)
and then allows every assumed member of the tree; PlacementFeasible of a CompositePodGroup counts
child groups against ``minGroupCount``; the hints compare hierarchy roots, and
CompositePodGroup/Add is registered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Code, Status
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    entity_key,
    pod_group_min_count,
    pod_group_name_of,
)
from kubesched.plugins.helper import hierarchy
from kubesched.plugins.helper.gates import features_of

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.podgroup import PlacementCycleState, PlacementProgress, PodGroupInfo

__all__ = ["NAME", "PERMIT_TIMEOUT_S", "GangScheduling", "new"]

NAME = "GangScheduling"
PERMIT_TIMEOUT_S = 300.0
"""Upstream ``permitTimeoutDuration`` (5 minutes)."""


_WAITING_FOR_MIN_COUNT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                ("waiting for minCount pods from a gang to appear in scheduling queue",))
"""PreEnqueue's answer below minCount (a Status is immutable: one object serves every member)."""


def _ns_name(obj: Any) -> tuple[str, str]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class GangScheduling:
    """PreEnqueue, Permit, PlacementFeasible, EnqueueExtensions. See the module docstring."""

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.composite_enabled = features_of(handle).enabled("CompositePodGroup")

    # ───── PreEnqueue (preEnqueueHierarchiesDisabled, L231-275) ─────

    def pre_enqueue(self, pod: Pod) -> Status | None:
        pg_name = pod_group_name_of(pod)
        if pg_name is None:
            return None
        if self.composite_enabled:
            return self._pre_enqueue_with_hierarchies(pod, pg_name)
        pgm = self.handle.pod_group_manager
        ns = pod.metadata.namespace or ""
        pg = pgm.pod_group(ns, pg_name) if pgm is not None else None
        if pg is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          (f'waiting for pods\'s pod group "{pg_name}" to appear in scheduling queue',))
        min_count = pod_group_min_count(pg)
        if min_count is None:  # only a Gang policy is this plugin's business
            return None
        state = pgm.pod_group_state(ns, pg_name)
        if state is None:
            return Status(Code.ERROR, (f"pod group state {ns}/{pg_name} not found",))
        if state.all_pods_count() < min_count:
            return _WAITING_FOR_MIN_COUNT
        return None

    def _pre_enqueue_with_hierarchies(self, pod: Pod, pg_name: str) -> Status | None:
        """Upstream ``preEnqueueWithHierarchies`` (L231-265) and ``checkCPGHierarchyReadiness``."""
        pgm = self.handle.pod_group_manager
        ns = pod.metadata.namespace or ""
        try:
            if pgm is None:
                raise ValueError(f"pod group state not found for {entity_key(POD_GROUP_KEY_TYPE, ns, pg_name)}")
            pgm.hierarchy_root_for_pod(pod)
        except ValueError as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"failed to build hierarchy snapshot: {e}",))
        pg = pgm.pod_group(ns, pg_name)
        parent = ((pg or {}).get("spec") or {}).get("parentCompositePodGroupName")
        if not isinstance(parent, str):
            if hierarchy.pg_ready(pgm, ns, pg_name, lambda s: s.all_pods_count()):
                return None
            return _WAITING_FOR_MIN_COUNT
        root, st = self._root_of(pgm, ns, parent)
        if st is not None:
            return st
        assert root is not None
        if not hierarchy.tree_ready(pgm, ns, root, lambda s: s.all_pods_count()):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          (f'waiting for composite pod group "{root}" tree to meet quorum',))
        return None

    @staticmethod
    def _root_of(pgm: Any, ns: str, cpg_name: str) -> tuple[str | None, Status | None]:
        """The root CompositePodGroup's name above ``cpg_name`` (``GetRootKeyForGroup``), or an
        Error (a cycle) / a not-found status whose reason is upstream's text."""
        key = entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, ns, cpg_name)
        try:
            root = pgm.root_key_for_group(key)
        except ValueError as e:
            return None, Status(Code.ERROR, (str(e),))
        if root is None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                f"failed to build hierarchy snapshot: composite pod group object not found in state for {key}",))
        return root.split("/", 2)[2], None

    # ───── Permit (L356-425) ─────

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        pg_name = pod_group_name_of(pod)
        if pg_name is None:
            return None, 0.0
        ns = pod.metadata.namespace or ""
        pgm = self.handle.pod_group_manager
        if self.composite_enabled and pgm is not None:
            try:
                pgm.hierarchy_root_for_pod(pod)
            except ValueError as e:
                return Status(Code.ERROR, (f"failed to build hierarchy snapshot: {e}",)), 0.0
            parent = ((pgm.pod_group(ns, pg_name) or {}).get("spec") or {}).get("parentCompositePodGroupName")
            if isinstance(parent, str):
                return self._permit_for_hierarchy(pgm, ns, parent)
        pg = pgm.pod_group(ns, pg_name) if pgm is not None else None
        if pg is None:
            return Status(Code.ERROR, (f"failed to get podGroup {ns}/{pg_name}: "
                                       f'podgroup.scheduling.k8s.io "{pg_name}" not found',)), 0.0
        pg_state = pgm.pod_group_state(ns, pg_name)
        if pg_state is None:
            return Status(Code.ERROR, (f"pod group state {ns}/{pg_name} not found",)), 0.0
        min_count = pod_group_min_count(pg)
        if min_count is None:
            return None, 0.0
        if pg_state.scheduled_pods_count() < min_count:
            # activate the unscheduled members in case they were waiting for this one
            self.handle.activate(pg_state.unscheduled_pods())
            return Status(Code.WAIT, ("waiting for minCount pods from a gang to be scheduled",)), PERMIT_TIMEOUT_S
        # quorum: this pod passes and every assumed member waiting on Permit is allowed
        for uid in sorted(pg_state.assumed_pods()):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0.0

    def _permit_for_hierarchy(self, pgm: Any, ns: str, parent: str) -> tuple[Status | None, float]:
        """Upstream ``permitPodForHierarchy`` (L427-443): the root's tree quorum in scheduled
        (assumed + assigned) members; below it, activate every unscheduled member of the tree and
        Wait; at quorum, allow every assumed member of the tree waiting on Permit."""
        root, st = self._root_of(pgm, ns, parent)
        if st is not None:
            if st.code != Code.ERROR:  # upstream: AsStatus(fmt.Errorf(…)) — an Error
                st = Status(Code.ERROR, st.reasons)
            return st, 0.0
        assert root is not None
        if not hierarchy.tree_ready(pgm, ns, root, lambda s: s.scheduled_pods_count()):
            for leaf in hierarchy.leaf_states(pgm, ns, root):
                self.handle.activate(leaf.unscheduled_pods())
            return Status(Code.WAIT, (f'waiting for composite pod group "{root}" tree to meet quorum',)), \
                PERMIT_TIMEOUT_S
        for leaf in hierarchy.leaf_states(pgm, ns, root):
            for uid in sorted(leaf.assumed_pods()):
                wp = self.handle.get_waiting_pod(uid)
                if wp is not None:
                    wp.allow(NAME)
        return None, 0.0

    # ───── PlacementFeasible (L489-520) ─────

    def placement_feasible(self, state: PlacementCycleState, pg_info: PodGroupInfo,
                           progress: PlacementProgress) -> Status | None:
        min_count = hierarchy.min_count(pg_info)
        remaining, scheduled = progress.remaining, progress.scheduled
        if remaining + scheduled < min_count:
            return Status(Code.UNSCHEDULABLE, (f"minCount ({min_count}) cannot be satisfied: "
                                               f"{scheduled} scheduled, {remaining} remaining",))
        if scheduled < min_count:
            return Status(Code.WAIT, (f"minCount ({min_count}) is not yet satisfied: "
                                      f"{scheduled} scheduled, {remaining} remaining",))
        return None

    # ───── EnqueueExtensions (L75-96) ─────

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if self.composite_enabled:
            pod_added, pg_added, pg_updated = (self._hier_pod_added, self._hier_pod_group_added,
                                               self._hier_pod_group_updated)
        else:
            pod_added, pg_added, pg_updated = (self.is_schedulable_after_pod_added,
                                               self.is_schedulable_after_pod_group_added,
                                               self.is_schedulable_after_pod_group_updated)
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), pg_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pg_updated),
        ]
        if self.composite_enabled:
            events.append(ClusterEventWithHint(ClusterEvent(EventResource.COMPOSITE_POD_GROUP, ActionType.ADD),
                                               self._hier_composite_pod_group_added))
        return events

    # hints with CompositePodGroup on: the same hierarchy root (areSameHierarchy)

    def _same(self, pod: Pod, target_key: str) -> bool:
        mine = pod_group_name_of(pod)
        return mine is not None and hierarchy.same_hierarchy(
            self.handle.pod_group_manager, True, pod.metadata.namespace or "", mine, target_key)

    def _hier_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        added = pod_group_name_of(new) if new is not None else None
        if pod_group_name_of(pod) is None or added is None:
            return QueueingHint.SKIP
        key = entity_key(POD_GROUP_KEY_TYPE, new.metadata.namespace or "", added)
        return QueueingHint.QUEUE if self._same(pod, key) else QueueingHint.SKIP

    def _hier_pod_group_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        key = entity_key(POD_GROUP_KEY_TYPE, *_ns_name(new))
        return QueueingHint.QUEUE if self._same(pod, key) else QueueingHint.SKIP

    def _hier_composite_pod_group_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        key = entity_key(COMPOSITE_POD_GROUP_KEY_TYPE, *_ns_name(new))
        return QueueingHint.QUEUE if self._same(pod, key) else QueueingHint.SKIP

    def _hier_pod_group_updated(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not self._same(pod, entity_key(POD_GROUP_KEY_TYPE, *_ns_name(new))):
            return QueueingHint.SKIP
        old_min, new_min = pod_group_min_count(old), pod_group_min_count(new)
        if old_min is None or new_min is None or new_min >= old_min:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_pod_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A pod of the same PodGroup was added (it may complete the gang's minCount)."""
        mine, added = pod_group_name_of(pod), pod_group_name_of(new) if new is not None else None
        if mine is None or added is None:
            return QueueingHint.SKIP
        same = (new.metadata.namespace or "", added) == (pod.metadata.namespace or "", mine)
        return QueueingHint.QUEUE if same else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_group_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """The pod's own PodGroup appeared."""
        mine = pod_group_name_of(pod)
        if mine is None:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE if _ns_name(new) == (pod.metadata.namespace or "", mine) else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_group_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """The pod's own gang's ``minCount`` decreased (L118-148)."""
        mine = pod_group_name_of(pod)
        if mine is None or _ns_name(new) != (pod.metadata.namespace or "", mine):
            return QueueingHint.SKIP
        old_min, new_min = pod_group_min_count(old), pod_group_min_count(new)
        if old_min is None or new_min is None or new_min >= old_min:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: Any, handle: Any) -> GangScheduling:
    """Factory (upstream ``New``): no args."""
    return GangScheduling(handle)
