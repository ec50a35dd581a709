"""DynamicResources and PodGroups (DRAWorkloadResourceClaims, GenericWorkload; upstream-v137 §4.3).

Ported from upstream v1.37.2 ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``:
the ``podgroup-*`` cases of ``testPlugin`` (PreBind reserves a claim the PodGroup shares for the
group, or for the pod with the gate off), ``TestPreFilterReusesPendingAllocation``,
``TestFilterReusesPendingAllocationRequiresDRAOptionalNodeOperations`` and the
``TestPodGroupPostFilter`` table; plus the claim-owner texts of
``dynamic-resource-allocation@v0.37.2/resourceclaim`` (``IsForPod``) and the sharing of one
pending allocation by the members of a pod-group cycle (dra_manager.go ``sharers``).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from test_dynamicresources import (
    CLASS,
    DRIVER,
    UU,
    V134,
    V136,
    V137,
    Harness,
    claim,
    device,
    device_class,
    reasons,
    resource_slice,
)

from kubesched.api import objects as o
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code
from kubesched.framework.node_table import NodeInfo
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupCycleState, PodGroupInfo
from kubesched.plugins import dynamicresources as dra
from kubesched.plugins.dra_workload import PodGroupStateData, bind_to
from kubesched.testing.wrappers import MakeNode, MakePod

PG = "my-podgroup"
PG_UID = "5678"
CLAIM = "my-pod-my-resource"
RESOURCE = "my-resource"
PG_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": PG, "uid": PG_UID}

GATES = FeatureGate.from_flags(feature_gates="GenericWorkload=true,DRAWorkloadResourceClaims=true")
GATES_NO_CLAIMS = FeatureGate.from_flags(feature_gates="GenericWorkload=true")
GATES_TAS = FeatureGate.from_flags(
    feature_gates="GenericWorkload=true,DRAWorkloadResourceClaims=true,TopologyAwareWorkloadScheduling=true")

ALLOCATION = {"devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker",
                                       "device": "instance-1"}]},
              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                  {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
WRONG_TOPOLOGY = {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}}


def grouped_pod(name: str = "my-pod", uid: str = "1234", *, claim_name: str = CLAIM, resource: str = RESOURCE,
                template: bool = False) -> o.Pod:
    """upstream ``groupedPodWithClaimName`` (and ``groupedPodWithClaimTemplateInStatus``)."""
    raw = MakePod().name(name).uid(uid).raw()
    entry: dict[str, Any] = {"name": resource}
    entry["resourceClaimTemplateName" if template else "resourceClaimName"] = claim_name
    raw["spec"]["resourceClaims"] = [entry]
    raw["spec"]["schedulingGroup"] = {"podGroupName": PG}
    if template:
        raw["status"]["resourceClaimStatuses"] = [{"name": resource, "resourceClaimName": CLAIM}]
    return _decode(raw)


def _decode(raw: dict[str, Any]) -> o.Pod:
    import msgspec

    return o.decode(o.Pod, msgspec.json.decode(msgspec.json.encode(raw)))


def pod_group(*, template: bool = False, constraints: bool = False, claims: bool = True) -> dict[str, Any]:
    """upstream ``podGroupWithClaimName`` / ``podGroupWithClaimTemplate`` / ``...AndConstraints``."""
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if claims:
        spec["resourceClaims"] = [{"name": RESOURCE, ("resourceClaimTemplateName" if template
                                                      else "resourceClaimName"): CLAIM}]
    if constraints:
        spec["schedulingConstraints"] = {"topology": [{"key": "kubernetes.io/hostname"}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": PG, "namespace": "default", "uid": PG_UID}, "spec": spec}


def pg_claim(name: str = CLAIM, *, allocation: dict | None = None, reserved_for: list[dict] = (),
             owner: str = "podgroup") -> tuple[str, dict]:
    """upstream ``pendingPodGroupClaim`` (owned by the PodGroup) and its allocated/reserved forms;
    ``owner="pod"`` for the pod-owned ``pendingClaim`` family."""
    kind, c = claim(name, allocation=allocation, reserved_for=reserved_for)
    if owner == "podgroup":
        c["metadata"]["ownerReferences"] = [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                             "name": PG, "uid": PG_UID, "controller": True}]
    elif owner == "pod":
        c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234",
                                             "controller": True}]
    return kind, c


class _State:
    def __init__(self, uids: set[str]) -> None:
        self.uids = uids

    def all_pods(self) -> set[str]:
        return self.uids

    def all_pods_count(self) -> int:
        return len(self.uids)

    def unscheduled_pods(self) -> dict[str, Any]:
        return {}

    def assumed_pods(self) -> set[str]:
        return set()

    def assigned_pods(self) -> set[str]:
        return set()

    def scheduled_pods(self) -> list[Any]:
        return []

    def scheduled_pods_count(self) -> int:
        return 0


class _Scheduled(_State):
    def scheduled_pods_count(self) -> int:
        return 1


class PGManager:
    """A PodGroupManager with the observed PodGroups and a member state per group."""

    def __init__(self, *groups: dict[str, Any], state: _State | None = None) -> None:
        self.groups = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in groups}
        self.state = state or _State(set())

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.groups.get((namespace, name))

    def pod_group_state(self, namespace: str, name: str) -> _State | None:
        return self.state if (namespace, name) in self.groups else None


class LinkedState(CycleState):
    """A member's CycleState marked with its pod-group cycle (upstream ``SetPodGroupSchedulingCycle``)."""

    def __init__(self, pgcs: PodGroupCycleState | None) -> None:
        super().__init__()
        self.pod_group_cycle_state = pgcs


