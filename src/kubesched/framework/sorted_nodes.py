"""Host selection since v1.35: a Go ``container/heap`` max-heap of the scored nodes.

Follows upstream v1.37.2 ``pkg/scheduler/framework/sorted_nodes.go`` (in v1.35.4 / v1.36.3 the
same code sat in ``schedule_one.go`` as ``newSortedNodeScores``) and ``schedule_one.go``
L613-614: the scored nodes, *in the order of the feasible node list*, become a
``nodeScoreHeap``; ``heap.Init`` sifts down from ``n/2 - 1`` to ``0``; the chosen host is the
first ``heap.Pop``. ``Less(i, j)`` is strict: ``TotalScore`` greater, or equal with a greater
``Randomizer``. ``Randomizer`` is ``rand.Int()`` only for the nodes that prioritize extenders
named (schedule_one.go L1039-1047), else 0 — without such extenders the choice is a
deterministic function of the scores and their order. (v1.34 drew uniformly among the
top-scored nodes by reservoir sampling.)

Two shapes:

* :class:`SortedScoredNodes`: a plain port of ``heap.Init`` / ``heap.Pop`` (``down``, swap with
  the last element) over indices into the input — the reference, and the pop order after the
  first (upstream hands the rest of the heap to opportunistic batching; nothing else reports it).
* :func:`heap_top`: the first pop without building the heap, vectorised. During ``heap.Init`` a
  subtree's root ends up holding its own element when no child subtree's top is strictly
  greater, else the top of the left child subtree unless the right one's is strictly greater.
  So the root is, among the elements with the maximal key, the first one in *preorder* of the
  implicit binary tree (node, then its left subtree, then its right subtree).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.npfast import amax, flatnonzero

__all__ = ["SortedScoredNodes", "heap_top", "preorder_rank"]


class SortedScoredNodes:
    """Upstream ``NewSortedScoredNodes`` over ``total[i]`` / ``randomizer[i]`` (``int`` sequences
    of one length ``n``; randomizer None = all 0). :meth:`pop` returns the index ``i`` of the
    next node, as Go's ``heap.Pop``; :meth:`unordered_list` the heap's internal order."""

    def __init__(self, total: Sequence[int] | np.ndarray, randomizer: Sequence[int] | np.ndarray | None = None) -> None:
        t = [int(v) for v in total]
        r = [0] * len(t) if randomizer is None else [int(v) for v in randomizer]
        if len(r) != len(t):
            raise ValueError("total and randomizer differ in length")
        self._key = list(zip(t, r))
        self._h = list(range(len(t)))
        n = len(self._h)
        for i in range(n // 2 - 1, -1, -1):  # heap.Init
            self._down(i, n)

    def _less(self, i: int, j: int) -> bool:
        ti, ri = self._key[self._h[i]]
        tj, rj = self._key[self._h[j]]
        return ti > tj or (ti == tj and ri > rj)

    def _down(self, i0: int, n: int) -> bool:
        h = self._h
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and self._less(j2, j1):
                j = j2
            if not self._less(j, i):
                break
            h[i], h[j] = h[j], h[i]
            i = j
        return i > i0

    def pop(self) -> int:
        """``heap.Pop``: swap the root with the last element, sift it down over ``n - 1``, remove
        the last. Raises ``IndexError`` when empty."""
        if not self._h:
            raise IndexError("pop from an empty heap")
        n = len(self._h) - 1
        self._h[0], self._h[n] = self._h[n], self._h[0]
        self._down(0, n)
        return self._h.pop()

    def __len__(self) -> int:
        return len(self._h)

    def unordered_list(self) -> list[int]:
        """The indices in heap-internal order (upstream ``UnorderedList``)."""
        return list(self._h)


def preorder_rank(idx: np.ndarray, n: int) -> np.ndarray:
    """Position of heap slots ``idx`` (``int64[k]``, each < ``n``) in a preorder walk of the
    implicit binary tree of ``n`` slots, as a sortable ``int64[k]`` key (not dense).

    Slot ``i`` is node ``k = i + 1``; its path from the root is ``k``'s bits after the leading
    1 (0 = left). Left-aligning ``k`` to the deepest level makes a node's key equal to those of
    its leftmost descendants and smaller than everything right of it; the depth breaks the tie
    (ancestors first).
    """
    k = np.asarray(idx, np.int64) + 1
    max_depth = int(n).bit_length() - 1
    depth = np.frexp(k.astype(np.float64))[1].astype(np.int64) - 1  # exact for k < 2**53
    aligned = k << (max_depth - depth)
    return aligned * (max_depth + 1) + depth


def heap_top(total: np.ndarray, randomizer: np.ndarray | None = None) -> int:
    """Index of the node ``heap.Pop`` returns first after ``heap.Init`` (see the module
    docstring): the maximum of ``(total, randomizer)``, the first in preorder among equals.
    ``total``: ``int64[n]``, ``n`` ≥ 1; ``randomizer``: ``int64[n]`` or None (all 0)."""
    total = np.asarray(total)
    n = len(total)
    best = flatnonzero(total == amax(total))
    if randomizer is not None and len(best) > 1:
        r = np.asarray(randomizer)[best]
        best = best[r == amax(r)]
    if len(best) == 1 or best[0] == 0:
        return int(best[0])
    return int(best[int(_preorder_ranks(n)[best].argmin())])


_RANKS: dict[int, np.ndarray] = {}


def _preorder_ranks(n: int) -> np.ndarray:
    """:func:`preorder_rank` of every slot of a heap of ``n`` slots (read-only ``int64[n]``),
    kept per ``n``: the number of feasible nodes repeats from one cycle to the next."""
    ranks = _RANKS.get(n)
    if ranks is None:
        if len(_RANKS) >= 16:
            _RANKS.clear()
        ranks = _RANKS[n] = preorder_rank(np.arange(n, dtype=np.int64), n)
        ranks.flags.writeable = False
    return ranks
