"""NodeTable's incremental columns equal a recomputation from its pods, whatever the history."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.labels import Selector, make_requirement
from kubesched.framework import node_table
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NO_PODS_PRIORITY, NodeTable, RowEdit, TableChangedError
from kubesched.testing.wrappers import MakeNode, MakePod

POD = st.fixed_dictionaries({
    "cpu": st.sampled_from(["0", "10m", "250m", "1"]),
    "mem": st.sampled_from(["0", "64Mi", "1Gi"]),
    "gpu": st.sampled_from([None, "1", "2"]),
    "prio": st.integers(-5, 5),
    "port": st.sampled_from([None, 80, 443]),
})


def _pod(i: int, spec: dict) -> PodInfo:
    b = MakePod().name(f"p{i}").priority(spec["prio"])
    req = {"cpu": spec["cpu"], "memory": spec["mem"]}
    if spec["gpu"]:
        req["nvidia.com/gpu"] = spec["gpu"]
    b.container(requests=req, ports=[{"containerPort": spec["port"], "hostPort": spec["port"]}] if spec["port"] else None)
    return PodInfo(b.obj())


def _check(t: NodeTable, used: dict[int, set] | None = None) -> None:
    """``used``: row → the set of ``(hostIP, protocol, port)`` upstream's HostPortInfo holds
    (a set: a removed pod takes its tuples away even if another pod holds them too)."""
    for row in t.order().tolist():
        pods = t.pods[row]
        want = np.zeros(len(t.resource_names), np.int64)
        for p in pods:
            for k, v in p.requests.items():
                if k != "pods":
                    want[t.resource_index[k]] += v
        want[t.PODS] = len(pods)
        assert t.requested[row].tolist() == want.tolist()
        assert t.non_zero_requested[row].tolist() == [sum(p.non_zero_cpu for p in pods),
                                                      sum(p.non_zero_memory for p in pods)]
        assert t.min_pod_priority[row] == min((p.priority for p in pods), default=NO_PODS_PRIORITY)
        # the count that lets a removal skip the rescan while another pod holds the minimum
        assert t._min_priority_pods[row] == sum(1 for p in pods if p.priority == t.min_pod_priority[row])
        if used is not None:
            want_ports: dict[tuple[str, int], set[str]] = {}
            for ip, proto, port in used.get(row, set()):
                want_ports.setdefault((proto, port), set()).add(ip)
            assert (t.used_ports[row] or {}) == want_ports


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "edit"]), st.integers(0, 3), POD), max_size=40))
def test_incremental_columns_match_recomputation(ops) -> None:  # noqa: ANN001
    t = NodeTable(capacity=2)  # forces growth
    for i in range(4):
        t.set_node(MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj())
    placed: dict[str, tuple[PodInfo, int]] = {}
    used: dict[int, set] = {}  # the HostPortInfo model: a set per row
    for i, (op, node, spec) in enumerate(ops):
        row = t.row_of[f"n{node}"]
        if op == "add" or not placed:
            pi = _pod(i, spec)
            t.add_pod(pi, row)
            placed[pi.key] = (pi, row)
            used.setdefault(row, set()).update(pi.ports)
        elif op == "remove":
            key = sorted(placed)[i % len(placed)]
            pi, r = placed.pop(key)
            t.remove_pod(pi, r)
            used.get(r, set()).difference_update(pi.ports)
        else:  # a temporary edit is undone exactly
            before = (t.requested[row].copy(), list(t.pods[row]), t.min_pod_priority[row], t.generation[row])
            with t.frozen("an edit that is undone"), RowEdit(t, row) as edit:
                for p in list(t.pods[row])[:2]:
                    edit.remove(p)
                edit.add(_pod(1000 + i, spec))
            after = (t.requested[row], t.pods[row], t.min_pod_priority[row], t.generation[row])
            n = len(before[0])  # the edit may have added a resource column (0 once restored)
            assert before[0].tolist() == after[0][:n].tolist() and not after[0][n:].any()
            assert before[1] == after[1]
            assert before[2] == after[2] and before[3] == after[3]
        _check(t, used)


def test_min_priority_after_node_removal_and_row_reuse() -> None:
    t = NodeTable(capacity=2)
    row = t.set_node(MakeNode().name("a").capacity(cpu="4", pods="110").obj())
    for i, prio in enumerate([3, 1, 1]):
        t.add_pod(_pod(i, {"cpu": "0", "mem": "0", "gpu": None, "prio": prio, "port": None}), row)
    t.remove_node("a")
    again = t.set_node(MakeNode().name("b").capacity(cpu="4", pods="110").obj())
    assert again == row and t.min_pod_priority[row] == NO_PODS_PRIORITY
    late = _pod(9, {"cpu": "0", "mem": "0", "gpu": None, "prio": 5, "port": None})
    t.add_pod(late, again)
    assert t.min_pod_priority[again] == 5
    t.remove_pod(late, again)
    assert t.min_pod_priority[again] == NO_PODS_PRIORITY
    _check(t)


# ───────────────────────────── derived indexes owned by the table ─────────────────────────────


class _Counter:
    """A derived index that listens to the table (as plugin indexes do)."""

    def __init__(self, table: NodeTable) -> None:
        self.added = 0
        table.add_listener(self)

    def on_node_set(self, table, row, old) -> None:  # noqa: ANN001
        pass

    def on_node_removed(self, table, row, old) -> None:  # noqa: ANN001
        pass

    def on_pod_added(self, table, row, pod_info) -> None:  # noqa: ANN001
        self.added += 1

    def on_pod_removed(self, table, row, pod_info) -> None:  # noqa: ANN001
        pass


def test_derived_is_made_once_per_table_and_key() -> None:
    t1, t2 = NodeTable(), NodeTable()
    made: list[NodeTable] = []

    def factory(t: NodeTable) -> _Counter:
        made.append(t)
        return _Counter(t)

    a = t1.derived(("test", "counter"), factory)
    assert t1.derived(("test", "counter"), factory) is a
    b = t2.derived(("test", "counter"), factory)
    other = t1.derived(("test", "other"), factory)
    assert b is not a and other is not a and made == [t1, t2, t1]
    t1.set_node(MakeNode().name("n").obj())
    t1.add_pod(_pod(0, {"cpu": "0", "mem": "0", "gpu": None, "prio": 0, "port": None}), t1.row_of["n"])
    assert (a.added, other.added, b.added) == (1, 1, 0)


def test_derived_indexes_live_and_die_with_their_table() -> None:
    from kubesched.plugins.interpodaffinity.index import get_index
    from kubesched.plugins.podtopologyspread.index import spread_index

    t = NodeTable()
    t.set_node(MakeNode().name("n").label("zone", "a").obj())
    refs = [weakref.ref(t), weakref.ref(get_index(t)), weakref.ref(spread_index(t))]
    assert get_index(t) is refs[1]() and spread_index(t) is refs[2]()
    del t
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


# ───────────────────────────── debug: the table does not change during a cycle ─────────────────────────────

_SPEC = {"cpu": "10m", "mem": "0", "gpu": "1", "prio": 0, "port": 80}


def test_every_mutation_bumps_the_counter() -> None:
    t = NodeTable(capacity=1)
    seen = [t.mutations]

    def changed() -> None:
        assert t.mutations > seen[-1]
        seen.append(t.mutations)

    t.set_node(MakeNode().name("a").obj())
    changed()
    t.set_node(MakeNode().name("a").label("x", "y").obj())  # update
    changed()
    pi = _pod(0, _SPEC)
    t.add_pod(pi, t.row_of["a"])  # also adds the nvidia.com/gpu column
    changed()
    t.remove_pod(pi, t.row_of["a"])
    changed()
    t.resource_column("example.com/new", create=True)
    changed()
    t.remove_node("a")
    changed()
    before = t.mutations
    t.order(), t.get("a"), t.resource_column("cpu"), t.rows_for_names(["a"])  # reads do not count
    assert t.mutations == before


def test_frozen_raises_when_the_table_changes_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_table, "_DEBUG_CHECKS", True)
    t = NodeTable()
    t.set_node(MakeNode().name("a").obj())
    with t.frozen() as since:
        assert since == t.mutations
        t.order()
    with pytest.raises(TableChangedError, match=r"NodeTable changed during the scheduling cycle: 2 change\(s\)"):
        with t.frozen():
            t.add_pod(_pod(1, _SPEC), t.row_of["a"])  # a column for nvidia.com/gpu, then the pod
    since = t.mutations
    t.assert_unchanged(since)
    t.set_node(MakeNode().name("b").obj())
    with pytest.raises(TableChangedError, match="during binding"):
        t.assert_unchanged(since, "binding")
    with pytest.raises(KeyError):  # an exception from the body is not masked by the check
        with t.frozen():
            t.set_node(MakeNode().name("c").obj())
            raise KeyError("x")


def test_frozen_is_a_no_op_without_debug_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_table, "_DEBUG_CHECKS", False)
    assert not node_table.debug_checks()
    t = NodeTable()
    with t.frozen() as since:
        t.set_node(MakeNode().name("a").obj())
    assert since is None and t.frozen() is NodeTable().frozen()  # one shared null context


def test_debug_checks_are_on_in_the_test_suite() -> None:
    assert node_table.debug_checks()
    prev = node_table.set_debug_checks(False)
    assert prev is True and not node_table.debug_checks()
    node_table.set_debug_checks(prev)


def test_row_edit_inside_frozen_is_no_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_table, "_DEBUG_CHECKS", True)
    t = NodeTable()
    t.set_node(MakeNode().name("a").obj())
    t.add_pod(_pod(0, _SPEC), t.row_of["a"])
    with t.frozen("preemption dry run"):
        with RowEdit(t, t.row_of["a"]) as edit:
            edit.remove(t.pods[t.row_of["a"]][0])
            edit.add(_pod(1, _SPEC))
            assert t.mutations > 0


# ───────────────────────────── SpreadIndex: groups built from the pods-by-label index ─────────────────────────────

_OPS = st.lists(st.tuples(st.sampled_from(["add", "remove", "drop_node", "query"]), st.integers(0, 5),
                          st.integers(0, 3), st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=40)


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_spread_index_counts_match_a_scan_of_the_pods(ops: list) -> None:
    """Counts of groups with a positive requirement (built from the label index) and without
    one (built by a scan) equal a brute-force count after any adds, removes and node removals."""
    from kubesched.plugins.podtopologyspread.index import spread_index

    t = NodeTable(capacity=2)
    for i in range(3):
        t.set_node(MakeNode().name(f"n{i}").obj())
    idx = spread_index(t)
    selectors = [Selector([make_requirement("app", "in", ["a", "b"])]),
                 Selector([make_requirement("app", "=", ["c"])]),
                 Selector([make_requirement("app", "exists", [])]),
                 Selector([make_requirement("app", "notin", ["a"])])]
    where: dict[str, int] = {}
    n = 0
    for step, (op, node, sel, app, dying) in enumerate(ops):
        name = f"n{node % 3}"
        if op == "add" and name in t.row_of:
            b = MakePod().name(f"p{n}").namespace("ns").label("app", app)
            if dying:
                b = b.terminating()
            pi = PodInfo(b.obj())
            n += 1
            t.add_pod(pi, t.row_of[name])
            where[pi.key] = t.row_of[name]
        elif op == "remove" and where:
            key = sorted(where)[node % len(where)]
            row = where.pop(key)
            pi = next(p for p in t.pods[row] if p.key == key)
            t.remove_pod(pi, row)
        elif op == "drop_node" and name in t.row_of and len(t.row_of) > 1:
            row = t.row_of[name]
            for pi in list(t.pods[row]):  # callers remove the pods first, as the cache does
                where.pop(pi.key, None)
                t.remove_pod(pi, row)
            t.remove_node(name)
        elif op == "drop_node" and name not in t.row_of:
            t.set_node(MakeNode().name(name).obj())
        # a group new at this step (built from the label index now) and maybe an older one
        for s in (Selector([make_requirement("app", "in", [app, f"v{step}"])]), selectors[sel]):
            _assert_counts(t, idx.counts("ns", s), s)


def _assert_counts(t: NodeTable, got: np.ndarray, s: Selector) -> None:
    for row in range(t.capacity):
        want = sum(1 for p in t.pods[row] if p.pod.metadata.deletion_timestamp is None
                   and s.matches(p.pod.metadata.labels)) if t.alive[row] else 0
        assert got[row] == want, (s, row)


def test_resource_columns_added_one_by_one_keep_values():
    """A cluster whose every node brings its own extended resource (scheduler_perf
    SchedulingWithExtendedResource): each new column starts at zero, earlier columns keep their
    values, and the arrays stay (rows × resources) wide."""
    from kubesched.framework.node_table import NodeTable

    t = NodeTable()
    first = t.resource_column("foo.com/bar-0", create=True)
    t.allocatable[0, first] = 7
    cols = [t.resource_column(f"foo.com/bar-{i}", create=True) for i in range(1, 40)]
    assert t.allocatable.shape == t.requested.shape == (t.capacity, len(t.resource_names))
    assert t.allocatable[0, first] == 7
    assert not t.allocatable[:, cols].any() and not t.requested[:, cols].any()
    t.requested[1, cols[-1]] = 3
    assert t.resource_column("foo.com/bar-39") == cols[-1] and t.requested[1, cols[-1]] == 3
