"""Cluster events: action bits, matching, pod/node change extraction, labels.

Ported from upstream v1.37.2 ``pkg/scheduler/framework/types_test.go`` (TestClusterEventMatching,
TestUnrollPodEvent) and ``events_test.go`` (TestNodeSchedulingPropertiesChange,
Test_podSchedulingPropertiesChange), plus the 1.34 differences at ``--emulated-version 1.34``.
"""

from __future__ import annotations

import itertools

import msgspec
import pytest

from kubesched.api.objects import NodeCondition, PodResourceClaimStatus, Taint
from kubesched.features import FeatureGate
from kubesched.framework.events import (
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    ActionType,
    ClusterEvent,
    EventResource,
    action_string,
    event_label,
    general_update,
    match_cluster_events,
    node_update_events,
    pod_update_events,
    unroll_pod_event,
)
from kubesched.testing.wrappers import MakeNode, MakePod

A = ActionType
R = EventResource
V134 = FeatureGate(emulated_version=(1, 34))
V137 = FeatureGate(emulated_version=(1, 37))

# ───────────────────────────── ActionType ─────────────────────────────

UPSTREAM_137_BITS = [  # staging kube-scheduler/framework/types.go L41-85, v0.37.2 (1 << iota)
    "Add", "Delete", "UpdateNodeAllocatable", "UpdateNodeLabel", "UpdateNodeTaint", "UpdateNodeCondition",
    "UpdateNodeAnnotation", "UpdateNodeDeclaredFeature", "UpdateNodePreemptionPolicy", "UpdatePodLabel",
    "UpdatePodScaleDown", "UpdatePodScaleUp", "UpdatePodToleration", "UpdatePodSchedulingGatesEliminated",
    "UpdatePodGeneratedResourceClaim",
]
UPSTREAM_134_BITS = [  # v0.34.12
    "Add", "Delete", "UpdateNodeAllocatable", "UpdateNodeLabel", "UpdateNodeTaint", "UpdateNodeCondition",
    "UpdateNodeAnnotation", "UpdatePodLabel", "UpdatePodScaleDown", "UpdatePodToleration",
    "UpdatePodSchedulingGatesEliminated", "UpdatePodGeneratedResourceClaim",
]
BY_NAME = {action_string(a): a for a in ActionType if action_string(a) and a not in (A.ALL, A.UPDATE)}


def test_action_bits_are_upstream_137() -> None:
    assert [(action_string(ActionType(1 << i))) for i in range(len(UPSTREAM_137_BITS))] == UPSTREAM_137_BITS
    assert int(A.ALL) == 32767 == (1 << 15) - 1
    assert int(A.UPDATE) == int(A.ALL) & ~3
    assert action_string(A.ADD | A.UPDATE_NODE_LABEL) == ""


def _match_with(bits: list[str], reg: set[str], incoming: str | None) -> bool:
    """MatchClusterEvents on action values numbered as ``bits`` (``incoming`` None = general Update)."""
    val = {n: 1 << i for i, n in enumerate(bits)}
    update = sum(v for n, v in val.items() if n.startswith("Update"))
    r = sum(val[n] for n in reg)
    i = update if incoming is None else val[incoming]
    return bool(r & i) and i <= r


def test_bit_order_does_not_change_any_match_between_134_and_137() -> None:
    """Every registration built from the 1.34 actions (and the general ``Update``) matches the
    same incoming events — each single action, ``Add``/``Delete``, or the general ``Update`` — under
    the 1.34 numbering and under kubesched's (1.37) numbering."""
    names = UPSTREAM_134_BITS
    incomings: list[str | None] = [*names, None]
    for k in range(len(names) + 1):
        for combo in itertools.combinations(names, k):
            reg = set(combo)
            ours = ActionType(0)
            for n in reg:
                ours |= BY_NAME[n]
            for inc in incomings:
                inc_ours = general_update(V134) if inc is None else BY_NAME[inc]
                want = _match_with(UPSTREAM_134_BITS, reg, inc)
                got = match_cluster_events(ClusterEvent(R.NODE, ours), ClusterEvent(R.NODE, inc_ours))
                assert got == want, (sorted(reg), inc)
    # registrations of the general Update / All match the general update of every release
    for reg_action in (A.UPDATE, A.ALL):
        for f in (V134, FeatureGate(emulated_version=(1, 35)), V137):
            assert match_cluster_events(ClusterEvent(R.NODE, reg_action), ClusterEvent(R.NODE, general_update(f)))
    # at 1.37 a registration of exactly the 1.34 update bits no longer matches the general update
    old_update = ActionType(0)
    for n in UPSTREAM_134_BITS[2:]:
        old_update |= BY_NAME[n]
    assert not match_cluster_events(ClusterEvent(R.NODE, old_update), ClusterEvent(R.NODE, general_update(V137)))


