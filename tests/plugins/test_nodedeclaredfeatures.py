"""NodeDeclaredFeatures, ported from upstream nodedeclaredfeatures_test.go (v1.37.2) and the
component-helpers feature tests (v0.37.2), plus batch == reference and the default profile."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.config.defaults import default_plugins
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState, MissingStateError
from kubesched.framework.events import ActionType, EventResource, QueueingHint, node_update_events
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import nodedeclaredfeatures as ndf
from kubesched.plugins.registry import IN_TREE
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

UNMATCHED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match Pod's required features",))
V137 = FeatureGate()
V136 = FeatureGate(emulated_version=(1, 36))
V135 = FeatureGate(emulated_version=(1, 35))
V134 = FeatureGate(emulated_version=(1, 34))


def mock(name: str, infer: bool, max_version: tuple[int, int, int] | None = None) -> ndf.Feature:
    return ndf.Feature(name, lambda spec: infer, max_version)


def plugin(enabled: bool = True, features=(), version=(1, 35, 0)) -> ndf.NodeDeclaredFeatures:
    fg = V137 if enabled else V135  # NodeDeclaredFeatures: on at 1.37, off (alpha) at 1.35
    return ndf.NodeDeclaredFeatures(fg, ndf.FeatureFramework(list(features)), version)


# ─── TestPreFilter ───
PREFILTER = [
    ("plugin disabled", False, [mock("TestFeature1", True), mock("TestFeature2", False)], (1, 35, 0),
     Code.SKIP, None),
    ("Pod with feature requirements", True, [mock("TestFeature1", True), mock("TestFeature2", False)],
     (1, 35, 0), None, {"TestFeature1"}),
    ("Pod with multiple feature requirements", True,
     [mock("TestFeature1", True, (1, 38, 0)), mock("TestFeature2", True, (1, 38, 0))], (1, 35, 0),
     None, {"TestFeature1", "TestFeature2"}),
    ("Pod with no requirements", True, [mock("TestFeature1", False), mock("TestFeature2", False)],
     (1, 35, 0), Code.SKIP, None),
    ("Feature not required, version > MaxVersion", True,
     [mock("TestFeature1", True, (1, 33, 0)), mock("TestFeature2", False)], (1, 34, 0), Code.SKIP, None),
]


@pytest.mark.parametrize("enabled,features,version,want_code,want_reqs", [c[1:] for c in PREFILTER],
                         ids=[c[0] for c in PREFILTER])
def test_pre_filter(enabled, features, version, want_code, want_reqs):
    p = MakePod().name("test-pod").obj()
    pl = plugin(enabled, features, version)
    state = CycleState(PodInfo(p))
    res, status = pl.pre_filter(state, p, None)
    assert res is None
    assert (status.code if status is not None else None) == want_code
    if want_reqs is None:
        with pytest.raises(MissingStateError):
            state.read(ndf.PRE_FILTER_STATE_KEY)
    else:
        assert state.read(ndf.PRE_FILTER_STATE_KEY).reqs == frozenset(want_reqs)


# ─── TestFilter (mock framework of FeatureA, FeatureB, FeatureC) ───
FILTER = [
    ("plugin disabled", False, ["FeatureA", "FeatureB"], None, None),
    ("Node matches requirements", True, ["FeatureA", "FeatureB"], ["FeatureA"], None),
    ("Node does not match requirements", True, ["FeatureB"], ["FeatureA"], UNMATCHED),
    ("Node with multiple features, pod requires subset", True, ["FeatureA", "FeatureB", "FeatureC"],
     ["FeatureA", "FeatureC"], None),
    ("Node has no declared features", True, None, ["FeatureA"], UNMATCHED),
    ("Node with some but not all required features", True, ["FeatureA"], ["FeatureA", "FeatureB"], UNMATCHED),
]


def _node(name: str, declared):
    b = MakeNode().name(name)
    return (b.declared_features(declared) if declared is not None else b).obj()


@pytest.mark.parametrize("enabled,declared,reqs,want", [c[1:] for c in FILTER], ids=[c[0] for c in FILTER])
def test_filter(enabled, declared, reqs, want):
    p = MakePod().name("test-pod").obj()
    table = build_table([_node("node-1", declared)])
    pl = plugin(enabled, [mock("FeatureA", False), mock("FeatureB", False), mock("FeatureC", False)])
    state = CycleState(PodInfo(p))
    if reqs is not None:
        state.write(ndf.PRE_FILTER_STATE_KEY, ndf.PreFilterState(frozenset(reqs)))
    assert pl.filter(state, p, table.get("node-1")) == want
    res = pl.filter_nodes(state, p, table, table.order())
    got = None if res is None or not res.failed[0] else res.status_for(int(res.failed[0]))
    assert got == want


def test_filter_without_pre_filter_state_is_an_error():
    p = MakePod().name("test-pod").obj()
    table = build_table([_node("node-1", None)])
    with pytest.raises(MissingStateError, match="PreFilterNodeDeclaredFeatures"):
        plugin(True).filter(CycleState(PodInfo(p)), p, table.get("node-1"))


# ─── TestEnqueueExtensionsNodeUpdate / TestIsSchedulableAfterTargetPodUpdate / TestEventsToRegister ───
@pytest.mark.parametrize("old,new,want", [
    (None, ["FeatureA"], QueueingHint.QUEUE),
    (None, None, QueueingHint.QUEUE),
    ([], ["FeatureA"], QueueingHint.QUEUE),
    (["FeatureA"], ["FeatureA"], QueueingHint.SKIP),
], ids=["Node Add with feature", "Node Add without feature", "Node Update (Features Added)",
        "Node Update (Features Unchanged)"])
def test_hint_node_change(old, new, want):
    pl = plugin(True)
    old_node = None if old is None else _node("node-1", old or None)
    assert pl.is_schedulable_after_node_change(MakePod().name("test-pod").obj(), old_node,
                                               _node("node-1", new)) == want


def _calls(*answers: bool):
    it = iter(answers)
    return lambda spec: next(it)


@pytest.mark.parametrize("infer,version,want", [
    (_calls(False, True), (1, 35, 0), QueueingHint.QUEUE),
    (_calls(True, False), (1, 35, 0), QueueingHint.QUEUE),
    (lambda spec: False, (1, 35, 0), QueueingHint.SKIP),
    (lambda spec: True, None, QueueingHint.QUEUE),
], ids=["Pod Update adds requirement", "Pod Update removes requirement",
        "Pod Update with no change in requirements", "Infer returns error"])
def test_hint_target_pod_update(infer, version, want):
    pl = ndf.NodeDeclaredFeatures(V137, ndf.FeatureFramework([ndf.Feature("TestFeature", infer)]))
    pl.version = version  # None: upstream's nil target version
    target = MakePod().name("test-pod").uid("123")
    old, new = target.obj(), MakePod().name("test-pod").uid("123").label("foo", "bar").obj()
    assert pl.is_schedulable_after_pod_update(target.obj(), old, new) == want


def test_hint_other_pod_update_is_skipped():
    pl = plugin(True, [ndf.Feature("TestFeature", _calls(False, True))])
    other = MakePod().name("other").uid("456")
    assert pl.is_schedulable_after_pod_update(MakePod().name("test-pod").uid("123").obj(), other.obj(),
                                              other.label("foo", "bar").obj()) == QueueingHint.SKIP


@pytest.mark.parametrize("enabled,n", [(False, 0), (True, 2)], ids=["plugin disabled", "plugin enabled"])
def test_events_to_register(enabled, n):
    evs = plugin(enabled).events_to_register()
    assert len(evs) == n
    if enabled:
        assert evs[0].event.resource == EventResource.NODE
        assert evs[0].event.action == ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
        assert evs[1].event.resource == EventResource.TARGET_POD and evs[1].event.action == ActionType.UPDATE


def test_deferred_resize_skipped():
    p = MakePod().name("p").uid("p").condition("PodResizePending", "True", "Deferred").obj()
    fg = FeatureGate.from_flags(feature_gates="InPlacePodVerticalScalingSchedulerPreemption=true")
    pl = ndf.NodeDeclaredFeatures(fg)
    res, status = pl.pre_filter(CycleState(PodInfo(p)), p, None)
    assert res is None and status.code == Code.SKIP
    table = build_table([_node("node1", None)])
    assert pl.filter(CycleState(PodInfo(p)), p, table.get("node1")) is None


# ─── component-helpers feature inference (the real registries) ───
def pod(**spec) -> Pod:
    return MakePod().name("p").spec(**spec).obj()


RESTART_ALL = {"containers": [{"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers",
                                                                    "exitCodes": {"operator": "In",
                                                                                  "values": [42]}}]}]}
RESTART_ONLY = {"containers": [{"name": "c", "restartPolicyRules": [{"action": "Restart"}]}]}
INIT_RESTART_ALL = {"containers": [{"name": "c"}], "initContainers": [
    {"name": "i", "restartPolicyRules": [{"action": "RestartAllContainers"}]}]}
USERNS_HOSTNET = {"containers": [{"name": "c"}], "hostNetwork": True, "hostUsers": False}
HOSTNET_ONLY = {"containers": [{"name": "c"}], "hostNetwork": True}
HOSTNET_HOSTUSERS = {"containers": [{"name": "c"}], "hostNetwork": True, "hostUsers": True}
USERNS_ONLY = {"containers": [{"name": "c"}], "hostUsers": False}
BIND = {"containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v",
                                                       "bindMountOptions": ["nosuid"]}]}]}
BIND_INIT = {"containers": [{"name": "c"}], "initContainers": [
    {"name": "i", "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}]}
BIND_EPHEMERAL = {"containers": [{"name": "c"}], "ephemeralContainers": [
    {"name": "e", "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}]}
BIND_EMPTY = {"containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}

INFER = [
    ("restart-all container rule", RESTART_ALL, {(1, 35): {"RestartAllContainersOnContainerExits"}}),
    ("restart rule without RestartAllContainers", RESTART_ONLY, {}),
    ("restart-all init container rule", INIT_RESTART_ALL, {(1, 35): {"RestartAllContainersOnContainerExits"}}),
    ("hostNetwork with hostUsers=false", USERNS_HOSTNET, {(1, 36): {"UserNamespacesHostNetworkSupport"}}),
    ("hostNetwork only", HOSTNET_ONLY, {}),
    ("hostNetwork with hostUsers=true", HOSTNET_HOSTUSERS, {}),
    ("hostUsers=false without hostNetwork", USERNS_ONLY, {}),
    ("container bindMountOptions", BIND, {(1, 37): {"VolumeBindMountOptions"}}),
    ("init container bindMountOptions", BIND_INIT, {(1, 37): {"VolumeBindMountOptions"}}),
    ("ephemeral container bindMountOptions", BIND_EPHEMERAL, {(1, 37): {"VolumeBindMountOptions"}}),
    ("volume mount without bindMountOptions", BIND_EMPTY, {}),
]


@pytest.mark.parametrize("spec,since", [c[1:] for c in INFER], ids=[c[0] for c in INFER])
@pytest.mark.parametrize("version", [(1, 35), (1, 36), (1, 37)])
def test_infer_for_pod_scheduling(spec, since, version):
    want = set().union(*(v for k, v in since.items() if version >= k))
    assert ndf.infer_for_pod_scheduling(pod(**spec).spec, version) == frozenset(want)


_INFERS = [ndf._restart_all_containers, ndf._user_namespaces_host_network, ndf._volume_bind_mount_options, ndf._never]


@settings(max_examples=100, deadline=None)
@given(feats=st.lists(st.tuples(st.integers(0, 3), st.sampled_from([None, (1, 35, 0), (1, 36, 0), (1, 37, 0)])),
                      max_size=8),
       specs=st.lists(st.sampled_from([RESTART_ALL, USERNS_HOSTNET, BIND, INIT_RESTART_ALL, BIND_EMPTY,
                                       {**RESTART_ALL, "hostNetwork": True, "hostUsers": False}]), min_size=1),
       target=st.sampled_from([(1, 35, 0), (1, 36, 0), (1, 37, 0)]))
def test_grouped_inference_equals_per_feature(feats, specs, target):
    """The framework calls each distinct inference function once per pod (features sharing one,
    as the scheduler_perf mock registry's do): the result equals asking every feature."""
    registry = [ndf.Feature(f"F{i}", _INFERS[k], mv) for i, (k, mv) in enumerate(feats)]
    fw = ndf.FeatureFramework(registry)
    for spec in specs:
        s = pod(**spec).spec
        want = frozenset(f.name for f in registry
                         if (f.max_version is None or target <= f.max_version) and f.infer_for_scheduling(s))
        assert fw.infer_for_pod_scheduling(s, target) == want


def test_try_map_is_a_sorted_merge_walk():
    fw = ndf.default_framework((1, 37))
    assert fw.try_map(["RestartAllContainersOnContainerExits", "Unknown", "VolumeBindMountOptions"]) == \
        {"RestartAllContainersOnContainerExits", "VolumeBindMountOptions"}
    # an unsorted list (the API rejects it) loses what the walk stepped over, as upstream TryMap
    assert fw.try_map(["VolumeBindMountOptions", "RestartAllContainersOnContainerExits"]) == \
        {"VolumeBindMountOptions"}
    assert ndf.default_framework((1, 35)).try_map(["X", "RestartAllContainersOnContainerExits"]) == \
        {"X", "RestartAllContainersOnContainerExits"}


@pytest.mark.parametrize("fg,declared,want", [
    (V137, ["RestartAllContainersOnContainerExits"], None),
    (V137, [], UNMATCHED),
    (V136, ["ExtendWebSocketsToKubelet"], UNMATCHED),
    (V135, ["GuaranteedQoSPodCPUResize"], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
        "node declared features check failed - unsatisfied requirements: RestartAllContainersOnContainerExits",))),
    (V135, ["RestartAllContainersOnContainerExits"], None),
], ids=["1.37 declared", "1.37 not declared", "1.36 not declared", "1.35 reason", "1.35 declared"])
def test_real_pod_against_nodes(fg, declared, want):
    if fg is V135:
        fg = FeatureGate.from_flags(emulated_version="1.35", feature_gates="NodeDeclaredFeatures=true")
    p = pod(**RESTART_ALL)
    table = build_table([_node("n", declared)])
    pl = ndf.new(None, type("H", (), {"features": fg})())
    state = CycleState(PodInfo(p))
    assert pl.pre_filter(state, p, table) == (None, None)
    assert pl.filter(state, p, table.get("n")) == want


