"""Upstream's scheduling-cycle tests, ported.

Sources (kubernetes/kubernetes, v1.34 semantics):

* ``pkg/scheduler/schedule_one_test.go``: ``TestSchedulerSchedulePod``, ``TestFindFitAllError``,
  ``TestFindFitSomeError``, ``TestFindFitPredicateCallCounts``, ``TestNumFeasibleNodesToFind``,
  ``TestFairEvaluationForNodes``, ``TestPreferNominatedNodeFilterCallCounts``;
* ``pkg/scheduler/framework/types_test.go``: ``TestFitError_Error``.

Upstream's fake plugins (``pkg/scheduler/testing/framework/fake_plugins.go`` and the helpers at
the top of ``schedule_one_test.go``) are re-created below as small per-node plugin classes,
registered in a custom registry next to the in-tree ``PrioritySort``/``DefaultBinder`` (and,
where a case uses them, ``VolumeBinding``/``PodTopologySpread``), and enabled through a custom
``KubeSchedulerConfiguration`` with exactly the extension points each upstream case registers
them at (``tf.RegisterFilterPlugin`` → filter only, ``tf.RegisterScorePlugin(name, f, w)`` →
score with weight ``w``, ``tf.RegisterPluginAsExtensions(name, f, points...)`` → those points).

Upstream's ``sched.SchedulePod`` / ``findNodesThatFitPod`` map to
:func:`kubesched.scheduler.schedule_pod.schedule_pod`: it returns a ``ScheduleResult``
(suggested host, evaluated and feasible node counts) or a failure Status; the helper below
raises that status's ``FitError`` (or a ``SchedulePodError`` for an Error status) whose ``Diagnosis``
is compared field by field with upstream's (``NodeToStatus`` explicit entries and absent status,
``UnschedulablePlugins``, ``PendingPlugins``, ``PreFilterMsg``, ``PostFilterMsg``). Non-FitError
errors are compared by their message, which upstream puts in the FailedScheduling event.
Each case keeps its upstream name as the pytest id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.config import decode_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import (
    Diagnosis,
    FitError,
    NodeToStatus,
    fit_error_message,
)
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.framework.interface import Code, PreFilterResult, Status, as_status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler, num_feasible_nodes_to_find
from kubesched.scheduler.schedule_pod import (
    ScheduleResult,
    schedule_pod,
)
from kubesched.sim.store import ClusterStore
from kubesched.testing.extenders import FakeExtender, false_predicate_extender
from kubesched.testing.wrappers import MakeNode, MakePod

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# ───────────────────────────── upstream's fake plugins ─────────────────────────────

ERR_REASON_FAKE = "Nodes failed the fake plugin"
"""``tf.ErrReasonFake``."""

ERR_PRIORITIZE = "priority map encounters an error"
"""``errPrioritize`` in schedule_one_test.go."""


class FalseFilter:
    """``tf.FalseFilterPlugin``: every node is Unschedulable."""

    name = "FalseFilter"

    def filter(self, state, pod, node_info):
        return Status.of(U, ERR_REASON_FAKE)


class TrueFilter:
    """``tf.TrueFilterPlugin``: every node passes."""

    name = "TrueFilter"

    def filter(self, state, pod, node_info):
        return None


class MatchFilter:
    """``tf.MatchFilterPlugin``: passes only the node named like the pod."""

    name = "MatchFilter"

    def filter(self, state, pod, node_info):
        if pod.metadata.name == node_info.node.metadata.name:
            return None
        return Status.of(U, ERR_REASON_FAKE)


class NoPodsFilter:
    """``noPodsFilterPlugin``: passes only nodes without pods."""

    name = "NoPodsFilter"

    def filter(self, state, pod, node_info):
        if not node_info.pods:
            return None
        return Status.of(U, ERR_REASON_FAKE)


class FakeFilter:
    """``tf.FakeFilterPlugin``: counts its calls; the nodes in ``codes`` get that code with
    ``"injecting failure for pod <name>"``."""

    def __init__(self, codes: dict[str, Code] | None = None, name: str = "FakeFilter") -> None:
        self.name = name
        self.codes = codes or {}
        self.num_filter_called = 0

    def filter(self, state, pod, node_info):
        self.num_filter_called += 1
        code = self.codes.get(node_info.node.metadata.name)
        if code is not None:
            return Status.of(code, f"injecting failure for pod {pod.metadata.name}")
        return None


class FakePreFilter:
    """``tf.FakePreFilterPlugin``: returns the given result and status."""

    def __init__(self, name: str, result: PreFilterResult | None, status: Status | None) -> None:
        self.name = name
        self.result = result
        self.status = status

    def pre_filter(self, state, pod, nodes):
        return self.result, self.status

    def pre_filter_extensions(self) -> None:
        return None


class FakePreFilterAndFilter:
    """``tf.FakePreFilterAndFilterPlugin`` as the "prefilter returning skip" case builds it:
    PreFilter returns Skip; its Filter would return Error on every node if it ran."""

    name = "FakePreFilterAndFilterPlugin"  # upstream's Name(), whatever the registry key

    def __init__(self) -> None:
        self.num_filter_called = 0

    def pre_filter(self, state, pod, nodes):
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state, pod, node_info):
        self.num_filter_called += 1
        return Status.of(Code.ERROR, f"injecting failure for pod {pod.metadata.name}")


class FakePreScoreAndScore:
    """``tf.FakePreScoreAndScorePlugin``; ``tf.NewEqualPrioritizerPlugin`` is the one named
    ``EqualPrioritizerPlugin`` that scores 1 everywhere."""

    def __init__(self, name: str = "EqualPrioritizerPlugin", score: int = 1,
                 pre_score_status: Status | None = None, score_status: Status | None = None) -> None:
        self.name = name
        self._score = score
        self.pre_score_status = pre_score_status
        self.score_status = score_status

    def pre_score(self, state, pod, nodes, rows):
        return self.pre_score_status

    def score(self, state, pod, node_info):
        return self._score, self.score_status


def _node_number(node_info) -> tuple[int, Status | None]:
    name = node_info.node.metadata.name
    try:
        return int(name), None
    except ValueError:
        return 0, Status.of(Code.ERROR, f"Error converting nodename to int: {name}")


class NumericMap:
    """``numericMapPlugin``: the node name as a number, no normalization."""

    name = "NumericMap"

    def score(self, state, pod, node_info):
        return _node_number(node_info)


class ReverseNumericMap:
    """``reverseNumericMapPlugin``: the node name as a number, normalized to max+min-score."""

    name = "ReverseNumericMap"

    def score(self, state, pod, node_info):
        return _node_number(node_info)

    def normalize_score(self, state, pod, scores):
        hi = max(0.0, float(scores.max()))  # upstream starts maxScore at 0 and minScore at +Inf
        lo = float(scores.min())
        scores[:] = [int(hi + lo - float(s)) for s in scores.tolist()]


class TrueMap:
    """``trueMapPlugin``: 1 everywhere; its NormalizeScore only checks the node names."""

    name = "TrueMap"

    def score(self, state, pod, node_info):
        return 1, None

    def normalize_score(self, state, pod, scores):
        return None


class FalseMap:
    """``falseMapPlugin``: Score fails with ``errPrioritize``."""

    name = "FalseMap"

    def score(self, state, pod, node_info):
        return 0, as_status(RuntimeError(ERR_PRIORITIZE))


def _const(plugin: Any) -> Callable[[Any, Any], Any]:
    return lambda args, handle: plugin


# ───────────────────────────── harness ─────────────────────────────

PointList = Sequence["str | tuple[str, int]"]


def _config(points: dict[str, PointList], *, percentage: int | None = None,
            profile_percentage: int | None = None) -> Any:
    """A profile with PrioritySort, DefaultBinder and exactly the plugins of ``points``
    (extension point json name → plugin names, or ``(name, weight)`` for score); no defaults
    (upstream's ``tf.NewFramework``)."""
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]},
                               "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                               "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    for point, names in points.items():
        plugins[point] = {"enabled": [{"name": n} if isinstance(n, str) else {"name": n[0], "weight": n[1]}
                                      for n in names]}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    if profile_percentage is not None:
        profile["percentageOfNodesToScore"] = profile_percentage
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                           "profiles": [profile]}
    if percentage is not None:
        cfg["percentageOfNodesToScore"] = percentage
    return decode_config(cfg)


