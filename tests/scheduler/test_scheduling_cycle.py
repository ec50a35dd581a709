"""The scheduling cycle against upstream's documented behaviour (schedule_one.go, types.go)."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.diagnosis import Diagnosis, FilterChunk, PluginReasons, fit_error_message
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, FilterResult, Status
from kubesched.scheduler import Scheduler, num_feasible_nodes_to_find, truncate_message
from kubesched.testing.wrappers import MakeNode, MakePod

# ───────────────────────────── numFeasibleNodesToFind ─────────────────────────────


@pytest.mark.parametrize(
    ("pct", "n", "want"),
    [
        (0, 10, 10),  # below minFeasibleNodesToFind: all
        (0, 99, 99),
        (0, 100, 100),  # 50 - 0 = 50% of 100 = 50 → raised to 100
        (0, 1000, 420),  # 50 - 8 = 42%
        (0, 5000, 500),  # 50 - 40 = 10%
        (0, 6000, 300),  # 50 - 48 = 2% → floored at 5%
        (0, 15000, 750),  # 5%
        (10, 5000, 500),
        (1, 5000, 100),  # 50 nodes → raised to 100
        (100, 5000, 5000),
    ],
    ids=lambda v: str(v),
)
def test_num_feasible_nodes_to_find(pct: int, n: int, want: int) -> None:
    assert num_feasible_nodes_to_find(pct, n) == want


# ───────────────────────────── FitError message ─────────────────────────────


def _chunk(rows: list[int], fail: list[int], bits: list[int], tables: list[PluginReasons | None]) -> FilterChunk:
    return FilterChunk(np.asarray(rows, np.int64), np.asarray(fail, np.int16), np.asarray(bits, np.int64),
                       [f"P{i}" for i in range(len(tables))], tables)


def test_fit_error_histogram_is_sorted_as_strings() -> None:
    # 10 nodes say "B", 2 say "A": "10 B" sorts before "2 A" as strings, as upstream.
    t = PluginReasons(("A", "B"), (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE))
    d = Diagnosis(chunks=[_chunk(list(range(12)), [0] * 12, [2] * 10 + [1] * 2, [t])])
    assert fit_error_message(12, d) == "0/12 nodes are available: 10 B, 2 A."


def test_fit_error_one_node_contributes_all_reasons_of_its_plugin() -> None:
    t = PluginReasons(("Insufficient cpu", "Insufficient memory"), (Code.UNSCHEDULABLE,) * 2)
    d = Diagnosis(chunks=[_chunk([0, 1], [0, 0], [3, 1], [t])])
    assert fit_error_message(2, d) == "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."


def test_fit_error_prefilter_message_and_postfilter() -> None:
    d = Diagnosis(pre_filter_msg='persistentvolumeclaim "x" not found',
                  post_filter_msg="preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    assert fit_error_message(3, d) == (
        '0/3 nodes are available: persistentvolumeclaim "x" not found. '
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_fit_error_absent_nodes_get_absent_status() -> None:
    t = PluginReasons(("X",), (Code.UNSCHEDULABLE,))
    d = Diagnosis(chunks=[_chunk([0], [0], [1], [t])],
                  absent_status=Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]"))
    assert fit_error_message(4, d) == ("0/4 nodes are available: 1 X, "
                                       "3 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_truncate_message() -> None:
    assert truncate_message("a" * 1024) == "a" * 1024
    out = truncate_message("a" * 2000)
    assert len(out) == 1024 and out.endswith(" ...")


# ───────────────────────────── a scheduler with small test plugins ─────────────────────────────


class Sort:
    name = "Sort"

    def sort_key(self, q):  # noqa: ANN001, ANN201
        return (-q.pod_info.priority, q.timestamp)


class CpuFilter:
    """Batch filter: rejects nodes without free cpu; records which rows it saw."""

    name = "CpuFilter"

    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    def events_to_register(self):  # noqa: ANN201 - like NodeResourcesFit: pods leaving, nodes arriving
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

    def filter_nodes(self, state, pod, nodes, rows):  # noqa: ANN001, ANN201
        self.seen.append(rows.tolist())
        free = nodes.allocatable[rows, 0] - nodes.requested[rows, 0]
        return FilterResult.single(free < state.pod_info.requests.get("cpu", 0), "Insufficient cpu", Code.UNSCHEDULABLE)


class Taint:
    """Per-node filter rejecting nodes labelled bad=true (UnschedulableAndUnresolvable)."""

    name = "Taint"

    def events_to_register(self):  # noqa: ANN201
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]

    def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201
        if node_info.node.metadata.labels.get("bad") == "true":
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were bad")
        return None


class Flat:
    name = "Flat"

    def score_nodes(self, state, pod, nodes, rows):  # noqa: ANN001, ANN201
        return np.zeros(len(rows), np.int64)


class Binder:
    name = "Binder"

    def __init__(self, handle) -> None:  # noqa: ANN001
        self.handle = handle

    async def bind(self, state, pod, node):  # noqa: ANN001, ANN201
        await self.handle.client.bind(pod, node)


class ByName:
    """Scores each node from a fixed name → score map (0 for the others)."""

    name = "ByName"

    def __init__(self, points: dict[str, int]) -> None:
        self.points = points

    def score_nodes(self, state, pod, nodes, rows):  # noqa: ANN001, ANN201
        return np.asarray([self.points.get(nodes.names[int(r)], 0) for r in rows], np.int64)


def _scheduler(nodes: list, plugins: list[str], *, score: bool = True, seed: int = 0,
               percentage: int | None = None, features=None, points: dict[str, int] | None = None,
               extenders=None):  # noqa: ANN001, ANN202
    from kubesched.sim.store import ClusterStore

    cpu = CpuFilter()
    reg = {"Sort": lambda a, h: Sort(), "CpuFilter": lambda a, h: cpu, "Taint": lambda a, h: Taint(),
           "Flat": lambda a, h: Flat(), "Binder": lambda a, h: Binder(h),
           "ByName": lambda a, h: ByName(points or {})}
    scorer = "ByName" if points is not None else "Flat"
    enabled = [{"name": "Sort"}, *({"name": p} for p in plugins), *([{"name": scorer}] if score else []),
               {"name": "Binder"}]
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}]}
    if percentage is not None:
        cfg["percentageOfNodesToScore"] = percentage
    store = ClusterStore()
    sched = Scheduler(decode_config(cfg, features=features), client=store, lister=store, registry=reg, seed=seed,
                      record=True, features=features, extenders=extenders)
    store.scheduler = sched
    for n in nodes:
        store.add("Node", n)
    return sched, store, cpu


def _nodes(n: int, cpu: str = "4", zone_of=lambda i: "z0", **labels) -> list:  # noqa: ANN001
    out = []
    for i in range(n):
        b = MakeNode().name(f"n{i:04d}").capacity(cpu=cpu, memory="32Gi", pods="110").label(
            "topology.kubernetes.io/zone", zone_of(i))
        for k, v in labels.get(f"n{i:04d}", {}).items():
            b.label(k, v)
        out.append(b.obj())
    return out


def test_first_failing_plugin_per_node_and_message() -> None:
    nodes = _nodes(3, cpu="1", n0000={"bad": "true"})
    sched, store, _ = _scheduler(nodes, ["Taint", "CpuFilter"])
    store.add("Pod", MakePod().name("big").req(cpu="2").obj())
    a = sched.schedule_one()
    assert a.result == "unschedulable"
    # the bad node reports only the Taint reason: filters stop at the first rejection
    assert a.message == "0/3 nodes are available: 1 node(s) were bad, 2 Insufficient cpu."
    assert a.record.filter["n0000"] == {"Taint": ["node(s) were bad"]}
    assert a.record.filter["n0001"] == {"Taint": "passed", "CpuFilter": ["Insufficient cpu"]}
    cond = store.pods["default/big"].status.conditions[-1]
    assert (cond.type, cond.status, cond.reason, cond.message) == ("PodScheduled", "False", "Unschedulable", a.message)
    assert sched.queue.where("default/big") == "unschedulable"


def test_sampling_stops_at_num_feasible_and_rotates_start() -> None:
    # 200 nodes, 50% → 100 feasible nodes to find; all feasible: evaluation stops after 100,
    # the next cycle starts where this one stopped (nextStartNodeIndex).
    sched, store, cpu = _scheduler(_nodes(200), ["CpuFilter"], percentage=50)
    store.add("Pod", MakePod().name("p1").req(cpu="10m").obj())
    a = sched.schedule_one()
    assert a.result == "scheduled"
    assert a.record.evaluated_nodes == 100 and a.record.feasible_nodes == 100
    assert sched.sampler.next_start_node_index == 100
    assert set(a.record.filter) == {f"n{i:04d}" for i in range(100)}
    store.add("Pod", MakePod().name("p2").req(cpu="10m").obj())
    b = sched.schedule_one()
    assert set(b.record.filter) == {f"n{i:04d}" for i in range(100, 200)}
    assert sched.sampler.next_start_node_index == 0


def test_sampling_counts_failed_nodes_in_the_processed_window() -> None:
    # the first 150 nodes are full: 150 failures + 100 feasible are processed
    sched, store, _ = _scheduler(_nodes(300), ["CpuFilter"], percentage=34)  # 102 → 102 nodes to find
    for i in range(150):
        store.add("Pod", MakePod().name(f"fill{i}").req(cpu="4").node(f"n{i:04d}").obj())
    store.add("Pod", MakePod().name("p").req(cpu="1").obj())
    a = sched.schedule_one()
    assert a.record.feasible_nodes == 102
    assert a.record.evaluated_nodes == 252
    assert sched.sampler.next_start_node_index == 252


def test_no_score_plugins_means_one_feasible_node_is_enough() -> None:
    sched, store, cpu = _scheduler(_nodes(50), ["CpuFilter"], score=False)
    store.add("Pod", MakePod().name("p").req(cpu="1").obj())
    a = sched.schedule_one()
    assert a.node == "n0000" and a.record.evaluated_nodes == 1


def test_zone_interleaved_order() -> None:
    # upstream nodeTree.list(): zones round-robin in the order zones were first seen
    nodes = _nodes(6, zone_of=lambda i: "a" if i < 3 else "b")
    sched, store, cpu = _scheduler(nodes, ["CpuFilter"], score=False)
    order = [sched.table.names[r] for r in sched.table.order()]
    assert order == ["n0000", "n0003", "n0001", "n0004", "n0002", "n0005"]


V134 = FeatureGate(emulated_version=(1, 34))


def test_ties_are_broken_uniformly_and_reproducibly() -> None:
    """v1.34 selectHost: reservoir sampling among the top-scored nodes (here: the seeded rng)."""
    picks = []
    for seed in range(40):
        sched, store, _ = _scheduler(_nodes(4), ["CpuFilter"], seed=seed, features=V134)
        store.add("Pod", MakePod().name("p").req(cpu="1").obj())
        picks.append(sched.schedule_one().node)
    assert set(picks) == {"n0000", "n0001", "n0002", "n0003"}
    again = []
    for seed in range(40):
        sched, store, _ = _scheduler(_nodes(4), ["CpuFilter"], seed=seed, features=V134)
        store.add("Pod", MakePod().name("p").req(cpu="1").obj())
        again.append(sched.schedule_one().node)
    assert picks == again


@pytest.mark.parametrize("version", [(1, 35), (1, 36), (1, 37)])
def test_ties_follow_the_go_heap_since_1_35(version) -> None:  # noqa: ANN001
    """v1.35+: the first heap.Pop of a container/heap over the feasible list (no extenders: every
    Randomizer is 0). Scores [1, 0, 5, 0, 5] in feasible order: heap.Init moves slot 4 up through
    slot 1 to the root before slot 2 is compared (strict Less keeps the left child on ties), so
    n0004 wins, whatever the seed — not n0002, the first top-scored node in the list."""
    points = {"n0000": 1, "n0002": 5, "n0004": 5}
    picks = set()
    for seed in range(10):
        sched, store, _ = _scheduler(_nodes(5), ["CpuFilter"], seed=seed, points=points,
                                     features=FeatureGate(emulated_version=version))
        store.add("Pod", MakePod().name("p").req(cpu="1").obj())
        picks.add(sched.schedule_one().node)
    assert picks == {"n0004"}
    # all tied: the root slot (the first feasible node) stays
    sched, store, _ = _scheduler(_nodes(5), ["CpuFilter"], seed=3, features=FeatureGate(emulated_version=version))
    store.add("Pod", MakePod().name("p").req(cpu="1").obj())
    assert sched.schedule_one().node == "n0000"


def test_ties_at_1_34_are_uniform_among_the_top_scored() -> None:
    points = {"n0000": 1, "n0002": 5, "n0004": 5}
    picks = set()
    for seed in range(40):
        sched, store, _ = _scheduler(_nodes(5), ["CpuFilter"], seed=seed, points=points, features=V134)
        store.add("Pod", MakePod().name("p").req(cpu="1").obj())
        picks.add(sched.schedule_one().node)
    assert picks == {"n0002", "n0004"}


def _extender_picks(make_ext, version=(1, 37), seeds=40):  # noqa: ANN001, ANN202
    picks = set()
    for seed in range(seeds):
        sched, store, _ = _scheduler(_nodes(4), ["CpuFilter"], seed=seed, extenders=[make_ext()],
                                     features=FeatureGate(emulated_version=version))
        store.add("Pod", MakePod().name("p").req(cpu="1").obj())
        picks.add(sched.schedule_one().node)
    return picks


def test_extender_scores_make_ties_random_since_1_35() -> None:
    """schedule_one.go L1039-1047: nodes an interested extender's Prioritize names get
    Randomizer = rand.Int(), so equal totals are broken at random among them."""
    from kubesched.testing.extenders import FakeExtender, PriorityConfig

    def equal(pod, nodes):  # noqa: ANN001, ANN202
        return [(n.metadata.name, 1) for n in nodes]

    assert _extender_picks(lambda: FakeExtender("E", prioritizers=[PriorityConfig(equal, 1)], weight=1)) == {
        "n0000", "n0001", "n0002", "n0003"}
    # upstream's FakeExtender without prioritizers answers an empty list: no node is named
    assert _extender_picks(lambda: FakeExtender("E")) == {"n0000"}
    # an uninterested extender is not asked
    assert _extender_picks(lambda: FakeExtender("E", prioritizers=[PriorityConfig(equal, 1)], weight=1,
                                                un_interested=True)) == {"n0000"}


def test_http_extender_without_prioritize_verb_names_every_node() -> None:
    """extender.go L328-334: without a prioritizeVerb, HTTPExtender.Prioritize answers score 0
    for every node (no HTTP call); since v1.35 that gives them all a random Randomizer."""
    from kubesched.config.types import Extender as ExtenderConfig
    from kubesched.scheduler.extender import HTTPExtender

    def make():  # noqa: ANN202
        return HTTPExtender(ExtenderConfig(url_prefix="http://127.0.0.1:1", weight=1))

    assert _extender_picks(make) == {"n0000", "n0001", "n0002", "n0003"}


def test_pod_deleted_frees_room_and_requeues_pending_pod() -> None:
    sched, store, _ = _scheduler(_nodes(1, cpu="1"), ["CpuFilter"])
    store.add("Pod", MakePod().name("a").req(cpu="1").obj())
    store.add("Pod", MakePod().name("b").req(cpu="1").obj())
    assert sched.schedule_one().result == "scheduled"
    assert sched.schedule_one().result == "unschedulable"
    assert not sched.queue.has_schedulable()
    store.remove_pod("default/a")  # AssignedPodDelete: CpuFilter registered Pod/Delete
    assert sched.queue.has_schedulable()
    assert sched.schedule_one().node == "n0000"


def test_priority_order() -> None:
    sched, store, _ = _scheduler(_nodes(1, cpu="1"), ["CpuFilter"])
    store.add("Pod", MakePod().name("low").priority(1).req(cpu="1").obj())
    store.add("Pod", MakePod().name("high").priority(100).req(cpu="1").obj())
    assert sched.schedule_one().pod_key == "default/high"


def test_no_nodes() -> None:
    sched, store, _ = _scheduler([], ["CpuFilter"])
    store.add("Pod", MakePod().name("p").obj())
    a = sched.schedule_one()
    assert a.result == "unschedulable" and a.message == "no nodes available to schedule pods"


def test_plugin_without_events_requeues_on_any_pod_update() -> None:
    """Upstream registers a plugin without EnqueueExtensions for every event; with QueueingHints
    (v1.34) even a status-only update of the rejected pod (here the scheduler's own PodScheduled
    patch) requeues it."""
    from kubesched.sim.store import ClusterStore

    class Hintless:
        name = "Hintless"

        def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201
            return Status.of(Code.UNSCHEDULABLE, "no")

    reg = {"Sort": lambda a, h: Sort(), "Hintless": lambda a, h: Hintless(), "Binder": lambda a, h: Binder(h)}
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                             "enabled": [{"name": "Sort"}, {"name": "Hintless"}, {"name": "Binder"}],
                             "disabled": [{"name": "*"}]}}}]})
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=reg)
    store.scheduler = sched
    store.add("Node", _nodes(1)[0])
    store.add("Pod", MakePod().name("p").obj())
    assert sched.schedule_one().result == "unschedulable"
    assert sched.queue.where("default/p") == "unschedulable"  # the patch's event is not delivered yet
    assert store.flush() == 1
    assert sched.queue.where("default/p") == "backoff"
