"""Framework construction (upstream runtime/framework.go NewFramework + expandMultiPointPlugins)."""

from __future__ import annotations

import pytest

from kubesched.config import decode_config
from kubesched.errors import PluginConfigError
from kubesched.framework.handle import Handle
from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime import Framework


class _P:
    def __init__(self, name: str) -> None:
        self.name = name


class QS(_P):
    def less(self, a, b):  # noqa: ANN001, ANN201
        return False


class F(_P):
    def filter(self, state, pod, ni):  # noqa: ANN001, ANN201
        return None


class FS(_P):
    def filter(self, state, pod, ni):  # noqa: ANN001, ANN201
        return None

    def score(self, state, pod, ni):  # noqa: ANN001, ANN201
        return 0, None


class S(_P):
    def score(self, state, pod, ni):  # noqa: ANN001, ANN201
        return 0, None


class B(_P):
    def bind(self, state, pod, node):  # noqa: ANN001, ANN201
        return None


REG = {n: (lambda cls, n: (lambda a, h: cls(n)))(cls, n) for n, cls in
       {"QS": QS, "F1": F, "F2": F, "FS": FS, "S1": S, "S2": S, "B": B}.items()}


def _fw(plugins: dict) -> Framework:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": plugins}]})
    return Framework(cfg.profiles[0], REG, Handle(nodes=NodeTable()))


BASE = [{"name": "QS"}, {"name": "B"}]


def names(lst) -> list[str]:  # noqa: ANN001
    return [p.name for p in lst]


def test_multipoint_expands_to_each_implemented_point() -> None:
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "F1"}, {"name": "FS", "weight": 3}, {"name": "S1"}],
                             "disabled": [{"name": "*"}]}})
    assert names(fw.filter_plugins) == ["F1", "FS"]
    assert names(fw.score_plugins) == ["FS", "S1"]
    assert fw.score_weights == {"FS": 3, "S1": 1}


def test_specific_point_overrides_multipoint_and_goes_first() -> None:
    # upstream order: explicit overrides, then multiPoint, then other explicit plugins
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "S1"}, {"name": "FS", "weight": 2}],
                             "disabled": [{"name": "*"}]},
              "score": {"enabled": [{"name": "S2"}, {"name": "FS", "weight": 5}]}})
    assert names(fw.score_plugins) == ["FS", "S1", "S2"]
    assert fw.score_weights["FS"] == 5


def test_disabled_at_point_drops_multipoint_plugin() -> None:
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "FS"}], "disabled": [{"name": "*"}]},
              "score": {"disabled": [{"name": "FS"}]}})
    assert names(fw.filter_plugins) == ["FS"]
    assert names(fw.score_plugins) == []


def test_unknown_plugin_error_has_field_path() -> None:
    with pytest.raises(PluginConfigError) as ei:
        _fw({"multiPoint": {"enabled": [*BASE], "disabled": [{"name": "*"}]},
             "filter": {"enabled": [{"name": "Nope"}]}})
    assert ei.value.path == "profiles[0].plugins.filter.enabled[0].name"
    assert 'plugin "Nope" does not exist' in str(ei.value)


def test_plugin_at_point_it_does_not_implement() -> None:
    with pytest.raises(PluginConfigError, match='plugin "S1" does not extend filter plugin'):
        _fw({"multiPoint": {"enabled": [*BASE], "disabled": [{"name": "*"}]},
             "filter": {"enabled": [{"name": "S1"}]}})


def test_exactly_one_queue_sort_and_a_binder() -> None:
    with pytest.raises(PluginConfigError, match="only one queue sort plugin required"):
        _fw({"multiPoint": {"enabled": [{"name": "B"}], "disabled": [{"name": "*"}]}})
    with pytest.raises(PluginConfigError, match="at least one bind plugin is needed"):
        _fw({"multiPoint": {"enabled": [{"name": "QS"}], "disabled": [{"name": "*"}]}})