def _node(name: str, hostname: str | None = None) -> Node:
    """``{ObjectMeta: {Name: name, Labels: {kubernetes.io/hostname: hostname}}}``."""
    return MakeNode().name(name).label("kubernetes.io/hostname", hostname or name).obj()


def _bare_node(name: str) -> Node:
    """``makeNodeList``: a node with a name and nothing else."""
    return MakeNode().name(name).obj()


def _scheduler(points: dict[str, PointList], plugins: dict[str, Any], nodes: Sequence[Node],
               pods: Sequence[Pod] = (), raw_objects: Sequence[tuple[str, dict]] = (), *,
               percentage: int | None = None, profile_percentage: int | None = None,
               extenders: Sequence[Any] = ()) -> Scheduler:
    registry = {**in_tree_registry(), **{n: _const(p) for n, p in plugins.items()}}
    store = ClusterStore()
    for kind, data in raw_objects:
        store.add_raw(kind, data)
    sched = Scheduler(_config(points, percentage=percentage, profile_percentage=profile_percentage),
                      client=store, lister=store, registry=registry, seed=0, extenders=list(extenders))
    store.scheduler = sched
    for n in nodes:
        store.add("Node", n)
    for p in pods:
        store.add("Pod", p)
    return sched


class SchedulePodError(Exception):
    """``schedule_pod`` returned a status whose error is not a FitError (upstream: the error)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _schedule_pod(sched: Scheduler, pod: Pod) -> ScheduleResult:
    """Upstream ``sched.SchedulePod(ctx, fwk, framework.NewCycleState(), podInfo)``: the result,
    or the returned status's FitError / a SchedulePodError raised."""
    fw = sched.profiles["default-scheduler"]
    res = schedule_pod(fw, CycleState(PodInfo(pod)), pod, sched.table, sched.sampler, sched.rng,
                       extenders=sched.extenders)
    if isinstance(res, Status):
        if isinstance(res.error, FitError):
            assert res.code == Code.UNSCHEDULABLE
            raise res.error
        raise SchedulePodError(res)
    return res


def _st(s: Status) -> tuple[Code, tuple[str, ...], str]:
    return s.code, tuple(s.reasons), s.plugin


@dataclass
class WantFitError:
    """Upstream's ``&framework.FitError{NumAllNodes, Diagnosis{...}}``."""

    num_all_nodes: int
    node_to_status: dict[str, tuple[Code, tuple[str, ...], str]]
    absent: tuple[Code, tuple[str, ...], str] = (UU, (), "")
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    message: str | None = None
    """The FailedScheduling message ``FitError.Error()`` (derived, checked when given)."""


def _assert_fit_error(fe: FitError, sched: Scheduler, want: WantFitError) -> None:
    d = fe.diagnosis
    names = sched.table.names
    assert fe.num_all_nodes == want.num_all_nodes
    got = {n: _st(s) for n, s in d.node_to_status(names).items()}
    assert got == want.node_to_status
    assert len(NodeToStatus(d, names)) == len(want.node_to_status)
    assert _st(NodeToStatus(d, names).absent_status) == want.absent
    assert d.unschedulable_plugins == want.unschedulable_plugins
    assert d.pending_plugins == set()
    assert d.pre_filter_msg == want.pre_filter_msg
    assert d.post_filter_msg == ""
    if want.message is not None:
        assert str(fe) == want.message