@settings(max_examples=60, deadline=None)
@given(decl=st.lists(st.lists(st.sampled_from(["RestartAllContainersOnContainerExits",
                                               "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions",
                                               "Other"]), unique=True, max_size=4).map(sorted),
                     min_size=1, max_size=8),
       spec=st.sampled_from([RESTART_ALL, USERNS_HOSTNET, BIND, INIT_RESTART_ALL]),
       version=st.sampled_from([(1, 36), (1, 37)]))
def test_batch_equals_reference(decl, spec, version):
    fg = FeatureGate(emulated_version=version)
    table = build_table([_node(f"n{i}", d) for i, d in enumerate(decl)])
    p = pod(**spec)
    pl = ndf.NodeDeclaredFeatures(fg)
    state = CycleState(PodInfo(p))
    _, status = pl.pre_filter(state, p, table)
    if status is not None:
        assert status.code == Code.SKIP
        return
    rows = table.order()[::-1]
    res = pl.filter_nodes(state, p, table, rows)
    got = [None] * len(rows) if res is None else [
        None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]
    assert got == [pl.filter(state, p, table.node_info(r)) for r in rows.tolist()]


# ─── default profile, registry, node update event ───
def test_default_profile_per_version():
    names = lambda fg: [p.name for p in default_plugins(fg).multi_point.enabled]  # noqa: E731
    assert names(V137)[-1] == "NodeDeclaredFeatures" and names(V137)[-2] == "DefaultBinder"
    assert names(V136)[-1] == "NodeDeclaredFeatures"
    assert "NodeDeclaredFeatures" not in names(V135)
    assert "NodeDeclaredFeatures" not in names(V134)
    assert IN_TREE["NodeDeclaredFeatures"] == "kubesched.plugins.nodedeclaredfeatures:new"


