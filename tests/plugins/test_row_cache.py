"""The remembered resource scores (``plugins/noderesources/row_cache.py``) against the plain path.

Upstream recomputes ``resourceAllocationScorer.score`` for every node of every cycle (v1.37.2
``noderesources/resource_allocation.go`` L183-255); the cache must give the same integer for every
row, whatever happened to the table in between: pods added and removed (assume, bind, delete),
nodes replaced with other capacities, removed and their rows reused, temporary
:class:`RowEdit`/:class:`TableEdit` changes undone (preemption's dry runs), new resource columns,
table growth — for every strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio,
BalancedAllocation before and since 1.36), requested or non-zero requests, weights, ephemeral
storage, and a scalar resource (not cached, passed through). Both recomputation paths (one row at a
time, and vectorised) are exercised.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable, RowEdit, TableEdit
from kubesched.plugins.noderesources import row_cache
from kubesched.plugins.noderesources.resource_allocation import (
    BALANCED,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceAllocationScorer,
)
from kubesched.plugins.noderesources.row_cache import cached_score_rows, row_score_cache
from kubesched.testing.wrappers import MakeNode, MakePod

GPU = "nvidia.com/gpu"
NAMES = ["cpu", "memory", "ephemeral-storage", GPU]


def _scorers() -> list[ResourceAllocationScorer]:
    cm = [("cpu", 1), ("memory", 1)]
    return [
        ResourceAllocationScorer(LEAST_ALLOCATED, cm),
        ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 3), ("memory", 1), ("ephemeral-storage", 2)]),
        ResourceAllocationScorer(MOST_ALLOCATED, cm, use_requested=True),
        ResourceAllocationScorer(REQUESTED_TO_CAPACITY_RATIO, [("cpu", 2), ("memory", 1)],
                                 shape=[(0, 0), (50, 70), (100, 100)]),
        ResourceAllocationScorer(BALANCED, cm, use_requested=True, balanced_delta=True),
        ResourceAllocationScorer(BALANCED, cm, use_requested=True, balanced_delta=False),
        ResourceAllocationScorer(BALANCED, [("cpu", 1), ("memory", 1), ("ephemeral-storage", 1)],
                                 use_requested=True, balanced_delta=True),
        ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1), (GPU, 1)]),  # scalar: not cached
        ResourceAllocationScorer(BALANCED, [("cpu", 1), ("memory", 1), (GPU, 1)], use_requested=True,
                                 balanced_delta=True),
    ]


_MEM = st.one_of(st.integers(0, 10_000), st.integers(0, 2**50))


@st.composite
def _capacity(draw):
    cap = {"cpu": f"{draw(st.integers(0, 8000))}m", "memory": str(draw(_MEM)), "pods": "110"}
    if draw(st.booleans()):
        cap["ephemeral-storage"] = str(draw(st.integers(0, 1000)))
    if draw(st.integers(0, 3)) == 0:
        cap[GPU] = str(draw(st.integers(0, 4)))
    return cap


@st.composite
def _requests(draw):
    out = {}
    if draw(st.booleans()):
        out["cpu"] = f"{draw(st.integers(0, 4000))}m"
    if draw(st.booleans()):
        out["memory"] = str(draw(_MEM))
    if draw(st.integers(0, 3)) == 0:
        out["ephemeral-storage"] = str(draw(st.integers(0, 500)))
    if draw(st.integers(0, 4)) == 0:
        out[GPU] = str(draw(st.integers(0, 2)))
    return out


_OP = st.one_of(
    st.tuples(st.just("query"), st.integers(0, 8), st.lists(st.integers(0, 3), min_size=4, max_size=4),
              st.integers(0, 2**31), st.sampled_from([0, 1, 16])),
    st.tuples(st.just("add"), st.integers(0, 40), _requests()),
    st.tuples(st.just("remove"), st.integers(0, 10_000)),
    st.tuples(st.just("set_node"), st.integers(0, 40), _capacity()),
    st.tuples(st.just("remove_node"), st.integers(0, 40)),
    st.tuples(st.just("row_edit"), st.integers(0, 40), _requests(), st.integers(0, 8)),
    st.tuples(st.just("table_edit"), st.integers(0, 10_000), _requests()),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_capacity(), min_size=1, max_size=12), st.lists(_OP, min_size=1, max_size=40))
def test_cached_scores_equal_the_plain_path(capacities, ops):
    table = NodeTable(capacity=8)
    for i, cap in enumerate(capacities):
        table.set_node(MakeNode().name(f"n{i}").capacity(**cap).obj())
    scorers = _scorers()
    pods: list[tuple[PodInfo, str]] = []
    counter = [0]

    def new_pod(reqs):
        counter[0] += 1
        mp = MakePod().name(f"p{counter[0]}").uid(f"p{counter[0]}").container(requests=reqs)
        return PodInfo(mp.obj())

    def names():
        return sorted(table.row_of)

    for op in ops:
        kind = op[0]
        if kind == "query":
            _, si, req_units, seed, scalar_max = op
            scorer = scorers[si]
            vec = [u * q for u, q in zip(req_units, (500, 2**20, 100, 1))]
            reqs = tuple(vec[NAMES.index(n)] if n in NAMES else 0 for n in scorer.names)
            terms = scorer.terms_for(reqs)
            live = table.order()
            if not len(live):
                continue
            rng = np.random.default_rng(seed)
            rows = live[rng.random(len(live)) < 0.7]
            old = row_cache.SCALAR_MAX
            row_cache.SCALAR_MAX = scalar_max
            try:
                got = cached_score_rows(scorer, table, rows, terms)
            finally:
                row_cache.SCALAR_MAX = old
            want = scorer.score_rows(table, rows, terms, None)
            assert got.dtype == np.int64
            assert got.tolist() == want.tolist()
        elif kind == "add":
            ns = names()
            if ns:
                node = ns[op[1] % len(ns)]
                pi = new_pod(op[2])
                table.add_pod(pi, table.row_of[node])
                pods.append((pi, node))
        elif kind == "remove":
            if pods:
                pi, node = pods.pop(op[1] % len(pods))
                table.remove_pod(pi, table.row_of[node])
        elif kind == "set_node":
            name = f"n{op[1] % 16}"
            table.set_node(MakeNode().name(name).capacity(**op[2]).obj())
        elif kind == "remove_node":
            ns = names()
            if len(ns) > 1:
                node = ns[op[1] % len(ns)]
                for pi, _n in [x for x in pods if x[1] == node]:
                    table.remove_pod(pi, table.row_of[node])
                pods[:] = [x for x in pods if x[1] != node]
                table.remove_node(node)
        elif kind == "row_edit":
            ns = names()
            if ns:
                node = ns[op[1] % len(ns)]
                row = table.row_of[node]
                si = op[3]
                with RowEdit(table, row) as edit:
                    edit.add(new_pod(op[2]))
                    for pi, n in pods:
                        if n == node:
                            edit.remove(pi)
                            break
                    # a query during the edit fills the cache with the edited row
                    scorer = scorers[si]
                    terms = scorer.terms_for(tuple(100 for _ in scorer.names))
                    rows = table.order()
                    assert (cached_score_rows(scorer, table, rows, terms).tolist()
                            == scorer.score_rows(table, rows, terms, None).tolist())
        elif kind == "table_edit":
            if pods:
                pi, node = pods[op[1] % len(pods)]
                with TableEdit(table) as te:
                    te.remove(pi, table.row_of[node])
                    ns = names()
                    te.add(new_pod(op[2]), table.row_of[ns[op[1] % len(ns)]])
                    for scorer in scorers[:2]:
                        terms = scorer.terms_for(tuple(1 for _ in scorer.names))
                        rows = table.order()
                        assert (cached_score_rows(scorer, table, rows, terms).tolist()
                                == scorer.score_rows(table, rows, terms, None).tolist())


def test_scalar_row_equals_score_node():
    """``score_row`` (the one-row path) is ``score_node`` for cpu/memory/ephemeral terms."""
    table = NodeTable()
    table.set_node(MakeNode().name("a").capacity(cpu="4", memory="8Gi", **{"ephemeral-storage": "10Gi"}).obj())
    table.set_node(MakeNode().name("b").capacity(cpu="0", memory="8Gi").obj())
    table.add_pod(PodInfo(MakePod().name("x").uid("x").container(requests={"cpu": "1", "memory": "1Gi"})
                          .obj()), 0)
    table.add_pod(PodInfo(MakePod().name("y").uid("y").container(requests={}).obj()), 1)
    for scorer in _scorers()[:7]:
        reqs = tuple({"cpu": 250, "memory": 2**29, "ephemeral-storage": 2**20}.get(n, 0) for n in scorer.names)
        terms = scorer.terms_for(reqs)
        for row in (0, 1):
            assert scorer.score_row(table, row, terms) == scorer.score_node(table.node_info(row), reqs)


def test_changed_row_is_rescored_and_scalar_resources_are_not_cached():
    table = NodeTable()
    for i in range(4):
        table.set_node(MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi").obj())
    scorer = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1)])
    terms = scorer.terms_for((1000, 2**30))
    rows = table.order()
    first = cached_score_rows(scorer, table, rows, terms).tolist()
    table.add_pod(PodInfo(MakePod().name("x").uid("x").container(requests={"cpu": "2"}).obj()), int(rows[0]))
    second = cached_score_rows(scorer, table, rows, terms).tolist()
    assert second[1:] == first[1:] and second[0] < first[0]
    assert second == scorer.score_rows(table, rows, terms, None).tolist()
    gpu = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), (GPU, 1)])
    gterms = gpu.terms_for((1000, 1))
    cached_score_rows(gpu, table, rows, gterms)
    assert row_score_cache(table).entries[(gpu, gterms)] is None


@pytest.mark.parametrize("n", [1, row_cache.MAX_ENTRIES + 5])
def test_entries_are_bounded(n):
    table = NodeTable()
    table.set_node(MakeNode().name("a").capacity(cpu="4", memory="8Gi").obj())
    scorer = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1)])
    rows = table.order()
    for i in range(n):
        terms = scorer.terms_for((i, 0))
        assert cached_score_rows(scorer, table, rows, terms).tolist() == scorer.score_rows(
            table, rows, terms, None).tolist()
    assert len(row_score_cache(table).entries) == min(n, row_cache.MAX_ENTRIES)