# ───────────────────────────── TestSchedulerSchedulePod ─────────────────────────────


def _pvc(name: str, *, volume_name: str = "", deleting: bool = False) -> tuple[str, dict]:
    # upstream's test sets the pv.kubernetes.io/bind-completed annotation on every PVC it creates
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name,
                            "annotations": {"pv.kubernetes.io/bind-completed": "true"}}
    if deleting:
        meta["deletionTimestamp"] = "1970-01-01T00:00:00Z"
    return "PersistentVolumeClaim", {"metadata": meta, "spec": {"volumeName": volume_name} if volume_name else {}}


def _pv(name: str, hostname_in: list[str] | None = None) -> tuple[str, dict]:
    spec: dict[str, Any] = {}
    if hostname_in is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": hostname_in}]}]}}
    return "PersistentVolume", {"metadata": {"name": name, "uid": name}, "spec": spec}


_FOO_EXISTS = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


@dataclass
class SchedulePodCase:
    name: str
    points: dict[str, PointList]
    plugins: dict[str, Any]
    nodes: list[Node]
    pod: Pod
    pods: list[Pod] = field(default_factory=list)
    objects: list[tuple[str, dict]] = field(default_factory=list)
    want_nodes: set[str] | None = None
    want_evaluated_nodes: int | None = None
    want_fit_error: WantFitError | None = None
    want_error: str | None = None
    marks: tuple = ()
    extenders: list[Any] = field(default_factory=list)


def _n(*names: str) -> list[Node]:
    return [_node(n) for n in names]


def _pod(name: str) -> Pod:
    return MakePod().name(name).uid(name).obj()