# ───────────────────────── PreBindPreFlight and PreBind groups (framework_test.go v1.37.2) ─────────────────────────

class PB(_P):
    """A PreBind plugin whose PreBindPreFlight returns ``pre_flight`` (upstream ``TestPlugin`` with
    ``injectedResult.PreBindPreFlightStatus``) and records its PreBind calls."""

    def __init__(self, name: str, pre_flight: object = None, parallel: bool = False) -> None:
        super().__init__(name)
        self.pre_flight = pre_flight
        self.parallel = parallel
        self.calls: list[str] = []

    def pre_bind_pre_flight(self, state, pod, node):  # noqa: ANN001, ANN201
        from kubesched.framework.interface import PreBindPreFlightResult

        return PreBindPreFlightResult(allow_parallel=self.parallel), self.pre_flight

    def pre_bind(self, state, pod, node):  # noqa: ANN001, ANN201
        self.calls.append(node)
        return None


def _fw_pre_bind(plugins: list[PB], features=None) -> Framework:  # noqa: ANN001
    reg = dict(REG)

    def factory(pl: PB):  # noqa: ANN202
        return lambda a, h: pl

    for pl in plugins:
        reg[pl.name] = factory(pl)
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": {
                             "multiPoint": {"disabled": [{"name": "*"}]},
                             "queueSort": {"enabled": [{"name": "QS"}]}, "bind": {"enabled": [{"name": "B"}]},
                             "preBind": {"enabled": [{"name": pl.name} for pl in plugins]}}}]})
    handle = Handle(nodes=NodeTable(), **({"features": features} if features is not None else {}))
    return Framework(cfg.profiles[0], reg, handle)


GROUP_CASES = [
    ("No plugins", [], set(), set(), []),
    ("Single plugin, not skipped, not parallel", ["p1"], set(), set(), [["p1"]]),
    ("Single plugin, skipped", ["p1"], {"p1"}, set(), []),
    ("Single plugin, parallel", ["p1"], set(), {"p1"}, [["p1"]]),
    ("Single plugin, parallel & skipped", ["p1"], {"p1"}, {"p1"}, []),
    ("Multiple plugins, consecutive serial", ["p1", "p2"], set(), set(), [["p1"], ["p2"]]),
    ("Multiple plugins, consecutive parallel", ["p1", "p2"], set(), {"p1", "p2"}, [["p1", "p2"]]),
    ("Multiple plugins, mixed parallel and serial", ["p1", "p2", "p3", "p4"], set(), {"p2", "p3"},
     [["p1"], ["p2", "p3"], ["p4"]]),
    ("Parallel plugins separated by serial", ["p1", "p2", "p3"], set(), {"p1", "p3"}, [["p1"], ["p2"], ["p3"]]),
    ("Skipped plugins", ["p1", "p2", "p3"], {"p2"}, set(), [["p1"], ["p3"]]),
    ("Parallel plugins with one skipped in between", ["p1", "p2", "p3"], {"p2"}, {"p1", "p2", "p3"},
     [["p1", "p3"]]),
    ("Parallel plugins with one serial & skipped in between", ["p1", "p2", "p3"], {"p2"}, {"p1", "p3"},
     [["p1"], ["p3"]]),
    ("Complex mix", [f"p{i}" for i in range(1, 9)], {"p3", "p5"}, {"p2", "p4", "p5", "p6"},
     [["p1"], ["p2"], ["p4", "p6"], ["p7"], ["p8"]]),
]


@pytest.mark.parametrize(("name", "plugins", "skipped", "parallel", "want"), GROUP_CASES,
                         ids=[c[0] for c in GROUP_CASES])
def test_pre_bind_plugin_groups(name: str, plugins: list[str], skipped: set[str], parallel: set[str],
                                want: list[list[str]]) -> None:
    from kubesched.framework.cycle_state import CycleState

    fw = _fw_pre_bind([PB(n) for n in plugins])
    state = CycleState()
    state.skip_pre_bind_plugins, state.parallel_pre_bind_plugins = set(skipped), set(parallel)
    assert [[p.name for p in g] for g in fw.pre_bind_plugin_groups(state)] == want


