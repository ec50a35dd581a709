"""``validatePodGroup`` over a CompositePodGroup's tree (upstream v1.37.2 schedule_one_podgroup.go
L218-325; the CPG cases of schedule_one_podgroup_test.go ``TestValidatePodGroup``): every member of
the tree has the root CompositePodGroup's priority, and — with PodGroupPreemptionPolicy — the
root's preemption policy; without the gate one policy across the tree."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.features import FeatureGate
from kubesched.scheduler.schedule_one_podgroup import validate_group_members
from kubesched.testing.wrappers import MakePod

NEVER, LOWER = "Never", "PreemptLowerPriority"


def _sched(policy_gate: bool) -> Any:
    state = SimpleNamespace(scheduled_pods=lambda: [])
    pgm = SimpleNamespace(pod_group_state=lambda ns, name: state)
    gates = FeatureGate(overrides={"GenericWorkload": True, "PodGroupPreemptionPolicy": policy_gate})
    return SimpleNamespace(features=gates, pod_group_manager=pgm, profiles={"default-scheduler": object()})


def _cpg(policy: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"priority": 10}
    if policy is not None:
        spec["preemptionPolicy"] = policy
    return {"metadata": {"name": "cpg-root", "namespace": "default"}, "spec": spec}


def _pod(name: str, policy: str, priority: int = 10) -> Any:
    return MakePod().name(name).priority(priority).preemption_policy(policy).obj()


CASES = [
    # (name, root policy, pod policies, PodGroupPreemptionPolicy, error expected)
    ("all PreemptNever, gate on", NEVER, (NEVER, NEVER), True, None),
    ("all PreemptNever, gate off", None, (NEVER, NEVER), False, None),
    ("all PreemptLowerPriority, gate on", LOWER, (LOWER, LOWER), True, None),
    ("root PreemptLowerPriority, a leaf's pod Never, gate on", LOWER, (NEVER, LOWER), True,
     "all pods in a single pod group should have the same preemption policy as the pod group's preemption "
     "policy, got Never and PreemptLowerPriority"),
    ("root PreemptNever, a leaf's pod PreemptLowerPriority, gate on", NEVER, (LOWER, NEVER), True,
     "all pods in a single pod group should have the same preemption policy as the pod group's preemption "
     "policy, got PreemptLowerPriority and Never"),
    ("different policies across pods, gate on", NEVER, (NEVER, LOWER), True,
     "all pods in a single pod group should have the same preemption policy as the pod group's preemption "
     "policy, got PreemptLowerPriority and Never"),
    ("different policies across pods, gate off", None, (LOWER, NEVER), False,
     "all pods in a single pod group should have the same preemption policy, got Never and PreemptLowerPriority"),
]


@pytest.mark.parametrize(("root", "pods", "gate", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_tree_members_follow_the_root(root: str | None, pods: tuple[str, ...], gate: bool, want: str | None) -> None:
    members = [_pod(f"p{i + 1}", p) for i, p in enumerate(pods)]
    got = validate_group_members(_sched(gate), _cpg(root), members, [("default", "pg1"), ("default", "pg2")])
    assert got == want


def test_priority_is_the_root_composite_pod_groups() -> None:
    members = [_pod("p1", LOWER), _pod("p2", LOWER, priority=20)]
    got = validate_group_members(_sched(False), _cpg(None), members, [("default", "pg1")])
    assert got == ("all pods in a single pod group should have the same priority as the pod group's priority, "
                   "got 20 and 10")