SCHEDULE_POD_CASES = [
    SchedulePodCase(
        name="test 1",
        points={"filter": ["FalseFilter"]}, plugins={"FalseFilter": FalseFilter()},
        nodes=_n("node1", "node2"), pod=_pod("2"),
        want_fit_error=WantFitError(2, {"node1": (U, (ERR_REASON_FAKE,), "FalseFilter"),
                                        "node2": (U, (ERR_REASON_FAKE,), "FalseFilter")},
                                    unschedulable_plugins={"FalseFilter"},
                                    message=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.")),
    SchedulePodCase(
        name="test 2",
        points={"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        plugins={"TrueFilter": TrueFilter(), "EqualPrioritizerPlugin": FakePreScoreAndScore()},
        nodes=_n("node1", "node2"), pod=_pod("ignore"), want_nodes={"node1", "node2"}),
    SchedulePodCase(  # fits on a node where the pod ID matches the node name
        name="test 3",
        points={"filter": ["MatchFilter"]}, plugins={"MatchFilter": MatchFilter()},
        nodes=_n("node1", "node2"), pod=_pod("node2"), want_nodes={"node2"}),
    SchedulePodCase(
        name="test 4",
        points={"filter": ["TrueFilter"], "score": [("NumericMap", 1)]},
        plugins={"TrueFilter": TrueFilter(), "NumericMap": NumericMap()},
        nodes=_n("3", "2", "1"), pod=_pod("ignore"), want_nodes={"3"}),
    SchedulePodCase(
        name="test 5",
        points={"filter": ["MatchFilter"], "score": [("NumericMap", 1)]},
        plugins={"MatchFilter": MatchFilter(), "NumericMap": NumericMap()},
        nodes=_n("3", "2", "1"), pod=_pod("2"), want_nodes={"2"}),
    SchedulePodCase(
        name="test 6",
        points={"filter": ["TrueFilter"], "score": [("NumericMap", 1), ("ReverseNumericMap", 2)]},
        plugins={"TrueFilter": TrueFilter(), "NumericMap": NumericMap(), "ReverseNumericMap": ReverseNumericMap()},
        nodes=_n("3", "2", "1"), pod=_pod("2"), want_nodes={"1"}),
    SchedulePodCase(
        name="test 7",
        points={"filter": ["TrueFilter", "FalseFilter"], "score": [("NumericMap", 1)]},
        plugins={"TrueFilter": TrueFilter(), "FalseFilter": FalseFilter(), "NumericMap": NumericMap()},
        nodes=_n("3", "2", "1"), pod=_pod("2"),
        want_fit_error=WantFitError(3, {n: (U, (ERR_REASON_FAKE,), "FalseFilter") for n in ("3", "2", "1")},
                                    unschedulable_plugins={"FalseFilter"},
                                    message=f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.")),
    SchedulePodCase(
        name="test 8",
        points={"filter": ["NoPodsFilter", "MatchFilter"], "score": [("NumericMap", 1)]},
        plugins={"NoPodsFilter": NoPodsFilter(), "MatchFilter": MatchFilter(), "NumericMap": NumericMap()},
        pods=[MakePod().name("2").uid("2").node("2").obj()],
        nodes=_n("1", "2"), pod=_pod("2"),
        want_fit_error=WantFitError(2, {"1": (U, (ERR_REASON_FAKE,), "MatchFilter"),
                                        "2": (U, (ERR_REASON_FAKE,), "NoPodsFilter")},
                                    unschedulable_plugins={"MatchFilter", "NoPodsFilter"},
                                    message=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.")),
    SchedulePodCase(  # pod with existing PVC
        name="existing PVC",
        points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        plugins={"TrueFilter": TrueFilter(), "EqualPrioritizerPlugin": FakePreScoreAndScore()},
        nodes=_n("node1", "node2"),
        objects=[_pvc("existingPVC", volume_name="existingPV"), _pv("existingPV")],
        pod=MakePod().name("ignore").uid("ignore").pvc("existingPVC").obj(),
        want_nodes={"node1", "node2"}),
    SchedulePodCase(  # pod with non existing PVC
        name="unknown PVC",
        points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]},
        plugins={"TrueFilter": TrueFilter()},
        nodes=_n("node1", "node2"),
        pod=MakePod().name("ignore").uid("ignore").pvc("unknownPVC").obj(),
        want_fit_error=WantFitError(
            2, {}, absent=(UU, ('persistentvolumeclaim "unknownPVC" not found',), "VolumeBinding"),
            unschedulable_plugins={"VolumeBinding"}, pre_filter_msg='persistentvolumeclaim "unknownPVC" not found',
            message='0/2 nodes are available: persistentvolumeclaim "unknownPVC" not found.')),
    SchedulePodCase(  # pod with deleting PVC
        name="deleted PVC",
        points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]},
        plugins={"TrueFilter": TrueFilter()},
        nodes=_n("node1", "node2"),
        objects=[_pvc("existingPVC", deleting=True)],
        pod=MakePod().name("ignore").uid("ignore").pvc("existingPVC").obj(),
        want_fit_error=WantFitError(
            2, {}, absent=(UU, ('persistentvolumeclaim "existingPVC" is being deleted',), "VolumeBinding"),
            unschedulable_plugins={"VolumeBinding"},
            pre_filter_msg='persistentvolumeclaim "existingPVC" is being deleted')),
    SchedulePodCase(
        name="test error with priority map",
        points={"filter": ["TrueFilter"], "score": [("FalseMap", 1), ("TrueMap", 2)]},
        plugins={"TrueFilter": TrueFilter(), "FalseMap": FalseMap(), "TrueMap": TrueMap()},
        nodes=_n("2", "1"), pod=MakePod().name("2").obj(),
        want_error=f'running Score plugins: plugin "FalseMap" failed with: {ERR_PRIORITIZE}'),
    SchedulePodCase(
        name="test podtopologyspread plugin - 2 nodes with maxskew=1",
        points={"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"]}, plugins={},
        nodes=_n("node1", "node2"),
        pod=MakePod().name("p").uid("p").label("foo", "").spread_constraint(
            1, "kubernetes.io/hostname", "DoNotSchedule", _FOO_EXISTS).obj(),
        pods=[MakePod().name("pod1").uid("pod1").label("foo", "").node("node1").obj()],
        want_nodes={"node2"}),
    SchedulePodCase(
        name="test podtopologyspread plugin - 3 nodes with maxskew=2",
        points={"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"],
                "score": [("EqualPrioritizerPlugin", 1)]},
        plugins={"EqualPrioritizerPlugin": FakePreScoreAndScore()},
        nodes=_n("node1", "node2", "node3"),
        pod=MakePod().name("p").uid("p").label("foo", "").spread_constraint(
            2, "kubernetes.io/hostname", "DoNotSchedule", _FOO_EXISTS).obj(),
        pods=[MakePod().name("pod1a").uid("pod1a").label("foo", "").node("node1").obj(),
              MakePod().name("pod1b").uid("pod1b").label("foo", "").node("node1").obj(),
              MakePod().name("pod2").uid("pod2").label("foo", "").node("node2").obj()],
        want_nodes={"node2", "node3"}),
    SchedulePodCase(
        name="test with filter plugin returning Unschedulable status",
        points={"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        plugins={"FakeFilter": FakeFilter({"3": U}), "NumericMap": NumericMap()},
        nodes=_n("3"), pod=_pod("test-filter"),
        want_fit_error=WantFitError(1, {"3": (U, ("injecting failure for pod test-filter",), "FakeFilter")},
                                    unschedulable_plugins={"FakeFilter"},
                                    message="0/1 nodes are available: 1 injecting failure for pod test-filter.")),
    SchedulePodCase(
        name="test with extender which filters out some Nodes",
        points={"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        plugins={"FakeFilter": FakeFilter({"3": U}), "NumericMap": NumericMap()},
        extenders=[FakeExtender("FakeExtender1", predicates=[false_predicate_extender])],
        nodes=_n("1", "2", "3"), pod=_pod("test-filter"),
        want_fit_error=WantFitError(3, {"1": (U, ('FakeExtender: node "1" failed',), ""),
                                        "2": (U, ('FakeExtender: node "2" failed',), ""),
                                        "3": (U, ("injecting failure for pod test-filter",), "FakeFilter")},
                                    unschedulable_plugins={"FakeFilter", EXTENDER_NAME},
                                    message='0/3 nodes are available: 1 FakeExtender: node "1" failed, '
                                            '1 FakeExtender: node "2" failed, '
                                            "1 injecting failure for pod test-filter.")),
    SchedulePodCase(
        name="test with filter plugin returning UnschedulableAndUnresolvable status",
        points={"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        plugins={"FakeFilter": FakeFilter({"3": UU}), "NumericMap": NumericMap()},
        nodes=_n("3"), pod=_pod("test-filter"),
        want_fit_error=WantFitError(1, {"3": (UU, ("injecting failure for pod test-filter",), "FakeFilter")},
                                    unschedulable_plugins={"FakeFilter"})),
    SchedulePodCase(
        name="test with partial failed filter plugin",
        points={"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        plugins={"FakeFilter": FakeFilter({"1": U}), "NumericMap": NumericMap()},
        nodes=_n("1", "2"), pod=_pod("test-filter"),
        want_nodes={"2"}),  # upstream leaves wantNodes nil; "2" is the only feasible node
    SchedulePodCase(
        name="test prefilter plugin returning Unschedulable status",
        points={"preFilter": ["FakePreFilter"]},
        plugins={"FakePreFilter": FakePreFilter("FakePreFilter", None, Status.of(UU, "injected unschedulable status"))},
        nodes=_n("1", "2"), pod=_pod("test-prefilter"),
        want_fit_error=WantFitError(2, {}, absent=(UU, ("injected unschedulable status",), "FakePreFilter"),
                                    unschedulable_plugins={"FakePreFilter"},
                                    pre_filter_msg="injected unschedulable status",
                                    message="0/2 nodes are available: injected unschedulable status.")),
    SchedulePodCase(
        name="test prefilter plugin returning error status",
        points={"preFilter": ["FakePreFilter"]},
        plugins={"FakePreFilter": FakePreFilter("FakePreFilter", None, Status.of(Code.ERROR, "injected error status"))},
        nodes=_n("1", "2"), pod=_pod("test-prefilter"),
        want_error='running PreFilter plugin "FakePreFilter": injected error status'),
    SchedulePodCase(
        name="test prefilter plugin returning node",
        points={"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
        plugins={"FakePreFilter1": FakePreFilter("FakePreFilter1", None, None),
                 "FakePreFilter2": FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"})), None),
                 "FakePreFilter3": FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1", "node2"})),
                                                 None)},
        nodes=_n("node1", "node2", "node3"), pod=_pod("test-prefilter"),
        want_nodes={"node2"},
        want_evaluated_nodes=1),  # no score plugin: only one node is searched for in Filter
    SchedulePodCase(
        name="test prefilter plugin returning non-intersecting nodes",
        points={"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
        plugins={"FakePreFilter1": FakePreFilter("FakePreFilter1", None, None),
                 "FakePreFilter2": FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"})), None),
                 "FakePreFilter3": FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1"})), None)},
        nodes=_n("node1", "node2", "node3"), pod=_pod("test-prefilter"),
        want_fit_error=WantFitError(
            3, {},
            absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",), ""),
            unschedulable_plugins={"FakePreFilter2", "FakePreFilter3"},
            pre_filter_msg="node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
            message="0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] "
                    "simultaneously.")),
    SchedulePodCase(
        name="test prefilter plugin returning empty node set",
        points={"preFilter": ["FakePreFilter1", "FakePreFilter2"]},
        plugins={"FakePreFilter1": FakePreFilter("FakePreFilter1", None, None),
                 "FakePreFilter2": FakePreFilter("FakePreFilter2", PreFilterResult(frozenset()), None)},
        nodes=_n("node1"), pod=_pod("test-prefilter"),
        want_fit_error=WantFitError(
            1, {}, absent=(UU, ("node(s) didn't satisfy plugin FakePreFilter2",), ""),
            unschedulable_plugins={"FakePreFilter2"},
            pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2")),
    SchedulePodCase(
        name="test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
        points={"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
        plugins={"FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2"})), None),
                 "FakeFilter": FakeFilter({"node2": U})},
        nodes=_n("node1", "node2"), pod=_pod("test-prefilter"),
        want_fit_error=WantFitError(
            2, {"node2": (U, ("injecting failure for pod test-prefilter",), "FakeFilter")},
            absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter]",), ""),
            unschedulable_plugins={"FakePreFilter", "FakeFilter"},
            message="0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
                    "1 node(s) didn't satisfy plugin(s) [FakePreFilter].")),
    SchedulePodCase(
        name="test prefilter plugin returning skip",
        points={"preFilter": ["FakePreFilter1", "FakeFilter2"], "filter": ["FakeFilter1", "FakeFilter2"],
                "score": [("EqualPrioritizerPlugin", 1)]},
        plugins={"FakePreFilter1": FakePreFilter("FakeFilter1", None, None),  # upstream names it FakeFilter1 too
                 "FakeFilter1": FakeFilter({"node1": U}, name="FakeFilter1"),
                 "FakeFilter2": FakePreFilterAndFilter(),
                 "EqualPrioritizerPlugin": FakePreScoreAndScore()},
        nodes=_n("node1", "node2", "node3"), pod=_pod("test-prefilter"),
        want_nodes={"node2", "node3"}, want_evaluated_nodes=3),
    SchedulePodCase(
        name="test all prescore plugins return skip",
        points={"filter": ["TrueFilter"], "preScore": ["FakePreScoreAndScorePlugin"],
                "score": [("FakePreScoreAndScorePlugin", 1)]},
        plugins={"TrueFilter": TrueFilter(),
                 "FakePreScoreAndScorePlugin": FakePreScoreAndScore(
                     "FakePreScoreAndScorePlugin", 0, Status.of(Code.SKIP, "fake skip"),
                     Status.of(Code.ERROR, "this score function shouldn't be executed because this plugin returned "
                                           "Skip in the PreScore"))},
        nodes=_n("node1", "node2"), pod=_pod("ignore"),
        want_nodes={"node1", "node2"}),
    SchedulePodCase(
        name="test without score plugin no extra nodes are evaluated",
        points={"filter": ["TrueFilter"]}, plugins={"TrueFilter": TrueFilter()},
        nodes=_n("node1", "node2", "node3"), pod=_pod("pod1"),
        want_nodes={"node1", "node2", "node3"}, want_evaluated_nodes=1),
    SchedulePodCase(
        name="test no score plugin, prefilter plugin returning 2 nodes",
        points={"preFilter": ["FakePreFilter"]},
        plugins={"FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node1", "node2"})),
                                                None)},
        nodes=_n("node1", "node2", "node3"), pod=_pod("test-prefilter"),
        want_nodes={"node1", "node2"},
        want_evaluated_nodes=1),  # no score plugin: only one node is searched for in Filter
    SchedulePodCase(
        name="test prefilter plugin returned an invalid node",
        points={"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"]},
        plugins={"FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"invalid-node"})), None),
                 "TrueFilter": TrueFilter()},
        nodes=_n("1", "2"), pod=_pod("test-prefilter"),
        want_fit_error=WantFitError(
            2, {}, absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter]",), ""),
            unschedulable_plugins={"FakePreFilter"},
            message="0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].")),
    SchedulePodCase(
        name="hostname and nodename of the node do not match",
        points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        plugins={"TrueFilter": TrueFilter(), "EqualPrioritizerPlugin": FakePreScoreAndScore()},
        nodes=[_node("node1", hostname="host1")],
        objects=[_pvc("PVC1", volume_name="PV1"), _pv("PV1", hostname_in=["host1"])],
        pod=MakePod().name("pod1").uid("pod1").pvc("PVC1").obj(),
        want_nodes={"node1"},),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=c.marks) for c in SCHEDULE_POD_CASES])
