"""The node tree: zone-interleaved node order, as the cache keeps it.

Ported from upstream ``pkg/scheduler/backend/cache/node_tree_test.go`` (v1.37.2):
``TestNodeTree_AddNode`` (:159), ``TestNodeTree_RemoveNode`` (:219), ``TestNodeTree_UpdateNode``
(:280), ``TestNodeTree_List`` (:362), ``TestNodeTreeMultiOperations`` (:416), with the same
eleven nodes (``allNodes``) and expected trees / lists.

Vocabulary mapping: upstream ``nodeTree`` → the ``NodeTable``'s zone lists, driven through the
:class:`~kubesched.cache.Cache` (``addNode`` → ``Cache.add_node``, ``updateNode`` →
``Cache.update_node``, ``removeNode`` → ``Cache.remove_node``); ``nt.list()`` →
``table.order()`` (rows) mapped to node names; ``nt.tree`` (zone key → node names in zone
order) is read back from ``order()`` grouped by each node's ``zone_key`` — within a zone,
``list()`` keeps the zone's own order, so the grouping gives the tree's lists.

Where kubesched differs: ``TestNodeTree_List_Exhausted`` corrupts ``numNodes`` to reach an
internal error path; there is no such counter here (the order is built from the zone lists
themselves), so it is not ported. Removing an unknown node is an error in upstream's
``nodeTree.removeNode``; ``NodeTable.remove_node`` raises ``KeyError`` for it, while
``Cache.remove_node`` ignores it (the informer may deliver a delete for a node never added).
"""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node
from kubesched.cache import Cache
from kubesched.framework.node_table import NodeTable, zone_key
from kubesched.testing.wrappers import MakeNode

REGION, ZONE = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"
BETA_REGION, BETA_ZONE = "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone"


def _node(name: str, labels: dict[str, str] | None = None) -> Node:
    return MakeNode().name(name).labels(labels or {}).obj()


