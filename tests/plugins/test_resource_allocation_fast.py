"""The resource scorers' fast paths (issue 18 §2) against the forms they replace, on random
values: ``_balanced_delta_two_rows`` (gathered in place, broadcast division) and ``score_rows``'
power-of-two weight sum (a shift), node by node against the scalar ``score_node``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.noderesources.resource_allocation import (
    BALANCED,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    ResourceAllocationScorer,
    _balanced_delta_two,
    _balanced_delta_two_rows,
)
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 40), st.integers(0, 2**40), st.integers(0, 2**40))
def test_balanced_delta_two_rows_equals_the_stacked_form(data, cap, p0, p1):
    vals = st.one_of(st.integers(0, 2**20), st.integers(0, 2**50))
    alloc = np.asarray(data.draw(st.lists(st.tuples(vals, vals, vals), min_size=cap, max_size=cap)), np.int64)
    req = np.asarray(data.draw(st.lists(st.tuples(vals, vals, vals), min_size=cap, max_size=cap)), np.int64)
    rows = np.asarray(data.draw(st.lists(st.integers(0, cap - 1), max_size=30)), np.int64)
    got = _balanced_delta_two_rows(alloc, req, rows, p0, p1)
    a0, a1 = alloc[:, 0][rows], alloc[:, 1][rows]
    if np.count_nonzero(a0) != len(rows) or np.count_nonzero(a1) != len(rows):
        assert got is None
        return
    b0, b1 = req[:, 0][rows], req[:, 1][rows]
    want = _balanced_delta_two(a0, a1, b0 + p0, b1 + p1, b0, b1)
    assert got is not None and got.tolist() == want.tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 64), st.integers(0, 2**36), st.integers(0, 3)), min_size=1, max_size=12),
       st.integers(0, 8000), st.integers(0, 2**33), st.sampled_from([(1, 1), (1, 3), (2, 2), (4, 4), (3, 5), (7, 2)]),
       st.sampled_from([LEAST_ALLOCATED, MOST_ALLOCATED, BALANCED]))
def test_score_rows_equals_score_node(nodes, cpu_m, mem, weights, strategy):
    """``score_rows`` (fast paths on) node by node against the scalar ``score_node``; weights
    whose sum is a power of two take the shift."""
    objs, pods = [], []
    for i, (cpu, memory, npods) in enumerate(nodes):
        objs.append(MakeNode().name(f"n{i}").capacity(cpu=str(cpu), memory=str(memory), pods="110").obj())
        for j in range(npods):
            pods.append(MakePod().name(f"p{i}-{j}").uid(f"p{i}-{j}").node(f"n{i}")
                        .container(requests={"cpu": f"{(j + 1) * 300}m", "memory": str((j + 1) * 2**30)}).obj())
    table = build_table(objs, pods)
    scorer = ResourceAllocationScorer(strategy, [("cpu", weights[0]), ("memory", weights[1])],
                                      use_requested=strategy == BALANCED, balanced_delta=True)
    pod = MakePod().name("in").container(requests={"cpu": f"{cpu_m}m", "memory": str(mem)}).obj()
    reqs = scorer.pod_requests(None, pod)
    rows = table.order()
    got = scorer.score_rows(table, rows, scorer.terms_for(reqs)).tolist()
    want = [scorer.score_node(table.node_info(int(r)), reqs) for r in rows.tolist()]
    assert got == want