def test_node_update_extracts_declared_feature_change_only_with_the_gate():
    from kubesched.features import FeatureGate

    def acts(old, new, on):  # noqa: ANN001, ANN202
        fg = FeatureGate(emulated_version=(1, 37), overrides={"NodeDeclaredFeatures": on})
        return [e.action for e in node_update_events(old, new, fg)]

    old, new = _node("n", ["A"]), _node("n", ["A", "B"])
    assert acts(old, new, True) == [ActionType.UPDATE_NODE_DECLARED_FEATURE]
    assert acts(old, new, False) == []
    assert acts(old, _node("n", ["A"]), True) == []


# ─── the batch Filter by the table's declared-feature-set column, against the plain per-node Filter ───
_NAMES = ["FeatureA", "FeatureB", "FeatureC", "FeatureD", "Unknown"]
_DECLARED = st.lists(st.sampled_from(_NAMES), unique=True, max_size=5)  # unsorted too: TryMap's walk
_OPS = st.lists(st.one_of(
    st.tuples(st.just("set"), st.integers(0, 5), _DECLARED),  # add or update node n<i>
    st.tuples(st.just("bulk"), st.lists(st.tuples(st.integers(0, 5), _DECLARED), max_size=4), st.just(None)),
    st.tuples(st.just("remove"), st.integers(0, 5), st.just(None)),
    st.tuples(st.just("filter"), st.frozensets(st.sampled_from(_NAMES[:4]), min_size=1), st.just(None)),
), min_size=1, max_size=14)


