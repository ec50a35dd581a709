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
from typing import Any

import numpy as np

from kubesched.framework.record import DecisionRecord, FilterResults, NodeColumns, NodeScores, NodeTotals, same_rows

__all__ = ["KeptNode", "Plan", "column_plan", "every_node_scored"]


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


def _in_totals(flt: FilterResults, totals: Mapping[str, int]) -> np.ndarray:
    """``bool[evaluated]``: which evaluated nodes were scored — by the nodes' rows when
    ``totals`` is the record's :class:`NodeTotals` (both read from one table at the same
    moment), else by name."""
    if isinstance(totals, NodeTotals):
        rows, scored_rows = flt.rows(), totals.rows
        top = max(int(rows.max()), int(scored_rows.max())) + 1
        mask = np.zeros(top, bool)
        mask[scored_rows] = True
        return mask[rows]
    return np.array(list(map(totals.__contains__, flt.names())), bool)  # (np.fromiter: ~0.5 µs a node)


def every_node_scored(flt: FilterResults, totals: Mapping[str, int], n_evaluated: int) -> bool:
    """Whether the scored nodes are the evaluated ones, in the same order, all feasible (the
    common case: then no node is unscored and no Filter outcome needs reading)."""
    if not isinstance(totals, NodeTotals) or len(totals.array) != n_evaluated:
        return False
    rows = flt.rows()
    return same_rows(rows, totals.rows) and flt.all_feasible()


_NONE = np.empty(0, np.int64)


