"""Framework.run_placement_generate_plugins / run_placement_score_plugins and select_placement:
upstream framework_test.go TestRunPlacementGeneratePlugins and TestRunPlacementScorePlugins
(v1.37.2), findBestPlacement's choice (schedule_one_podgroup.go L1194-1223), the placement
extension points of the default profile with TopologyAwareWorkloadScheduling (default_plugins.go),
and upstream's configuration errors for them."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.config import decode_config, default_config
from kubesched.errors import PluginConfigError
from kubesched.features import FeatureGate
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_table import NodeTable
from kubesched.framework.podgroup import (
    Placement,
    PlacementCycleState,
    PlacementPluginScores,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    select_placement,
)
from kubesched.framework.runtime import Framework
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing.wrappers import MakeNode, build_table


class _P:
    def __init__(self, name: str) -> None:
        self.name = name


class QS(_P):
    def less(self, a, b):  # noqa: ANN001, ANN201
        return False


class B(_P):
    def bind(self, state, pod, node):  # noqa: ANN001, ANN201
        return None


class Gen(_P):
    """TestPlacementGeneratePlugin: returns the injected result."""

    def __init__(self, name: str, result: list[Placement] | None = None, status: Status | None = None) -> None:
        super().__init__(name)
        self.result, self.status = result or [], status
        self.calls: list[Placement | None] = []

    def generate_placements(self, state, pg_info, parent):  # noqa: ANN001, ANN201
        self.calls.append(parent)
        return self.result, self.status


class Scorer(_P):
    """testPlacementScorePlugin: a score (or status) per placement index, optional normalize."""

    def __init__(self, name: str, results: list[tuple[int, Status | None]], normalize: Any = None) -> None:
        super().__init__(name)
        self.results = results
        if normalize is not None:
            self.normalize_placement_score = lambda state, pg, scores: normalize(scores)

    def score_placement(self, state, pg_info, assignments):  # noqa: ANN001, ANN201
        return self.results[int(assignments.placement.name)]


def _const(plugin: Any) -> Any:
    return lambda a, h: plugin


def _fw(plugins: dict, registry: dict, nodes: NodeTable | None = None) -> Framework:
    reg = {"QS": lambda a, h: QS("QS"), "B": lambda a, h: B("B"), **registry}
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": {
                             "multiPoint": {"enabled": [{"name": "QS"}, {"name": "B"}], "disabled": [{"name": "*"}]},
                             **plugins}}]})
    return Framework(cfg.profiles[0], reg, Handle(nodes=nodes if nodes is not None else NodeTable()))


PG = PodGroupInfo(name="pg", namespace="default")
CLUSTER = build_table([MakeNode().name(n).obj() for n in ("node1", "node2", "node3")])


# ───────────────────────────── RunPlacementGeneratePlugins ─────────────────────────────


def _gen_fw(gen: Gen | None) -> Framework:
    if gen is None:
        return _fw({}, {}, CLUSTER)
    return _fw({"placementGenerate": {"enabled": [{"name": gen.name}]}}, {gen.name: lambda a, h: gen}, CLUSTER)


def test_generate_no_plugins_returns_one_placement_with_the_initial_nodes() -> None:
    placements, st = _gen_fw(None).run_placement_generate_plugins(PodGroupCycleState(), PG, None)
    assert st is None
    assert placements == [Placement("", ["node1", "node2", "node3"])]


def test_generate_no_plugins_returns_the_parent() -> None:
    parent = Placement("rack-a", ["node2"])
    placements, st = _gen_fw(None).run_placement_generate_plugins(PodGroupCycleState(), PG, parent)
    assert st is None and placements == [parent]


def test_generate_one_plugin_returns_its_placements() -> None:
    want = [Placement("foo", ["node1", "node2"]), Placement("bar", ["node2", "node3"])]
    gen = Gen("plugin[0]", want)
    placements, st = _gen_fw(gen).run_placement_generate_plugins(PodGroupCycleState(), PG, None)
    assert st is None and placements == want
    # the plugin sees upstream's &Placement{Nodes: nodes}
    assert gen.calls == [Placement("", ["node1", "node2", "node3"])]


def test_generate_plugin_error() -> None:
    gen = Gen("plugin[0]", status=Status(Code.ERROR, ("boom",)))
    placements, st = _gen_fw(gen).run_placement_generate_plugins(PodGroupCycleState(), PG, None)
    assert placements == [] and st is not None
    assert st.code == Code.ERROR and st.plugin == "plugin[0]" and st.message() == "boom"


def test_generate_plugin_exception_is_an_error() -> None:
    gen = Gen("plugin[0]")
    gen.generate_placements = lambda *a: 1 / 0  # type: ignore[method-assign]
    placements, st = _gen_fw(gen).run_placement_generate_plugins(PodGroupCycleState(), PG, None)
    assert placements == [] and st is not None and st.code == Code.ERROR and st.plugin == "plugin[0]"


def test_generate_no_placements_is_unschedulable() -> None:
    placements, st = _gen_fw(Gen("plugin[0]", [])).run_placement_generate_plugins(PodGroupCycleState(), PG, None)
    assert placements == [] and st is not None
    assert (st.code, st.message(), st.plugin) == (Code.UNSCHEDULABLE, "no feasible placements found", "plugin[0]")


def test_at_most_one_generate_plugin() -> None:
    with pytest.raises(PluginConfigError) as e:
        _fw({"placementGenerate": {"enabled": [{"name": "g1"}, {"name": "g2"}]}},
            {"g1": lambda a, h: Gen("g1"), "g2": lambda a, h: Gen("g2")})
    assert 'at most one placement generate plugin is allowed for profile with scheduler name "x"' in str(e.value)


# ───────────────────────────── RunPlacementScorePlugins ─────────────────────────────

PLACEMENTS = [Placement(str(i), []) for i in range(3)]


def _score(scorers: list[tuple[Scorer, int]]) -> tuple[list[PlacementPluginScores], Status | None]:
    fw = _fw({"placementScore": {"enabled": [{"name": s.name, "weight": w} for s, w in scorers]}},
             {s.name: _const(s) for s, _ in scorers})
    state = PodGroupCycleState()
    return fw.run_placement_score_plugins(state, PG, [PodGroupAssignments(p) for p in PLACEMENTS],
                                         [PlacementCycleState(state) for _ in PLACEMENTS])


def _ok(*scores: int) -> list[tuple[int, Status | None]]:
    return [(s, None) for s in scores]


def _flat(result: list[PlacementPluginScores]) -> list[tuple[list[tuple[str, int]], int]]:
    return [(r.scores, r.total_score) for r in result]


def test_score_all_success() -> None:
    result, st = _score([(Scorer("plugin1", _ok(0, 50, 100)), 1), (Scorer("plugin2", _ok(0, 50, 0)), 2)])
    assert st is None
    assert [r.placement for r in result] == PLACEMENTS
    assert _flat(result) == [([("plugin1", 0), ("plugin2", 0)], 0),
                             ([("plugin1", 50), ("plugin2", 100)], 150),
                             ([("plugin1", 100), ("plugin2", 0)], 100)]
    assert all(r.randomizer == 0 for r in result)


def test_score_any_error() -> None:
    bad = [(0, None), (50, Status(Code.ERROR, ("error for test",))), (0, None)]
    result, st = _score([(Scorer("plugin1", _ok(0, 50, 100)), 1), (Scorer("plugin2", bad), 2)])
    assert result == [] and st is not None and st.code == Code.ERROR
    assert st.message() == 'running PlacementScore plugins: plugin "plugin2" failed with: error for test'


def test_score_no_plugins() -> None:
    result, st = _score([])
    assert st is None
    assert [(r.placement, r.scores, r.total_score) for r in result] == [(p, [], 0) for p in PLACEMENTS]


def test_score_normalize_success() -> None:
    def normalize(scores):  # noqa: ANN001, ANN202
        top = scores[2].score
        for s in scores:
            s.score = int(np.float32(s.score) / np.float32(top) * 100)
        return None

    result, st = _score([(Scorer("plugin1", _ok(0, 50, 100)), 1),
                         (Scorer("plugin2", _ok(100, 200, 400), normalize), 2)])
    assert st is None
    assert _flat(result) == [([("plugin1", 0), ("plugin2", 50)], 50),
                             ([("plugin1", 50), ("plugin2", 100)], 150),
                             ([("plugin1", 100), ("plugin2", 200)], 300)]


def test_score_normalize_failure() -> None:
    result, st = _score([(Scorer("plugin1", _ok(0, 50, 100)), 1),
                         (Scorer("plugin2", _ok(0, 50, 100), lambda s: Status(Code.ERROR, ("error for test",))), 2)])
    assert result == [] and st is not None and st.code == Code.ERROR
    assert st.message() == ('running NormalizePlacementScore on PlacementScore plugins: plugin "plugin2" failed '
                            "with: error for test")


@pytest.mark.parametrize("bad", [101, -1])
def test_score_out_of_range(bad: int) -> None:
    result, st = _score([(Scorer("plugin1", _ok(0, bad, 100)), 1)])
    assert result == [] and st is not None and st.code == Code.ERROR
    assert st.message() == (f'applying score defaultWeights on PlacementScore plugins: plugin "plugin1" returns an '
                            f"invalid score {bad}, it should in the range of [0, 100] after normalizing")


def test_score_needs_one_state_per_assignment() -> None:
    fw = _fw({}, {})
    state = PodGroupCycleState()
    result, st = fw.run_placement_score_plugins(state, PG, [PodGroupAssignments(p) for p in PLACEMENTS],
                                                [PlacementCycleState(state)])
    assert result == [] and st is not None and st.code == Code.ERROR
    assert st.message() == "expected one PlacementCycleState per PodGroupAssignments, got 1 placement states for 3 " \
                           "assignments"


def test_score_plugin_gets_its_placement_state() -> None:
    seen = []

    class Spy(_P):
        def score_placement(self, state, pg_info, assignments):  # noqa: ANN001, ANN201
            seen.append((state, assignments))
            return 1, None

    spy = Spy("spy")
    fw = _fw({"placementScore": {"enabled": [{"name": "spy"}]}}, {"spy": lambda a, h: spy})
    state = PodGroupCycleState()
    pgas = [PodGroupAssignments(p) for p in PLACEMENTS]
    states = [PlacementCycleState(state) for _ in PLACEMENTS]
    fw.run_placement_score_plugins(state, PG, pgas, states)
    assert [(s, a) for s, a in seen] == list(zip(states, pgas))


def test_placement_score_weight_zero_means_one() -> None:
    # getValidScoreWeights: "a weight of zero is not permitted" → 1
    fw = _fw({"placementScore": {"enabled": [{"name": "s", "weight": 0}]}}, {"s": lambda a, h: Scorer("s", [])})
    assert fw.placement_score_weights == {"s": 1}


def test_placement_score_plugin_named_otherwise_has_no_weight() -> None:
    with pytest.raises(PluginConfigError) as e:
        _fw({"placementScore": {"enabled": [{"name": "s"}]}}, {"s": lambda a, h: Scorer("other", [])})
    assert 'placement score plugin "other" is not configured with weight' in str(e.value)


# ───────────────────────────── findBestPlacement ─────────────────────────────


def test_select_highest_total_score() -> None:
    scores = [PlacementPluginScores(PLACEMENTS[i], total_score=t) for i, t in enumerate([10, 30, 20])]
    assert select_placement(scores, np.random.default_rng(0)) == 1


def test_select_ties_go_to_the_larger_randomizer() -> None:
    for seed in range(20):
        scores = [PlacementPluginScores(PLACEMENTS[i], total_score=t) for i, t in enumerate([50, 50, 10])]
        best = select_placement(scores, np.random.default_rng(seed))
        assert all(0 <= s.randomizer < 2**63 for s in scores)
        assert best == (0 if scores[0].randomizer >= scores[1].randomizer else 1)


def test_select_ties_spread_over_placements_and_accepts_random_random() -> None:
    rng = random.Random(7)
    picks = {select_placement([PlacementPluginScores(p, total_score=5) for p in PLACEMENTS], rng)
             for _ in range(60)}
    assert picks == {0, 1, 2}


def test_select_single_entry() -> None:
    assert select_placement([PlacementPluginScores(None)], np.random.default_rng(1)) == 0


# ───────────────────────────── the default profile ─────────────────────────────


def _default_framework(fg: FeatureGate) -> Framework:
    reg = dict(in_tree_registry())
    reg.setdefault("GangScheduling", lambda a, h: _GangStandIn("GangScheduling"))  # until gang's is registered
    cfg = default_config(fg)
    return Framework(cfg.profiles[0], reg, Handle(nodes=NodeTable(), features=fg))


def test_default_profile_with_topology_aware_workload_scheduling() -> None:
    fg = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    fw = _default_framework(fg)
    lists = fw.list_plugins()
    assert lists["placementGenerate"] == [{"name": "TopologyPlacementGenerator"}]
    assert lists["placementScore"] == [{"name": "NodeResourcesFit", "weight": 1},
                                       {"name": "PodGroupPodsCount", "weight": 1}]
    assert fw.plugins["NodeResourcesFit"].placement_scorer is not None


def test_default_profile_without_the_gate_keeps_fit_as_placement_score_only() -> None:
    # §3.1: the 1.37 default expansion has "PlacementScore NodeResourcesFit 1" (Fit implements it)
    fw = _default_framework(FeatureGate())
    lists = fw.list_plugins()
    assert "placementGenerate" not in lists
    assert lists["placementScore"] == [{"name": "NodeResourcesFit", "weight": 1}]
    assert fw.plugins["NodeResourcesFit"].placement_scorer is None


def test_placement_points_are_timed_when_a_recorder_is_installed() -> None:
    seen: list[tuple] = []

    class Rec:
        def observe_extension_point(self, point, status, profile, seconds):  # noqa: ANN001, ANN201
            seen.append(("point", point, status))

        def observe_plugin(self, plugin, point, status, seconds):  # noqa: ANN001, ANN201
            seen.append(("plugin", plugin, point, status))

    gen = Gen("g", [Placement("0", [])])
    scorer = Scorer("s", _ok(40), normalize=lambda scores: None)
    fw = _fw({"placementGenerate": {"enabled": [{"name": "g"}]}, "placementScore": {"enabled": [{"name": "s"}]}},
             {"g": lambda a, h: gen, "s": lambda a, h: scorer}, CLUSTER)
    fw.metrics = Rec()  # type: ignore[assignment]
    state = PodGroupCycleState()
    state.record_plugin_metrics = True
    placements, _ = fw.run_placement_generate_plugins(state, PG, None)
    fw.run_placement_score_plugins(state, PG, [PodGroupAssignments(placements[0])], [PlacementCycleState(state)])
    assert ("point", "PlacementGenerate", "Success") in seen
    assert ("point", "PlacementScore", "Success") in seen
    assert ("plugin", "g", "PlacementGenerate", "Success") in seen
    assert ("plugin", "s", "PlacementScore", "Success") in seen
    assert ("plugin", "s", "PlacementScoreExtensionNormalize", "Success") in seen


def _tas_framework(plugins: dict) -> Framework:
    fg = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    reg = dict(in_tree_registry())
    reg.setdefault("GangScheduling", lambda a, h: _GangStandIn("GangScheduling"))
    reg["OtherGenerator"] = lambda a, h: Gen("OtherGenerator")
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}, features=fg)
    return Framework(cfg.profiles[0], reg, Handle(nodes=NodeTable(), features=fg))


class _GangStandIn(_P):
    def placement_feasible(self, state, pg_info, progress):  # noqa: ANN001, ANN201
        return None


def test_config_placement_score_weight_zero_is_weight_one() -> None:
    fw = _tas_framework({"placementScore": {"enabled": [{"name": "PodGroupPodsCount", "weight": 0}]}})
    assert fw.placement_score_weights == {"PodGroupPodsCount": 1, "NodeResourcesFit": 1}
    assert [p.name for p in fw.placement_score_plugins] == ["PodGroupPodsCount", "NodeResourcesFit"]


def test_config_placement_score_weight_from_config() -> None:
    fw = _tas_framework({"placementScore": {"enabled": [{"name": "PodGroupPodsCount", "weight": 3}]}})
    assert fw.placement_score_weights["PodGroupPodsCount"] == 3


def test_config_second_generate_plugin_is_refused() -> None:
    with pytest.raises(PluginConfigError) as e:
        _tas_framework({"placementGenerate": {"enabled": [{"name": "OtherGenerator"}]}})
    assert e.value.path == "profiles[0].plugins.placementGenerate"
    assert ('at most one placement generate plugin is allowed for profile with scheduler name "default-scheduler"'
            in str(e.value))


def test_config_generate_plugin_replaced() -> None:
    fw = _tas_framework({"placementGenerate": {"enabled": [{"name": "OtherGenerator"}],
                                               "disabled": [{"name": "TopologyPlacementGenerator"}]}})
    assert [p.name for p in fw.placement_generate_plugins] == ["OtherGenerator"]
