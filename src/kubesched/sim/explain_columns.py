"""Which nodes an explanation keeps, read from a record's columns.

:func:`kubesched.sim.explain.explain_record` orders an attempt's nodes — scored nodes best total
first (the selected node first among equals), then feasible unscored ones in record order, then
the rejected ones, near misses first — keeps ``max_nodes`` of them plus the chosen node and the
runner-up, and counts the Filter reasons of the rest. Done over the record's dicts that is
O(evaluated nodes) Python work per attempt, which the report pays for every pod; here the same
selection is made with numpy over :meth:`FilterResults.outcome_codes` and the totals, so the
Python work is O(kept nodes). The result is the dict path's, exactly (tests/sim/test_explain_columns.py
compares them); :func:`column_plan` returns None where it cannot tell (plain-dict records, a node
evaluated twice, a scored node that a Filter plugin rejected) and the caller takes the dict path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kubesched.framework.record import DecisionRecord, FilterResults, NodeTotals

__all__ = ["KeptNode", "Plan", "column_plan"]


@dataclass(slots=True)
class KeptNode:
    """One node an explanation shows: ``reasons`` (``"Plugin: reason"``, empty when feasible),
    ``total``/``rank`` (None when not scored), ``col``: its place among the totals (−1 unknown)."""

    node: str
    reasons: list[str]
    total: int | None = None
    rank: int | None = None
    col: int = -1


@dataclass(slots=True)
class Plan:
    """The capped selection of one attempt: the kept nodes in the order shown, the runner-up
    (best-scored node other than the selected one), the margin and the ties, and how many nodes
    were left out with their reasons counted (``"feasible"`` for feasible ones, most common first)."""

    nodes: list[KeptNode]
    runner_up: str | None
    margin: int | None
    selected_ties: int
    runner_up_ties: int
    nodes_omitted: int
    omitted_reasons: dict[str, int]


def _reason_lines(plugin: str, reasons: tuple[str, ...]) -> list[str]:
    return [f"{plugin}: {r}" for r in reasons]


def _in_totals(flt: FilterResults, names: list[str], totals: Mapping[str, int]) -> np.ndarray:
    """``bool[evaluated]``: which evaluated nodes were scored — by the nodes' rows when
    ``totals`` is the record's :class:`NodeTotals` (both read from one table at the same
    moment), else by name."""
    if isinstance(totals, NodeTotals):
        rows, scored_rows = flt.rows(), totals.rows
        top = max(int(rows.max()), int(scored_rows.max())) + 1
        mask = np.zeros(top, bool)
        mask[scored_rows] = True
        return mask[rows]
    return np.array(list(map(totals.__contains__, names)), bool)  # (np.fromiter: ~0.5 µs a node)


def column_plan(rec: DecisionRecord, totals: Mapping[str, int], max_nodes: int) -> Plan | None:
    """The :class:`Plan` of ``rec`` (``totals``: node → total score, the scored nodes in record
    order: the record's :class:`NodeTotals` or a dict), or None when the record's Filter results
    are not columns (then read the dicts)."""
    flt = rec.filter
    if not isinstance(flt, FilterResults):
        return None
    cols = flt.outcome_codes()
    if cols is None:
        return None
    names, codes, outcomes = cols
    if isinstance(totals, NodeTotals):
        scored, total = totals.names, totals.array
    else:
        scored, total = list(totals), np.array(list(totals.values()), np.int64)
    n_scored = len(scored)
    if names and n_scored:
        in_totals = _in_totals(flt, names, totals)
        if (codes[in_totals] >= 0).any():
            return None  # a scored node some Filter plugin rejected: not a shape the engine makes
        unscored = np.flatnonzero(~in_totals)
    else:
        unscored = np.arange(len(names))
    # scored nodes: best total first, stable (record order among equals), the selected one
    # moved to the front of its equals
    ranked: list[int] = np.argsort(-total, kind="stable").tolist()
    sel = rec.selected_node
    sel_i = -1
    if sel is not None:
        try:
            sel_i = scored.index(sel)  # (a C-level scan: no node → column dict for one lookup)
        except ValueError:
            pass
    if sel_i >= 0:
        ranked.remove(sel_i)
        ranked.insert(int(np.count_nonzero(total > total[sel_i])), sel_i)
    if sel:
        runner_i = next((i for i in ranked[:2] if i != sel_i), -1)
    else:
        runner_i = ranked[1] if n_scored > 1 else -1
    runner = scored[runner_i] if runner_i >= 0 else None
    # unscored nodes: feasible ones in record order, then the rejected ones, near misses first
    # (most Filter plugins passed, then fewest reasons; record order among equals)
    unscored_codes = codes[unscored]
    feasible = unscored[unscored_codes < 0]
    rejected = unscored[unscored_codes >= 0]
    if len(rejected):
        passed = np.array([o[2] for o in outcomes], np.int64)
        n_reasons = np.array([len(o[1]) for o in outcomes], np.int64)
        rc = codes[rejected]
        near = -passed[rc] * (int(n_reasons.max()) + 1) + n_reasons[rc]
        rejected = rejected[np.argsort(near, kind="stable")]
    n_feasible = len(feasible)
    n_order = n_scored + n_feasible + len(rejected)

    def node_at(pos: int) -> KeptNode:
        if pos < n_scored:
            i = ranked[pos]
            return KeptNode(scored[i], [], int(total[i]), pos + 1, i)
        if pos < n_scored + n_feasible:
            return KeptNode(names[int(feasible[pos - n_scored])], [])
        e = int(rejected[pos - n_scored - n_feasible])
        plugin, reasons, _ = outcomes[int(codes[e])]
        return KeptNode(names[e], _reason_lines(plugin, reasons))

    omitted: Counter[str] = Counter()
    n_omitted = 0
    if 0 < max_nodes < n_order:
        # the chosen node and the runner-up stay, in their order; the rest is counted by failure
        extra = sorted({p for p in (_position(sel, sel_i, ranked, names, feasible, rejected, n_scored),
                                    ranked.index(runner_i) if runner_i >= 0 else -1) if p >= max_nodes})
        kept = [node_at(p) for p in [*range(max_nodes), *extra]]
        n_omitted = n_order - max_nodes - len(extra)
        # in order: every left-out scored or feasible node, then the left-out rejected ones
        first_rejected = n_scored + n_feasible
        rest_feasible = max(0, first_rejected - max_nodes) - sum(1 for p in extra if p < first_rejected)
        skip = {p - first_rejected for p in extra if p >= first_rejected}
        start = max(0, max_nodes - first_rejected)
        rest = rejected[start:]
        if skip:
            rest = np.delete(rest, [p - start for p in sorted(skip)])
        if rest_feasible:
            omitted["feasible"] += rest_feasible
        if len(rest):
            uniq, first, count = np.unique(codes[rest], return_index=True, return_counts=True)
            for j in np.argsort(first, kind="stable").tolist():
                plugin, reasons, _ = outcomes[int(uniq[j])]
                for line in _reason_lines(plugin, reasons):
                    omitted[line] += int(count[j])
    else:
        kept = [node_at(p) for p in range(n_order)]
    sel_total = int(total[sel_i]) if sel_i >= 0 else None
    sel_ties = int(np.count_nonzero(total == sel_total)) - 1 if sel_total is not None else 0
    run_ties = 0
    margin = None
    if runner_i >= 0:
        run_total = int(total[runner_i])
        run_ties = int(np.count_nonzero(total == run_total)) - 1 - (1 if sel_total == run_total else 0)
        if sel_total is not None:
            margin = sel_total - run_total
    return Plan(kept, runner, margin, sel_ties, run_ties, n_omitted, dict(omitted.most_common()))


def _position(node: str | None, scored_i: int, ranked: list[int], names: list[str], feasible: np.ndarray,
              rejected: np.ndarray, n_scored: int) -> int:
    """Where ``node`` (the selected one) stands in the explanation's order; −1 when absent."""
    if not node:
        return -1
    if scored_i >= 0:
        return ranked.index(scored_i)
    try:
        e = names.index(node)
    except ValueError:
        return -1
    at = np.flatnonzero(feasible == e)
    if len(at):
        return n_scored + int(at[0])
    at = np.flatnonzero(rejected == e)
    return n_scored + len(feasible) + int(at[0]) if len(at) else -1