def column_plan(rec: DecisionRecord, totals: Mapping[str, int], max_nodes: int) -> Plan | None:
    """The :class:`Plan` of ``rec`` (``totals``: node → total score, the scored nodes in record
    order: the record's :class:`NodeTotals` or a dict), or None when the record's Filter results
    are not columns (then read the dicts). Only the kept places of the ranking are listed and
    only the kept nodes' names read."""
    flt = rec.filter
    if not isinstance(flt, FilterResults):
        return None
    n_evaluated = flt.count()
    if n_evaluated != len(flt):
        return None  # a node evaluated twice: the dicts tell which evaluation counts
    cols: NodeColumns | None = None
    scored_list: list[str] = []
    if isinstance(totals, NodeTotals):
        total = totals.array
        cols = totals.columns
    else:
        scored_list = list(totals)
        total = np.array(list(totals.values()), np.int64)
    n_scored = len(total)
    codes: np.ndarray | None = None
    outcomes: list[tuple[str, tuple[str, ...], int]] = []
    feasible = rejected = _NONE
    if not (n_scored and every_node_scored(flt, totals, n_evaluated)):
        codes, outcomes = flt.codes()
        if n_evaluated and n_scored:
            in_totals = _in_totals(flt, totals)
            if (codes[in_totals] >= 0).any():
                return None  # a scored node some Filter plugin rejected: not a shape the engine makes
            unscored = np.flatnonzero(~in_totals)
        else:
            unscored = np.arange(n_evaluated)
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
    capped = 0 < max_nodes < n_order
    sel = rec.selected_node
    # scored nodes: best total first, stable (record order among equals), the selected one moved
    # to the front of its equals (at ``p_sel``); ``top`` lists the first ``head`` (+1) places
    head = min(n_scored, max_nodes) if capped else n_scored
    top: list[int] = np.argsort(-total, kind="stable")[:head + 1].tolist() if n_scored else []
    top_totals: list[int] = total[top].tolist() if top else []
    sel_i = p_sel = -1
    sel_total: int | None = None
    if sel is not None and n_scored:
        sel_i = _find(sel, cols, scored_list, top)
    if sel_i >= 0:
        sel_total = int(total[sel_i])
        if len(top) == n_scored or top_totals[-1] <= sel_total:  # every greater total is in ``top``
            p_sel = sum(1 for t in top_totals if t > sel_total)
        else:
            p_sel = int(np.count_nonzero(total > sel_total))
        if sel_i in top:
            top.remove(sel_i)
        elif len(top) > head:
            top.pop()
        if p_sel <= len(top):
            top.insert(p_sel, sel_i)
        by_col = dict(zip(top, top_totals))  # (the old places' totals; the selected one's is known)
        by_col[sel_i] = sel_total
        top_totals = [by_col[i] for i in top]
    if sel:
        runner_p = 0 if top and top[0] != sel_i else (1 if len(top) > 1 else -1)
    else:
        runner_p = 1 if n_scored > 1 else -1
    runner_i = top[runner_p] if runner_p >= 0 else -1
    runner = _scored_names([runner_i], cols, scored_list)[0] if runner_i >= 0 else None

    def ties(t: int) -> int:
        """How many scored nodes total ``t`` (``top`` is best first: complete or past ``t``)."""
        if len(top) == n_scored or top_totals[-1] < t:
            return top_totals.count(t)
        return int(np.count_nonzero(total == t))

    if capped:
        # the chosen node and the runner-up stay, in their order; the rest is counted by failure
        extra = sorted({p for p in (_position(sel, p_sel, flt, feasible, rejected, n_scored), runner_p)
                        if p >= max_nodes})
        places = [*range(max_nodes), *extra]
        n_omitted = n_order - max_nodes - len(extra)
    else:
        places = list(range(n_order))
        n_omitted = 0
    # the kept scored nodes: their columns, names and totals read at once
    kept_cols = [top[p] if p < len(top) else sel_i for p in places if p < n_scored]
    kept_totals = [top_totals[p] if p < len(top) else sel_total for p in places if p < n_scored]
    kept: list[KeptNode] = [KeptNode(n, [], t, p + 1, i) for p, i, n, t in
                            zip(places, kept_cols, _scored_names(kept_cols, cols, scored_list), kept_totals)]
    for p in places[len(kept_cols):]:
        if p < n_scored + n_feasible:
            kept.append(KeptNode(flt.name_at(int(feasible[p - n_scored])), []))
            continue
        e = int(rejected[p - n_scored - n_feasible])
        plugin, reasons, _ = outcomes[int(codes[e])]  # type: ignore[index]
        kept.append(KeptNode(flt.name_at(e), _reason_lines(plugin, reasons)))
    omitted: dict[str, int] = {}
    if capped:
        # in order: every left-out scored or feasible node, then the left-out rejected ones
        first_rejected = n_scored + n_feasible
        rest_feasible = max(0, first_rejected - max_nodes) - sum(1 for p in extra if p < first_rejected)
        counts: Counter[str] = Counter()
        if rest_feasible:
            counts["feasible"] += rest_feasible
        if len(rejected):
            assert codes is not None
            skip = {p - first_rejected for p in extra if p >= first_rejected}
            start = max(0, max_nodes - first_rejected)
            rest = rejected[start:]
            if skip:
                rest = np.delete(rest, [p - start for p in sorted(skip)])
            if len(rest):
                uniq, first, count = np.unique(codes[rest], return_index=True, return_counts=True)
                for j in np.argsort(first, kind="stable").tolist():
                    plugin, reasons, _ = outcomes[int(uniq[j])]
                    for line in _reason_lines(plugin, reasons):
                        counts[line] += int(count[j])
        omitted = dict(counts.most_common()) if len(counts) > 1 else dict(counts)
    sel_ties = ties(sel_total) - 1 if sel_total is not None else 0
    run_ties = 0
    margin = None
    if runner_i >= 0:
        run_total = top_totals[runner_p]
        run_ties = ties(run_total) - 1 - (1 if sel_total == run_total else 0)
        if sel_total is not None:
            margin = sel_total - run_total
    return Plan(kept, runner, margin, sel_ties, run_ties, n_omitted, omitted)