def _st(code):  # noqa: ANN001, ANN202
    from kubesched.framework.interface import Code, Status

    if code is None:
        return None
    if code == Code.ERROR:
        return Status(Code.ERROR, ("injected status",))
    return Status(code)


def test_pre_bind_pre_flight_plugins() -> None:
    """Upstream ``TestPreBindPreFlightPlugins``."""
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Code

    cases = [
        ([], Code.SKIP, ""),
        ([("TestPlugin1", Code.SKIP), ("TestPlugin2", None)], None, ""),
        ([("TestPlugin1", Code.SKIP), ("TestPlugin2", Code.SKIP)], Code.SKIP, ""),
        ([("TestPlugin1", Code.SKIP), ("TestPlugin2", Code.ERROR)], Code.ERROR,
         'running PreBindPreFlight "TestPlugin2": injected status'),
        ([("TestPlugin", Code.UNSCHEDULABLE)], Code.ERROR,
         'PreBindPreFlight TestPlugin returned "Unschedulable", which is unsupported. '
         "It is supposed to return Success, Skip, or Error status"),
    ]
    from kubesched.testing.wrappers import MakePod

    for plugins, code, msg in cases:
        fw = _fw_pre_bind([PB(n, _st(c)) for n, c in plugins])
        st = fw.run_pre_bind_pre_flights(CycleState(), MakePod().name("p").obj(), "")
        assert (st.code if st is not None else None, st.message() if st is not None else "") == (code, msg)


@pytest.mark.parametrize(("version", "want_parallel"), [((1, 35), set()), ((1, 37), {"p1", "p3"})])
def test_pre_bind_pre_flights_record_skips_and_parallel(version: tuple[int, int], want_parallel: set[str]) -> None:
    """RunPreBindPreFlights records the skipping plugins (never run by RunPreBindPlugins) and,
    since v1.36 (PreBindPreFlightResult), the AllowParallel ones."""
    import asyncio

    from kubesched.features import FeatureGate
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Code
    from kubesched.testing.wrappers import MakePod

    pls = [PB("p1", None, True), PB("p2", _st(Code.SKIP)), PB("p3", None, True), PB("p4", _st(Code.SKIP), True)]
    fw = _fw_pre_bind(pls, FeatureGate(emulated_version=version))
    state = CycleState()
    pod = MakePod().name("p").obj()
    assert fw.run_pre_bind_pre_flights(state, pod, "n1") is None
    assert state.skip_pre_bind_plugins == {"p2", "p4"} and state.parallel_pre_bind_plugins == want_parallel | (
        {"p4"} if want_parallel else set())
    assert asyncio.run(fw.run_pre_bind_plugins(state, pod, "n1")) is None
    assert [pl.calls for pl in pls] == [["n1"], [], ["n1"], []]


# ───────────────────────── errors point into the file as written (issue 17 item 11) ─────────────────────────

def _default_fw(plugins: dict, extra: dict | None = None) -> Framework:
    """A profile merged into the default plugins, as `simulate --config` builds it."""
    from kubesched.plugins.registry import in_tree_registry

    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": plugins}]})
    return Framework(cfg.profiles[0], {**in_tree_registry(), **(extra or {})}, Handle(nodes=NodeTable()))


def test_unknown_plugin_in_multipoint_is_located_in_the_file_not_the_merged_defaults() -> None:
    # the merged multiPoint list starts with the ~20 default plugins; the file has one entry
    with pytest.raises(PluginConfigError) as ei:
        _default_fw({"multiPoint": {"enabled": [{"name": "Nope"}]}})
    assert ei.value.path == "profiles[0].plugins.multiPoint.enabled[0].name"
    with pytest.raises(PluginConfigError) as ei:
        _default_fw({"score": {"enabled": [{"name": "NodeAffinity", "weight": 2}, {"name": "Nope"}]}})
    assert ei.value.path == "profiles[0].plugins.score.enabled[1].name"