# ───────────────────────────── matching (TestClusterEventMatching) ─────────────────────────────

MATCH_CASES = [
    ("wildcard event matches with all kinds of coming events",
     (R.WILDCARD, A.ALL), (R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' matching with coming events carries matching actionType",
     (R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), (R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with 'UnscheduledPod' resource and matching actionType",
     (R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), (R.UNSCHEDULED_POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = '*' matching with coming events carries same actionType",
     (R.WILDCARD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = '*' matching with coming events carries different actionType",
     (R.WILDCARD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE_NODE_ALLOCATABLE), False),
    ("event matching with coming events carries '*' resources",
     (R.POD, A.UPDATE_NODE_LABEL), (R.WILDCARD, A.UPDATE_NODE_LABEL), False),
    ("event with resource = '*' matching with coming events carrying a too broad actionType",
     (R.WILDCARD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE), False),
    ("event with resource = '*' matching with coming events carrying a more specific actionType",
     (R.WILDCARD, A.UPDATE), (R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with AssignedPod resource and same actionType",
     (R.POD, A.UPDATE_NODE_LABEL), (R.ASSIGNED_POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with 'TargetPod' resource and same actionType",
     (R.POD, A.UPDATE_NODE_TAINT), (R.TARGET_POD, A.UPDATE_NODE_TAINT), True),
    ("event with resource 'AssignedPod' does not match event with 'UnscheduledPod' resource and same actionType",
     (R.ASSIGNED_POD, A.ADD), (R.UNSCHEDULED_POD, A.ADD), False),
    ("event with resource 'AssignedPod' does not match event with 'TargetPod' resource and same actionType",
     (R.ASSIGNED_POD, A.UPDATE), (R.TARGET_POD, A.UPDATE), False),
    ("event with resource 'TargetPod' does not match event with 'AssignedPod' resource and same actionType",
     (R.TARGET_POD, A.UPDATE), (R.ASSIGNED_POD, A.UPDATE), False),
    ("event with resource 'AssignedPod' does not match with broad 'Pod' resource and same actionType",
     (R.ASSIGNED_POD, A.ADD), (R.POD, A.ADD), False),
    ("event with resource 'AssignedPod' does not match with 'WildCard' resource and same actionType",
     (R.ASSIGNED_POD, A.ADD), (R.WILDCARD, A.ADD), False),
    ("event with resource 'UnscheduledPod' does not match with broad 'Pod' resource and same actionType",
     (R.UNSCHEDULED_POD, A.ADD), (R.POD, A.ADD), False),
    ("WildCard matches with a pod sub-type resource 'TargetPod' and any actionType",
     (R.WILDCARD, A.ALL), (R.TARGET_POD, A.UPDATE), True),
]


@pytest.mark.parametrize(("reg", "incoming", "want"), [pytest.param(*c[1:], id=c[0]) for c in MATCH_CASES])
def test_TestClusterEventMatching(reg: tuple[R, A], incoming: tuple[R, A], want: bool) -> None:
    assert match_cluster_events(ClusterEvent(*reg), ClusterEvent(*incoming)) is want
    assert ClusterEvent(*incoming).matches(ClusterEvent(*reg)) is want


def test_TestUnrollPodEvent() -> None:
    got = unroll_pod_event(ClusterEvent(R.POD, A.UPDATE_POD_LABEL))
    assert [(e.resource, e.action) for e in got] == [
        (R.ASSIGNED_POD, A.UPDATE_POD_LABEL), (R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL),
        (R.TARGET_POD, A.UPDATE_POD_LABEL)]


# ───────────────────────────── labels ─────────────────────────────

def test_labels_renamed_in_137() -> None:
    """1.37 renamed the unscheduled-pod resource: ``UnschedulablePodAdd`` → ``UnscheduledPodAdd``."""
    assert event_label(EVENT_UNSCHEDULED_POD_ADD, V137) == "UnscheduledPodAdd"
    assert event_label(EVENT_UNSCHEDULED_POD_ADD, V134) == "UnschedulablePodAdd"
    assert event_label(EVENT_UNSCHEDULED_POD_UPDATE, V134) == "UnschedulablePodUpdate"
    assert event_label(ClusterEvent(R.TARGET_POD, A.UPDATE_POD_LABEL), V137) == "TargetPodUpdatePodLabel"
    assert event_label(ClusterEvent(R.NODE, A.UPDATE_NODE_TAINT), V134) == "NodeUpdateNodeTaint"
    assert event_label(ClusterEvent(R.ASSIGNED_POD, A.DELETE)) == "AssignedPodDelete"
    assert event_label(EVENT_UNSCHEDULABLE_TIMEOUT) == "UnschedulableTimeout"
    assert event_label(EVENT_FORCE_ACTIVATE) == "ForceActivate"


# ───────────────────────────── node changes (TestNodeSchedulingPropertiesChange) ─────────────────────────────

def _cond(node, status: str):  # noqa: ANN001, ANN202
    return msgspec.structs.replace(node, status=msgspec.structs.replace(
        node.status, conditions=[NodeCondition(type="Ready", status=status, reason="Ready", message="Ready")]))


NODE_CASES = [
    ("no specific changed applied", MakeNode().unschedulable(False).obj(), MakeNode().unschedulable(False).obj(), []),
    ("only node spec unavailable changed", MakeNode().unschedulable(False).obj(), MakeNode().unschedulable(True).obj(),
     [A.UPDATE_NODE_TAINT]),
    ("only node allocatable changed", MakeNode().capacity(cpu="1000m", memory="100m", **{"example.com/foo": "1"}).obj(),
     MakeNode().capacity(cpu="1000m", memory="100m", **{"example.com/foo": "2"}).obj(), [A.UPDATE_NODE_ALLOCATABLE]),
    ("only node label changed", MakeNode().label("foo", "bar").obj(), MakeNode().label("foo", "fuz").obj(),
     [A.UPDATE_NODE_LABEL]),
    ("only node taint changed", MakeNode().taint("node.kubernetes.io/unschedulable", "", "NoSchedule").obj(),
     MakeNode().taint("node.kubernetes.io/unschedulable", "foo", "NoSchedule").obj(), [A.UPDATE_NODE_TAINT]),
    ("only node condition changed", MakeNode().obj(), _cond(MakeNode().obj(), "True"), [A.UPDATE_NODE_CONDITION]),
    ("both node label and node taint changed",
     MakeNode().label("foo", "bar").taint("node.kubernetes.io/unschedulable", "", "NoSchedule").obj(),
     MakeNode().taint("node.kubernetes.io/unschedulable", "foo", "NoSchedule").obj(),
     [A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT]),
]


@pytest.mark.parametrize(("new", "old", "want"), [pytest.param(*c[1:], id=c[0]) for c in NODE_CASES])
@pytest.mark.parametrize("features", [V134, V137], ids=["1.34", "1.37"])
def test_TestNodeSchedulingPropertiesChange(new, old, want, features) -> None:  # noqa: ANN001
    assert [(e.resource, e.action) for e in node_update_events(old, new, features)] == [(R.NODE, a) for a in want]


def test_node_annotation_and_condition_status_only() -> None:
    old = MakeNode().obj()
    new = msgspec.structs.replace(old, metadata=msgspec.structs.replace(old.metadata, annotations={"foo": "bar"}))
    assert [e.action for e in node_update_events(old, new, V137)] == [A.UPDATE_NODE_ANNOTATION]
    # only the status per type counts (upstream strips reason/message/times)
    a, b = _cond(old, "True"), _cond(old, "True")
    b.status.conditions[0].message = "other"
    assert node_update_events(a, b, V137) == []


def test_node_becoming_unschedulable_is_no_event() -> None:
    assert node_update_events(MakeNode().obj(), MakeNode().unschedulable(True).obj(), V137) == []


def test_node_declared_features_and_preemption_policy_by_version() -> None:
    """UpdateNodeDeclaredFeature needs NodeDeclaredFeatures (1.35+, on by default since 1.36);
    UpdateNodePreemptionPolicy is 1.37+. Read from ``status.declaredFeatures`` /
    ``spec.podPreemptionPolicy`` when the Node model carries them."""
    class Obj:
        def __init__(self, **kw: object) -> None:
            self.__dict__.update(kw)

    def node(features: list[str], policy: object) -> Obj:
        return Obj(metadata=Obj(labels={}, annotations={}), spec=Obj(unschedulable=False, taints=[],
                                                                      pod_preemption_policy=policy),
                   status=Obj(allocatable={}, capacity={}, conditions=[], declared_features=features))

    old, new = node(["a"], None), node(["a", "b"], {"disableResizePreemption": "x"})
    import kubesched.api.objects as objects
    real = objects.node_allocatable
    objects.node_allocatable = lambda n: n.status.allocatable  # the stand-in has no quantities
    try:
        assert [e.action for e in node_update_events(old, new, V137)] == [
            A.UPDATE_NODE_PREEMPTION_POLICY, A.UPDATE_NODE_DECLARED_FEATURE]
        assert [e.action for e in node_update_events(old, new, FeatureGate(emulated_version=(1, 36)))] == [
            A.UPDATE_NODE_DECLARED_FEATURE]
        assert node_update_events(old, new, V134) == []
    finally:
        objects.node_allocatable = real


# ───────────────────────────── pod changes (Test_podSchedulingPropertiesChange) ─────────────────────────────

BIG = MakePod().req(cpu="101m").obj()
SMALL = MakePod().req(cpu="100m").obj()
SMALL_LABEL = MakePod().label("foo", "bar").req(cpu="100m").obj()
CLAIM_A = PodResourceClaimStatus(name="my-claim", resource_claim_name="claim")
CLAIM_B = PodResourceClaimStatus(name="my-claim-2", resource_claim_name="claim-2")


def _claims(*c: PodResourceClaimStatus):  # noqa: ANN202
    p = MakePod().obj()
    return msgspec.structs.replace(p, status=msgspec.structs.replace(p.status, resource_claim_statuses=list(c)))


POD_CASES = [
    ("assigned pod is updated", MakePod().label("foo", "bar").node("node").obj(),
     MakePod().label("foo", "bar2").node("node").obj(), False, [(R.ASSIGNED_POD, A.UPDATE_POD_LABEL)]),
    ("unscheduled pod label is updated", MakePod().label("foo", "bar").obj(), MakePod().label("foo", "bar2").obj(),
     False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL)]),
    ("pod's resource request is scaled down", SMALL, BIG, False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    ("pod's resource request is scaled up", BIG, SMALL, False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_UP)]),
    ("both pod's resource request and label are updated", SMALL_LABEL, BIG, False,
     [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL), (R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    ("untracked properties of pod is updated", MakePod().annotation("foo", "bar").obj(),
     MakePod().annotation("foo", "bar2").obj(), False, [(R.UNSCHEDULED_POD, A.UPDATE)]),
    ("scheduling gate is eliminated", MakePod().obj(), MakePod().scheduling_gates("foo").obj(), True,
     [(R.TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
    ("scheduling gate is removed, but not completely eliminated", MakePod().scheduling_gates("foo").obj(),
     MakePod().scheduling_gates("foo", "bar").obj(), True, [(R.TARGET_POD, A.UPDATE)]),
    ("pod's tolerations are updated", MakePod().toleration("key").toleration("key2").obj(),
     MakePod().toleration("key").obj(), True, [(R.TARGET_POD, A.UPDATE_POD_TOLERATION)]),
    ("pod claim statuses change, feature enabled", _claims(CLAIM_A), _claims(), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("pod claim statuses swapped", _claims(CLAIM_A, CLAIM_B), _claims(CLAIM_B, CLAIM_A), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("scheduling gate is eliminated for an assigned pod, it takes precedence over target pod resource type",
     MakePod().node("node").obj(), MakePod().scheduling_gates("foo").node("node").obj(), True,
     [(R.ASSIGNED_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
]


@pytest.mark.parametrize(("new", "old", "target", "want"), [pytest.param(*c[1:], id=c[0]) for c in POD_CASES])
def test_Test_podSchedulingPropertiesChange(new, old, target, want) -> None:  # noqa: ANN001
    got = pod_update_events(old, new, target=target, features=V137)
    assert [(e.resource, e.action) for e in got] == want


def test_pod_claim_status_change_without_dra_is_general_update() -> None:
    """"pod claim statuses change, feature disabled" (DynamicResourceAllocation off)."""
    off = FeatureGate(emulated_version=(1, 34), overrides={"DynamicResourceAllocation": False})
    got = pod_update_events(_claims(), _claims(CLAIM_A), target=True, features=off)
    assert [(e.resource, e.action) for e in got] == [(R.UNSCHEDULED_POD, general_update(off))]


def test_pod_events_at_134() -> None:
    """1.34: no UpdatePodScaleUp (a scale-up alone is the general Update) and the pod's own update
    is an ``UnschedulablePod`` event."""
    assert [(e.resource, e.action) for e in pod_update_events(SMALL, BIG, target=True, features=V134)] == [
        (R.UNSCHEDULED_POD, general_update(V134))]
    assert [(e.resource, e.action) for e in pod_update_events(BIG, SMALL, target=True, features=V134)] == [
        (R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]


def test_removed_request_is_scale_down_and_added_is_scale_up() -> None:
    """``extractPodScaleDown``: a request that disappears counts as scaled down; an added one as up."""
    two = MakePod().req(cpu="1", memory="1Gi").obj()
    one = MakePod().req(cpu="1").obj()
    assert [e.action for e in pod_update_events(two, one, features=V137)] == [A.UPDATE_POD_SCALE_DOWN]
    assert [e.action for e in pod_update_events(one, two, features=V137)] == [A.UPDATE_POD_SCALE_UP]


def test_taint_wrapper_sanity() -> None:
    n = MakeNode().taint("k", "v", "NoSchedule").obj()
    assert n.spec.taints == [Taint(key="k", value="v", effect="NoSchedule")]