def harness(*objs: tuple[str, dict], gates: FeatureGate = GATES, groups: tuple[dict, ...] = (),
            state: _State | None = None, nodes: list | None = None) -> Harness:
    kw = {"nodes": nodes} if nodes is not None else {}
    h = Harness(*objs, features=gates, **kw)
    h.pl.handle.pod_group_manager = PGManager(*groups, state=state)
    return h


def schedule(h: Harness, pod: o.Pod, state: CycleState, node: str = "worker") -> Any:
    _, st, filt = h.run(pod, state)
    assert st is None and filt[node] is None, (st, filt)
    assert h.pl.reserve(state, pod, node) is None
    res = h.pl.pre_bind(state, pod, node)
    return asyncio.run(res) if res is not None and not isinstance(res, dra.Status) else res


WITH_SLICE = (device_class(), resource_slice("s", [device("instance-1")], node="worker"))


# ─────────────────────────── PreBind: reserved for the PodGroup ───────────────────────────


@pytest.mark.parametrize("gates,want", [
    (GATES, [PG_RESERVATION]),
    (GATES_NO_CLAIMS, [{"resource": "pods", "name": "my-pod", "uid": "1234"}]),
], ids=["podgroup-claim-reference", "podgroup-claim-reference-feature-disabled-reserves-for-pod"])
def test_allocated_podgroup_claim_reserved_for_group(gates, want):
    h = harness(pg_claim(allocation=ALLOCATION), claim("other"), *WITH_SLICE, gates=gates, groups=(pod_group(),))
    pod = grouped_pod()
    assert schedule(h, pod, CycleState()) is None
    assert h.claim(CLAIM)["status"]["reservedFor"] == want
    assert [k for k, _ in h.client.writes] == ["status"]  # allocated: the reservation only


def test_podgroup_claim_template():
    # podgroup-claim-template: the pod's generated claim is owned by the PodGroup (accepted with the gate)
    h = harness(pg_claim(allocation=ALLOCATION), *WITH_SLICE, groups=(pod_group(template=True),))
    pod = grouped_pod(template=True)
    assert h.pl.pre_enqueue(pod) is None
    assert schedule(h, pod, CycleState()) is None
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


@pytest.mark.parametrize("gates,want", [
    (GATES, [PG_RESERVATION]),
    (GATES_NO_CLAIMS, [{"resource": "pods", "name": "my-pod", "uid": "1234"}]),
], ids=["podgroup-with-resources", "podgroup-with-resources-feature-disabled-reserves-for-pod"])
def test_pending_podgroup_claim_allocated_and_reserved(gates, want):
    h = harness(pg_claim(), *WITH_SLICE, gates=gates, groups=(pod_group(),))
    pod = grouped_pod()
    state, st, filt = h.run(pod)
    assert st is None and filt["worker"] is None
    assert h.pl.reserve(state, pod, "worker") is None
    assert h.pl.manager.in_flight  # reserve: the allocation is in flight
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    c = h.claim(CLAIM)
    assert c["status"]["reservedFor"] == want
    assert c["status"]["allocation"]["devices"] == ALLOCATION["devices"]
    assert dra.FINALIZER in c["metadata"]["finalizers"]
    assert not h.pl.manager.in_flight


