"""Host selection since v1.35 (framework/sorted_nodes.go): upstream's sorted_nodes_test.go and
schedule_one_test.go ``Test_SelectHost`` tables, and hypothesis checks of
:class:`SortedScoredNodes` / :func:`heap_top` against a plain port of Go's ``container/heap``
(``Init``, ``down``, ``Pop``) on score arrays with many ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.sorted_nodes import SortedScoredNodes, heap_top

# ───────────────────────────── reference: Go's container/heap, line by line ─────────────────────────────


class _GoNodeScoreHeap:
    """``nodeScoreHeap`` with Go's ``heap`` package functions over it (container/heap/heap.go)."""

    def __init__(self, items: list[tuple[str, int, int]]) -> None:
        self.h = list(items)  # (name, TotalScore, Randomizer)

    def Len(self) -> int:  # noqa: N802
        return len(self.h)

    def Less(self, i: int, j: int) -> bool:  # noqa: N802
        return self.h[i][1] > self.h[j][1] or (self.h[i][1] == self.h[j][1] and self.h[i][2] > self.h[j][2])

    def Swap(self, i: int, j: int) -> None:  # noqa: N802
        self.h[i], self.h[j] = self.h[j], self.h[i]

    def Pop(self) -> tuple[str, int, int]:  # noqa: N802
        return self.h.pop()


def _go_down(h: _GoNodeScoreHeap, i0: int, n: int) -> bool:
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n or j1 < 0:
            break
        j = j1
        j2 = j1 + 1
        if j2 < n and h.Less(j2, j1):
            j = j2
        if not h.Less(j, i):
            break
        h.Swap(i, j)
        i = j
    return i > i0


def go_heap_init(h: _GoNodeScoreHeap) -> None:
    n = h.Len()
    for i in range(n // 2 - 1, -1, -1):
        _go_down(h, i, n)


def go_heap_pop(h: _GoNodeScoreHeap) -> tuple[str, int, int]:
    n = h.Len() - 1
    h.Swap(0, n)
    _go_down(h, 0, n)
    return h.Pop()


def go_pop_order(total: list[int], rnd: list[int] | None = None) -> list[int]:
    rnd = rnd or [0] * len(total)
    h = _GoNodeScoreHeap([(str(i), t, r) for i, (t, r) in enumerate(zip(total, rnd))])
    go_heap_init(h)
    return [int(go_heap_pop(h)[0]) for _ in range(len(total))]


# ───────────────────────────── upstream tables ─────────────────────────────

# (names, totals, randomizers) → expected pop order (names)
UPSTREAM = [
    ("empty", [], [], [], []),
    ("single node", ["node1"], [5], [0], ["node1"]),
    ("descending by TotalScore", ["node1", "node3", "node2"], [1, 3, 2], [0, 0, 0], ["node3", "node2", "node1"]),
    ("tie-break by Randomizer", ["nodeA", "nodeB", "nodeC"], [5, 5, 5], [1, 3, 2], ["nodeB", "nodeC", "nodeA"]),
    ("mixed scores and tie-breaks", ["node3.1", "node2", "node1", "node3.2"], [3, 2, 1, 3], [1, 0, 0, 2],
     ["node3.2", "node3.1", "node2", "node1"]),
    # schedule_one_test.go Test_SelectHost
    ("unique properly ordered scores", ["node1", "node2"], [1, 2], [0, 0], ["node2", "node1"]),
    ("equal scores", ["node2.2", "node2.1", "node2.3"], [2, 2, 2], [2, 1, 3], ["node2.3", "node2.2", "node2.1"]),
    ("out of order scores", ["node3.1", "node2.1", "node1.1", "node3.2"], [3, 2, 1, 3], [1, 0, 0, 2],
     ["node3.2", "node3.1", "node2.1", "node1.1"]),
]


@pytest.mark.parametrize(("names", "total", "rnd", "want"), [pytest.param(*c[1:], id=c[0]) for c in UPSTREAM])
def test_pop_order_upstream(names, total, rnd, want):
    s = SortedScoredNodes(total, rnd)
    got = []
    while len(s):
        got.append(names[s.pop()])
    assert got == want
    if total:
        assert names[heap_top(np.asarray(total), np.asarray(rnd))] == want[0]


def test_len_and_unordered_list():
    s = SortedScoredNodes([10, 20, 30])
    assert sorted(s.unordered_list()) == [0, 1, 2]
    for want in (3, 2, 1):
        assert len(s) == want
        s.pop()
    assert len(s) == 0 and s.unordered_list() == []
    s = SortedScoredNodes([1, 2, 3])
    s.pop()
    assert sorted(s.unordered_list()) == [0, 1]  # node3 popped
    with pytest.raises(IndexError):
        SortedScoredNodes([]).pop()


def test_first_pop_is_not_the_first_maximum_in_list_order():
    # [1, 0, 5, 0, 5]: heap.Init sifts slot 4 up through slot 1 to the root; slot 2 never wins
    assert go_pop_order([1, 0, 5, 0, 5])[0] == 4
    assert heap_top(np.asarray([1, 0, 5, 0, 5])) == 4


# ───────────────────────────── hypothesis: port == reference ─────────────────────────────

scores = st.integers(1, 60).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 3), min_size=n, max_size=n),
                        st.one_of(st.none(), st.lists(st.integers(0, 2), min_size=n, max_size=n))))


@settings(max_examples=500, deadline=None)
@given(scores)
def test_sorted_scored_nodes_equals_go_heap(data):
    total, rnd = data
    s = SortedScoredNodes(total, rnd)
    assert [s.pop() for _ in range(len(total))] == go_pop_order(total, rnd)


@settings(max_examples=1000, deadline=None)
@given(scores, st.sampled_from([1, 100, 10**6]))
def test_heap_top_equals_go_first_pop(data, scale):
    total, rnd = data
    t = np.asarray(total, np.int64) * scale  # plugin totals are weighted sums: any magnitude
    r = None if rnd is None else np.asarray(rnd, np.int64)
    assert heap_top(t, r) == go_pop_order(list(map(int, t)), rnd)[0]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 5000), st.data())
def test_heap_top_on_large_lists_with_few_maxima(n, data):
    total = np.zeros(n, np.int64)
    for i in data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)):
        total[i] = 7
    assert heap_top(total) == go_pop_order(total.tolist())[0]