@settings(max_examples=200, deadline=None)
@given(ops=_OPS, registry=st.sets(st.sampled_from(_NAMES[:4]), min_size=1),
       shape=st.sampled_from(["1.37", "1.35 set", "1.35 sorted"]))
def test_column_filter_equals_per_node_filter_across_node_updates(ops, registry, shape):
    """``filter_nodes`` reads the node's feature set through ``NodeTable.declared_feature_set`` and
    caches a verdict per distinct set: after any sequence of node adds, updates (one by one or
    bulk) and removals it must equal ``FilterResult.from_statuses`` of the plain ``filter`` of
    each row, reasons and their numbering included (1.35 names the missing features)."""
    from kubesched.framework.interface import FilterResult
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.node_table_bulk import set_nodes

    fg = V137 if shape == "1.37" else FeatureGate.from_flags(emulated_version="1.35",
                                                             feature_gates="NodeDeclaredFeatures=true")
    fw = ndf.FeatureFramework([mock(n, False) for n in sorted(registry)],
                              mapping="set" if shape == "1.35 set" else "sorted")
    pl = ndf.NodeDeclaredFeatures(fg, fw)
    table = NodeTable(capacity=2)
    p = MakePod().name("p").obj()
    for op, a, b in ops:
        if op == "set":
            table.set_node(_node(f"n{a}", b))
        elif op == "bulk":
            set_nodes(table, [_node(f"n{i}", d) for i, d in a])
        elif op == "remove":
            if f"n{a}" in table.row_of:
                table.remove_node(f"n{a}")
        else:
            state = CycleState(PodInfo(p))
            state.write(ndf.PRE_FILTER_STATE_KEY, ndf.PreFilterState(a))
            rows = table.order()
            res = pl.filter_nodes(state, p, table, rows)
            want = [pl.filter(state, p, table.node_info(r)) for r in rows.tolist()]
            if not any(want):
                assert res is None
                continue
            ref = FilterResult.from_statuses(want)
            assert res is not None
            assert res.failed.tolist() == ref.failed.tolist()
            assert list(res.statuses) == list(ref.statuses)
