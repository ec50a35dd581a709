"""Filter reasons are kept per node without limit (issue 7 §0.1).

Upstream keeps a ``*Status`` per node in ``NodeToStatus`` and ``FitError.Error()`` counts every
reason of every node's ``Status.Reasons()`` into a histogram whose ``"%d %s"`` entries are sorted
as strings (``pkg/scheduler/framework/types.go``). Here a rejected node keeps a key into its
plugin's reason table: a bit set for built-in plugins with a few fixed reasons, an interned
``(reasons, code)`` id otherwise. These tests pin the second form on many distinct statuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.config import decode_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, FilterChunk, FitError, NodeToStatus, PluginReasons
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import MAX_REASON_BITS, Code, FilterResult, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.record import filter_results
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.schedule_pod import schedule_pod
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
N = 120


def _name(i: int) -> str:
    return f"node-{i}"


def _statuses(i: int) -> Status:
    """Node i's rejection: its own reason naming it; every 7th node UU with a second reason
    given before the first in order; every 11th repeats a shared reason (counted twice)."""
    own = f"node {_name(i)} is not for this pod"
    if i % 11 == 0:
        return Status.of(U, "shared", own, "shared")
    if i % 7 == 0:
        return Status.of(UU, "z comes first", own)
    return Status.of(U, own)


class NamingFilter:
    """A per-node Python Filter plugin (upstream shape)."""

    name = "NamingFilter"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        return _statuses(int(node_info.node.metadata.name.split("-")[1]))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]


class NamingBatchFilter:
    """The same rejections from a batch plugin, interned by ``FilterResult.from_statuses``."""

    name = "NamingBatchFilter"

    def filter_nodes(self, state: Any, pod: Any, nodes: Any, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_statuses([_statuses(int(nodes.names[r].split("-")[1])) for r in rows.tolist()])


class NamingIdsFilter:
    """The same rejections from a batch plugin that interns them itself (``FilterResult.interned``)."""

    name = "NamingIdsFilter"

    def filter_nodes(self, state: Any, pod: Any, nodes: Any, rows: np.ndarray) -> FilterResult:
        table = [(st.reasons, st.code) for st in (_statuses(i) for i in range(N))]
        ids = np.asarray([int(nodes.names[r].split("-")[1]) + 1 for r in rows.tolist()], np.int64)
        return FilterResult.interned(ids, table)


def _config(filter_plugin: str) -> Any:
    """A profile with only PrioritySort, DefaultBinder and the given Filter plugin."""
    return decode_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
            "filter": {"enabled": [{"name": filter_plugin}]}}}]})


def _scheduler(plugin: Any) -> Scheduler:
    cfg = _config(plugin.name)
    store = ClusterStore()
    registry = {**in_tree_registry(), plugin.name: lambda args, handle: plugin}
    sched = Scheduler(cfg, client=store, lister=store, registry=registry, seed=0)
    store.scheduler = sched
    for i in range(N):
        store.add("Node", MakeNode().name(_name(i)).obj())
    return sched


def _expected_message() -> str:
    hist: dict[str, int] = {}
    for i in range(N):
        for r in _statuses(i).reasons:
            hist[r] = hist.get(r, 0) + 1
    return f"0/{N} nodes are available: " + ", ".join(sorted(f"{n} {r}" for r, n in hist.items())) + "."


def _fit_error(result: object) -> FitError:
    """schedule_pod returns a failure as a Status whose ``error`` is the FitError."""
    assert isinstance(result, Status), result
    assert isinstance(result.error, FitError), result
    return result.error


@pytest.mark.parametrize("plugin", [NamingFilter, NamingBatchFilter, NamingIdsFilter])
def test_every_node_keeps_its_own_status_and_message_lists_all(plugin: type) -> None:
    sched = _scheduler(plugin())
    pod = MakePod().name("p").uid("p").obj()
    fw = sched.profiles["default-scheduler"]
    fe = _fit_error(schedule_pod(fw, CycleState(PodInfo(pod)), pod, sched.table, sched.sampler, sched.rng))
    names = sched.table.names
    got = fe.diagnosis.node_to_status(names)
    assert len(got) == N
    for i in range(N):
        want = _statuses(i)
        st = got[_name(i)]
        assert (st.code, st.reasons, st.plugin) == (want.code, want.reasons, plugin.name)
    m = NodeToStatus(fe.diagnosis, names, sched.table.row_of)
    for i in (0, 7, 62, 63, 64, 69, 100, N - 1):  # one by one, without building the whole map
        assert m.get(_name(i)).reasons == _statuses(i).reasons
    uu_rows = m.rows_with_code(sched.table.order(), UU)
    assert sorted(names[r] for r in uu_rows.tolist()) == sorted(
        _name(i) for i in range(N) if _statuses(i).code == UU)
    assert str(fe) == _expected_message()
    assert "1 node node-69 is not for this pod" in str(fe)
    assert f"{len([i for i in range(N) if i % 11 == 0]) * 2} shared" in str(fe)
    assert fe.diagnosis.unschedulable_plugins == {plugin.name}
    rec = filter_results(sched.table, fe.diagnosis.chunks)
    assert rec[_name(69)] == {plugin.name: list(_statuses(69).reasons)}


def test_bit_set_form_refuses_more_reasons_than_bits() -> None:
    reasons = [f"r{i}" for i in range(MAX_REASON_BITS + 1)]
    with pytest.raises(ValueError, match="interned"):
        FilterResult(np.zeros(1, np.int64), reasons, [U] * len(reasons))
    FilterResult(np.zeros(1, np.int64), reasons[:-1], [U] * MAX_REASON_BITS)  # 63 still fit


def test_from_statuses_rejects_non_rejections() -> None:
    with pytest.raises(ValueError, match="row 1"):
        FilterResult.from_statuses([None, Status(Code.ERROR, ("boom",))])
    res = FilterResult.from_statuses([None, Status(Code.SUCCESS), Status.of(U, "a"), Status.of(U, "a")])
    assert res.failed.tolist() == [0, 0, 1, 1] and list(res.statuses or ()) == [(("a",), U)]


def test_reasons_given_as_a_list_are_interned() -> None:
    res = FilterResult.from_statuses([Status(U, ["a", "b"]), Status(U, ["a", "b"])])  # type: ignore[arg-type]
    assert res.failed.tolist() == [1, 1] and res.status_for(1) == Status(U, ("a", "b"))


def test_status_with_error_counts_error_text_first_as_upstream_reasons() -> None:
    # upstream Status.Reasons(): the error's text, then the reasons
    res = FilterResult.from_statuses([Status(U, ("r",), RuntimeError("e"))])
    assert res.status_for(1) == Status(U, ("e", "r"))


def test_interned_chunk_with_override_histogram_and_codes() -> None:
    """An interned table and a bit-set table in one chunk, plus a per-node override."""
    interned = PluginReasons(statuses=[(("x", "y"), U), (("only-uu",), UU)])
    bits = PluginReasons(("a", "b"), (U, UU))
    rows = np.arange(5, dtype=np.int64)
    chunk = FilterChunk(rows, np.asarray([0, 0, 1, -1, 1], np.int16), np.asarray([1, 2, 3, 0, 1], np.int64),
                        ["I", "B"], [interned, bits])
    sub = FilterChunk(rows[4:], np.asarray([0], np.int16), np.asarray([2], np.int64), ["I", "B"], [interned, None])
    chunk.override(4, sub)
    names = [f"n{i}" for i in range(5)]
    d = Diagnosis(chunks=[chunk])
    got = {n: (s.code, s.reasons, s.plugin) for n, s in d.node_to_status(names).items()}
    assert got == {"n0": (U, ("x", "y"), "I"), "n1": (UU, ("only-uu",), "I"), "n2": (UU, ("a", "b"), "B"),
                   "n4": (UU, ("only-uu",), "I")}
    assert d.histogram(5) == {"x": 1, "y": 1, "only-uu": 2, "a": 1, "b": 1}
    m = NodeToStatus(d, names, {n: i for i, n in enumerate(names)})
    assert m.get("n4").reasons == ("only-uu",)
    assert m.rows_with_code(rows, UU).tolist() == [1, 2, 4]
    assert m.rows_with_code(rows, U).tolist() == [0]
    d.collect_plugins()
    assert d.unschedulable_plugins == {"I", "B"}


class SilentFilter:
    """Rejects every node without a reason (upstream: nothing in the histogram)."""

    name = "SilentFilter"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        return Status(U)


def test_rejection_without_reasons_adds_nothing_to_the_histogram() -> None:
    sched = _scheduler(SilentFilter())
    pod = MakePod().name("p").uid("p").obj()
    fe = _fit_error(schedule_pod(sched.profiles["default-scheduler"], CycleState(PodInfo(pod)), pod, sched.table,
                                 sched.sampler, sched.rng))
    assert str(fe) == f"0/{N} nodes are available:"
    st = fe.diagnosis.node_to_status(sched.table.names)[_name(5)]
    assert (st.code, st.reasons, st.plugin) == (U, (), "SilentFilter")


def test_simulate_reports_every_node_in_the_pod_condition_and_event(tmp_path: Any) -> None:
    """End to end: the PodScheduled=False condition carries the whole message, the
    FailedScheduling event its upstream truncation (1024 bytes)."""
    import yaml

    from kubesched.scheduler import truncate_message
    from kubesched.sim.manifests import load_manifests
    from kubesched.sim.simulate import simulate

    objs = [MakeNode().name(_name(i)).raw() for i in range(N)] + [MakePod().name("p").uid("p").raw()]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    plugin = NamingFilter()
    registry = {**in_tree_registry(), plugin.name: lambda a, h: plugin}
    res = simulate(load_manifests([str(f)]), _config(plugin.name), registry=registry)
    [out] = res.outcomes
    assert out.node is None and out.message == _expected_message()
    events = [e for e in res.store.events if e[1] == "FailedScheduling" and e[2] == "default/p"]
    assert events and events[-1][3] == truncate_message(_expected_message())
