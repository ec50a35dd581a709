"""A Filter plugin's Error travels as a Status, not an exception.

Upstream ``RunFilterPlugins`` (v1.37.2 ``pkg/scheduler/framework/runtime/framework.go``) returns
``*Status``: a rejection as it is (with the plugin), anything else that is not Success as
``AsStatus(fmt.Errorf("running %q filter plugin: %w", name, err)).WithPlugin(name)``; the first
one ends the run. ``RunFilterPluginsWithNominatedPods`` returns an AddPod extension's failure
as ``running AddPod on PreFilter plugin "<name>": <err>``. The cases are upstream's
``TestFilterPlugins`` and ``TestFilterPluginsWithNominatedPods`` tables (framework_test.go),
plus the ways a Python plugin fails that Go plugins cannot (raising, a batch ``filter_nodes``).
``Framework.run_filter_plugins`` returns the Error status in place of the chunk; every caller
narrows the union (mypy --strict) and ``schedule_pod`` returns it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.config import decode_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import FilterChunk
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, FilterResult, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.runtime import Framework
from kubesched.plugins import defaultbinder, queuesort
from kubesched.scheduler.schedule_pod import _apply_nominated_pods
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

INJECT_FILTER_REASON = "injected filter status"
"""Upstream ``injectFilterReason`` (``errInjectedFilterStatus`` is ``errors.New`` of it)."""
INJECT_REASON = "injected status"
"""Upstream ``injectReason`` (``errInjectedStatus``)."""

S, E, U, UU = Code.SUCCESS, Code.ERROR, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class InjectedFilter:
    """Upstream ``TestPlugin`` at Filter: ``NewStatus(FilterStatus, injectFilterReason)``;
    counts its calls."""

    def __init__(self, name: str, code: Code) -> None:
        self.name = name
        self.code = code
        self.calls = 0

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status:
        self.calls += 1
        return Status.of(self.code, INJECT_FILTER_REASON)


class RaisingFilter:
    """A per-node Filter that raises (a Python plugin's bug): an Error like any other."""

    def __init__(self, name: str) -> None:
        self.name = name

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status:
        raise ValueError("boom")


class RaisingBatchFilter:
    """A batch Filter (``filter_nodes``) that raises."""

    def __init__(self, name: str) -> None:
        self.name = name

    def filter_nodes(self, state: CycleState, pod: Any, table: Any, rows: np.ndarray) -> FilterResult | None:
        raise ValueError("batch boom")


class InjectedAddPod:
    """Upstream ``TestPlugin`` at PreFilter with its AddPod extension returning ``code``."""

    def __init__(self, name: str, code: Code) -> None:
        self.name = name
        self.code = code

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> InjectedAddPod:
        return self

    def add_pod(self, state: CycleState, pod: Any, pod_info: Any, node_info: Any) -> Status | None:
        return None if self.code == S else Status.of(self.code, INJECT_REASON)

    def remove_pod(self, state: CycleState, pod: Any, pod_info: Any, node_info: Any) -> Status | None:
        return None


def _const(plugin: Any) -> Any:
    """A plugin factory returning ``plugin``."""
    return lambda args, handle: plugin


def _framework(filters: list[Any], pre_filters: list[Any] = ()) -> Framework:
    plugins = {p.name: p for p in [*filters, *pre_filters]}
    registry: dict[str, Any] = {"PrioritySort": queuesort.new, "DefaultBinder": defaultbinder.new}
    registry.update({n: _const(p) for n, p in plugins.items()})
    cfg = decode_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "x", "plugins": {
            "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                           "disabled": [{"name": "*"}]},
            "preFilter": {"enabled": [{"name": p.name} for p in pre_filters]},
            "filter": {"enabled": [{"name": p.name} for p in filters]}}}]})
    table = build_table([MakeNode().name("node1").capacity(cpu="4", memory="4Gi", pods="10").obj()])
    return Framework(cfg.profiles[0], registry, Handle(nodes=table))