def test_scheduler_schedule_pod(case: SchedulePodCase) -> None:
    """Upstream ``TestSchedulerSchedulePod``."""
    sched = _scheduler(case.points, case.plugins, case.nodes, case.pods, case.objects, extenders=case.extenders)
    if case.want_fit_error is not None:
        with pytest.raises(FitError) as ei:
            _schedule_pod(sched, case.pod)
        _assert_fit_error(ei.value, sched, case.want_fit_error)
        return
    if case.want_error is not None:
        with pytest.raises(SchedulePodError) as ei:
            _schedule_pod(sched, case.pod)
        assert ei.value.status.code == Code.ERROR
        assert ei.value.status.message() == case.want_error
        return
    res = _schedule_pod(sched, case.pod)
    if case.want_nodes is not None:
        assert res.suggested_host in case.want_nodes
    want_evaluated = case.want_evaluated_nodes if case.want_evaluated_nodes is not None else len(case.nodes)
    assert res.evaluated_nodes == want_evaluated


def test_prefilter_skip_skips_the_coupled_filter() -> None:
    """The "test prefilter plugin returning skip" case's point: the skipped plugin's Filter (which
    would return Error) never runs."""
    pf = FakePreFilterAndFilter()
    sched = _scheduler({"preFilter": ["FakeFilter2"], "filter": ["FakeFilter2"]}, {"FakeFilter2": pf},
                       _n("node1", "node2"))
    _schedule_pod(sched, _pod("p"))
    assert pf.num_filter_called == 0


