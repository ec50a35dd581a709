"""DynamicResources (upstream ``pkg/scheduler/framework/plugins/dynamicresources``, v1.34, DRA GA).

What v1.34 does for a pod **without** resource claims — reproduced exactly:

* PreEnqueue: nothing to check → Success.
* PreFilter: first writes an empty state (``state.Write(stateKey, &stateData{})``), then,
  finding no claims, returns **Skip** (Filter is not run).
* PostFilter (runs whenever no node fits, before DefaultPreemption): state present with no
  claims → ``Unschedulable "no new claims to deallocate"``; the framework appends the reasons of
  Unschedulable PostFilter plugins, which is why v1.34 FailedScheduling messages read
  ``"... . no new claims to deallocate, preemption: 0/N nodes are available: ..."``. If PreFilter
  never ran (an earlier PreFilter plugin returned UnschedulableAndUnresolvable), reading the
  state fails and upstream returns an Error status whose message is ``"not found"``
  (``fwk.ErrNotFound``); so does this plugin.
* Reserve / Unreserve / PreBind: no claims → nothing to do.

Pods **with** claims (``spec.resourceClaims``; read with ``getattr`` because kubesched's PodSpec
view does not carry the field yet): each claim name is resolved like upstream
``resourceclaim.Name`` (``resourceClaimName``, or the ``status.resourceClaimStatuses`` entry of a
``resourceClaimTemplateName`` claim — missing → ``pod "<ns>/<name>": ResourceClaim not created
yet``); the ResourceClaim is read with ``handle.lister.get("ResourceClaim", ns, name)``: absent →
UnschedulableAndUnresolvable ``could not find ResourceClaim "<ns>/<name>"`` (upstream's assume
cache ``NotFoundError``), being deleted → ``resourceclaim "<name>" is being deleted``; the same
check runs in PreEnqueue. Device allocation (ResourceSlices, DeviceClasses, CEL selectors, the
structured allocator) is **not** modelled: a pod whose claims all exist gets an Error status
saying so, rather than a wrong placement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, Status
from kubesched.plugins.volumebinding import field

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["ERR_NO_NEW_CLAIMS", "NAME", "DynamicResources", "StateData", "new", "pod_claim_names"]

NAME = "DynamicResources"
STATE_KEY = NAME
ERR_NO_NEW_CLAIMS = "no new claims to deallocate"
ERR_UNSUPPORTED = "kubesched DynamicResources: allocating ResourceClaims (structured parameters) is not supported"


class StateData:
    """Upstream ``stateData``; ``claims`` empty when the pod has no claims."""

    __slots__ = ("claims",)

    def __init__(self, claims: list[Any] | None = None) -> None:
        self.claims = claims or []

    def clone(self) -> "StateData":
        return self


class _Unschedulable(Exception):
    pass


def pod_claim_names(pod: Pod) -> list[str | None]:
    """Upstream ``resourceclaim.Name`` for each ``spec.resourceClaims`` entry (None = skipped).
    Raises ``_Unschedulable`` with upstream's message for an unresolvable entry."""
    out: list[str | None] = []
    for rc in getattr(pod.spec, "resource_claims", None) or ():
        name = field(rc, "resourceClaimName")
        if name is not None:
            out.append(name)
            continue
        if field(rc, "resourceClaimTemplateName") is not None:
            for st in field(pod.status, "resourceClaimStatuses") or ():
                if field(st, "name") == field(rc, "name"):
                    out.append(field(st, "resourceClaimName"))
                    break
            else:
                raise _Unschedulable(
                    f'pod "{pod.metadata.namespace}/{pod.metadata.name}": ResourceClaim not created yet')
            continue
        raise _Unschedulable(f'pod "{pod.metadata.namespace}/{pod.metadata.name}", spec.resourceClaim '
                             f'"{field(rc, "name")}": API unsupported')
    return out


class DynamicResources:
    """PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind. See the module docstring."""

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def _claims(self, pod: Pod) -> list[Any]:
        """Upstream ``foreachPodResourceClaim``: the pod's existing claims, or ``_Unschedulable``."""
        if not getattr(pod.spec, "resource_claims", None):
            return []
        lister = self.handle.lister if self.handle is not None else None
        ns = pod.metadata.namespace
        out = []
        for name in pod_claim_names(pod):
            if name is None:
                continue
            claim = lister.get("ResourceClaim", ns, name) if lister is not None else None
            if claim is None:
                raise _Unschedulable(f'could not find ResourceClaim "{ns}/{name}"')
            if field(claim, "metadata", "deletionTimestamp") is not None:
                raise _Unschedulable(f'resourceclaim "{field(claim, "metadata", "name")}" is being deleted')
            out.append(claim)
        return out

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not getattr(pod.spec, "resource_claims", None):
            return None
        try:
            self._claims(pod)
        except _Unschedulable as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        return None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        s = StateData()
        state.write(STATE_KEY, s)
        try:
            claims = self._claims(pod)
        except _Unschedulable as e:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        if not claims:
            return None, Status(Code.SKIP)
        return None, Status(Code.ERROR, (ERR_UNSUPPORTED,))

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.ERROR, (ERR_UNSUPPORTED,))

    def _state(self, state: CycleState) -> StateData | None:
        s = state.get(STATE_KEY)
        return s if isinstance(s, StateData) else None

    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Any) -> tuple[None, Status]:
        s = self._state(state)
        if s is None:
            return None, Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, (ERR_NO_NEW_CLAIMS,))
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    def _nothing_to_allocate(self, state: CycleState) -> Status | None:
        """Reserve and PreBind: nothing to do for a pod without claims; allocation is not modelled."""
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None
        return Status(Code.ERROR, (ERR_UNSUPPORTED,))

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._nothing_to_allocate(state)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._nothing_to_allocate(state)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # ResourceClaim / ResourceSlice / DeviceClass events have no EventResource in kubesched yet.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)),
        ]


def new(args: Any, handle: Any) -> DynamicResources:
    return DynamicResources(handle)