ALL_NODES = [
    _node("node-0"),                                                    # no region-zone label
    _node("node-1", {REGION: "region-1"}),                              # region only
    _node("node-2", {ZONE: "zone-2"}),                                  # zone only
    _node("node-3", {REGION: "region-1", ZONE: "zone-2"}),
    _node("node-4", {REGION: "region-1", ZONE: "zone-2"}),
    _node("node-5", {REGION: "region-1", ZONE: "zone-3"}),              # same region, other zone
    _node("node-6", {REGION: "region-2", ZONE: "zone-2"}),              # new region and zone
    _node("node-7", {REGION: "region-2", ZONE: "zone-2"}),
    _node("node-8", {REGION: "region-2", ZONE: "zone-2"}),
    _node("node-9", {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-2", BETA_ZONE: "zone-2"}),
    _node("node-10", {BETA_REGION: "region-2", BETA_ZONE: "zone-3"}),  # deprecated labels only
]


def cache_with(nodes: list[Node]) -> Cache:
    """Upstream ``newNodeTree(logger, nodes)``: the nodes added in order."""
    c = Cache()
    for n in nodes:
        c.add_node(n)
    return c


def listed(c: Cache) -> list[str]:
    """Upstream ``nt.list()``: node names in the table's order."""
    nodes = c.table.nodes
    return [nodes[r].metadata.name for r in c.table.order().tolist()]


def tree(c: Cache) -> dict[str, list[str]]:
    """Upstream ``nt.tree``: zone key → node names in the zone's order."""
    out: dict[str, list[str]] = {}
    for name in listed(c):
        ni = c.table.get(name)
        assert ni is not None
        out.setdefault(zone_key(ni.node.metadata.labels), []).append(name)
    return out


def verify(c: Cache, expected: dict[str, list[str]]) -> None:
    """Upstream ``verifyNodeTree``: the node count, the tree and the set of zones."""
    assert c.node_count() == sum(len(v) for v in expected.values())
    assert len(c.table.order()) == c.node_count()
    assert tree(c) == expected


@pytest.mark.parametrize("to_add,expected", [
    pytest.param(ALL_NODES[:1], {"": ["node-0"]}, id="single node no labels"),
    pytest.param([ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}, id="same node specified twice"),
    pytest.param(ALL_NODES[:4], {
        "": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3"],
    }, id="mix of nodes with and without proper labels"),
    pytest.param(ALL_NODES[:7], {
        "": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"],
    }, id="mix of nodes with and without proper labels and some zones with multiple nodes"),
    pytest.param(ALL_NODES[9:], {
        "region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"],
    }, id="nodes also using deprecated zone/region label"),
])
def test_TestNodeTree_AddNode(to_add: list[Node], expected: dict[str, list[str]]) -> None:
    verify(cache_with(to_add), expected)


@pytest.mark.parametrize("existing,to_remove,expected", [
    pytest.param(ALL_NODES[:7], ALL_NODES[:1], {
        "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"],
    }, id="remove a single node with no labels"),
    pytest.param(ALL_NODES[:7], ALL_NODES[1:4], {
        "": ["node-0"], "region-1:\x00:zone-2": ["node-4"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"],
    }, id="remove a few nodes including one from a zone with multiple nodes"),
    pytest.param(ALL_NODES[:7], ALL_NODES[:7], {}, id="remove all nodes"),
])
def test_TestNodeTree_RemoveNode(existing: list[Node], to_remove: list[Node],
                                 expected: dict[str, list[str]]) -> None:
    c = cache_with(existing)
    for n in to_remove:
        c.remove_node(n.metadata.name)
    verify(c, expected)


def test_TestNodeTree_RemoveNode_non_existing() -> None:
    """Upstream "remove non-existing node": an error for each, the tree stays empty."""
    table = NodeTable()
    for n in ALL_NODES[:5]:
        with pytest.raises(KeyError):
            table.remove_node(n.metadata.name)
    assert len(table) == 0 and table.order().tolist() == []
    c = Cache()  # the cache ignores a delete of a node it never saw
    for n in ALL_NODES[:5]:
        c.remove_node(n.metadata.name)
    verify(c, {})


@pytest.mark.parametrize("existing,update,expected", [
    pytest.param(ALL_NODES[:7], _node("node-0", {REGION: "region-1", ZONE: "zone-2"}), {
        "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"],
    }, id="update a node without label"),
    pytest.param(ALL_NODES[:1], _node("node-0", {REGION: "region-1", ZONE: "zone-2"}), {
        "region-1:\x00:zone-2": ["node-0"],
    }, id="update the only existing node"),
    pytest.param(ALL_NODES[:1], _node("node-new", {REGION: "region-1", ZONE: "zone-2"}), {
        "": ["node-0"], "region-1:\x00:zone-2": ["node-new"],
    }, id="update non-existing node"),
])
def test_TestNodeTree_UpdateNode(existing: list[Node], update: Node, expected: dict[str, list[str]]) -> None:
    c = cache_with(existing)
    c.update_node(update)
    verify(c, expected)


@pytest.mark.parametrize("to_add,expected", [
    pytest.param([], [], id="empty tree"),
    pytest.param(ALL_NODES[:1], ["node-0"], id="one node"),
    pytest.param(ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"], id="four nodes"),
    pytest.param(ALL_NODES[:9], ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4",
                                 "node-7", "node-8"], id="all nodes"),
])
def test_TestNodeTree_List(to_add: list[Node], expected: list[str]) -> None:
    assert listed(cache_with(to_add)) == expected


@pytest.mark.parametrize("to_add,to_remove,ops,expected", [
    pytest.param(ALL_NODES[2:9], ALL_NODES[2:9], "aaarrr", [], id="add and remove all nodes"),
    pytest.param(ALL_NODES[2:9], ALL_NODES[2:9], "aaar", ["node-3", "node-4"], id="add and remove some nodes"),
    pytest.param(ALL_NODES[2:9], ALL_NODES[2:9], "aaarrra", ["node-5"], id="remove three nodes"),
    pytest.param(ALL_NODES[4:9] + [ALL_NODES[3]], [], "aaaaaa",
                 ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"],
                 id="add more nodes to an exhausted zone"),
    pytest.param(ALL_NODES[3:5] + ALL_NODES[6:8], ALL_NODES[3:5], "aaraar",
                 ["node-6", "node-7"], id="remove zone and add new"),
])
def test_TestNodeTreeMultiOperations(to_add: list[Node], to_remove: list[Node], ops: str,
                                     expected: list[str]) -> None:
    c = Cache()
    adds, removes = iter(to_add), iter(to_remove)
    for op in ops:
        if op == "a":
            c.add_node(next(adds))
        else:
            c.remove_node(next(removes).metadata.name)
    assert listed(c) == expected