# ───────────────────────────── TestFindFitAllError / TestFindFitSomeError ─────────────────────────────


def _match_scheduler(nodes: Sequence[str]) -> Scheduler:
    return _scheduler({"filter": ["TrueFilter", "MatchFilter"]},
                      {"TrueFilter": TrueFilter(), "MatchFilter": MatchFilter()},
                      [_bare_node(n) for n in nodes])


def test_find_fit_all_error() -> None:
    """Upstream ``TestFindFitAllError``: no node matches an unnamed pod."""
    sched = _match_scheduler(["3", "2", "1"])
    with pytest.raises(FitError) as ei:
        _schedule_pod(sched, MakePod().name("").namespace("").obj())
    _assert_fit_error(ei.value, sched, WantFitError(
        3, {n: (U, (ERR_REASON_FAKE,), "MatchFilter") for n in ("1", "2", "3")},
        unschedulable_plugins={"MatchFilter"}))


def test_find_fit_some_error() -> None:
    """Upstream ``TestFindFitSomeError``: pod "1" fits node "1" only; with no score plugin the
    search stops there, after the two other nodes failed."""
    sched = _match_scheduler(["3", "2", "1"])
    res = _schedule_pod(sched, _pod("1"))
    assert res.suggested_host == "1"
    d = Diagnosis(chunks=res.chunks)  # the findNodesThatFitPod diagnosis of a successful search
    d.collect_plugins()
    assert d.num_explicit() == 3 - 1
    assert d.unschedulable_plugins == {"MatchFilter"}
    statuses = d.node_to_status(sched.table.names)
    for name in ("3", "2"):
        assert statuses[name].reasons == (ERR_REASON_FAKE,)


# ───────────────────────────── TestFindFitPredicateCallCounts ─────────────────────────────

LOW_PRIORITY, MID_PRIORITY, HIGH_PRIORITY = 0, 100, 1000


@pytest.mark.parametrize(("pod_priority", "expected_count"), [
    pytest.param(HIGH_PRIORITY, 1, id="nominated pods have lower priority, predicate is called once"),
    pytest.param(LOW_PRIORITY, 2, id="nominated pods have higher priority, predicate is called twice"),
])
def test_find_fit_predicate_call_counts(pod_priority: int, expected_count: int) -> None:
    """Upstream ``TestFindFitPredicateCallCounts``."""
    plugin = FakeFilter()
    sched = _scheduler({"filter": ["FakeFilter"]}, {"FakeFilter": plugin}, [_bare_node("1")])
    nominated = MakePod().name("nominated").uid("nominated").priority(MID_PRIORITY).obj()
    sched.queue.add_nominated_pod(PodInfo(nominated), "1")
    _schedule_pod(sched, MakePod().name("1").uid("1").priority(pod_priority).obj())
    assert plugin.num_filter_called == expected_count


# ───────────────────────────── TestNumFeasibleNodesToFind ─────────────────────────────


