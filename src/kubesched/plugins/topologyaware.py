"""TopologyPlacementGenerator: one candidate placement per topology domain of a pod group.

Follows upstream ``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go`` (v1.37.2,
TopologyAwareWorkloadScheduling, alpha): a PlacementGenerate plugin. For a group whose PodGroup (or,
without one, CompositePodGroup) has ``spec.schedulingConstraints.topology[0].key`` = ``K``
(``GeneratePlacements``, L58-100):

* no key → the parent placement, unchanged;
* members already scheduled (assumed or assigned; with CompositePodGroup, of every pod group below
  the composite group) must all sit on nodes labelled ``K`` with one value, else an Error —
  ``cannot determine domain for already scheduled pods: <why>`` where ``<why>`` is ``getting node
  for pod ns/name: nodeinfo not found for node name "x"``, ``no topology domain found for pod
  ns/name`` or ``more than 1 domain found for pod group: a, b`` — and only that domain is offered;
* otherwise one :class:`~kubesched.framework.podgroup.Placement` per distinct value of ``K`` among the
  parent's nodes, named by the value, holding those nodes in the parent's order; nodes without the
  label are in none. No node with the label → no placement (the framework turns that into
  "no feasible placements found").

Order of the placements: upstream ranges over a Go map (undefined order); here the placements come
sorted by domain value, so runs are reproducible. The choice between feasible placements does not
depend on it except through the random tie-break (:func:`~kubesched.framework.podgroup.select_placement`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.objects import pod_key
from kubesched.framework.interface import Status, as_status
from kubesched.framework.podgroup import Placement, every_node_placement
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.podgroup import PodGroupLookupError, pod_group_states, topology_key

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import Handle
    from kubesched.framework.podgroup import PodGroupCycleState, PodGroupInfo

__all__ = ["NAME", "TopologyPlacement", "new"]

NAME = "TopologyPlacementGenerator"


class _DomainError(Exception):
    """The already scheduled members do not give one domain (message as upstream)."""


class TopologyPlacement:
    """The TopologyPlacementGenerator plugin (upstream type ``TopologyPlacement``): PlacementGenerate."""

    name = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self.composite_enabled = features_of(handle).enabled("CompositePodGroup")

    def generate_placements(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                            parent: Placement | None) -> tuple[list[Placement], Status | None]:
        """The candidate placements of ``pg_info`` within ``parent`` (None: every node of the snapshot,
        in ``NodeTable.order()``); see the module docstring. Returns ``(placements, None)`` or
        ``([], Error status)``."""
        key = topology_key(pg_info)
        table = self.handle.nodes if self.handle is not None else None
        if key is None:
            if parent is None:
                parent = Placement("", []) if table is None else every_node_placement(table)
            return [parent], None
        try:
            scheduled = [p for s in pod_group_states(getattr(self.handle, "pod_group_manager", None), pg_info,
                                                     self.composite_enabled)
                         for p in s.scheduled_pods()]
        except PodGroupLookupError as e:
            return [], as_status(e)
        required: str | None = None
        if scheduled:
            try:
                required = self._scheduled_domain(key, scheduled)
            except _DomainError as e:
                return [], as_status(RuntimeError(f"cannot determine domain for already scheduled pods: {e}"))
        if table is None:
            return [], None
        names = parent.nodes if parent is not None else every_node_placement(table).nodes
        by_domain: dict[str, list[str]] = {}
        for name in names:
            row = table.row_of.get(name)
            node = table.nodes[row] if row is not None else None
            if node is None:
                continue
            value = node.metadata.labels.get(key)
            if value is None or (required is not None and value != required):
                continue
            by_domain.setdefault(value, []).append(name)
        return [Placement(value, by_domain[value]) for value in sorted(by_domain)], None

    def _scheduled_domain(self, key: str, pods: list[Pod]) -> str:
        """Upstream ``getScheduledPodsTopologyDomain`` (L102-121): the one value of ``key`` on the
        nodes of ``pods``. A pod's node is ``spec.nodeName`` (assumed pods carry it; the table's
        record of where the pod sits otherwise)."""
        table: Any = self.handle.nodes if self.handle is not None else None
        domain = ""
        for pod in pods:
            ref = pod_key(pod)
            node_name = pod.spec.node_name
            if not node_name and table is not None:
                row = table.pod_row.get(ref)
                node_name = table.names[row] if row is not None else ""
            row = table.row_of.get(node_name) if table is not None else None
            node = table.nodes[row] if row is not None else None
            if node is None:
                raise _DomainError(f'getting node for pod {ref}: nodeinfo not found for node name "{node_name}"')
            value = node.metadata.labels.get(key)
            if value is None:
                raise _DomainError(f"no topology domain found for pod {ref}")
            if domain and domain != value:
                raise _DomainError(f"more than 1 domain found for pod group: {domain}, {value}")
            domain = value
        return domain


def new(args: Any, handle: Handle | None) -> TopologyPlacement:
    """Factory (``kubesched.plugins.topologyaware:new``); the plugin takes no arguments."""
    return TopologyPlacement(handle)
