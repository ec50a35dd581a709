"""SchedulerPreQueueingHints (α 1.37, off by default): PreQueueingHintFn narrowing.

Ported from v1.37.2 ``pkg/scheduler/backend/queue/scheduling_queue_test.go``
(``TestPriorityQueue_PreQueueingHint`` L9520, ``TestPreQueueingHint_NilObjects`` L9997,
``_ErrorFallback`` L10026, ``_CPGDisablesNarrowing`` L10135, ``_WildcardSkipsNarrowing`` L10189,
``_PerPluginNarrowing`` L10239, ``_FlushRescue`` L9774, ``_Metrics`` L9869), plus the DRA
PreQueueingHint (``dynamicresources.go`` L314-375) and a property test: with the gate on the moved
pods are exactly the gate-off ones that the DRA pre-hint named (narrowing only skips evaluating
hints for pods it did not name).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_upstream_queue import FakeFramework, HintPlugin, Q, queue_hint, skip_hint

from kubesched.features import FeatureGate
from kubesched.framework.events import (
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PreQueueingHintResult,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.plugins import dynamicresources as dra
from kubesched.queue import SchedulingQueue
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

ON = FeatureGate(overrides={"SchedulerPreQueueingHints": True})
OFF = FeatureGate()
NODE1 = MakeNode().name("node1").obj()


def names(*pods: str) -> PreQueueingHintResult:
    return PreQueueingHintResult(pods=tuple(("ns1", p) for p in pods))


def build(features: FeatureGate, hints: list[tuple[str, Any, Any]], pods: list[str],
          event: ClusterEvent = EVENT_NODE_ADD) -> Q:
    """A queue whose plugins register ``event`` with (name, hint, pre_hint); every pod popped and
    put back unschedulable with UnschedulablePlugins = {foo, bar} (as the upstream tests)."""
    t = Q({event: []}, features=features)
    for name, hint, pre in hints:

        pl = t.fw.plugins.setdefault(name, HintPlugin(name))
        pl.regs.append(ClusterEventWithHint(event, hint, pre))
    t.q = SchedulingQueue({"default-scheduler": t.fw}, t.clock.now, features=features,
                          pod_max_in_unschedulable_pods_s=300.0)
    for i, p in enumerate(pods):
        t.pop_and_fail(MakePod().name(p).namespace("ns1").uid(str(i + 1)).obj(), "foo", "bar",
                       *[h[0] for h in hints])
    return t


def moved(t: Q, pods: list[str]) -> set[str]:
    return {p for p in pods if t.q.where(f"ns1/{p}") != "unschedulable"}


P3 = ["pod1", "pod2", "pod3"]
CASES = [
    ("gate enabled, hint narrows to one pod", ON, P3,
     [("foo", queue_hint, lambda o, n: names("pod1"))], {"pod1"}),
    ("gate enabled, hint AllPods evaluates all", ON, P3[:2], [("foo", queue_hint, None)], {"pod1", "pod2"}),
    ("gate enabled, one plugin AllPods means all pods evaluated", ON, P3,
     [("foo", queue_hint, lambda o, n: names("pod1")),
      ("bar", queue_hint, lambda o, n: PreQueueingHintResult(all_pods=True))], set(P3)),
    ("gate disabled, hint ignored, all pods evaluated", OFF, P3,
     [("foo", queue_hint, lambda o, n: names("pod1"))], set(P3)),
    ("single plugin narrows to subset (2 of 3)", ON, P3,
     [("foo", queue_hint, lambda o, n: names("pod1", "pod3"))], {"pod1", "pod3"}),
    ("hint narrows but QueueingHint rejects", ON, P3[:2],
     [("foo", skip_hint, lambda o, n: names("pod1"))], set()),
    ("two plugins narrow to same pod", ON, P3[:2],
     [("foo", queue_hint, lambda o, n: names("pod1")), ("bar", queue_hint, lambda o, n: names("pod1"))], {"pod1"}),
    ("two plugins narrow to same two pods", ON, P3,
     [("foo", queue_hint, lambda o, n: names("pod1", "pod2")),
      ("bar", queue_hint, lambda o, n: names("pod1", "pod2"))], {"pod1", "pod2"}),
    ("two plugins disjoint pods (union evaluated)", ON, P3,
     [("foo", queue_hint, lambda o, n: names("pod1")), ("bar", queue_hint, lambda o, n: names("pod2"))],
     {"pod1", "pod2"}),
]


@pytest.mark.parametrize("case,features,pods,hints,want", CASES, ids=[c[0] for c in CASES])
def test_TestPriorityQueue_PreQueueingHint(case, features, pods, hints, want) -> None:
    t = build(features, hints, pods)
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert moved(t, pods) == want


def _never(o: Any, n: Any) -> PreQueueingHintResult:
    raise AssertionError("PreQueueingHintFn must not be called")


def test_TestPreQueueingHint_NilObjects() -> None:
    t = build(ON, [("testPlugin", queue_hint, _never)], ["pod1"])
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, None)
    assert moved(t, ["pod1"]) == {"pod1"}


def test_TestPreQueueingHint_ErrorFallback() -> None:
    def boom(o: Any, n: Any) -> PreQueueingHintResult:
        raise RuntimeError("intentional error")
    t = build(ON, [("fakePlugin", queue_hint, boom)], ["pod1", "pod2"])
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert moved(t, ["pod1", "pod2"]) == {"pod1", "pod2"}


def test_TestPreQueueingHint_WildcardSkipsNarrowing() -> None:
    t = build(ON, [("testPlugin", queue_hint, _never)], ["pod1", "pod2"])
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert moved(t, ["pod1", "pod2"]) == {"pod1", "pod2"}


def test_TestPreQueueingHint_CPGDisablesNarrowing() -> None:
    fg = FeatureGate(overrides={"SchedulerPreQueueingHints": True, "CompositePodGroup": True,
                                "GenericWorkload": True})
    t = build(fg, [("foo", queue_hint, lambda o, n: names("pod1"))], ["pod1", "pod2"])
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert moved(t, ["pod1", "pod2"]) == {"pod1", "pod2"}


def test_TestPreQueueingHint_PerPluginNarrowing() -> None:
    calls: dict[str, list[str]] = {"pluginA": [], "pluginB": []}

    def rec(plugin: str):
        def hint(pod: Any, o: Any, n: Any) -> QueueingHint:
            calls[plugin].append(pod.metadata.name)
            return QueueingHint.QUEUE
        return hint
    t = Q({EVENT_NODE_ADD: [("pluginA", rec("pluginA")), ("pluginB", rec("pluginB"))]}, features=ON)
    # attach the pre-hints to the registrations
    t.fw.plugins["pluginA"].regs = [ClusterEventWithHint(EVENT_NODE_ADD, rec("pluginA"), lambda o, n: names("pod1"))]
    t.fw.plugins["pluginB"].regs = [ClusterEventWithHint(EVENT_NODE_ADD, rec("pluginB"), lambda o, n: names("pod2"))]
    t.q = SchedulingQueue({"default-scheduler": t.fw}, t.clock.now, features=ON)
    for i, p in enumerate(["pod1", "pod2"]):
        t.pop_and_fail(MakePod().name(p).namespace("ns1").uid(str(i)).obj(), "pluginA", "pluginB")
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert calls == {"pluginA": ["pod1"], "pluginB": ["pod2"]}


def test_TestPreQueueingHint_FlushRescue() -> None:
    # a pod the pre-hint missed stays unschedulable, and the leftover flush rescues it later
    t = build(ON, [("foo", queue_hint, lambda o, n: names("pod1"))], ["pod1", "pod2"])
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert moved(t, ["pod1", "pod2"]) == {"pod1"}
    t.clock.advance(301.0)
    t.q.flush_unschedulable_leftover()
    assert moved(t, ["pod1", "pod2"]) == {"pod1", "pod2"}


def test_TestPreQueueingHint_Metrics() -> None:
    t = build(ON, [("narrowPlugin", queue_hint, lambda o, n: names("pod1")),
                   ("allPlugin", queue_hint, lambda o, n: PreQueueingHintResult(all_pods=True))], ["pod1"])
    t.q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, NODE1)
    assert t.q.pre_queueing_hint_evaluations == {("narrowPlugin", "narrowed"): 1, ("allPlugin", "all_pods"): 1}


# ─────────────────────────── DynamicResources' PreQueueingHint ───────────────────────────

CLAIM_EVENT = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD)


class PodLister:
    def __init__(self, pods: list[Any], claims: list[dict[str, Any]] = ()) -> None:
        self.pods, self.claims = pods, list(claims)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        objs = self.pods if kind == "Pod" else self.claims if kind == "ResourceClaim" else []
        return [o for o in objs if namespace is None or (o.metadata.namespace if kind == "Pod"
                                                         else o["metadata"]["namespace"]) == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        for c in self.claims if kind == "ResourceClaim" else ():
            if c["metadata"]["name"] == name and c["metadata"]["namespace"] == namespace:
                return c
        return None


def claim_obj(name: str, ns: str = "ns1", allocated: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"},
                         "spec": {"devices": {"requests": []}}, "status": {}}
    if allocated:
        c["status"]["allocation"] = {"devices": {"results": []}}
    return c


def pod_refs(name: str, *claims: str, ns: str = "ns1", template_generated: str | None = None) -> Any:
    m = MakePod().name(name).namespace(ns).uid(f"u-{ns}-{name}")
    rcs: list[dict[str, Any]] = [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    if template_generated is not None:
        rcs.append({"name": "tpl", "resourceClaimTemplateName": "t"})
    m.spec(resourceClaims=rcs)
    raw = m.raw()
    if template_generated:
        raw["status"]["resourceClaimStatuses"] = [{"name": "tpl", "resourceClaimName": template_generated}]
    import msgspec

    from kubesched.api import objects as o
    return o.decode(o.Pod, msgspec.json.decode(msgspec.json.encode(raw)))


def dra_plugin(pods: list[Any], claims: list[dict[str, Any]] = (), features: FeatureGate = ON) -> Any:
    table = build_table([NODE1])
    return dra.new(None, Handle(nodes=table, lister=PodLister(pods, claims), features=features))


def test_dra_pre_queueing_hint() -> None:
    pods = [pod_refs("a", "c1"), pod_refs("b", "c2"), pod_refs("c", "c1", "c2"),
            pod_refs("d", ns="ns2"), pod_refs("e", "c1", ns="ns2"),
            pod_refs("f", template_generated="c1"), pod_refs("g", template_generated="")]
    pl = dra_plugin(pods)
    reg = next(e for e in pl.events_to_register() if e.event.resource == EventResource.RESOURCE_CLAIM)
    pre = reg.pre_hint
    assert pre is not None
    # pods indexed by referenced claim: same namespace, direct names and generated claims
    assert sorted(pre(None, claim_obj("c1")).pods) == [("ns1", "a"), ("ns1", "c"), ("ns1", "f")]
    assert sorted(pre(claim_obj("c2"), claim_obj("c2")).pods) == [("ns1", "b"), ("ns1", "c")]
    assert pre(None, claim_obj("nobody")) == PreQueueingHintResult()
    # deallocation or deletion of an allocated claim: AllPods
    assert pre(claim_obj("c1", allocated=True), claim_obj("c1")).all_pods
    assert pre(claim_obj("c1", allocated=True), None).all_pods
    # deletion of an unallocated claim: its referencing pods
    assert sorted(pre(claim_obj("c2"), None).pods) == [("ns1", "b"), ("ns1", "c")]


def test_dra_pre_hint_not_registered_before_137() -> None:
    pl = dra_plugin([], features=FeatureGate(emulated_version=(1, 36)))
    reg = next(e for e in pl.events_to_register() if e.event.resource == EventResource.RESOURCE_CLAIM)
    assert reg.pre_hint is None


def _dra_queue(features: FeatureGate, pods: list[Any], rejectors: list[set[str]], claims: list[dict[str, Any]]):
    """A queue with the real DynamicResources plugin and an "Other" plugin registered for claim
    events without a pre-hint (always Queue); each pod rejected by ``rejectors[i]``."""


    pl = dra_plugin(pods, claims, features)
    fw = FakeFramework()
    fw.plugins[pl.name] = pl
    other = HintPlugin("Other")
    other.regs.append(ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD
                                                        | ActionType.UPDATE | ActionType.DELETE), queue_hint))
    fw.plugins["Other"] = other
    now = [1000.0]
    q = SchedulingQueue({"default-scheduler": fw}, lambda: now[0], features=features)
    for pod, rej in zip(pods, rejectors):
        q.add(pod)
        qpi = q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = set(rej)
        q.add_unschedulable_if_not_present(qpi)
    now[0] += 100.0  # past every backoff
    return q, pl


CLAIMS = ["c1", "c2", "c3"]


@settings(max_examples=60, deadline=None)
@given(refs=st.lists(st.tuples(st.sets(st.sampled_from(CLAIMS), max_size=2),
                               st.sets(st.sampled_from(["DynamicResources", "Other"]), min_size=1)),
                     min_size=1, max_size=6),
       changed=st.sampled_from(CLAIMS), kind=st.sampled_from(["add", "status", "dealloc", "delete", "delete-alloc"]))
def test_narrowing_moves_the_named_subset(refs, changed, kind) -> None:
    """Gate off vs on, same cluster and event: on, a pod moves iff it moves when off and the DRA
    pre-hint named it (or the pre-hint said AllPods, then the same pods move)."""
    pods = [pod_refs(f"p{i}", *sorted(c)) for i, (c, _) in enumerate(refs)]
    claims = [claim_obj(c) for c in CLAIMS]
    old: dict[str, Any] | None = claim_obj(changed)
    new: dict[str, Any] | None = copy.deepcopy(old)
    action = ActionType.UPDATE
    if kind == "add":
        old, action = None, ActionType.ADD
    elif kind == "status":
        assert new is not None
        new["status"]["reservedFor"] = [{"resource": "pods", "name": "x", "uid": "x"}]
    elif kind == "dealloc":
        old = claim_obj(changed, allocated=True)
    elif kind == "delete":
        new, action = None, ActionType.DELETE
    else:
        old, new, action = claim_obj(changed, allocated=True), None, ActionType.DELETE
    event = ClusterEvent(EventResource.RESOURCE_CLAIM, action)
    out = {}
    for fg in (OFF, ON):
        q, pl = _dra_queue(fg, pods, [r for _, r in refs], claims)
        q.move_all_to_active_or_backoff(event, old, new)
        out[fg is ON] = {p.metadata.name for p in pods if q.where(f"ns1/{p.metadata.name}") != "unschedulable"}
        if fg is ON:
            res = pl._pre_queueing_hint(old, new)
    named = {n for _, n in res.pods}
    if res.all_pods:
        assert out[True] == out[False]
    else:
        assert out[True] == out[False] & named
        # a pod rejected only by Other (no pre-hint) and not referencing the claim is the
        # observable difference upstream's narrowing makes
        for p, (c, _rej) in zip(pods, refs):
            if changed not in c:
                assert p.metadata.name not in out[True]


def test_narrowing_difference_example() -> None:
    """The concrete difference: a pod rejected by a plugin without a pre-hint moves on a claim
    event with the gate off, but not with it on unless the DRA pre-hint named it."""
    pods = [pod_refs("uses-c1", "c1"), pod_refs("other-only")]
    claims = [claim_obj("c1")]
    for fg, want in ((OFF, {"uses-c1", "other-only"}), (ON, {"uses-c1"})):
        q, _ = _dra_queue(fg, pods, [{"DynamicResources"}, {"Other"}], claims)
        q.move_all_to_active_or_backoff(ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD), None, claims[0])
        assert {p.metadata.name for p in pods if q.where(f"ns1/{p.metadata.name}") != "unschedulable"} == want
