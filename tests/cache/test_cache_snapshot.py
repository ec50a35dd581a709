"""The snapshot the scheduling cycle reads, after sequences of cache operations.

Ported from upstream ``pkg/scheduler/backend/cache/cache_test.go`` (v1.37.2)
``TestSchedulerCache_UpdateSnapshot`` (:2346): the same nodes (``test-node0..9``, 1000m / 100m,
updated to 2000m / 500m), pods (``test-pod0..19`` on ``test-node{i%10}``, updated with priority
1000), pods with a required pod affinity and pods with a PVC, the same operation sequences and
expectations.

kubesched has no ``Snapshot`` type: the cache updates the ``NodeTable`` in place between
scheduling cycles and the table is what a cycle reads, so upstream's ``updateSnapshot()`` steps
have nothing to do and every check runs on the table itself. What is checked, as upstream's
test and its ``compareCacheWithNodeInfoSnapshot``: the nodes present (``expected``; upstream also
checks the order of its most-recently-updated list, an implementation detail of its
incremental snapshot, so the set is compared here), the snapshot's node list in ``nodeTree``
order (``order()``; these nodes have no zone, so node-add order), the number of nodes having pods
with affinity (``havePodsWithAffinityNodeInfoList``), the PVC reference counts of the pods on
present nodes (``usedPVCRefCounts``), and each node's ``NodeInfo`` holding exactly the cache's
pods for it, with the updated node's allocatable.

Not ported: the PodGroup case (GenericWorkload's ``podGroupStates``, which kubesched keeps in
``cache/podgroups.py``: ``PodGroupManagerImpl``, exercised by ``tests/plugins/test_gangscheduling.py``) and the four "Assume and forget … in snapshot"
cases: there ``AssumePodInSnapshot`` writes to the snapshot only and the next ``UpdateSnapshot``
discards what was not forgotten; kubesched's ``assume_pod_in_snapshot`` writes to the table the
pod-group cycle then reverts itself (``forget_pod_in_snapshot``, last in first out), so a
snapshot-only assumption is never left for an update to discard.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from kubesched.api.objects import Pod, pod_key
from kubesched.cache import Cache
from kubesched.framework.node_info import PodInfo
from kubesched.testing.wrappers import MakeNode, MakePod

NODES = [MakeNode().name(f"test-node{i}").capacity(cpu="1000m", memory="100m").obj() for i in range(10)]
UPDATED_NODES = [MakeNode().name(f"test-node{i}").capacity(cpu="2000m", memory="500m").obj() for i in range(10)]


def _pod(i: int, priority: int | None = None) -> Pod:
    p = MakePod().name(f"test-pod{i}").namespace("test-ns").uid(f"test-puid{i}").node(f"test-node{i % 10}")
    if priority is not None:
        p = p.priority(priority)
    return p.obj()


PODS = [_pod(i) for i in range(20)]
UPDATED_PODS = [_pod(i, 1000) for i in range(20)]
PODS_WITH_AFFINITY = [
    MakePod().name(f"p-affinity-{i}").namespace("test-ns").uid(f"puid-affinity-{i}")
    .pod_affinity("podAffinity", {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                                  "topologyKey": ""})
    .node(f"test-node{i}").obj()
    for i in range(10)
]


def pod_with_pvc(pod_id: int, node: int, pvc_id: int) -> Pod:
    """Upstream ``makePodWithPVC``."""
    return (MakePod().name(f"p-pvc-{pod_id}").namespace("test-ns").uid(f"puid-pvc-{pod_id}")
            .pvc(f"test-pvc{pvc_id}").node(f"test-node{node}").obj())


Op = Callable[[Cache], None]


def add_node(i: int) -> Op:
    return lambda c: c.add_node(NODES[i])


def remove_node(i: int) -> Op:
    return lambda c: c.remove_node(NODES[i].metadata.name)


def update_node(i: int) -> Op:
    return lambda c: c.update_node(UPDATED_NODES[i])


def add_pod(i: int) -> Op:
    return lambda c: c.add_pod(PODS[i])


def update_pod(i: int) -> Op:
    return lambda c: c.update_pod(PODS[i], UPDATED_PODS[i])


def remove_pod(i: int) -> Op:
    return lambda c: c.remove_pod(PODS[i])


def add_pod_with_affinity(i: int) -> Op:
    return lambda c: c.add_pod(PODS_WITH_AFFINITY[i])


def remove_pod_with_affinity(i: int) -> Op:
    return lambda c: c.remove_pod(PODS_WITH_AFFINITY[i])


def add_pod_with_pvc(pod_id: int, node: int, pvc_id: int) -> Op:
    return lambda c: c.add_pod(pod_with_pvc(pod_id, node, pvc_id))


def remove_pod_with_pvc(pod_id: int, node: int, pvc_id: int) -> Op:
    return lambda c: c.remove_pod(pod_with_pvc(pod_id, node, pvc_id))


def assume(pod: Pod) -> Op:
    return lambda c: c.assume_pod(PodInfo(pod), pod.spec.node_name)


def forget(pod: Pod) -> Op:
    return lambda c: c.forget_pod(pod_key(pod))


def update_snapshot() -> Op:
    """Nothing to do: the table is the snapshot (checked by :func:`check` after every step)."""
    return lambda c: None


CASES: list[tuple[str, list[Op], list[int], int, dict[str, int]]] = [
    ("Empty cache", [], [], 0, {}),
    ("Single node", [add_node(1)], [1], 0, {}),
    ("Add node, remove it, add it again",
     [add_node(1), update_snapshot(), remove_node(1), add_node(1)], [1], 0, {}),
    ("Add node and remove it in the same cycle, add it again",
     [add_node(1), update_snapshot(), add_node(2), remove_node(1)], [2], 0, {}),
    ("Add a few nodes, and snapshot in the middle",
     [add_node(0), update_snapshot(), add_node(1), update_snapshot(), add_node(2), update_snapshot(), add_node(3)],
     [3, 2, 1, 0], 0, {}),
    ("Add a few nodes, and snapshot in the end", [add_node(0), add_node(2), add_node(5), add_node(6)],
     [6, 5, 2, 0], 0, {}),
    ("Update some nodes", [add_node(0), add_node(1), add_node(5), update_snapshot(), update_node(1)],
     [1, 5, 0], 0, {}),
    ("Add a few nodes, and remove all of them",
     [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(),
      remove_node(0), remove_node(2), remove_node(5), remove_node(6)], [], 0, {}),
    ("Add a few nodes, and remove some of them",
     [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(0), remove_node(6)],
     [5, 2], 0, {}),
    ("Add a few nodes, remove all of them, and add more",
     [add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(2), remove_node(5), remove_node(6),
      update_snapshot(), add_node(7), add_node(9)], [9, 7], 0, {}),
    ("Update nodes in particular order",
     [add_node(8), update_node(2), update_node(8), update_snapshot(), add_node(1)], [1, 8, 2], 0, {}),
    ("Add some nodes and some pods",
     [add_node(0), add_node(2), add_node(8), update_snapshot(), add_pod(8), add_pod(2)], [2, 8, 0], 0, {}),
    ("Updating a pod moves its node to the head",
     [add_node(0), add_pod(0), add_node(2), add_node(4), update_pod(0)], [0, 4, 2], 0, {}),
    ("Add pod before its node", [add_node(0), add_pod(1), update_pod(1), add_node(1)], [1, 0], 0, {}),
    ("Remove node before its pods",
     [add_node(0), add_node(1), add_pod(1), add_pod(11), update_snapshot(), remove_node(1), update_snapshot(),
      update_pod(1), update_pod(11), remove_pod(1), remove_pod(11)], [0], 0, {}),
    ("Add Pods with affinity", [add_node(0), add_pod_with_affinity(0), update_snapshot(), add_node(1)],
     [1, 0], 1, {}),
    ("Add Pods with PVC", [add_node(0), add_pod_with_pvc(0, 0, 0), update_snapshot(), add_node(1)],
     [1, 0], 0, {"test-ns/test-pvc0": 1}),
    ("Add multiple nodes with pods with affinity",
     [add_node(0), add_pod_with_affinity(0), update_snapshot(), add_node(1), add_pod_with_affinity(1),
      update_snapshot()], [1, 0], 2, {}),
    ("Add multiple nodes with pods with PVC",
     [add_node(0), add_pod_with_pvc(0, 0, 0), update_snapshot(), add_node(1), add_pod_with_pvc(1, 1, 1),
      update_snapshot()], [1, 0], 0, {"test-ns/test-pvc0": 1, "test-ns/test-pvc1": 1}),
    ("Add multiple nodes with pods with multiple ref count PVC",
     [add_node(0), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 0, 0), add_pod_with_pvc(2, 0, 1),
      add_node(1), add_pod_with_pvc(3, 1, 0), add_pod_with_pvc(4, 1, 3), add_pod_with_pvc(5, 1, 1),
      add_node(2), add_pod_with_pvc(7, 2, 3), add_pod_with_pvc(8, 2, 1), add_pod_with_pvc(9, 2, 1),
      update_snapshot()], [2, 1, 0], 0, {"test-ns/test-pvc0": 3, "test-ns/test-pvc1": 4, "test-ns/test-pvc3": 2}),
    ("Add then Remove pods with affinity",
     [add_node(0), add_node(1), add_pod_with_affinity(0), update_snapshot(), remove_pod_with_affinity(0),
      update_snapshot()], [0, 1], 0, {}),
    ("Add then Remove pod with PVC",
     [add_node(0), add_pod_with_pvc(0, 0, 0), update_snapshot(), remove_pod_with_pvc(0, 0, 0),
      add_pod_with_pvc(2, 0, 2), update_snapshot()], [0], 0, {"test-ns/test-pvc2": 1}),
    ("Add pod with PVC then terminate node without cleaning up pods",
     [add_node(0), add_node(1), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 1, 1), update_snapshot(),
      remove_node(0), update_snapshot()], [1], 0, {"test-ns/test-pvc1": 1}),
    ("Add pod with multiple ref count PVC then terminate node without cleaning up pods",
     [add_node(0), add_node(1), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 1, 1), add_pod_with_pvc(2, 1, 1),
      add_pod_with_pvc(3, 1, 2), add_pod_with_pvc(4, 0, 3), add_pod_with_pvc(5, 0, 0),
      add_pod_with_pvc(6, 1, 2), add_pod_with_pvc(7, 0, 4), add_pod_with_pvc(8, 1, 2), update_snapshot(),
      remove_node(0), update_snapshot()], [1], 0, {"test-ns/test-pvc1": 2, "test-ns/test-pvc2": 3}),
    ("Add pod with multiple ref count PVC then terminate node before cleaning up pods "
     "(node and pods events in reversed order)",
     [add_node(0), add_node(1), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 1, 1), add_pod_with_pvc(2, 1, 1),
      add_pod_with_pvc(3, 1, 2), add_pod_with_pvc(4, 0, 3), add_pod_with_pvc(5, 0, 0),
      add_pod_with_pvc(6, 1, 2), add_pod_with_pvc(7, 0, 4), add_pod_with_pvc(8, 1, 2), update_snapshot(),
      remove_node(0), update_snapshot(), remove_pod_with_pvc(4, 0, 3), remove_pod_with_pvc(5, 0, 0),
      update_snapshot()], [1], 0, {"test-ns/test-pvc1": 2, "test-ns/test-pvc2": 3}),
    ("Add then Remove pod with PVC and add same pod again",
     [add_node(0), add_pod_with_pvc(0, 0, 0), update_snapshot(), remove_pod_with_pvc(0, 0, 0),
      add_pod_with_pvc(0, 0, 0), update_snapshot()], [0], 0, {"test-ns/test-pvc0": 1}),
    ("Add and Remove multiple pods with PVC with same ref count length different content",
     [add_node(0), add_node(1), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 1, 1), update_snapshot(),
      remove_pod_with_pvc(0, 0, 0), remove_pod_with_pvc(1, 1, 1), add_pod_with_pvc(2, 0, 2),
      add_pod_with_pvc(3, 1, 3), update_snapshot()], [1, 0], 0, {"test-ns/test-pvc2": 1, "test-ns/test-pvc3": 1}),
    ("Add and Remove multiple pods with PVC",
     [add_node(0), add_node(1), add_pod_with_pvc(0, 0, 0), add_pod_with_pvc(1, 1, 1), add_pod_with_pvc(2, 0, 2),
      update_snapshot(), remove_pod_with_pvc(0, 0, 0), remove_pod_with_pvc(1, 1, 1), update_snapshot(),
      add_pod_with_pvc(0, 0, 0), update_snapshot(), add_pod_with_pvc(3, 1, 3), add_pod_with_pvc(4, 0, 0),
      add_pod_with_pvc(5, 1, 1), update_snapshot(), remove_pod_with_pvc(0, 0, 0), remove_pod_with_pvc(3, 1, 3),
      remove_pod_with_pvc(4, 0, 0), update_snapshot()], [0, 1], 0, {"test-ns/test-pvc1": 1, "test-ns/test-pvc2": 1}),
    # "Assume and forget in cache" half of upstream's assume cases (the in-snapshot half: module docstring).
    ("Assume and forget in cache",
     [add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot(),
      assume(PODS[8]), assume(PODS[0]), forget(PODS[0]), update_snapshot()], [0, 8, 4, 2], 0, {}),
    ("Assume and forget in cache, with affinity",
     [add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot(),
      assume(PODS_WITH_AFFINITY[8]), assume(PODS_WITH_AFFINITY[0]), forget(PODS_WITH_AFFINITY[0]),
      update_snapshot()], [0, 8, 4, 2], 1, {}),
    ("Assume and forget in cache, with PVC",
     [add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot(),
      assume(pod_with_pvc(8, 8, 8)), assume(pod_with_pvc(0, 0, 0)), forget(pod_with_pvc(0, 0, 0)),
      update_snapshot()], [0, 8, 4, 2], 0, {"test-ns/test-pvc8": 1}),
]


def pvc_ref_counts(c: Cache) -> dict[str, int]:
    """Upstream ``snapshot.usedPVCRefCounts``: ``namespace/claim`` → pods on present nodes using it."""
    out: Counter[str] = Counter()
    for row in c.table.order().tolist():
        for pi in c.table.node_info(row).pods:
            for v in pi.pod.spec.volumes:
                if v.persistent_volume_claim is not None:
                    out[f"{pi.pod.metadata.namespace}/{v.persistent_volume_claim.claim_name}"] += 1
    return dict(out)


def check(c: Cache, added_order: list[str]) -> None:
    """Upstream ``compareCacheWithNodeInfoSnapshot``: the table's node list is every present node
    in ``nodeTree`` order and each node's ``NodeInfo`` holds exactly the cache's pods for it."""
    names = [c.table.nodes[r].metadata.name for r in c.table.order().tolist()]
    assert names == [n for n in added_order if n in c.table.row_of]
    for name in names:
        ni = c.table.get(name)
        assert ni is not None
        want = sorted(k for k, st in c.pod_states.items() if st.node_name == name)
        assert sorted(pi.key for pi in ni.pods) == want


@pytest.mark.parametrize("ops,expected,with_affinity,pvc_counts", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_TestSchedulerCache_UpdateSnapshot(ops: list[Op], expected: list[int], with_affinity: int,
                                           pvc_counts: dict[str, int]) -> None:
    c = Cache()
    added: list[str] = []  # nodeTree order: a node goes to the end of its zone when it is (re-)added
    for op in ops:
        before = set(c.table.row_of)
        op(c)
        for name in before - set(c.table.row_of):
            added.remove(name)
        added += [n for n in c.table.row_of if n not in before]
        check(c, added)
    assert sorted(c.table.row_of) == sorted(NODES[i].metadata.name for i in expected)
    assert sum(1 for r in c.table.order().tolist() if c.table.node_info(r).pods_with_affinity) == with_affinity
    assert pvc_ref_counts(c) == pvc_counts


@pytest.mark.parametrize("ops,updated", [
    pytest.param([add_node(0), add_node(1), add_node(5), update_node(1)], {1}, id="Update some nodes"),
    pytest.param([add_node(8), update_node(2), update_node(8), add_node(1)], {2, 8},
                 id="Update nodes in particular order"),
])
def test_TestSchedulerCache_UpdateSnapshot_updated_node_info(ops: list[Op], updated: set[int]) -> None:
    """The snapshot's NodeInfo of an updated node carries the update (2000m / 500m, upstream
    ``updatedNodes``); the others keep 1000m / 100m."""
    c = Cache()
    for op in ops:
        op(c)
    for name in c.table.row_of:
        i = int(name.removeprefix("test-node"))
        ni = c.table.get(name)
        assert ni is not None
        assert ni.allocatable.milli_cpu == (2000 if i in updated else 1000)
