"""Per-node resource scores remembered between cycles, for NodeResourcesFit and BalancedAllocation.

A resource score (``resourceAllocationScorer.score``, v1.37.2
``pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`` L183-255) depends only on
the scorer's configuration, the pod's request per scored resource (the scorer's ``terms``) and the
node's allocatable and requested amounts. Pods of one template ask for the same amounts, and
between two cycles only the node the previous pod went to has changed, so the score of every
other node is the one computed last time. Upstream recomputes it for every node of every cycle;
so did :meth:`ResourceAllocationScorer.score_rows` (about 25 numpy calls per plugin per cycle).

:class:`RowScoreCache` (one per :class:`NodeTable`, :meth:`NodeTable.derived`) keeps, per
``(scorer, terms)``, an ``int64[cap]`` score column and the row ``generation`` it was computed at.
``NodeTable.generation[row]`` changes with every change of the row (node set, pod added or
removed) and is put back with the content by :class:`~kubesched.framework.node_table.RowEdit`;
the global counter behind it never goes back, so equal generations mean equal content. A query
gathers the two generations, recomputes the rows whose generation moved — one by one through the
scalar reference :meth:`ResourceAllocationScorer.score_row` when they are few (the common case:
the node the previous pod was bound to), else vectorised — and gathers the scores.

Only cpu, memory and ephemeral-storage terms without DRA-backed extended resources are cached:
a scalar resource's column may appear later (a new column), and DRA totals are not in the table.
Decisions are unchanged: the scores are the same integers (``tests/plugins/test_row_cache.py``
compares with the plain path under random tables, pods and edits).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.npfast import flatnonzero

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_table import NodeTable

__all__ = ["RowScoreCache", "cached_score_rows", "row_score_cache"]

_KEY = (__name__, "RowScoreCache")
SCALAR_MAX = 16
"""Up to this many changed rows are rescored one by one in Python (a numpy pass costs ~25 calls
whatever its length)."""
MAX_ENTRIES = 32
"""Score columns kept per table (least recently used dropped first): 16 bytes × capacity each."""


class _Entry:
    __slots__ = ("gen", "score")

    def __init__(self, cap: int) -> None:
        self.gen = np.full(cap, -1, np.int64)
        self.score = np.zeros(cap, np.int64)

    def grow(self, cap: int) -> None:
        old = len(self.gen)
        gen = np.full(cap, -1, np.int64)
        gen[:old] = self.gen
        score = np.zeros(cap, np.int64)
        score[:old] = self.score
        self.gen, self.score = gen, score


class RowScoreCache:
    """``(scorer, terms) → score column`` of one table. See the module docstring."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.entries: OrderedDict[tuple[Any, tuple[Any, ...]], _Entry | None] = OrderedDict()
        """None: the terms are not cacheable (a scalar resource)."""

    def score_rows(self, scorer: Any, rows: np.ndarray, terms: tuple[Any, ...]) -> np.ndarray:
        """``int64[K]``: ``scorer.score_rows(table, rows, terms)`` (no DRA state), from the
        remembered column where the row has not changed since."""
        table = self.table
        key = (scorer, terms)
        entries = self.entries
        e: _Entry | None
        try:
            e = entries[key]
        except KeyError:
            if not scorer.names or any(t.kind > 2 for t in terms):
                e = None
            else:
                if len(entries) >= MAX_ENTRIES:
                    entries.popitem(last=False)
                e = _Entry(table.capacity)
            entries[key] = e
        else:
            if len(entries) > 1:
                entries.move_to_end(key)
        if e is None:
            return scorer.score_rows(table, rows, terms, None)
        cap = table.capacity
        if len(e.gen) < cap:
            e.grow(cap)
        g = table.generation[rows]
        stale = flatnonzero(e.gen[rows] != g)
        n = len(stale)
        if n:
            sr = rows[stale]
            if n <= SCALAR_MAX:
                score_row = scorer.score_row
                e.score[sr] = [score_row(table, r, terms) for r in sr.tolist()]
            else:
                e.score[sr] = scorer.score_rows(table, sr, terms, None)
            e.gen[sr] = g[stale]
        return e.score[rows]


def row_score_cache(table: NodeTable) -> RowScoreCache:
    """The table's :class:`RowScoreCache` (created on first use, owned by the table)."""
    return table.derived(_KEY, RowScoreCache)


def cached_score_rows(scorer: Any, table: NodeTable, rows: np.ndarray, terms: Sequence[Any],
                      dra: Any = None) -> np.ndarray:
    """``scorer.score_rows(table, rows, terms, dra)`` through the table's cache when ``dra`` is
    None and ``terms`` is the scorer's memoized tuple (:meth:`ResourceAllocationScorer.terms_for`)."""
    if dra is not None or not isinstance(terms, tuple):
        return scorer.score_rows(table, rows, terms, dra)
    return row_score_cache(table).score_rows(scorer, rows, terms)