def test_pod_claim_not_in_podgroup_spec_reserved_for_pod():
    # BindTo: name and claim name must both match an entry of the PodGroup's spec.resourceClaims
    h = harness(pg_claim("other-claim", owner="pod"), *WITH_SLICE, groups=(pod_group(),))
    pod = grouped_pod(claim_name="other-claim")
    assert schedule(h, pod, CycleState()) is None
    assert h.claim("other-claim")["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": "1234"}]


def test_bind_to_errors():
    pod = grouped_pod()
    other = copy.deepcopy(pod_group())
    other["metadata"]["name"] = "other"
    with pytest.raises(ValueError, match="belongs to PodGroup default/my-podgroup, not PodGroup default/other"):
        bind_to(pod, other, pod.spec.resource_claims[0])
    assert bind_to(pod, None, pod.spec.resource_claims[0]) == {"resource": "pods", "name": "my-pod", "uid": "1234"}


def test_podgroup_not_observed():
    h = harness(pg_claim(allocation=ALLOCATION), *WITH_SLICE)
    _, st, _ = h.run(grouped_pod())
    assert reasons(st) == (UU, (f"pod group state not found for pod group default/{PG}",))


# ─────────────────────────── claim owner texts ───────────────────────────


@pytest.mark.parametrize("gates,msg", [
    (V134, f"ResourceClaim default/{CLAIM} was not created for pod default/my-pod (pod is not owner)"),
    (V136, f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod (Pod is not owner)"),
    (V137, f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod (Pod is not owner)"),
    (GATES, f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod "
            f"(neither Pod nor PodGroup {PG} is the owner)"),
], ids=["1.34", "1.36", "1.37", "1.37-workload-claims"])
def test_claim_owner_texts(gates, msg):
    # upstream "wrong-claim": a generated claim owned by neither the pod nor (with the gate) its PodGroup
    _, c = pg_claim(owner="none")
    c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234123",
                                         "controller": True}]
    h = harness(("ResourceClaim", c), gates=gates, groups=(pod_group(),))
    st = h.pl.pre_enqueue(grouped_pod(template=True))
    assert reasons(st) == (UU, (msg,))


def test_podgroup_owned_claim_rejected_without_gate():
    h = harness(pg_claim(allocation=ALLOCATION), gates=GATES_NO_CLAIMS, groups=(pod_group(),))
    st = h.pl.pre_enqueue(grouped_pod(template=True))
    assert reasons(st) == (UU, (f"ResourceClaim default/{CLAIM} was not created for Pod default/my-pod "
                                "(Pod is not owner)",))


# ─────────────────────────── pending allocations shared in a pod-group cycle ───────────────────────────


def _pending(h: Harness, allocation: dict) -> dict:
    c = copy.deepcopy(h.claim(CLAIM))
    c["status"]["allocation"] = allocation
    h.pl._manager().signal_pending_allocation(c)
    return c


def test_prefilter_reuses_pending_allocation():
    # TestPreFilterReusesPendingAllocation: the allocation in flight for this cycle is reused; its
    # (absent) node selector leaves every node available
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),))
    allocation = {"devices": ALLOCATION["devices"]}
    c = _pending(h, allocation)
    pgcs = PodGroupCycleState()
    pgcs.write(dra.STATE_KEY, PodGroupStateData(pending_allocations={c["metadata"]["uid"]: {"1234"}}))
    state = LinkedState(pgcs)
    pod = grouped_pod()
    _, st = h.pl.pre_filter(state, pod, h.table)
    assert st is None
    s = state.read(dra.STATE_KEY)
    assert s.informations[0].allocation is allocation
    assert s.informations[0].available_on_nodes is None
    assert pgcs.read(dra.STATE_KEY).pods_state_data["default/my-pod"] is s


def test_pending_allocation_of_other_cycle_waits():
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),))
    _pending(h, {"devices": ALLOCATION["devices"]})
    _, st = h.pl.pre_filter(LinkedState(PodGroupCycleState()), grouped_pod(), h.table)
    assert reasons(st) == (UU, (f"resource claim default/{CLAIM} is in the process of being allocated",))