@pytest.mark.parametrize(("global_pct", "profile_pct", "num_all_nodes", "want"), [
    pytest.param(None, None, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(None, 40, 10, 10, id="set profile percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(None, None, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, 40, 1000, 400, id="set profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(100, 40, 1000, 400,
                 id="set global and profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(40, None, 1000, 400, id="set global percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, None, 6000, 300,
                 id="not set profile percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(None, 40, 6000, 2400,
                 id="set profile percentageOfNodesToScore and nodes number more than 50*125"),
])
def test_num_feasible_nodes_to_find(global_pct: int | None, profile_pct: int | None, num_all_nodes: int,
                                    want: int) -> None:
    """Upstream ``TestNumFeasibleNodesToFind``: the profile's percentageOfNodesToScore wins over
    the global one (resolved when the profile's framework is built)."""
    sched = _scheduler({}, {}, [], percentage=global_pct, profile_percentage=profile_pct)
    fw = sched.profiles["default-scheduler"]
    assert num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, num_all_nodes) == want


# ───────────────────────────── TestFairEvaluationForNodes ─────────────────────────────


def test_fair_evaluation_for_nodes() -> None:
    """Upstream ``TestFairEvaluationForNodes``: 500 nodes, 30 % → 150 per cycle; the start index
    rotates so that every node gets evaluated."""
    num_all_nodes = 500
    sched = _scheduler({"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
                       {"TrueFilter": TrueFilter(), "EqualPrioritizerPlugin": FakePreScoreAndScore()},
                       [_bare_node(str(i)) for i in range(num_all_nodes)], percentage=30)
    fw = sched.profiles["default-scheduler"]
    nodes_to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, num_all_nodes)
    assert nodes_to_find == 150  # numAllNodes % nodesToFind != 0
    for i in range(2 * (num_all_nodes // nodes_to_find + 1)):  # iterate over all nodes more than twice
        res = _schedule_pod(sched, MakePod().name("").namespace("").obj())
        assert res.feasible_nodes == nodes_to_find
        assert sched.sampler.next_start_node_index == (i + 1) * nodes_to_find % num_all_nodes


# ───────────────────────────── TestPreferNominatedNodeFilterCallCounts ─────────────────────────────


@pytest.mark.parametrize(("pod", "codes", "expected_count"), [
    pytest.param(MakePod().name("p_with_nominated_node").uid("p").priority(HIGH_PRIORITY)
                 .nominated_node_name("node1").obj(), None, 1,
                 id="pod has the nominated node set, filter is called only once"),
    pytest.param(MakePod().name("p_without_nominated_node").uid("p").priority(HIGH_PRIORITY).obj(), None, 3,
                 id="pod without the nominated pod, filter is called for each node"),
    pytest.param(MakePod().name("p_with_nominated_node").uid("p").priority(HIGH_PRIORITY)
                 .nominated_node_name("node1").obj(), {"node1": U}, 4,
                 id="nominated pod cannot pass the filter, filter is called for each node"),
])
def test_prefer_nominated_node_filter_call_counts(pod: Pod, codes: dict[str, Code] | None,
                                                  expected_count: int) -> None:
    """Upstream ``TestPreferNominatedNodeFilterCallCounts``."""
    plugin = FakeFilter(codes)
    sched = _scheduler({"filter": ["FakeFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
                       {"FakeFilter": plugin, "EqualPrioritizerPlugin": FakePreScoreAndScore()},
                       [_bare_node(n) for n in ("node1", "node2", "node3")])
    _schedule_pod(sched, pod)
    assert plugin.num_filter_called == expected_count


# ───────────────────────────── types_test.go: TestFitError_Error ─────────────────────────────


def _statuses(*pairs: tuple[str, str]) -> dict[str, Status]:
    return {n: Status.of(U, r) for n, r in pairs}


_PF = "Node(s) failed PreFilter plugin FalsePreFilter"
_F1 = "Node(s) failed Filter plugin FalseFilter-1"
_F2 = "Node(s) failed Filter plugin FalseFilter-2"
_PF_STATUSES = _statuses(("node1", _PF), ("node2", _PF), ("node3", _PF))
_ONE_FILTER = _statuses(("node1", _F1), ("node2", _F1), ("node3", _F1))
_TWO_FILTERS = _statuses(("node1", _F1), ("node2", _F1), ("node3", _F2))
_POST = "Error running PostFilter plugin FailedPostFilter"


@pytest.mark.parametrize(("num_all_nodes", "statuses", "pre_filter_msg", "post_filter_msg", "want"), [
    # the statuses a PreFilter rejection leaves on every node are not repeated in the message
    pytest.param(3, _PF_STATUSES, _PF, "", f"0/3 nodes are available: {_PF}.",
                 id="nodes failed Prefilter plugin"),
    pytest.param(3, _PF_STATUSES, _PF, _POST, f"0/3 nodes are available: {_PF}. {_POST}",
                 id="nodes failed Prefilter plugin and the preemption also failed"),
    pytest.param(3, _ONE_FILTER, "", "", f"0/3 nodes are available: 3 {_F1}.",
                 id="nodes failed one Filter plugin with an empty PostFilterMsg"),
    pytest.param(3, _ONE_FILTER, "", _POST, f"0/3 nodes are available: 3 {_F1}. {_POST}",
                 id="nodes failed one Filter plugin with a non-empty PostFilterMsg"),
    pytest.param(3, _TWO_FILTERS, "", "", f"0/3 nodes are available: 1 {_F2}, 2 {_F1}.",
                 id="nodes failed two Filter plugins with an empty PostFilterMsg"),
    pytest.param(3, _TWO_FILTERS, "", _POST, f"0/3 nodes are available: 1 {_F2}, 2 {_F1}. {_POST}",
                 id="nodes failed two Filter plugins with a non-empty PostFilterMsg"),
    pytest.param(1, _statuses(("node1", "Node failed Permit plugin Permit-1")), "", "",
                 "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
                 id="failed to Permit on node"),
    pytest.param(1, _statuses(("node1", "Node failed Reserve plugin Reserve-1")), "", "",
                 "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
                 id="failed to Reserve on node"),
])
def test_fit_error_error(num_all_nodes: int, statuses: dict[str, Status], pre_filter_msg: str,
                         post_filter_msg: str, want: str) -> None:
    """Upstream ``TestFitError_Error`` (types_test.go); the absent status is the default
    (UnschedulableAndUnresolvable, no reasons)."""
    d = Diagnosis(extra_statuses=dict(statuses), pre_filter_msg=pre_filter_msg, post_filter_msg=post_filter_msg)
    assert fit_error_message(num_all_nodes, d) == want
    assert str(FitError("ns/pod", num_all_nodes, d)) == want


def test_filter_plugin_error_aborts_with_upstream_message() -> None:
    """Upstream ``RunFilterPlugins`` wraps a Filter Error as ``running "<plugin>" filter plugin:
    <err>`` (the FailedScheduling message; cf. the "predicate error" case of
    ``TestSchedulerWithVolumeBinding``: ``running "VolumeBinding" filter plugin: find err``)."""
    sched = _scheduler({"filter": ["FakeFilter"]}, {"FakeFilter": FakeFilter({"node1": Code.ERROR})}, _n("node1"))
    with pytest.raises(SchedulePodError) as ei:
        _schedule_pod(sched, _pod("p"))
    assert ei.value.status.code == Code.ERROR and ei.value.status.plugin == "FakeFilter"
    assert ei.value.status.message() == 'running "FakeFilter" filter plugin: injecting failure for pod p'


def test_prefilter_non_intersecting_message_lists_plugins_sorted() -> None:
    """The "non-intersecting nodes" case with the PreFilter plugins in the other order: upstream
    v1.34 keeps ``pluginsWithNodes`` in a set and prints ``sets.List`` (sorted), so the message and
    the UnschedulablePlugins do not depend on the plugin order."""
    sched = _scheduler({"preFilter": ["FakePreFilter3", "FakePreFilter2"]},
                       {"FakePreFilter3": FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1"})), None),
                        "FakePreFilter2": FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"})), None)},
                       _n("node1", "node2", "node3"))
    msg = "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously"
    with pytest.raises(FitError) as ei:
        _schedule_pod(sched, _pod("test-prefilter"))
    _assert_fit_error(ei.value, sched, WantFitError(3, {}, absent=(UU, (msg,), ""),
                                                    unschedulable_plugins={"FakePreFilter2", "FakePreFilter3"},
                                                    pre_filter_msg=msg))


class _RaisingPreFilter(FakePreFilter):
    def pre_filter(self, state, pod, nodes):
        raise RuntimeError("boom")


@pytest.mark.parametrize("plugin", [
    pytest.param(_RaisingPreFilter("FakePreFilter", None, None), id="exception"),
    pytest.param(FakePreFilter("FakePreFilter", None, Status.of(Code.PENDING, "boom")), id="Pending"),
])
def test_prefilter_error_or_unsupported_code_is_an_error(plugin: FakePreFilter) -> None:
    """Upstream ``RunPreFilterPlugins``: only Unschedulable(AndUnresolvable) is a rejection; any
    other non-success code (Error; also Pending, which PreFilter may not return) becomes
    ``running PreFilter plugin "<name>": <err>``, like the "prefilter plugin returning error
    status" case. A Python exception is the plugin's Error."""
    sched = _scheduler({"preFilter": ["FakePreFilter"]}, {"FakePreFilter": plugin}, _n("1", "2"))
    with pytest.raises(SchedulePodError) as ei:
        _schedule_pod(sched, _pod("test-prefilter"))
    assert ei.value.status.code == Code.ERROR and ei.value.status.plugin == "FakePreFilter"
    assert ei.value.status.message() == 'running PreFilter plugin "FakePreFilter": boom'


# ───────────────────────────── the nominated node's statuses (findNodesThatFitPod) ─────────────────────────────
# Upstream evaluateNominatedNode runs findNodesThatPassFilters on the nominated node with the
# cycle's Diagnosis: when the node fails, its status stays in NodeToStatus (a map, so the main
# pass overwrites it with the same status if it reaches the node) and counts in
# processedNodes / EvaluatedNodes; an Error there is only logged.


def test_failed_nominated_node_counts_as_processed() -> None:
    """No score plugin: the main pass stops at the first feasible node, before the nominated one.
    Upstream: EvaluatedNodes = 1 + NodeToStatus.Len() = 2, nextStartNodeIndex = (0+1+1) % 3."""
    sched = _scheduler({"filter": ["FakeFilter"]}, {"FakeFilter": FakeFilter({"node3": U})},
                       _n("node1", "node2", "node3"))
    res = _schedule_pod(sched, MakePod().name("p").uid("p").nominated_node_name("node3").obj())
    assert res.suggested_host == "node1"
    assert res.evaluated_nodes == 2
    assert sched.sampler.next_start_node_index == 2


def test_failed_nominated_node_outside_prefilter_result_keeps_its_status() -> None:
    """The nominated node is outside the PreFilterResult: its Filter status, not the absent
    "didn't satisfy plugin(s)" status, is what the FitError reports for it."""
    sched = _scheduler({"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
                       {"FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2"})), None),
                        "FakeFilter": FakeFilter({"node1": U, "node2": U})},
                       _n("node1", "node2", "node3"))
    with pytest.raises(FitError) as ei:
        _schedule_pod(sched, MakePod().name("p").uid("p").nominated_node_name("node1").obj())
    reason = "injecting failure for pod p"
    _assert_fit_error(ei.value, sched, WantFitError(
        3, {"node1": (U, (reason,), "FakeFilter"), "node2": (U, (reason,), "FakeFilter")},
        absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter]",), ""),
        unschedulable_plugins={"FakePreFilter", "FakeFilter"},
        message=f"0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [FakePreFilter], 2 {reason}."))


def test_filter_error_on_nominated_node_is_only_logged() -> None:
    """The nominated node's Filter Error is logged, not returned; the PreFilterResult keeps the
    main pass off that node (upstream evaluates nodes concurrently, so an erroring node inside
    the main pass would make the outcome depend on goroutine timing)."""
    sched = _scheduler({"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
                       {"FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2", "node3"})),
                                                       None),
                        "FakeFilter": FakeFilter({"node1": Code.ERROR})},
                       _n("node1", "node2", "node3"))
    res = _schedule_pod(sched, MakePod().name("p").uid("p").nominated_node_name("node1").obj())
    assert res.suggested_host in {"node2", "node3"}
    assert res.evaluated_nodes == 1
