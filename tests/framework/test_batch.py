"""The batch cache in isolation: upstream v1.37.2 ``framework/runtime/batch_test.go``
(``TestBatchBasic``, ``TestBatchRescore``, ``TestBatchRescoreChain``) ported case by case.

As upstream, a "batchTest" Filter plugin lets a node hold one *blocking* pod (UID starting with
``b``): a blocking pod rejects a node that already has one. Cached candidate lists are given in
pop order (upstream's ``testSortedScoredNodes``; here a heap whose totals fall along the list).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.batch import NodePluginScores, OpportunisticBatch, ScoredNodeHeap
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod


class BatchTest:
    name = "batchTest"

    def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201
        if pod.metadata.uid.startswith("b") and any(p.pod.metadata.uid.startswith("b") for p in node_info.pods):
            return Status.of(Code.UNSCHEDULABLE, "unsched")
        return None


class ConfigurableFilter:
    name = "configurableFilter"

    def __init__(self, filter_err: bool = False) -> None:
        self.filter_err = filter_err

    def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201
        if self.filter_err:
            return Status.of(Code.ERROR, "injected filter error")
        return None


class ConfigurableScore:
    """PreScore records how many nodes it saw; NormalizeScore fails unless it normalises exactly
    that many (upstream checks the names: every normalised node was passed to PreScore)."""

    name = "configurableScore"

    def __init__(self, score: int = 0, pre_score_err: bool = False, score_err: bool = False,
                 norm_err: bool = False) -> None:
        self.value, self.pre_score_err, self.score_err, self.norm_err = score, pre_score_err, score_err, norm_err

    def pre_score(self, state, pod, nodes, rows):  # noqa: ANN001, ANN201
        if self.pre_score_err:
            return Status.of(Code.ERROR, "injected prescore error")
        state.write("PreScoreconfigurableScore", {nodes.names[int(r)] for r in rows})
        return None

    def score(self, state, pod, node_info):  # noqa: ANN001, ANN201
        if self.score_err:
            return 0, Status.of(Code.ERROR, "injected score error")
        return self.value, None

    def normalize_score(self, state, pod, scores):  # noqa: ANN001, ANN201
        if self.norm_err:
            return Status.of(Code.ERROR, "injected normalize error")
        seen = state.get("PreScoreconfigurableScore")
        if seen is None or len(seen) != len(scores):
            return Status.of(Code.ERROR, "NormalizeScore called for nodes not passed to PreScore")
        return None


def _framework(nodes: list[str], score: ConfigurableScore | None = None, filt: ConfigurableFilter | None = None,
               pods: dict[str, str] | None = None) -> tuple[Any, ClusterStore]:
    reg = in_tree_registry()
    reg["batchTest"] = lambda a, h: BatchTest()
    filters = [{"name": "batchTest"}]
    plugins: dict[str, Any] = {"queueSort": {"enabled": [{"name": "PrioritySort"}]},
                               "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    if filt is not None:
        reg["configurableFilter"] = lambda a, h: filt
        filters.append({"name": "configurableFilter"})
    if score is not None:
        reg["configurableScore"] = lambda a, h: score
        plugins["preScore"] = {"enabled": [{"name": "configurableScore"}]}
        plugins["score"] = {"enabled": [{"name": "configurableScore", "weight": 1}]}
    plugins["filter"] = {"enabled": filters}
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {
               "multiPoint": {"disabled": [{"name": "*"}]}, **plugins}}]}
    store = ClusterStore()
    sched = Scheduler(decode_config(cfg), client=store, lister=store, registry=reg)
    store.scheduler = sched
    for n in nodes:
        store.add("Node", MakeNode().name(n).capacity(cpu="4", memory="4Gi", pods="10").obj())
    for uid, node in (pods or {}).items():
        store.add("Pod", MakePod().name(f"pod-{uid}").uid(uid).node(node).obj())
    return sched.profiles["default-scheduler"], store


def _nodes(names: list[str] | None) -> ScoredNodeHeap | None:
    """Upstream ``newTestNodes``: pops in the given order."""
    if names is None:
        return None
    return ScoredNodeHeap([NodePluginScores(n, total=len(names) - i) for i, n in enumerate(names)])


def _pod(uid: str, nominated: str = "") -> Any:
    b = MakePod().name(f"pod-{uid}").uid(uid)
    if nominated:
        b.nominated_node_name(nominated)
    return b.obj()


BASIC = [
    # name, first uid, first sig, first ok, first chosen, first others, same cycle, skip pod, second uid,
    # second nnn, second sig, second chosen, second others, generic workload, hint, remaining
    ("a second pod with the same signature gets a hint",
     "b-1", b"sig", True, "n3", ["n1"], False, False, "b-2", "", b"sig", "n1", None, False, "n1", None),
    ("a second pod with a different signature doesn't get a hint",
     "a-1", b"sig", True, "n3", ["n1"], False, False, "a-2", "", b"sig2", "n1", None, False, "", None),
    ("pod doesn't get hint if previous pod didn't scheduled",
     "b-1", b"sig", False, "n3", ["n1"], False, False, "b-2", "", b"sig", "n1", None, False, "", None),
    ("empty list", "b-1", b"sig", True, "n3", [], False, False, "b-2", "", b"sig", "n4", None, False, "", None),
    ("nil list", "b-1", b"sig", True, "n3", None, False, False, "b-2", "", b"sig", "n4", None, False, "", None),
    ("pod doesn't get hint because the previous pod is to a different profile",
     "b-1", b"sig", True, "n3", ["n1"], False, True, "b-2", "", b"sig", "n1", None, False, "", None),
    ("pod doesn't use batch from preceding pod when they are from the same cycle state, but GenericWorkload is "
     "disabled", "b-1", b"sig", True, "n3", ["n1"], True, False, "b-2", "", b"sig", "n1", None, False, "", None),
    ("pod uses batch from preceding pod when they are from the same cycle state and GenericWorkload is enabled",
     "b-1", b"sig", True, "n3", ["n1"], True, False, "b-2", "", b"sig", "n1", None, True, "n1", None),
    ("pod uses batch from preceding pod and leaves remaining batch to next pod",
     "b-1", b"sig", True, "n3", ["n1", "n2"], False, False, "b-2", "", b"sig", "n1", None, False, "n1", ["n2"]),
    ("a second pod with a nominated node does not get a hint",
     "b-1", b"sig", True, "n3", ["n1"], False, False, "b-2", "n1", b"sig", "n1", None, False, "", None),
]


@pytest.mark.parametrize(("name", "uid1", "sig1", "ok1", "chosen1", "others1", "same_cycle", "skip_pod", "uid2",
                          "nnn2", "sig2", "chosen2", "others2", "generic", "want_hint", "want_remaining"),
                         BASIC, ids=[c[0] for c in BASIC])
def test_batch_basic(name: str, uid1: str, sig1: bytes, ok1: bool, chosen1: str, others1: list[str] | None,
                     same_cycle: bool, skip_pod: bool, uid2: str, nnn2: str, sig2: bytes, chosen2: str,
                     others2: list[str] | None, generic: bool, want_hint: str,
                     want_remaining: list[str] | None) -> None:
    # the first pod sits on the node it was placed on (upstream: the lister's NodeInfo of chosen1)
    fw, _ = _framework(["n1", "n2", "n3", "n4"], pods={uid1: chosen1})
    batch = OpportunisticBatch(fw, generic_workload=generic)
    state = CycleState()
    assert batch.get_node_hint(_pod(uid1), sig1, state, 1) == ""
    if ok1:
        batch.store_schedule_results(sig1, "", chosen1, _nodes(others1), 1)
    cycle = 3 if skip_pod else 1 if same_cycle else 2
    hint = batch.get_node_hint(_pod(uid2, nnn2), sig2, state, cycle)
    assert hint == want_hint
    batch.store_schedule_results(sig2, hint, chosen2, _nodes(others2), cycle)
    if want_remaining is None:
        assert batch.state is None or len(batch.state.sorted_nodes) == 0
    else:
        assert batch.state is not None and batch.state.signature == b"sig"
        assert [batch.state.sorted_nodes.pop().name for _ in range(len(batch.state.sorted_nodes))] == want_remaining


N1_CACHED_SCORE = 50

RESCORE = [
    # name, fresh score of n2, filter err, prescore err, score err, norm err, chosen missing, cached missing,
    # hint, remaining
    ("rescored node wins", 100, False, False, False, False, False, False, "n2", ["n1"]),
    ("rescored node loses", 10, False, False, False, False, False, False, "n1", ["n2"]),
    ("filter error gives no hint", 100, True, False, False, False, False, False, "", ["n1"]),
    ("prescore error gives no hint", 0, False, True, False, False, False, False, "", ["n1"]),
    ("score error gives no hint", 0, False, False, True, False, False, False, "", ["n1"]),
    ("normalize error gives no hint", 0, False, False, False, True, False, False, "", ["n1"]),
    ("chosen node missing from lister gives no hint", 0, False, False, False, False, True, False, "", ["n1"]),
    ("cached node missing from lister gives no hint", 100, False, False, False, False, False, True, "", ["n1"]),
]


@pytest.mark.parametrize(("name", "score", "filter_err", "pre_score_err", "score_err", "norm_err", "chosen_missing",
                          "cached_missing", "want_hint", "want_remaining"), RESCORE, ids=[c[0] for c in RESCORE])
def test_batch_rescore(name: str, score: int, filter_err: bool, pre_score_err: bool, score_err: bool, norm_err: bool,
                       chosen_missing: bool, cached_missing: bool, want_hint: str, want_remaining: list[str]) -> None:
    nodes = [] if chosen_missing else ["n2"] if cached_missing else ["n1", "n2"]
    fw, _ = _framework(nodes, ConfigurableScore(score, pre_score_err, score_err, norm_err),
                       ConfigurableFilter(filter_err), pods={"a-1": "n2"} if not chosen_missing else None)
    batch = OpportunisticBatch(fw)
    # the first (non-blocking) pod went to n2; n1 is cached with raw score 50 and no total yet
    cached = ScoredNodeHeap([NodePluginScores("n1", [("configurableScore", N1_CACHED_SCORE)])])
    batch.get_node_hint(_pod("a-1"), b"sig", CycleState(), 1)
    batch.store_schedule_results(b"sig", "", "n2", cached, 1)
    hint = batch.get_node_hint(_pod("a-2"), b"sig", CycleState(), 2)
    assert hint == want_hint
    assert batch.state is not None
    assert [batch.state.sorted_nodes.pop().name for _ in range(len(batch.state.sorted_nodes))] == want_remaining


def test_batch_rescore_chain() -> None:
    """Three pods: the rescore fires every cycle, n2 (fresh 100) beats n1 (cached 50) each time
    and n1 stays in the state."""
    fw, store = _framework(["n1", "n2"], ConfigurableScore(100), pods={"a-1": "n2"})
    batch = OpportunisticBatch(fw)
    batch.get_node_hint(_pod("a-1"), b"sig", CycleState(), 1)
    batch.store_schedule_results(b"sig", "", "n2",
                                 ScoredNodeHeap([NodePluginScores("n1", [("configurableScore", N1_CACHED_SCORE)])]), 1)
    hint2 = batch.get_node_hint(_pod("a-2"), b"sig", CycleState(), 2)
    assert hint2 == "n2"
    batch.store_schedule_results(b"sig", hint2, "n2", None, 2)
    assert batch.get_node_hint(_pod("a-3"), b"sig", CycleState(), 3) == "n2"
    assert len(batch.state.sorted_nodes) == 1 and batch.state.sorted_nodes.pop().name == "n1"
    assert batch.attempts["hint_used"] == 1 and batch.batched_pods == 1


def test_rescored_list_order_is_heap_order_then_the_node() -> None:
    """rescoreHintedNode rebuilds the heap from ``UnorderedList()`` (heap-internal order) with the
    re-scored node appended: with all totals equal the popped node is the heap's root."""
    fw, _ = _framework(["n1", "n2", "n3", "n4"], ConfigurableScore(7), pods={"a-1": "n4"})
    batch = OpportunisticBatch(fw)
    raw = [("configurableScore", 7)]
    batch.store_schedule_results(b"sig", "", "n4", ScoredNodeHeap([NodePluginScores(n, raw, 7)
                                                                   for n in ("n1", "n2", "n3")]), 1)
    order = [e.name for e in batch.state.sorted_nodes.unordered_list()]
    assert batch.get_node_hint(_pod("a-2"), b"sig", CycleState(), 2) == order[0]
    # the rest pops in Go heap order over [*order, "n4"] minus the root
    rest = ScoredNodeHeap([NodePluginScores(n, raw, 7) for n in [*order, "n4"]])
    rest.pop()
    assert [e.name for e in batch.state.sorted_nodes.unordered_list()] == [e.name for e in rest.unordered_list()]


def test_unchanged_at_134() -> None:
    store = ClusterStore()
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler"}]}
    fg = FeatureGate(emulated_version=(1, 34))
    fw = Scheduler(decode_config(cfg, features=fg), client=store, lister=store, features=fg).profiles[
        "default-scheduler"]
    assert fw.batch is None and fw.sign_pod(MakePod().name("p").obj()) is None