def test_filter_reused_pending_allocation_requires_optional_node_operations():
    # TestFilterReusesPendingAllocationRequiresDRAOptionalNodeOperations
    nodes = [MakeNode().name("worker").obj(), MakeNode().name("worker-feature").obj()]
    nodes[1].status.declared_features = ["DRAOptionalNodeOperations"]
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),), nodes=nodes)
    devices = copy.deepcopy(ALLOCATION["devices"])
    devices["results"][0]["skipNodeOperations"] = ["Prepare"]
    c = _pending(h, {"devices": devices})
    pgcs = PodGroupCycleState()
    pgcs.write(dra.STATE_KEY, PodGroupStateData(pending_allocations={c["metadata"]["uid"]: {"1234"}}))
    _, st, filt = h.run(grouped_pod(), LinkedState(pgcs))
    assert st is None
    assert reasons(filt["worker"]) == (UU, (f"resource claim default/{CLAIM} allocation requires "
                                            "DRAOptionalNodeOperations feature on the node",))
    assert filt["worker-feature"] is None


def test_members_share_one_pending_allocation():
    # Two members of one pod-group cycle: the second reuses the first's Reserve, the first PreBind
    # writes the allocation with the group's reservation, the second adds nothing
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),))
    p1, p2 = grouped_pod("p1", "u1"), grouped_pod("p2", "u2")
    pgcs = PodGroupCycleState()
    s1, s2 = LinkedState(pgcs), LinkedState(pgcs)
    _, st, filt = h.run(p1, s1)
    assert st is None and filt["worker"] is None
    assert h.pl.reserve(s1, p1, "worker") is None
    _, st, filt = h.run(p2, s2)
    assert st is None and filt["worker"] is None and reasons(filt["worker-2"]) == (
        UU, ("resourceclaim not available on the node",))
    assert h.pl.reserve(s2, p2, "worker") is None
    mgr = h.pl.manager
    uid = h.claim(CLAIM)["metadata"]["uid"]
    assert mgr.sharers[uid] == 2
    assert pgcs.read(dra.STATE_KEY).pending_allocations == {uid: {"u1", "u2"}}
    s1.pod_group_cycle_state = s2.pod_group_cycle_state = None  # cleared before binding
    assert asyncio.run(h.pl.pre_bind(s1, p1, "worker")) is None
    assert asyncio.run(h.pl.pre_bind(s2, p2, "worker")) is None
    c = h.claim(CLAIM)
    assert c["status"]["reservedFor"] == [PG_RESERVATION]
    assert [k for k, _ in h.client.writes] == ["update", "status"]
    assert not mgr.in_flight


def test_unreserve_keeps_allocation_other_members_share():
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),))
    p1, p2 = grouped_pod("p1", "u1"), grouped_pod("p2", "u2")
    pgcs = PodGroupCycleState()
    s1, s2 = LinkedState(pgcs), LinkedState(pgcs)
    h.run(p1, s1)
    h.pl.reserve(s1, p1, "worker")
    h.run(p2, s2)
    h.pl.reserve(s2, p2, "worker")
    uid = h.claim(CLAIM)["metadata"]["uid"]
    h.pl.unreserve(s2, p2, "worker")
    assert uid in h.pl.manager.in_flight and uid in pgcs.read(dra.STATE_KEY).pending_allocations
    h.pl.unreserve(s1, p1, "worker")
    assert uid not in h.pl.manager.in_flight and not pgcs.read(dra.STATE_KEY).pending_allocations


