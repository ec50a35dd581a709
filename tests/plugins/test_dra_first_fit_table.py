"""Filter's numpy look-ups (``Allocator.first_fit_table``: each row's single pool kept per row
generation, each pool's first-fit match count kept per pool in-use version, read from the
``PoolVersions`` log or compared pool by pool) against a plain allocator (no versions: every node
scans its pools' devices) on every row of a real ``NodeTable``, as devices are taken and released,
nodes are replaced, removed and re-added (a new node in a freed row) and pods bump row generations.
A row the look-ups decide must have the plain outcome: rejected ⇔ no allocation, decided ⇔ the
same results; an undecided row is left to ``allocate_run``, which must agree too."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dra_firstfit_memo import CLASS, FEATURES, NODES, check_row, claim_of, pool, slices_of

from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins.dra_structured import Allocator, NodeAllocations, PoolVersions
from kubesched.testing.wrappers import MakeNode, MakePod

step = st.tuples(st.integers(1, 3), st.sampled_from([None, "a", "b"]), st.booleans(),  # the claim
                 st.sampled_from(NODES),  # the node whose allocation is taken (if any)
                 st.integers(0, 20),  # a device in use to release (index into the sorted in-use set)
                 st.sampled_from(["none", "pod", "replace", "remove", "readd"]),  # a table change
                 st.integers(1, 7))  # which rows Filter asks about (a bit per row; framework chunks)


@settings(max_examples=200, deadline=None)
@given(st.lists(pool, min_size=1, max_size=5), st.sampled_from(FEATURES), st.lists(step, min_size=1, max_size=10),
       st.booleans(), st.booleans())
def test_first_fit_table_matches_plain_scan(pools, features, steps, logged, lazy):
    slices = slices_of(pools)
    table = NodeTable()
    for n in NODES:
        table.set_node(MakeNode().name(n).obj())
    in_use: set[tuple[str, str, str]] = set()
    versions: dict[tuple[str, str], int] = PoolVersions() if logged else {}
    removed: list[str] = []
    pods = 0

    def change(did: tuple[str, str, str], add: bool) -> None:  # as DRAManager._set_slot
        (in_use.add if add else in_use.discard)(did)
        if isinstance(versions, PoolVersions):
            versions.bump(did[:2])
        else:
            versions[did[:2]] = versions.get(did[:2], 0) + 1

    for count, model, tolerate, take, release, edit, subset in steps:
        claim = claim_of(count, model, tolerate)
        for _pod in range(2):  # the second pod finds the first one's scans kept
            memo = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features, versions, {}, True)
            every = sorted(table.row_of.values(), reverse=True)
            rows = np.asarray([r for j, r in enumerate(every) if subset >> j & 1] or every[:1], np.int64)
            out: dict[str, Any] = NodeAllocations() if lazy else {}
            batch = memo.first_fit_table(table, rows, out)
            rejected, undecided = batch if batch is not None else ([], list(range(len(rows))))
            rejected, undecided = set(np.asarray(rejected).tolist()), set(np.asarray(undecided).tolist())
            assert not rejected & undecided
            taken = None
            for i, row in enumerate(rows.tolist()):
                node = table.nodes[row]
                got = check_row(memo, Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features), node, out,
                                i in rejected, i in undecided)
                if _pod and node.metadata.name == take and isinstance(got, list):
                    taken = got
            # (a lazy mapping has the same entries when iterated)
            assert sorted(out) == sorted(table.nodes[rows[i]].metadata.name for i in range(len(rows))
                                         if i not in rejected and i not in undecided)
            if _pod and taken is not None:
                for r in taken[0]["devices"]["results"]:
                    change((r["driver"], r["pool"], r["device"]), True)
        if in_use and release < len(in_use):
            change(sorted(in_use)[release], False)
        if edit == "pod" and take in table.row_of:
            pods += 1
            table.add_pod(PodInfo(MakePod().name(f"p{pods}").obj()), table.row_of[take])
        elif edit == "replace" and take in table.row_of:
            table.set_node(MakeNode().name(take).label("v", str(pods)).obj())
        elif edit == "remove" and len(table) > 1:
            take = take if take in table.row_of else sorted(table.row_of)[0]
            row = table.row_of[take]
            for pi in list(table.pods[row]):
                table.remove_pod(pi, row)
            table.remove_node(take)
            removed.append(take)
        elif edit == "readd":  # (a freed row gets another name's node; a new name has the allNodes pools only)
            table.set_node(MakeNode().name(removed.pop(0) if removed else f"extra-{pods}").obj())
            pods += 1


def test_freed_row_gets_the_new_nodes_pools():
    """A row whose node was removed and whose row a new node took is looked up anew (row generation)."""
    slices = slices_of([{"node": "node-0", "devices": [{"model": "a", "tainted": False, "counters": 0}],
                         "counter_slice": False, "skip_ops": False}])
    table = NodeTable()
    for n in ("node-0", "node-1"):
        table.set_node(MakeNode().name(n).obj())
    versions = PoolVersions()
    claim = claim_of(1, None, False)

    def look() -> tuple[dict[str, Any], list[int], list[int]]:
        a = Allocator([claim], set(), {"gpu": CLASS}.get, slices, FEATURES[0], versions, {}, True)
        rows = np.asarray(sorted(table.row_of.values()), np.int64)
        out: dict[str, Any] = {}
        batch = a.first_fit_table(table, rows, out)
        assert batch is not None
        return out, batch[0].tolist(), batch[1].tolist()

    out, rejected, undecided = look()
    assert list(out) == ["node-0"] and undecided == [1]
    row = table.row_of["node-0"]
    table.remove_node("node-0")
    table.set_node(MakeNode().name("node-2").obj())
    assert table.row_of["node-2"] == row  # (the freed row)
    out, rejected, undecided = look()
    assert out == {} and sorted(undecided) == [0, 1]