def _run(fw: Framework, state: CycleState | None = None) -> FilterChunk | Status:
    pod = MakePod().name("p").uid("p").obj()
    return fw.run_filter_plugins(state or CycleState(PodInfo(pod)), pod, np.asarray([0], np.int64))


def _as_upstream(got: FilterChunk | Status) -> tuple[Code, str, str] | None:
    """What upstream's ``RunFilterPlugins`` returns for the one node: None (Success) or
    ``(code, message, plugin)``."""
    if isinstance(got, Status):
        return got.code, got.message(), got.plugin
    if got.fail_plugin[0] == FilterChunk.PASSED:
        return None
    (_, st), = got.statuses(["node1"])
    return st.code, st.message(), st.plugin


def _error(plugin: str, err: str = INJECT_FILTER_REASON) -> tuple[Code, str, str]:
    return E, f'running "{plugin}" filter plugin: {err}', plugin


# upstream TestFilterPlugins: (name, [(plugin, injected Filter code)], skipped plugins, want)
FILTER_CASES = [
    ("SuccessFilter", [("TestPlugin", S)], set(), None),
    ("ErrorFilter", [("TestPlugin", E)], set(), _error("TestPlugin")),
    ("UnschedulableFilter", [("TestPlugin", U)], set(), (U, INJECT_FILTER_REASON, "TestPlugin")),
    ("UnschedulableAndUnresolvableFilter", [("TestPlugin", UU)], set(), (UU, INJECT_FILTER_REASON, "TestPlugin")),
    ("ErrorAndErrorFilters", [("TestPlugin1", E), ("TestPlugin2", E)], set(), _error("TestPlugin1")),
    ("UnschedulableAndUnschedulableFilters", [("TestPlugin1", U), ("TestPlugin2", U)], set(),
     (U, INJECT_FILTER_REASON, "TestPlugin1")),
    ("UnschedulableAndUnschedulableAndUnresolvableFilters", [("TestPlugin1", UU), ("TestPlugin2", U)], set(),
     (UU, INJECT_FILTER_REASON, "TestPlugin1")),
    ("SuccessAndSuccessFilters", [("TestPlugin1", S), ("TestPlugin2", S)], set(), None),
    ("SuccessAndSkipFilters", [("TestPlugin1", S), ("TestPlugin2", E)], {"TestPlugin2"}, None),
    ("ErrorAndSuccessFilters", [("TestPlugin1", E), ("TestPlugin2", S)], set(), _error("TestPlugin1")),
    ("SuccessAndErrorFilters", [("TestPlugin1", S), ("TestPlugin2", E)], set(), _error("TestPlugin2")),
    ("SuccessAndUnschedulableFilters", [("TestPlugin1", S), ("TestPlugin2", U)], set(),
     (U, INJECT_FILTER_REASON, "TestPlugin2")),
]


@pytest.mark.parametrize(("plugins", "skipped", "want"), [pytest.param(*c[1:], id=c[0]) for c in FILTER_CASES])
def test_filter_plugins(plugins: list[tuple[str, Code]], skipped: set[str],
                        want: tuple[Code, str, str] | None) -> None:
    filters = [InjectedFilter(n, c) for n, c in plugins]
    fw = _framework(filters)
    pod = MakePod().name("p").uid("p").obj()
    state = CycleState(PodInfo(pod))
    state.skip_filter_plugins.update(skipped)
    assert _as_upstream(_run(fw, state)) == want
    # the first Error or rejection ends the run; a skipped plugin is never called
    first_stop = next((i for i, p in enumerate(filters) if p.code != S and p.name not in skipped), len(filters))
    assert [p.calls for p in filters] == [
        0 if p.name in skipped else int(i <= first_stop) for i, p in enumerate(filters)]


@pytest.mark.parametrize("code", [Code.WAIT, Code.SKIP])
def test_a_code_a_filter_may_not_return_is_an_error(code: Code) -> None:
    """Upstream: ``if !status.IsSuccess() { if !status.IsRejected() { → Error } }``."""
    assert _as_upstream(_run(_framework([InjectedFilter("TestPlugin", code)]))) == _error("TestPlugin")