def test_plugin_at_point_it_does_not_implement_is_located_in_the_file() -> None:
    with pytest.raises(PluginConfigError, match='plugin "S1" does not extend filter plugin') as ei:
        _default_fw({"filter": {"enabled": [{"name": "S1"}]}}, {"S1": REG["S1"]})
    assert ei.value.path == "profiles[0].plugins.filter.enabled[0].name"


class _WrongFilter(_P):
    def filter(self, pod, node_info):  # noqa: ANN001, ANN201 - forgot `state`
        return None


class _WrongPreScore(_P):
    def pre_score(self, state, pod):  # noqa: ANN001, ANN201 - upstream's PreScore also takes the nodes
        return None


class _Flexible(_P):
    def filter(self, *args):  # noqa: ANN002, ANN201 - takes anything: accepted
        return None

    def score(self, state, pod, node_info, extra=None):  # noqa: ANN001, ANN201 - an optional extra: accepted
        return 0, None


@pytest.mark.parametrize(("cls", "method", "called"), [
    (_WrongFilter, "filter", "filter(state, pod, node_info)"),
    (_WrongPreScore, "pre_score", "pre_score(state, pod, nodes, rows)"),
], ids=["filter-without-state", "pre_score-without-nodes"])
def test_wrong_signature_is_a_config_error_at_build_time(cls: type, method: str, called: str) -> None:
    # before: every pod's message was the TypeError, exit 0
    reg = {"Mine": lambda a, h: cls("Mine")}
    with pytest.raises(PluginConfigError) as ei:
        _default_fw({"multiPoint": {"enabled": [{"name": "Mine"}]}}, reg)
    assert ei.value.path == "profiles[0].plugins.multiPoint.enabled[0].name"
    assert f'plugin "Mine": {method}(' in str(ei.value) and f"cannot be called as {called}" in str(ei.value)


def test_signatures_that_take_the_arguments_are_accepted() -> None:
    fw = _default_fw({"multiPoint": {"enabled": [{"name": "Mine"}]}}, {"Mine": lambda a, h: _Flexible("Mine")})
    assert "Mine" in names(fw.filter_plugins) and "Mine" in names(fw.score_plugins)


def test_every_in_tree_plugin_has_the_signatures_the_framework_calls() -> None:
    from kubesched.framework.interface import CALLED_SIGNATURES, signature_mismatch

    fw = _default_fw({})
    for name, plugin in fw.plugins.items():
        for method in CALLED_SIGNATURES:
            assert signature_mismatch(plugin, method) is None, (name, method)


# ───────────────── Score range check (upstream framework_test.go TestRunScorePlugins) ─────────────────