class BareState:
    """A cycle state without the pod-group link attribute (a cycle that does not mark members)."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)


def test_fallback_group_state_without_cycle_link():
    # A cycle state without the link: the plugin keeps the group's state itself
    h = harness(pg_claim(), *WITH_SLICE, groups=(pod_group(),))
    p1, p2 = grouped_pod("p1", "u1"), grouped_pod("p2", "u2")
    s1, s2 = BareState(), BareState()
    h.run(p1, s1)
    h.pl.reserve(s1, p1, "worker")
    _, st, filt = h.run(p2, s2)
    assert st is None and filt["worker"] is None  # reused, not "in the process of being allocated"
    info = PodGroupInfo(name=PG, namespace="default", pod_group=pod_group(), unscheduled_pods=[p1, p2])
    _, st = h.pl.pod_group_post_filter(PodGroupCycleState(), info, None)
    # p2 found the claim (its reused allocation's node selector) unavailable on worker-2 and it is
    # reserved for nobody: upstream deallocates it (a status write of the unallocated claim)
    assert st.reasons == ("deallocation of PodGroup ResourceClaim completed",)
    assert not h.pl._group_states


def test_gates_off_no_group_state():
    h = harness(pg_claim(owner="pod"), *WITH_SLICE, gates=V137)
    pod = grouped_pod()
    state = CycleState()
    h.run(pod, state)
    h.pl.reserve(state, pod, "worker")
    assert not h.pl._group_states
    _, st, _ = h.run(grouped_pod("p2", "u2"))
    assert reasons(st) == (UU, (f"resource claim default/{CLAIM} is in the process of being allocated",))


# ─────────────────────────── PodGroupPostFilter (TestPodGroupPostFilter) ───────────────────────────

IN_USE = {"resource": "pods", "name": "my-pod", "uid": "1234"}


def _post_filter(h: Harness, pods: list[o.Pod], unavailable: list[str], group: dict | None = None,
                 key_type: str | None = None):
    """Run PodGroupPostFilter with each member's state as PreFilter left it, the named claims
    unavailable (upstream's test builds the states the same way)."""
    group = group or pod_group()
    gs = PodGroupStateData()
    for pod in pods:
        s = dra.StateData(h.pl._claims(pod))
        s.unavailable_claims = {i for i, c in enumerate(s.claims) if c["metadata"]["name"] in unavailable}
        gs.pods_state_data[f"default/{pod.metadata.name}"] = s
    pgcs = PodGroupCycleState()
    pgcs.write(dra.STATE_KEY, gs)
    info = PodGroupInfo(name=PG, namespace="default", pod_group=group, unscheduled_pods=pods)
    if key_type is not None:
        info.type = key_type
    return h.pl.pod_group_post_filter(pgcs, info, lambda: (None, None))


def test_post_filter_empty():
    h = harness(pg_claim(owner="pod"), gates=GATES_NO_CLAIMS, groups=(pod_group(),))
    res, st = _post_filter(h, [grouped_pod()], [])
    assert res is None and st.code == Code.UNSCHEDULABLE


def test_post_filter_deallocate_pod_level_claim():
    h = harness(pg_claim(owner="pod", allocation=ALLOCATION, reserved_for=[IN_USE]), groups=(pod_group(),))
    _, st = _post_filter(h, [grouped_pod()], [CLAIM])
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ("deallocation and deletion of ResourceClaims completed",))
    c = h.claim(CLAIM)
    assert "allocation" not in c["status"] and "reservedFor" not in c["status"]


def test_post_filter_deallocate_podgroup_level_claim():
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), groups=(pod_group(),))
    _, st = _post_filter(h, [grouped_pod()], [CLAIM])
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ("deallocation of PodGroup ResourceClaim completed",))
    c = h.claim(CLAIM)
    assert "allocation" not in c["status"] and "reservedFor" not in c["status"]


def test_post_filter_delete_pod_level_extended_claim():
    _, ext = pg_claim("pod-extended-resources", owner="pod", allocation=ALLOCATION, reserved_for=[IN_USE])
    ext["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    h = harness(("ResourceClaim", ext), pg_claim(owner="pod"), groups=(pod_group(),))
    deleted = []

    async def delete(c):
        deleted.append(c["metadata"]["name"])

    h.client.delete_resource_claim = delete
    pod = grouped_pod()
    gs = PodGroupStateData()
    s = dra.StateData([*h.pl._claims(pod), ext])
    s.ext_index = 1
    s.unavailable_claims = {1}
    gs.pods_state_data["default/my-pod"] = s
    pgcs = PodGroupCycleState()
    pgcs.write(dra.STATE_KEY, gs)
    _, st = h.pl.pod_group_post_filter(pgcs, PodGroupInfo(name=PG, namespace="default", pod_group=pod_group(),
                                                          unscheduled_pods=[pod]), None)
    assert st.reasons == ("deallocation and deletion of ResourceClaims completed",)
    assert deleted == ["pod-extended-resources"]


@pytest.mark.parametrize("pods", [1, 2],
                         ids=["unreserve-podgroup-claim", "unreserve-podgroup-multiple-unscheduled-pods"])
def test_post_filter_unreserve_podgroup_claim(pods):
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), groups=(pod_group(),))
    members = [grouped_pod(), grouped_pod("my-pod-2", "1234-2")][:pods]
    _, st = _post_filter(h, members, [])
    assert (st.code, st.reasons) == (UU, ("ResourceClaim unreserved for PodGroup",))
    c = h.claim(CLAIM)
    assert not c["status"]["reservedFor"] and c["status"]["allocation"] == ALLOCATION


