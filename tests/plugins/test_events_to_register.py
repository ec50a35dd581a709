"""In-tree plugins' ``events_to_register`` and queueing hints, 1.37 versus 1.34.

Expected registrations are those of the plugins' ``EventsToRegister`` in upstream v1.37.2 and
v1.34.12 (``pkg/scheduler/framework/plugins/*``, QueueingHints on); NodeResourcesFit's table is
upstream's ``TestEventsToRegister`` (noderesources/fit_test.go). Hint cases follow the upstream
hint functions' documented behaviour (``isSchedulableAfterTarget…``, nominated pods counted as
scheduled since 1.36).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.features import FeatureGate
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.node_table import NodeTable
from kubesched.plugins.interpodaffinity.hints import pod_change_hint
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing.wrappers import MakePod

A, R, Q, S = ActionType, EventResource, QueueingHint.QUEUE, QueueingHint.SKIP
V134 = FeatureGate(emulated_version=(1, 34))
V136 = FeatureGate(emulated_version=(1, 36))
V137 = FeatureGate(emulated_version=(1, 37))


def plugin(name: str, features: FeatureGate) -> Any:
    return in_tree_registry()[name](None, Handle(NodeTable(), features=features))


def regs(name: str, features: FeatureGate) -> list[tuple[R, A]]:
    return [(e.event.resource, e.event.action) for e in plugin(name, features).events_to_register()]


REGISTRATIONS = [
    ("TaintToleration",
     [(R.NODE, A.ADD | A.UPDATE_NODE_TAINT), (R.TARGET_POD, A.UPDATE_POD_TOLERATION)],
     [(R.NODE, A.ADD | A.UPDATE_NODE_TAINT), (R.POD, A.UPDATE_POD_TOLERATION)]),
    ("NodeUnschedulable",
     [(R.NODE, A.ADD | A.UPDATE_NODE_TAINT), (R.TARGET_POD, A.UPDATE_POD_TOLERATION)],
     [(R.NODE, A.ADD | A.UPDATE_NODE_TAINT), (R.POD, A.UPDATE_POD_TOLERATION)]),
    ("SchedulingGates",
     [(R.TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)],
     [(R.POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
    ("NodePorts", [(R.ASSIGNED_POD, A.DELETE), (R.NODE, A.ADD)], [(R.POD, A.DELETE), (R.NODE, A.ADD)]),
    ("NodeName", [(R.NODE, A.ADD)], [(R.NODE, A.ADD)]),
    ("InterPodAffinity",
     [(R.ASSIGNED_POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE), (R.TARGET_POD, A.UPDATE_POD_LABEL),
      (R.NODE, A.ADD | A.UPDATE_NODE_LABEL)],
     [(R.POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE), (R.NODE, A.ADD | A.UPDATE_NODE_LABEL)]),
    ("PodTopologySpread",
     [(R.ASSIGNED_POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
      (R.TARGET_POD, A.UPDATE_POD_TOLERATION | A.UPDATE_POD_LABEL),
      (R.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT)],
     [(R.POD, A.ADD | A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATION | A.DELETE),
      (R.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT)]),
    # InPlacePodVerticalScaling on, DRAExtendedResource on (1.37 defaults); 1.34: gate off
    ("NodeResourcesFit",
     [(R.ASSIGNED_POD, A.DELETE), (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE), (R.DEVICE_CLASS, A.ADD | A.UPDATE),
      (R.ASSIGNED_POD, A.UPDATE_POD_SCALE_DOWN), (R.TARGET_POD, A.UPDATE_POD_SCALE_DOWN)],
     [(R.POD, A.DELETE | A.UPDATE_POD_SCALE_DOWN), (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE)]),
]


@pytest.mark.parametrize(("name", "want137", "want134"), REGISTRATIONS, ids=[c[0] for c in REGISTRATIONS])
def test_registrations(name: str, want137: list[tuple[R, A]], want134: list[tuple[R, A]]) -> None:
    assert regs(name, V137) == want137
    assert regs(name, V134) == want134


@pytest.mark.parametrize(("ippvs", "dra_ext", "want"), [
    pytest.param(True, False, [(R.ASSIGNED_POD, A.DELETE), (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE),
                               (R.ASSIGNED_POD, A.UPDATE_POD_SCALE_DOWN), (R.TARGET_POD, A.UPDATE_POD_SCALE_DOWN)],
                 id="Register events with InPlacePodVerticalScaling feature enabled"),
    pytest.param(False, False, [(R.ASSIGNED_POD, A.DELETE), (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE)],
                 id="Register events with default features"),
    pytest.param(False, True, [(R.ASSIGNED_POD, A.DELETE), (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE),
                               (R.DEVICE_CLASS, A.ADD | A.UPDATE)],
                 id="Register events with DRAExtendedResource feature enabled"),
])
def test_TestEventsToRegister_fit(ippvs: bool, dra_ext: bool, want: list[tuple[R, A]]) -> None:
    f = FeatureGate(emulated_version=(1, 37),
                    overrides={"InPlacePodVerticalScaling": ippvs, "DRAExtendedResource": dra_ext,
                               # gates that depend on InPlacePodVerticalScaling
                               **({} if ippvs else {"InPlacePodVerticalScalingExclusiveCPUs": False,
                                                    "InPlacePodVerticalScalingExclusiveMemory": False,
                                                    "InPlacePodLevelResourcesVerticalScaling": False})})
    assert regs("NodeResourcesFit", f) == want


def _hint(name: str, features: FeatureGate, resource: R) -> Any:
    for e in plugin(name, features).events_to_register():
        if e.event.resource == resource and e.event.action & ~A.ADD & ~A.DELETE:
            return e.hint
    raise AssertionError(f"{name} has no {resource} update registration")


def test_target_pod_hints_137() -> None:
    pod = MakePod().name("p").uid("p").obj()
    tolerating = MakePod().name("p").uid("p").toleration("node.kubernetes.io/unschedulable", "Exists",
                                                         effect="NoSchedule").obj()
    other = MakePod().name("p").uid("p").toleration("foo", "Exists", effect="NoSchedule").obj()
    # TaintToleration / SchedulingGates: always Queue (no UID comparison any more)
    assert _hint("TaintToleration", V137, R.TARGET_POD)(pod, pod, other) == Q
    assert _hint("SchedulingGates", V137, R.TARGET_POD)(pod, pod, pod) == Q
    # NodeUnschedulable: Queue only for a toleration of the unschedulable taint
    h = _hint("NodeUnschedulable", V137, R.TARGET_POD)
    assert h(pod, pod, tolerating) == Q
    assert h(pod, pod, other) == S
    # InterPodAffinity: the target's own label change always queues
    assert _hint("InterPodAffinity", V137, R.TARGET_POD)(pod, pod, pod) == Q


def test_fit_target_scale_down_and_device_class_hints() -> None:
    fit = plugin("NodeResourcesFit", V137)
    target = MakePod().name("t").uid("t").req(cpu="1", **{"example.com/gpu": "1"}).obj()
    assert fit.is_schedulable_after_target_pod_scale_down(target, target, target) == Q
    h = fit.is_schedulable_after_device_class_event

    def dc(name: str, ext: str | None) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {"extendedResourceName": ext} if ext else {}}

    assert h(target, None, dc("gpu", "example.com/gpu")) == Q            # added, explicit name requested
    assert h(target, None, dc("other", "example.com/fpga")) == S         # added, unrelated
    implicit = MakePod().name("t").uid("t").req(**{"deviceclass.resource.kubernetes.io/gpu": "1"}).obj()
    assert h(implicit, None, dc("gpu", None)) == Q                        # added, implicit name requested
    assert h(target, dc("gpu", "example.com/gpu"), dc("gpu", "example.com/gpu")) == S  # name unchanged
    assert h(target, dc("gpu", None), dc("gpu", "example.com/gpu")) == Q


def _spread_pod() -> Any:
    return (MakePod().name("p").uid("p").label("foo", "")
            .spread_constraint(1, "zone", "DoNotSchedule", {"matchLabels": {"foo": ""}}).obj())


def test_pod_topology_spread_nominated_counts_as_scheduled_since_136() -> None:
    pod = _spread_pod()
    nominated = MakePod().name("n").uid("n").label("foo", "").nominated_node_name("node-a").obj()
    for features, want in ((V134, S), (V136, Q), (V137, Q)):
        pl = plugin("PodTopologySpread", features)
        assert pl.is_schedulable_after_pod_change(pod, None, nominated) == want, features.emulated_version


def test_pod_topology_spread_target_pod_hint() -> None:
    pl = plugin("PodTopologySpread", V137)
    pod = _spread_pod()
    relabelled = MakePod().name("p").uid("p").label("bar", "").obj()
    assert pl.is_schedulable_after_target_pod_change(pod, pod, relabelled) == Q  # selector match flips
    same = MakePod().name("p").uid("p").label("foo", "").annotation("a", "b").obj()
    assert pl.is_schedulable_after_target_pod_change(pod, pod, same) == S
    # a toleration change queues only when a constraint honours taints
    tol = MakePod().name("p").uid("p").label("foo", "").toleration("k", "Exists").obj()
    assert pl.is_schedulable_after_target_pod_change(pod, pod, tol) == S


def _term(match: dict[str, str]) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": match}, "topologyKey": "zone"}


def _anti(match: dict[str, str], *, second: dict[str, str] | None = None) -> Any:
    b = MakePod().name("t").uid("t").namespace("default")
    b.pod_affinity("podAntiAffinity", _term(match))
    if second is not None:
        b.pod_affinity("podAntiAffinity", _term(second))
    return b.obj()


def test_interpodaffinity_hint_versions() -> None:
    """1.36: nominated pods count as scheduled and a deleted pod whose anti-affinity the target
    matches queues; 1.37: anti-affinity checks match "any term"."""
    target = _anti({"a": "1"}, second={"b": "1"})
    nominated = MakePod().name("x").uid("x").namespace("default").label("a", "1").label("b", "1") \
        .nominated_node_name("n1").obj()
    h134 = pod_change_hint((1, 34))
    h136 = pod_change_hint((1, 36))
    h137 = pod_change_hint((1, 37))
    assert h134(target, nominated, None) == S
    assert h136(target, nominated, None) == Q
    only_a = MakePod().name("x").uid("x").namespace("default").label("a", "1").node("n1").obj()
    assert h136(target, only_a, None) == S   # must match all anti terms
    assert h137(target, only_a, None) == Q   # any term is enough
    # the deleted pod's anti-affinity matches the target
    plain = MakePod().name("t").uid("t").namespace("default").label("app", "web").obj()
    hater = (MakePod().name("x").uid("x").namespace("default").node("n1")
             .pod_affinity("podAntiAffinity", _term({"app": "web"})).obj())
    assert h134(plain, hater, None) == S
    assert h136(plain, hater, None) == Q


def test_queue_adds_node_taint_for_node_add_registrations_before_137() -> None:
    """The effective registrations (``buildQueueingHintMap``): 1.34–1.36 add Node/UpdateNodeTaint
    for a plugin registering Node/Add without it (VolumeZone, VolumeBinding, NodeName, NodePorts,
    InterPodAffinity, …), 1.37 does not."""
    from kubesched.scheduler import Scheduler

    taint = (R.NODE, A.UPDATE_NODE_TAINT)
    for features, want in ((V134, True), (FeatureGate(emulated_version=(1, 36)), True), (V137, False)):
        events = Scheduler(features=features).queue._events
        for name in ("VolumeZone", "VolumeBinding", "NodeName", "NodePorts", "InterPodAffinity",
                     "NodeResourcesFit", "NodeAffinity"):
            got = [(e.event.resource, e.event.action) for e in events[name]]
            assert (taint in got) is want, (name, features.emulated_version)
        # plugins that register UpdateNodeTaint themselves get no extra registration
        got = [(e.event.resource, e.event.action) for e in events["TaintToleration"]]
        assert taint not in got