def test_score_out_of_range_is_an_error_only_outside_0_100() -> None:
    """A Score plugin's (normalised) score must lie in [MinNodeScore, MaxNodeScore]; the cases
    of upstream's table ("...greater than MaxNodeScore", "...less than MinNodeScore") and the
    range's ends, on a batch plugin whose scores pass through unchanged; random values by
    hypothesis against the plain max/min check."""
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kubesched.framework.cycle_state import CycleState
    from kubesched.testing.wrappers import MakePod

    class Fixed(_P):
        values: list[int] = []

        def score(self, state, pod, ni):  # noqa: ANN001, ANN201
            return 0, None

        def score_nodes(self, state, pod, table, rows):  # noqa: ANN001, ANN201
            return np.asarray(Fixed.values, np.int64)

    reg = dict(REG, SF=lambda a, h: Fixed("SF"))
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": {
                             "multiPoint": {"enabled": [*BASE, {"name": "SF"}], "disabled": [{"name": "*"}]}}}]})
    fw = Framework(cfg.profiles[0], reg, Handle(nodes=NodeTable()))
    pod = MakePod().name("p").obj()

    def run(values: list[int]) -> str | None:
        Fixed.values = values
        res, st_ = fw.run_score_plugins(CycleState(), pod, np.arange(len(values), dtype=np.int64), keep=False)
        return None if st_ is None else st_.message()

    assert run([0, 100, 50]) is None
    assert "invalid score 101, it should in the range of [0, 100]" in (run([100, 101]) or "")
    assert "invalid score -1," in (run([5, -1, 200]) or "")
    assert "invalid score -9223372036854775808," in (run([-(2**63)]) or "")

    # upstream's phases: a later plugin's Score error wins over an earlier plugin's bad score
    class Failing(_P):
        def score(self, state, pod, ni):  # noqa: ANN001, ANN201
            return 0, None

        def score_nodes(self, state, pod, table, rows):  # noqa: ANN001, ANN201
            raise RuntimeError("boom")

    reg2 = dict(reg, SX=lambda a, h: Failing("SX"))
    cfg2 = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"schedulerName": "x", "plugins": {"multiPoint": {
                              "enabled": [*BASE, {"name": "SF"}, {"name": "SX"}], "disabled": [{"name": "*"}]}}}]})
    fw2 = Framework(cfg2.profiles[0], reg2, Handle(nodes=NodeTable()))
    Fixed.values = [101]
    _, st2 = fw2.run_score_plugins(CycleState(), pod, np.arange(1, dtype=np.int64), keep=True)
    assert st2 is not None and "running Score plugins" in st2.message() and "boom" in st2.message()

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=20))
    def check(values: list[int]) -> None:
        bad = [v for v in values if not 0 <= v <= 100]
        msg = run(values)
        assert (msg is None) == (not bad)
        if bad:
            assert f"invalid score {bad[0]}," in msg

    check()


def test_zero_scorers_are_not_run_and_recorded_as_zeros() -> None:
    """A Score plugin whose ``scores_zero`` says yes adds nothing to the total: it is not run
    when nothing is kept (the total is the same), nor when the cycle is recorded (its promised
    zeros — Score 0 everywhere, kept 0 by NormalizeScore — appear in the record)."""
    import numpy as np

    from kubesched.framework.cycle_state import CycleState
    from kubesched.testing.wrappers import MakePod

    class Zero(_P):
        calls = 0

        def scores_zero(self, state, pod):  # noqa: ANN001, ANN201
            return True

        def score(self, state, pod, ni):  # noqa: ANN001, ANN201
            return 0, None

        def score_nodes(self, state, pod, table, rows):  # noqa: ANN001, ANN201
            Zero.calls += 1
            return np.zeros(len(rows), np.int64)

    class Seven(_P):
        def score(self, state, pod, ni):  # noqa: ANN001, ANN201
            return 7, None

        def score_nodes(self, state, pod, table, rows):  # noqa: ANN001, ANN201
            return np.full(len(rows), 7, np.int64)

    reg = dict(REG, SZ=lambda a, h: Zero("SZ"), S7=lambda a, h: Seven("S7"))
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": {"multiPoint": {
                             "enabled": [*BASE, {"name": "SZ"}, {"name": "S7"}], "disabled": [{"name": "*"}]}}}]})
    fw = Framework(cfg.profiles[0], reg, Handle(nodes=NodeTable()))
    pod = MakePod().name("p").obj()
    rows = np.arange(3, dtype=np.int64)
    plain, st_ = fw.run_score_plugins(CycleState(), pod, rows, keep=False)
    assert st_ is None and plain is not None and Zero.calls == 0
    kept, st_ = fw.run_score_plugins(CycleState(), pod, rows, keep=True)
    # a recorded cycle records the promised zeros without running the plugin either
    assert st_ is None and kept is not None and Zero.calls == 0
    assert kept.plugins == ["SZ", "S7"] and kept.raw[0].tolist() == [0, 0, 0]
    assert kept.normalized[0].tolist() == [0, 0, 0] and kept.weighted[0].tolist() == [0, 0, 0]
    assert np.array_equal(plain.total, kept.total)
    assert plain.total.tolist() == [7, 7, 7]