def test_post_filter_mixed_pod_level_and_podgroup_claims():
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]),
                pg_claim("my-claim-2", owner="pod", allocation=ALLOCATION,
                         reserved_for=[{"resource": "pods", "name": "my-pod-podlevel", "uid": "1234-podlevel"}]),
                groups=(pod_group(),))
    podlevel = grouped_pod("my-pod-podlevel", "1234-podlevel", claim_name="my-claim-2", resource="my-resource-2")
    _, st = _post_filter(h, [grouped_pod(), podlevel], ["my-claim-2"])
    assert (st.code, st.reasons) == (UU, ("ResourceClaim unreserved for PodGroup",))
    by_pg, pod_level = h.claim(CLAIM), h.claim("my-claim-2")
    assert by_pg["status"]["allocation"] is not None and not by_pg["status"]["reservedFor"]
    assert "allocation" not in pod_level["status"] and "reservedFor" not in pod_level["status"]


@pytest.mark.parametrize("gates,group", [
    (GATES_NO_CLAIMS, pod_group()),
    (GATES_TAS, pod_group(constraints=True)),
], ids=["skip-deallocate-feature-disabled", "skip-deallocate-topology-aware-podgroup"])
def test_post_filter_skips(gates, group):
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), gates=gates, groups=(group,))
    _, st = _post_filter(h, [grouped_pod()], [], group=group)
    assert st.code == Code.UNSCHEDULABLE
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


def test_post_filter_composite_pod_group():
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), groups=(pod_group(),))
    _, st = _post_filter(h, [grouped_pod()], [CLAIM], key_type=COMPOSITE_POD_GROUP_KEY_TYPE)
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ())
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


def test_post_filter_members_scheduled_keeps_group_claims():
    # deallocatePodGroupClaims: an assumed or bound member still needs the group's claims
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), groups=(pod_group(),),
                state=_Scheduled(set()))
    _, st = _post_filter(h, [grouped_pod()], [CLAIM])
    assert st.reasons == ("deallocation and deletion of ResourceClaims completed",)
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


def test_post_filter_no_member_reached_prefilter():
    # upstream reads the group's DRA state unconditionally: Error when no member's PreFilter ran
    h = harness(groups=(pod_group(),))
    _, st = h.pl.pod_group_post_filter(PodGroupCycleState(), PodGroupInfo(
        name=PG, namespace="default", pod_group=pod_group(), unscheduled_pods=[grouped_pod()]), None)
    assert (st.code, st.reasons) == (Code.ERROR, ("not found",))


def test_node_allocatable_mapped_pending_allocation_not_shared():
    # validateNodeAllocatableDRAClaimSharing with a PodGroup: a claim whose device maps
    # node-allocatable resources and that another member of the cycle reserved is rejected
    gates = FeatureGate.from_flags(
        feature_gates="GenericWorkload=true,DRAWorkloadResourceClaims=true,DRANodeAllocatableResources=true")
    d = device("instance-1")
    d["nodeAllocatableResources"] = {"cpu": {"mapping": {"deviceMultiplier": "1"}}}
    h = harness(pg_claim(), device_class(), resource_slice("s", [d], node="worker"), gates=gates,
                groups=(pod_group(),))
    p1, p2 = grouped_pod("p1", "u1"), grouped_pod("p2", "u2")
    pgcs = PodGroupCycleState()
    s1, s2 = LinkedState(pgcs), LinkedState(pgcs)
    _, st, filt = h.run(p1, s1)
    assert st is None and filt["worker"] is None
    assert h.pl.reserve(s1, p1, "worker") is None
    _, st, filt = h.run(p2, s2)
    assert st is None
    assert reasons(filt["worker"]) == (UU, (f"node allocatable resource claim {CLAIM} has a mapped device and "
                                            "cannot be shared across pods",))


# ───────────── testPlugin's podgroup cases through PreFilter/Filter, then PodGroupPostFilter ─────────────


def _cycle(h: Harness, pod: o.Pod) -> tuple[PodGroupCycleState, LinkedState, Any, dict]:
    pgcs = PodGroupCycleState()
    state = LinkedState(pgcs)
    _, st, filt = h.run(pod, state)
    return pgcs, state, st, filt


