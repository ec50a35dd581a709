"""ResourceClaims shared by a PodGroup (DRAWorkloadResourceClaims, β off in 1.37; upstream-v137 §4.3).

A PodGroup's ``spec.resourceClaims`` (``[{name, resourceClaimName | resourceClaimTemplateName}]``,
at most 4) names claims its members share. A member's ``spec.resourceClaims`` entry whose
``name`` **and** claim/template name equal one of those entries is *bound to the PodGroup*: the
scheduler reserves the claim for the group (``status.reservedFor`` gets ``{apiGroup:
scheduling.k8s.io, resource: podgroups, name, uid}``), not for the pod, so it stays allocated while
any member needs it. A claim generated from a PodGroup's template is owned (controller reference)
by the PodGroup; the ResourceClaim controller writes the PodGroup's ``status.resourceClaimStatuses``
and the members' ``status.resourceClaimStatuses`` — the scheduler writes neither.

The helpers follow ``k8s.io/dynamic-resource-allocation@v0.37.2/resourceclaim/resourceclaim.go``
(``BindTo`` L206-247, ``IsForPod`` L125-140, ``IsForPodGroup`` L145-156, ``isForPodGroupByPod``
L158-171, ``IsReservedForPod`` L178-196, ``NameFromPodGroup`` L98-115); :class:`PodGroupStateData`
is ``podGroupStateData`` of ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
L129-150. Objects are raw mappings (claims, PodGroups); pods are typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod

__all__ = ["SCHEDULING_GROUP", "PodGroupStateData", "bind_to", "claim_names_from_pod_group", "group_name",
           "is_for_pod_group", "is_for_pod_group_by_pod", "is_reserved_for_pod", "pod_group_reservation",
           "refers_to_pod"]

SCHEDULING_GROUP = "scheduling.k8s.io"
"""``schedulingapi.GroupName``."""


def _get(obj: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(p)
    return obj


def _rc_field(rc: Any, name: str) -> Any:
    """A field of a pod's ``spec.resourceClaims`` entry (typed or a mapping)."""
    if isinstance(rc, Mapping):
        return rc.get(name)
    return getattr(rc, {"resourceClaimName": "resource_claim_name",
                        "resourceClaimTemplateName": "resource_claim_template_name"}.get(name, name), None)


def group_name(pod: Pod) -> str | None:
    """The pod's ``spec.schedulingGroup.podGroupName``, or None."""
    sg = getattr(pod.spec, "scheduling_group", None)
    return sg.pod_group_name if sg is not None and sg.pod_group_name else None


def refers_to_pod(pod: Pod, ref: Mapping[str, Any]) -> bool:
    """A reference names ``pod``: by UID (by name for pods without one, as simulator input may be)."""
    if pod.metadata.uid:
        return ref.get("uid") == pod.metadata.uid
    return ref.get("name") == pod.metadata.name and not ref.get("uid")


def is_reserved_for_pod(pod: Pod, claim: Mapping[str, Any], accept_pod_group_reservation: bool) -> bool:
    """``resourceclaim.IsReservedForPod``: ``reservedFor`` names the pod, or (when accepted) the
    pod's PodGroup — matched by apiGroup, resource and name, as pods do not know the group's UID."""
    pg = group_name(pod) if accept_pod_group_reservation else None
    for r in _get(claim, "status", "reservedFor") or ():
        if refers_to_pod(pod, r):
            return True
        if pg is not None and r.get("apiGroup") == SCHEDULING_GROUP and r.get("resource") == "podgroups" \
                and r.get("name") == pg:
            return True
    return False


