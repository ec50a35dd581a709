"""``Framework.run_filter_plugins`` marks the nodes a ``pure_filter_nodes`` plugin rejects and
compacts only when a quarter of the rows is rejected or before another kind of plugin (issue 18
§2). Hypothesis: on random plugin chains (pure and impure batch plugins, per-node plugins,
skipped plugins, errors on some nodes) the chunk — first failing plugin and key per node, reason
tables, skipped set — or the Error status is the one of the plain evaluation that hands every
plugin only the nodes still passing, and impure plugins never see a rejected node."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, FilterResult, Status
from kubesched.framework.runtime import Framework

REASONS = ("a", "b", "c")
CODES = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE)


class _Plugin:
    """A Filter plugin whose answer for each table row is fixed: ``keys[row]`` (0 = pass) and
    ``errors`` (rows it raises on); ``seen`` collects every row it was asked about."""

    def __init__(self, name: str, keys: list[int], errors: set[int], pure: bool, batch: bool) -> None:
        self.name = name
        self.keys = keys
        self.errors = errors
        self.pure_filter_nodes = pure
        self.seen: list[int] = []
        if batch:
            self.filter_nodes = self._filter_nodes

    def _filter_nodes(self, state: Any, pod: Any, table: Any, rows: np.ndarray) -> FilterResult | None:
        rs = rows.tolist()
        self.seen.extend(rs)
        if any(r in self.errors for r in rs):
            raise RuntimeError(f"{self.name} broke")
        failed = np.asarray([self.keys[r] for r in rs], np.int64)
        return FilterResult(failed, REASONS, CODES) if failed.any() else None

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        row = node_info.row
        self.seen.append(row)
        if row in self.errors:
            raise RuntimeError(f"{self.name} broke")
        k = self.keys[row]
        return None if k == 0 else Status(Code.UNSCHEDULABLE, (f"key {k}",))


def _framework(plugins: list[_Plugin]) -> Any:
    table = SimpleNamespace(node_info=lambda row: SimpleNamespace(row=row))
    fw = SimpleNamespace(handle=SimpleNamespace(nodes=table), filter_plugins=plugins,
                         _batch_filter=[callable(getattr(p, "filter_nodes", None)) for p in plugins],
                         _pure_filter=[bool(getattr(p, "pure_filter_nodes", False)) for p in plugins],
                         _filter_names=[p.name for p in plugins])
    fw._filter_per_node = lambda state, pod, pl, rows: Framework._filter_per_node(fw, state, pod, pl, rows)
    return fw


def _plain(plugins: list[_Plugin], rows: list[int], skip: set[str]) -> tuple[str, Any]:
    """Every plugin over the nodes still passing, in order (the evaluation before the change):
    ``("error", plugin)`` or ``("chunk", ([(plugin index, key) per row], skipped indices))``."""
    fail = {r: (-1, 0) for r in rows}
    cur = list(rows)
    skipped = set()
    for pi, pl in enumerate(plugins):
        if pl.name in skip:
            skipped.add(pi)
            continue
        if any(r in pl.errors for r in cur):
            return "error", pl.name
        if not hasattr(pl, "filter_nodes"):  # per node: interned keys in order of first appearance
            index: dict[int, int] = {}
            keys = {r: index.setdefault(pl.keys[r], len(index) + 1) for r in cur if pl.keys[r]}
        else:
            keys = {r: pl.keys[r] for r in cur if pl.keys[r]}
        for r, k in keys.items():
            fail[r] = (pi, k)
        cur = [r for r in cur if r not in keys]
        if not cur:
            break
    return "chunk", ([fail[r] for r in rows], frozenset(skipped))


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[_Plugin], list[int], set[str]]:
    cap = draw(st.integers(1, 40))
    rows = draw(st.lists(st.integers(0, cap - 1), unique=True, min_size=1, max_size=cap))
    plugins = []
    for i in range(draw(st.integers(1, 6))):
        rate = draw(st.sampled_from([0.0, 0.1, 0.1, 0.2, 0.5, 0.9]))
        keys = [draw(st.integers(1, 7)) if draw(st.floats(0, 1)) < rate else 0 for _ in range(cap)]
        errors = set(draw(st.sets(st.integers(0, cap - 1), max_size=2))) if draw(st.integers(0, 2)) == 0 else set()
        batch = draw(st.integers(0, 3)) > 0
        plugins.append(_Plugin(f"P{i}", keys, errors, pure=batch and draw(st.booleans()), batch=batch))
    if len(plugins) > 1 and draw(st.booleans()):  # an error on a node an earlier plugin rejects
        i = draw(st.integers(0, len(plugins) - 2))
        rejected = [r for r in rows if plugins[i].keys[r]]
        if rejected:
            plugins[draw(st.integers(i + 1, len(plugins) - 1))].errors = {draw(st.sampled_from(rejected))}
    skip = {p.name for p in plugins if draw(st.integers(0, 6)) == 0}
    return plugins, rows, skip


@settings(max_examples=600, deadline=None)
@given(chains())
def test_lazy_compaction_equals_the_plain_evaluation(chain):
    plugins, rows, skip = chain
    want_kind, want = _plain(plugins, rows, skip)
    fw = _framework(plugins)
    state = CycleState()
    state.skip_filter_plugins.update(skip)
    got = Framework.run_filter_plugins(fw, state, None, np.asarray(rows, np.int64))
    if want_kind == "error":
        assert isinstance(got, Status) and got.code == Code.ERROR
        assert got.message() == f'running "{want}" filter plugin: {want} broke'
        return
    assert not isinstance(got, Status), got.message()
    want, skipped = want
    assert got.rows.tolist() == rows
    assert list(zip(got.fail_plugin.tolist(), got.fail_key.tolist())) == want
    assert got.skipped == skipped  # the skipped plugins up to the last one that ran
    rejecting = {pi for pi, _ in want if pi >= 0}
    assert {i for i, t in enumerate(got.tables) if t is not None} == rejecting
    # a plugin that is not pure never sees a node an earlier plugin rejected
    for pi, pl in enumerate(plugins):
        if pl.pure_filter_nodes and hasattr(pl, "filter_nodes"):
            continue
        earlier = {r for r, (fp, _) in zip(rows, want) if 0 <= fp < pi}
        assert not earlier & set(pl.seen), pl.name