def _group_post_filter(h: Harness, pgcs: PodGroupCycleState, pod: o.Pod):
    info = PodGroupInfo(name=PG, namespace="default", pod_group=pod_group(), unscheduled_pods=[pod])
    return h.pl.pod_group_post_filter(pgcs, info, lambda: (None, None))[1]


ONE_NODE = [MakeNode().name("worker").label("kubernetes.io/hostname", "worker").obj()]


@pytest.mark.parametrize("gates,reserved,state,want_status,deallocated", [
    (GATES, [PG_RESERVATION], None, (Code.UNSCHEDULABLE, ("deallocation of PodGroup ResourceClaim completed",)), True),
    (GATES_NO_CLAIMS, [PG_RESERVATION], None, (Code.UNSCHEDULABLE, ()), False),
    (GATES, [], None, (Code.UNSCHEDULABLE, ("deallocation and deletion of ResourceClaims completed",)), True),
    (GATES, [PG_RESERVATION], _Scheduled(set()),
     (Code.UNSCHEDULABLE, ("deallocation and deletion of ResourceClaims completed",)), False),
], ids=["postfilter-deallocate-reserved-podgroup", "postfilter-skip-deallocate-reserved-podgroup-feature-disabled",
        "postfilter-deallocate-unreserved-podgroup", "postfilter-skip-deallocate-reserved-podgroup-when-pods-active"])
def test_post_filter_cases(gates, reserved, state, want_status, deallocated):
    h = harness(pg_claim(allocation=WRONG_TOPOLOGY, reserved_for=reserved), device_class(), gates=gates,
                groups=(pod_group(),), state=state, nodes=ONE_NODE)
    pod = grouped_pod()
    pgcs, _, st, filt = _cycle(h, pod)
    assert st is None and reasons(filt["worker"]) == (UU, ("resourceclaim not available on the node",))
    got = _group_post_filter(h, pgcs, pod)
    if want_status[1]:
        assert (got.code, got.reasons) == want_status
    else:
        assert got.code == Code.UNSCHEDULABLE
    c = h.claim(CLAIM)
    assert ("allocation" not in c["status"]) is deallocated


def test_reserved_okay_podgroup():
    h = harness(pg_claim(allocation=ALLOCATION, reserved_for=[PG_RESERVATION]), *WITH_SLICE, groups=(pod_group(),))
    pod = grouped_pod()
    assert schedule(h, pod, LinkedState(PodGroupCycleState())) is None
    assert h.client.writes == []  # reserved for the group already: PreBind writes nothing
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


def test_bind_podgroup_failure_keeps_group_reservation():
    # bind-podgroup-failure: Unreserve after a failed binding does not drop the PodGroup's reservation
    h = harness(pg_claim(allocation=ALLOCATION), *WITH_SLICE, groups=(pod_group(),))
    pod = grouped_pod()
    state = CycleState()
    h.run(pod, state)
    assert h.pl.reserve(state, pod, "worker") is None
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    writes = len(h.client.writes)
    h.pl.unreserve(state, pod, "worker")  # the binding failed afterwards
    assert len(h.client.writes) == writes
    assert h.claim(CLAIM)["status"]["reservedFor"] == [PG_RESERVATION]


def test_score_counts_reused_pending_allocation():
    # computeScore: the node's allocations are the allocator's followed by the reused pending ones
    req = {"name": "req-1", "firstAvailable": [{"name": "a", "deviceClassName": CLASS},
                                                {"name": "b", "deviceClassName": CLASS}]}
    _, c = pg_claim()
    c["spec"]["devices"]["requests"] = [req]
    h = harness(("ResourceClaim", c), *WITH_SLICE, groups=(pod_group(),))
    p1, p2 = grouped_pod("p1", "u1"), grouped_pod("p2", "u2")
    pgcs = PodGroupCycleState()
    s1, s2 = LinkedState(pgcs), LinkedState(pgcs)
    h.run(p1, s1)
    assert h.pl.score(s1, p1, NodeInfo(h.table, h.table.row_of["worker"])) == (8, None)
    h.pl.reserve(s1, p1, "worker")
    _, st, filt = h.run(p2, s2)
    assert st is None and filt["worker"] is None
    assert h.pl.score(s2, p2, NodeInfo(h.table, h.table.row_of["worker"])) == (8, None)
    import numpy as np

    assert list(h.pl.score_nodes(s2, p2, h.table, np.array([h.table.row_of["worker"]]))) == [8]