@pytest.mark.parametrize(("plugin", "err"), [(RaisingFilter("Raises"), "boom"),
                                             (RaisingBatchFilter("Raises"), "batch boom")],
                         ids=["per-node", "batch"])
def test_a_raising_filter_is_an_error_status(plugin: Any, err: str) -> None:
    after = InjectedFilter("After", S)
    got = _run(_framework([plugin, after]))
    assert isinstance(got, Status)
    assert (got.code, got.message(), got.plugin) == _error("Raises", err)
    assert isinstance(got.error, ValueError)
    assert after.calls == 0


# upstream TestFilterPluginsWithNominatedPods: (name, AddPod code or None (no PreFilter plugin),
# the Filter's code, nominated pod of higher priority?, want)
NOMINATED_CASES = [
    ("node has no nominated pod", None, S, None, None),
    ("node has a high-priority nominated pod and all filters succeed", S, S, True, None),
    ("node has a high-priority nominated pod and pre filters fail", E, S, True,
     (E, f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}', "TestPlugin1")),
    ("node has a high-priority nominated pod and filters fail", S, E, True, _error("TestPlugin2")),
    ("node has a low-priority nominated pod and pre filters return unschedulable", U, S, False, None),
]


class _Nominator:
    def __init__(self, pods: list[PodInfo]) -> None:
        self.pods = pods

    def has_nominated_pods(self) -> bool:
        return bool(self.pods)

    def nominated_nodes(self) -> list[str]:
        return ["node1"] if self.pods else []

    def nominated_pods_for_node(self, name: str) -> list[PodInfo]:
        return list(self.pods)


@pytest.mark.parametrize(("add_pod", "filter_code", "high", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in NOMINATED_CASES])
def test_filter_plugins_with_nominated_pods(add_pod: Code | None, filter_code: Code, high: bool | None,
                                            want: tuple[Code, str, str] | None) -> None:
    pre = [InjectedAddPod("TestPlugin1", add_pod)] if add_pod is not None else []
    fw = _framework([InjectedFilter("TestPlugin2", filter_code)], pre)
    pod = MakePod().name("p").uid("p").priority(100).obj()
    nominated = [] if high is None else [
        PodInfo(MakePod().name("n").uid("n").priority(200 if high else 50).obj())]
    fw.handle.nominator = _Nominator(nominated)
    state = CycleState(PodInfo(pod))
    fw.run_pre_filter_plugins(state, pod)
    got = fw.run_filter_plugins(state, pod, np.asarray([0], np.int64))
    if isinstance(got, FilterChunk):  # the plain pass passed or rejected: then the nominated pass
        err = _apply_nominated_pods(fw, state, pod, got)
        if err is not None:
            got = err
    assert _as_upstream(got) == want


class ErrorsWithPods:
    """A Filter that fails (Error) on a node holding any pod: only the pass with the nominated
    pods added sees one."""

    name = "ErrorsWithPods"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        return Status.of(E, "node has pods") if node_info.pods else None


def test_an_error_in_the_pass_with_nominated_pods_is_returned() -> None:
    """Upstream ``RunFilterPluginsWithNominatedPods``: the first pass (nominated pods added)
    returns its Error status; ``schedule_pod``'s filter step returns it for the cycle."""
    fw = _framework([ErrorsWithPods()])
    pod = MakePod().name("p").uid("p").priority(100).obj()
    fw.handle.nominator = _Nominator([PodInfo(MakePod().name("n").uid("n").priority(200).obj())])
    state = CycleState(PodInfo(pod))
    chunk = fw.run_filter_plugins(state, pod, np.asarray([0], np.int64))
    assert isinstance(chunk, FilterChunk) and chunk.fail_plugin.tolist() == [FilterChunk.PASSED]
    err = _apply_nominated_pods(fw, state, pod, chunk)
    assert err is not None and _as_upstream(err) == _error("ErrorsWithPods", "node has pods")
    assert chunk.fail_plugin.tolist() == [FilterChunk.PASSED]  # left as it was
    assert fw.handle.nodes.node_info(0).pods == []  # the row edit was undone