def _controller(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``metav1.GetControllerOfNoCopy``: the owner reference with ``controller: true``."""
    return next((r for r in _get(obj, "metadata", "ownerReferences") or () if r.get("controller")), None)


def is_for_pod_group_by_pod(pod: Pod, claim: Mapping[str, Any]) -> bool:
    """``isForPodGroupByPod``: the claim's controller is a ``PodGroup`` of the scheduling API
    group (any version) named as the pod's group."""
    pg = group_name(pod)
    c = _controller(claim)
    return (pg is not None and c is not None and c.get("name") == pg and c.get("kind") == "PodGroup"
            and str(c.get("apiVersion") or "").startswith(SCHEDULING_GROUP + "/"))


def is_for_pod_group(pod_group: Mapping[str, Any], claim: Mapping[str, Any]) -> str | None:
    """``IsForPodGroup``: None when the PodGroup controls the claim, else upstream's error text."""
    ns, name = _get(claim, "metadata", "namespace") or "", _get(claim, "metadata", "name") or ""
    gns, gname = _get(pod_group, "metadata", "namespace") or "", _get(pod_group, "metadata", "name") or ""
    if ns != gns:
        return f"ResourceClaim {ns}/{name} is not in the same namespace as PodGroup {gns}/{gname}"
    c = _controller(claim)
    uid = _get(pod_group, "metadata", "uid")
    if c is None or (c.get("uid") != uid if uid else c.get("name") != gname):
        return f"ResourceClaim {ns}/{name} was not created for PodGroup {gns}/{gname} (PodGroup is not owner)"
    return None


def pod_group_reservation(pod_group: Mapping[str, Any]) -> dict[str, Any]:
    """The ``reservedFor`` entry of a PodGroup (``ResourceClaimConsumerReference``)."""
    ref: dict[str, Any] = {"apiGroup": SCHEDULING_GROUP, "resource": "podgroups",
                           "name": _get(pod_group, "metadata", "name") or ""}
    uid = _get(pod_group, "metadata", "uid")
    if uid:
        ref["uid"] = uid
    return ref


def _pod_reservation(pod: Pod) -> dict[str, Any]:
    ref: dict[str, Any] = {"resource": "pods", "name": pod.metadata.name}
    if pod.metadata.uid:
        ref["uid"] = pod.metadata.uid
    return ref


def bind_to(pod: Pod, pod_group: Mapping[str, Any] | None, pod_claim: Any) -> dict[str, Any]:
    """``resourceclaim.BindTo``: the ``reservedFor`` entry a pod's claim entry is reserved with —
    the PodGroup's when an entry of its ``spec.resourceClaims`` has the same name and the same
    claim/template name, else the pod's. Raises ``ValueError`` with upstream's text for an entry
    naming neither or a pod of another group."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    claim_name = _rc_field(pod_claim, "resourceClaimName")
    template = _rc_field(pod_claim, "resourceClaimTemplateName")
    if claim_name is None and template is None:
        raise ValueError(f"Pod {ns}/{name} claim {_rc_field(pod_claim, 'name')}: none of the supported "
                         "fields are set")
    if pod_group is not None:
        gns, gname = _get(pod_group, "metadata", "namespace") or "", _get(pod_group, "metadata", "name") or ""
        pg = group_name(pod)
        if pg is None:
            raise ValueError(f"Pod {ns}/{name} does not belong to a PodGroup")
        if ns != gns or pg != gname:
            raise ValueError(f"Pod {ns}/{name} belongs to PodGroup {ns}/{pg}, not PodGroup {gns}/{gname}")
        for e in _get(pod_group, "spec", "resourceClaims") or ():
            if e.get("resourceClaimName") is None and e.get("resourceClaimTemplateName") is None:
                raise ValueError(f"PodGroup {gns}/{gname} claim {e.get('name')}: none of the supported fields are set")
            if (e.get("name") == _rc_field(pod_claim, "name") and e.get("resourceClaimName") == claim_name
                    and e.get("resourceClaimTemplateName") == template):
                return pod_group_reservation(pod_group)
    return _pod_reservation(pod)


def claim_names_from_pod_group(pod_group: Mapping[str, Any]) -> list[tuple[str | None, bool, str | None]]:
    """``NameFromPodGroup`` for each ``spec.resourceClaims`` entry: (claim name or None,
    must-check-owner, error text or None)."""
    gns, gname = _get(pod_group, "metadata", "namespace") or "", _get(pod_group, "metadata", "name") or ""
    out: list[tuple[str | None, bool, str | None]] = []
    for e in _get(pod_group, "spec", "resourceClaims") or ():
        if e.get("resourceClaimName") is not None:
            out.append((str(e["resourceClaimName"]), False, None))
        elif e.get("resourceClaimTemplateName") is not None:
            st = next((s for s in _get(pod_group, "status", "resourceClaimStatuses") or ()
                       if s.get("name") == e.get("name")), None)
            if st is None:
                out.append((None, False, f"PodGroup {gns}/{gname}: ResourceClaim not created yet"))
            else:
                got = st.get("resourceClaimName")
                out.append((None if got is None else str(got), True, None))
        else:
            out.append((None, False, f"PodGroup {gns}/{gname}, spec.resourceClaim {e.get('name')}: "
                                     "none of the supported fields are set"))
    return out


@dataclass
class PodGroupStateData:
    """DynamicResources' state of one pod-group cycle (upstream ``podGroupStateData``).

    ``pending_allocations``: claim UID → UIDs (or names) of the members whose Reserve shares the
    allocation made in *this* cycle (a later member's PreFilter reuses it instead of waiting for
    PreBind); ``pods_state_data``: ``namespace/name`` → the member's
    :class:`~kubesched.plugins.dynamicresources.StateData` (read by PodGroupPostFilter)."""

    pending_allocations: dict[str, set[str]] = field(default_factory=dict)
    pods_state_data: dict[str, Any] = field(default_factory=dict)

    def clone(self) -> PodGroupStateData:
        return self