def _find(node: str, cols: NodeColumns | None, scored: list[str], top: list[int]) -> int:
    """The column of ``node`` among the scored ones (the first), −1 if not scored; looked for in
    the ``top`` columns first (the selected node is almost always the best)."""
    if cols is None:
        try:
            return scored.index(node)  # (a C-level scan: no node → column dict for one lookup)
        except ValueError:
            return -1
    known = cols.known
    if known is not None and known[0] == node and cols.rows is not None and top:
        rows = cols.rows[top].tolist()
        if known[1] in rows:  # its only column: a record's scored rows are distinct nodes when
            return top[rows.index(known[1])]  # none was evaluated twice (the caller checks)
    return cols.find(node)


def _scored_names(at: list[int], cols: NodeColumns | None, scored: list[str]) -> list[str]:
    """The names of the scored nodes in columns ``at``."""
    if cols is None:
        return [scored[i] for i in at]
    return cols.names_at(at)


def _position(node: str | None, p_sel: int, flt: FilterResults, feasible: np.ndarray, rejected: np.ndarray,
              n_scored: int) -> int:
    """Where ``node`` (the selected one) stands in the explanation's order (``p_sel`` when it was
    scored); −1 when absent."""
    if not node:
        return -1
    if p_sel >= 0:
        return p_sel
    # not scored: a feasible node (a handful at most when nothing was scored), else look it up
    for j, e in enumerate(feasible.tolist()):
        if flt.name_at(e) == node:
            return n_scored + j
    try:
        e = flt.names().index(node)
    except ValueError:
        return -1
    at = np.flatnonzero(feasible == e)
    if len(at):
        return n_scored + int(at[0])
    at = np.flatnonzero(rejected == e)
    return n_scored + len(feasible) + int(at[0]) if len(at) else -1


def kept_scores(rec: DecisionRecord, plugins: list[str], kept: list[KeptNode], columns: bool = False) -> list[Any]:
    """Per kept node, ``[raw, normalized, weighted]`` per Score plugin in ``plugins`` order
    (``None`` for a plugin that did not score the node; ``[]`` for an unscored node) — one numpy
    block when the record's scores are arrays. ``columns``: the kept nodes' ``col`` are columns
    of the record's :class:`NodeTotals` (:func:`column_plan` over them). Shared by ``--explain``
    (:mod:`kubesched.sim.explain`) and the report's compact records
    (:mod:`kubesched.sim.explain_compact`)."""
    scored = [k for k in kept if k.total is not None]
    raw, norm, fin = rec.score, rec.normalized_score, rec.final_score
    out: list[Any] = [[] for _ in kept]
    if not scored:
        return out
    arrays = (raw, norm, fin) if isinstance(raw, NodeScores) and isinstance(norm, NodeScores) \
        and isinstance(fin, NodeScores) else ()
    # one build_record's three mappings over one array, the kept nodes' columns those of its totals
    stack = raw.stack if columns and isinstance(raw, NodeScores) else None
    stacked = stack is not None and isinstance(norm, NodeScores) and isinstance(fin, NodeScores) \
        and stack is norm.stack is fin.stack and isinstance(rec.total_score, NodeTotals) \
        and isinstance(raw, NodeScores) \
        and (rec.total_score.columns is raw.columns or rec.total_score.names is raw.names)
    if stacked or arrays and all(a.plugins == plugins for a in arrays) \
            and all(a.node_at(k.col) == k.node for a in arrays for k in scored):
        if not plugins:
            return out
        cols = [k.col for k in scored]
        block = stack[:, :, cols] if stack is not None and stacked else np.stack([a.block(cols) for a in arrays])
        triples = iter(block.transpose(2, 1, 0).tolist())  # node × plugin × (raw, normalized, weighted)
        for i, k in enumerate(kept):
            if k.total is not None:
                out[i] = next(triples)
        return out
    for i, k in enumerate(kept):
        if k.total is None:
            continue
        r, z, f = raw.get(k.node, {}), norm.get(k.node, {}), fin[k.node]
        by = {p: [r.get(p, 0), z.get(p, r.get(p, 0)), f.get(p, 0)] for p in plugins if p in f}
        out[i] = [by.get(p) for p in plugins] if by else []
    return out
