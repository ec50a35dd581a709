"""The columnar node store: one row per node, numpy columns, updated in place.

This is kubesched's fast path (``docs/architecture.md``, "The seams"). Upstream keeps one
``NodeInfo`` per node (``pkg/scheduler/framework/types.go``) and a zone-interleaved
``nodeTree`` (``pkg/scheduler/backend/cache/node_tree.go``); the table holds the same facts as
arrays so that a plugin judges one pod against every node at once.

Columns (``cap`` = allocated rows ≥ number of nodes; dead rows are free-listed):

* ``allocatable`` / ``requested``: ``int64[cap, R]``; column ``CPU`` in millicores,
  ``MEMORY`` and ``EPHEMERAL_STORAGE`` in bytes, ``PODS`` (allocatable pods / number of pods),
  then one column per extended resource name seen (``resource_index``).
* ``free``: ``int64[R, cap]``, ``allocatable - requested`` kept up to date by every mutation and
  stored transposed, so that ``free[col]`` is one contiguous column (NodeResourcesFit's Filter
  gathers it for the candidate rows: one gather per resource instead of two strided ones).
* ``non_zero_requested``: ``int64[cap, 2]`` (cpu millicores, memory bytes) with the 100m/200Mi
  defaults used for scoring.
* labels: per key an ``int32[cap]`` column of value ids (``-1`` = absent) with its value
  dictionary (``Gt``/``Lt`` parse the dictionary's values once per key, in
  :mod:`kubesched.plugins.helper.nodeselector`).
* ``taint_set``: ``int32[cap]`` id into ``taint_sets`` (a tuple of taints per distinct set).
* ``declared_feature_set``: ``int32[cap]`` id into ``declared_feature_sets`` (the node's
  ``status.declaredFeatures`` as a tuple, per distinct list; id 0 = none declared).
* ``unschedulable``: ``bool[cap]``; ``generation``: ``int64[cap]`` bumped on every change.
* per row (Python lists): ``nodes``, ``names``, ``pods``, ``used_ports``, ``images``.

``order()`` is the upstream ``nodeTree.list()`` order (zones round-robin) as ``int64[N]`` rows.
Every mutation is O(1) per row (plus O(labels) on node add/update); nothing is rebuilt per pod.
Listeners (``add_listener``) are told about pod/node changes so that plugins can maintain
incremental indexes (topology-domain counts).

Derived indexes (a plugin's per-table caches and listeners) are owned by the table:
``table.derived(key, factory)`` creates one on first use and keeps it as long as the table
lives — no module-level registry keyed by table.

The table must not change during a scheduling cycle (``docs/architecture.md``, "The two
cycles"). ``mutations`` counts every change; ``with table.frozen("..."):`` raises
:class:`TableChangedError` at the end of the block when the table changed inside it, when debug
checks are on (``KUBESCHED_DEBUG=1``, or :func:`set_debug_checks`; the test suite turns them
on), and costs nothing otherwise. :class:`RowEdit` restores the table exactly, counter included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, TypeVar

import numpy as np

from kubesched.api.objects import Node, Pod, Taint, node_allocatable
from kubesched.api.quantity import to_int
from kubesched.framework.node_info import HostPort, PodInfo, Resource

__all__ = ["NodeInfo", "NodeTable", "NodeTableListener", "RowEdit", "TableChangedError", "TableEdit", "debug_checks",
           "normalized_image_name", "set_debug_checks", "zone_key"]

_T = TypeVar("_T")

_DEBUG_CHECKS = os.environ.get("KUBESCHED_DEBUG", "") not in ("", "0")


def debug_checks() -> bool:
    """Whether debug consistency checks (:meth:`NodeTable.frozen`) are on: ``KUBESCHED_DEBUG``
    set to anything but ``""``/``"0"`` at import, or :func:`set_debug_checks`."""
    return _DEBUG_CHECKS


def set_debug_checks(on: bool) -> bool:
    """Turn debug checks on or off; returns the previous setting."""
    global _DEBUG_CHECKS
    prev, _DEBUG_CHECKS = _DEBUG_CHECKS, bool(on)
    return prev


class TableChangedError(AssertionError):
    """The NodeTable changed where it must not (debug check; a bug in the caller)."""


class _FrozenCheck:
    """Context manager of :meth:`NodeTable.frozen` when debug checks are on."""

    __slots__ = ("table", "what", "since")

    def __init__(self, table: NodeTable, what: str) -> None:
        self.table = table
        self.what = what
        self.since = table.mutations

    def __enter__(self) -> int:
        return self.since

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.table.assert_unchanged(self.since, self.what)

NO_PODS_PRIORITY = (1 << 63) - 1
"""``min_pod_priority`` of a row without pods."""

ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(labels: dict[str, str]) -> str:
    """Upstream ``utilnode.GetZoneKey``: ``region + ":\\x00:" + zone``, or "" when neither is set.
    The deprecated beta labels win over the GA ones, as upstream."""
    zone = labels.get(ZONE_LABELS[0], labels.get(ZONE_LABELS[1], ""))
    region = labels.get(REGION_LABELS[0], labels.get(REGION_LABELS[1], ""))
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` to an image name without tag or digest (upstream ImageLocality)."""
    if "@" in name:
        return name
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _widen(a: np.ndarray, width: int) -> np.ndarray:
    """``a`` (rows × columns) with ``width`` columns, the new ones zero: a wider view of the array
    ``a`` is a leading-column view of when that has room, else a copy into one a quarter wider — so
    adding k resource columns one at a time copies the table O(log k) times, not k times (a cluster
    whose every node has its own extended resource: scheduler_perf SchedulingWithExtendedResource),
    with at most a quarter of the columns as slack."""
    base = a.base
    if (isinstance(base, np.ndarray) and base.ndim == 2 and base.shape[0] == a.shape[0] and base.shape[1] >= width
            and a.__array_interface__["data"][0] == base.__array_interface__["data"][0]):
        return base[:, :width]
    b = np.zeros((a.shape[0], max(width, a.shape[1] + a.shape[1] // 4 + 4)), a.dtype)
    b[:, :a.shape[1]] = a
    return b[:, :width]


def _heighten(a: np.ndarray, height: int) -> np.ndarray:
    """:func:`_widen` for a transposed array (columns × rows): ``a`` with ``height`` rows, the new
    ones zero, a leading-row view of a base with a quarter of slack rows."""
    base = a.base
    if (isinstance(base, np.ndarray) and base.ndim == 2 and base.shape[1] == a.shape[1] and base.shape[0] >= height
            and a.__array_interface__["data"][0] == base.__array_interface__["data"][0]):
        return base[:height]
    b = np.zeros((max(height, a.shape[0] + a.shape[0] // 4 + 4), a.shape[1]), a.dtype)
    b[:a.shape[0]] = a
    return b[:height]


class NodeTableListener(Protocol):
    """Receives every change of the table, after it is applied."""

    def on_node_set(self, table: NodeTable, row: int, old: Node | None) -> None: ...

    def on_node_removed(self, table: NodeTable, row: int, old: Node) -> None: ...

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None: ...

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None: ...


class NodeTable:
    """Columnar store of the cluster's nodes and the pods on them. See the module docstring."""

    CPU, MEMORY, EPHEMERAL_STORAGE, PODS = 0, 1, 2, 3
    FIRST_SCALAR = 4

    def __init__(self, capacity: int = 64) -> None:
        cap = max(capacity, 8)
        self.resource_index: dict[str, int] = {"cpu": 0, "memory": 1, "ephemeral-storage": 2, "pods": 3}
        self.resource_names: list[str] = ["cpu", "memory", "ephemeral-storage", "pods"]
        r = len(self.resource_names)
        self.allocatable = np.zeros((cap, r), np.int64)
        self.requested = np.zeros((cap, r), np.int64)
        self.free = np.zeros((r, cap), np.int64)
        """``int64[R, cap]``: ``(allocatable - requested).T``, maintained (see the module docstring)."""
        self.non_zero_requested = np.zeros((cap, 2), np.int64)
        self.taint_set = np.zeros(cap, np.int32)
        self.unschedulable = np.zeros(cap, bool)
        self.generation = np.zeros(cap, np.int64)
        self.alive = np.zeros(cap, bool)
        self.min_pod_priority = np.full(cap, NO_PODS_PRIORITY, np.int64)
        """``int64[cap]``: lowest priority among the pods on the row (``NO_PODS_PRIORITY`` when
        empty), so preemption can tell at a glance which nodes have lower-priority pods."""
        self._min_priority_pods: list[int] = [0] * cap
        """Per row, how many of its pods have priority ``min_pod_priority[row]``: a removal
        rescans the row's pods only when the last of them goes (not on every removal)."""
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[tuple[str, str, str], ...], int] = {(): 0}
        self.declared_feature_set = np.zeros(cap, np.int32)
        self.declared_feature_sets: list[tuple[str, ...]] = [()]
        """The distinct ``status.declaredFeatures`` lists, as given (upstream keeps the mapped set in
        ``NodeInfo``; the mapping depends on the feature registry, so NodeDeclaredFeatures maps
        each distinct list once). Append-only: an id never changes meaning."""
        self._declared_feature_set_ids: dict[tuple[str, ...], int] = {(): 0}
        self.labels: dict[str, np.ndarray] = {}
        self.label_values: dict[str, list[str]] = {}
        self._label_ids: dict[str, dict[str, int]] = {}
        self.nodes: list[Node | None] = [None] * cap
        self.names: list[str] = [""] * cap
        self.pods: list[list[PodInfo]] = [[] for _ in range(cap)]
        self.used_ports: list[dict[tuple[str, int], set[str]] | None] = [None] * cap
        self.images: list[dict[str, int]] = [{} for _ in range(cap)]
        self.image_nodes: dict[str, set[int]] = {}
        self.row_of: dict[str, int] = {}
        self._free: list[int] = list(range(cap - 1, -1, -1))
        self._zones: list[str] = []
        self._zone_rows: dict[str, list[int]] = {}
        self._row_zone: dict[int, str] = {}
        self._order: np.ndarray | None = None
        self._order_pos: tuple[np.ndarray, dict[int, int]] | None = None
        self._listeners: list[NodeTableListener] = []
        self._derived: dict[Hashable, Any] = {}
        self._gen = 0
        self.mutations = 0
        """Bumped by every change of the table's content (nodes, pods, resource columns);
        :class:`RowEdit` puts it back with the row. See :meth:`frozen`."""
        self.pod_row: dict[str, int] = {}
        """pod key → row of the node it is on (assumed or bound)."""

    # ───────────────────────────── sizes and order ─────────────────────────────

    def __len__(self) -> int:
        return len(self.row_of)

    @property
    def capacity(self) -> int:
        return len(self.nodes)

    def order(self) -> np.ndarray:
        """Rows in upstream ``nodeTree.list()`` order: zones round-robin, each zone in node-add
        order (``int64[N]``). Cached until a node is added, removed or changes zone."""
        if self._order is None:
            lists = [self._zone_rows[z] for z in self._zones]
            out: list[int] = []
            longest = max((len(x) for x in lists), default=0)
            for i in range(longest):
                for rows in lists:
                    if i < len(rows):
                        out.append(rows[i])
            self._order = np.asarray(out, np.int64)
        return self._order

    def node_info(self, row: int) -> NodeInfo:
        return NodeInfo(self, row)

    def get(self, name: str) -> NodeInfo | None:
        row = self.row_of.get(name)
        return None if row is None else NodeInfo(self, row)

    def add_listener(self, listener: NodeTableListener) -> None:
        self._listeners.append(listener)

    def derived(self, key: Hashable, factory: Callable[[NodeTable], _T]) -> _T:
        """The table's derived index or cache under ``key``, made by ``factory(table)`` on first
        use and kept (owned by the table) for the table's lifetime. A factory that needs change
        notifications registers itself with :meth:`add_listener`. Use a key private to the
        owning module, e.g. ``(__name__, "what")``."""
        d = self._derived.get(key)
        if d is None:
            d = self._derived[key] = factory(self)
        return d  # the key's factory decides the type

    # ───────────────────────────── debug: no change during a cycle ─────────────────────────────

    def assert_unchanged(self, since: int, what: str = "the scheduling cycle") -> None:
        """Raise :class:`TableChangedError` when the table changed since ``mutations`` was
        ``since``. Checks always; see :meth:`frozen` for the debug-only form."""
        if self.mutations != since:
            raise TableChangedError(f"NodeTable changed during {what}: {self.mutations - since} change(s)")

    def frozen(self, what: str = "the scheduling cycle") -> AbstractContextManager[int | None]:
        """``with table.frozen():`` — when debug checks are on (:func:`debug_checks`), raise
        :class:`TableChangedError` on leaving the block (without an exception) if the table
        changed inside it; otherwise a shared no-op context. Enters as the ``mutations`` at
        the start (None when off)."""
        if not _DEBUG_CHECKS:
            return _NO_CHECK
        return _FrozenCheck(self, what)

    # ───────────────────────────── columns ─────────────────────────────

    def resource_column(self, name: str, create: bool = False) -> int | None:
        """Column of resource ``name``; with ``create`` a new column is added when unseen."""
        col = self.resource_index.get(name)
        if col is None and create:
            self.mutations += 1
            col = len(self.resource_names)
            self.resource_index[name] = col
            self.resource_names.append(name)
            self.allocatable = _widen(self.allocatable, col + 1)
            self.requested = _widen(self.requested, col + 1)
            self.free = _heighten(self.free, col + 1)
        return col

    def label_column(self, key: str) -> np.ndarray | None:
        """``int32[cap]`` value ids of label ``key`` (-1 = absent), or None if no node has it."""
        return self.labels.get(key)

    def label_value_id(self, key: str, value: str) -> int:
        """Id of ``value`` in the dictionary of ``key``; -2 when no node has that value."""
        ids = self._label_ids.get(key)
        if ids is None:
            return -2
        return ids.get(value, -2)

    def row_labels(self, row: int) -> dict[str, str]:
        node = self.nodes[row]
        return node.metadata.labels if node is not None else {}

    # ───────────────────────────── mutation: nodes ─────────────────────────────

    def _grow(self) -> None:
        old = self.capacity
        new = old * 2
        for attr in ("allocatable", "requested", "non_zero_requested"):
            a = getattr(self, attr)
            b = np.zeros((new, a.shape[1]), a.dtype)
            b[:old] = a
            setattr(self, attr, b)
        free = np.zeros((self.free.shape[0], new), np.int64)
        free[:, :old] = self.free
        self.free = free
        for attr in ("taint_set", "declared_feature_set", "unschedulable", "generation", "alive", "min_pod_priority"):
            a = getattr(self, attr)
            b = np.zeros(new, a.dtype)
            b[:old] = a
            setattr(self, attr, b)
        self.min_pod_priority[old:] = NO_PODS_PRIORITY
        for key, col in self.labels.items():
            b = np.full(new, -1, np.int32)
            b[:old] = col
            self.labels[key] = b
        self.nodes.extend([None] * (new - old))
        self.names.extend([""] * (new - old))
        self.pods.extend([] for _ in range(new - old))
        self._min_priority_pods.extend([0] * (new - old))
        self.used_ports.extend([None] * (new - old))
        self.images.extend({} for _ in range(new - old))
        self._free.extend(range(new - 1, old - 1, -1))

    def _bump(self, row: int) -> None:
        self._gen += 1
        self.generation[row] = self._gen
        self.mutations += 1

    def set_node(self, node: Node) -> int:
        """Add a node or replace its previous version. Returns its row.

        Raises :class:`~kubesched.errors.QuantityError` for an invalid allocatable quantity.
        """
        name = node.metadata.name
        row = self.row_of.get(name)
        old = None if row is None else self.nodes[row]
        alloc = {k: to_int(k, v) for k, v in node_allocatable(node).items()}
        if row is None:
            if not self._free:
                self._grow()
            row = self._free.pop()
            self.row_of[name] = row
            self.names[row] = name
            self.alive[row] = True
        for k in alloc:
            self.resource_column(k, create=True)
        vec = self.allocatable[row]
        vec[:] = 0
        for k, v in alloc.items():
            vec[self.resource_index[k]] = v
        self.free[:, row] = vec - self.requested[row]
        self.nodes[row] = node
        self.unschedulable[row] = bool(node.spec.unschedulable)
        taints = tuple(node.spec.taints)
        tkey = tuple((t.key, t.value, t.effect) for t in taints)
        tid = self._taint_set_ids.get(tkey)
        if tid is None:
            tid = len(self.taint_sets)
            self.taint_sets.append(taints)
            self._taint_set_ids[tkey] = tid
        self.taint_set[row] = tid
        self.declared_feature_set[row] = self.declared_feature_set_id(node.status.declared_features)
        self._set_labels(row, node.metadata.labels, old.metadata.labels if old is not None else {})
        self._set_images(row, node)
        zone = zone_key(node.metadata.labels)
        if self._row_zone.get(row) != zone:
            self._tree_remove(row)
            self._tree_add(row, zone)
        self._bump(row)
        for li in self._listeners:
            li.on_node_set(self, row, old)
        return row

    def declared_feature_set_id(self, declared: list[str]) -> int:
        """The id of the declared-features list ``declared`` in ``declared_feature_sets``,
        interned when new."""
        if not declared:
            return 0
        key = tuple(declared)
        fid = self._declared_feature_set_ids.get(key)
        if fid is None:
            fid = self._declared_feature_set_ids[key] = len(self.declared_feature_sets)
            self.declared_feature_sets.append(key)
        return fid

    def _set_labels(self, row: int, labels: dict[str, str], old: dict[str, str]) -> None:
        for key in old:
            if key not in labels:
                self.labels[key][row] = -1
        for key, value in labels.items():
            col = self.labels.get(key)
            if col is None:
                col = np.full(self.capacity, -1, np.int32)
                self.labels[key] = col
                self.label_values[key] = []
                self._label_ids[key] = {}
            ids = self._label_ids[key]
            vid = ids.get(value)
            if vid is None:
                vid = len(ids)
                ids[value] = vid
                self.label_values[key].append(value)
            col[row] = vid

    def _set_images(self, row: int, node: Node) -> None:
        for name in self.images[row]:
            s = self.image_nodes.get(name)
            if s is not None:
                s.discard(row)
                if not s:
                    del self.image_nodes[name]
        imgs: dict[str, int] = {}
        for image in node.status.images:
            for n in image.names:
                imgs[normalized_image_name(n)] = image.size_bytes
        self.images[row] = imgs
        for name in imgs:
            self.image_nodes.setdefault(name, set()).add(row)

    def _tree_add(self, row: int, zone: str) -> None:
        if zone not in self._zone_rows:
            self._zones.append(zone)
            self._zone_rows[zone] = []
        self._zone_rows[zone].append(row)
        self._row_zone[row] = zone
        self._order = None

    def _tree_remove(self, row: int) -> None:
        zone = self._row_zone.pop(row, None)
        if zone is None:
            return
        rows = self._zone_rows[zone]
        rows.remove(row)
        if not rows:
            del self._zone_rows[zone]
            self._zones.remove(zone)
        self._order = None

    def remove_node(self, name: str) -> None:
        """Remove a node. Its pods stay accounted to nobody; callers remove them first."""
        row = self.row_of.pop(name)
        old = self.nodes[row]
        self._tree_remove(row)
        self._set_labels(row, {}, old.metadata.labels if old is not None else {})
        self.nodes[row] = None
        self.images[row] = {}
        for n, s in list(self.image_nodes.items()):
            s.discard(row)
            if not s:
                del self.image_nodes[n]
        self.allocatable[row] = 0
        self.requested[row] = 0
        self.free[:, row] = 0
        self.non_zero_requested[row] = 0
        self.pods[row] = []
        self.min_pod_priority[row] = NO_PODS_PRIORITY
        self._min_priority_pods[row] = 0
        self.used_ports[row] = None
        self.alive[row] = False
        self.names[row] = ""
        self._bump(row)
        self._free.append(row)
        for li in self._listeners:
            li.on_node_removed(self, row, old)  # type: ignore[arg-type]

    # ───────────────────────────── mutation: pods ─────────────────────────────

    def add_pod(self, pod_info: PodInfo, row: int) -> None:
        """Account ``pod_info`` on ``row`` (assume or bind): requests, pod count, ports."""
        req = self.requested[row]
        free = self.free
        for name, v in pod_info.requests.items():
            if name == "pods":  # column PODS counts pods; a "pods" request is not accounted
                continue
            col = self.resource_index.get(name)
            if col is None:
                col = self.resource_column(name, create=True)
                req = self.requested[row]
                free = self.free
            req[col] += v
            free[col, row] -= v
        req[self.PODS] += 1
        free[self.PODS, row] -= 1
        nz = self.non_zero_requested[row]
        nz[0] += pod_info.non_zero_cpu
        nz[1] += pod_info.non_zero_memory
        self.pods[row].append(pod_info)
        lowest = self.min_pod_priority[row]
        if pod_info.priority < lowest:
            self.min_pod_priority[row] = pod_info.priority
            self._min_priority_pods[row] = 1
        elif pod_info.priority == lowest:
            self._min_priority_pods[row] += 1
        if pod_info.ports:
            used = self.used_ports[row]
            if used is None:
                used = self.used_ports[row] = {}
            for ip, proto, port in pod_info.ports:
                used.setdefault((proto, port), set()).add(ip)
        self.pod_row[pod_info.key] = row
        self._bump(row)
        for li in self._listeners:
            li.on_pod_added(self, row, pod_info)

    def remove_pod(self, pod_info: PodInfo, row: int) -> None:
        """Undo :meth:`add_pod`. Raises ``KeyError`` when the pod is not on ``row``."""
        pods = self.pods[row]
        stored = self._pop_pod(pod_info, row)
        req = self.requested[row]
        free = self.free
        for name, v in stored.requests.items():
            if name != "pods":
                col = self.resource_index[name]
                req[col] -= v
                free[col, row] += v
        req[self.PODS] -= 1
        free[self.PODS, row] += 1
        nz = self.non_zero_requested[row]
        nz[0] -= stored.non_zero_cpu
        nz[1] -= stored.non_zero_memory
        if stored.ports:
            self._remove_ports(row, stored.ports)
        if stored.priority <= self.min_pod_priority[row]:
            self._min_priority_pods[row] -= 1
            if self._min_priority_pods[row] <= 0:
                self._set_min_priority(row, pods)
        self.pod_row.pop(stored.key, None)
        self._bump(row)
        for li in self._listeners:
            li.on_pod_removed(self, row, stored)

    def _set_min_priority(self, row: int, pods: list[PodInfo]) -> None:
        """Recompute ``min_pod_priority[row]`` and its pod count from ``pods`` (the row's list)."""
        lowest = min((p.priority for p in pods), default=NO_PODS_PRIORITY)
        self.min_pod_priority[row] = lowest
        self._min_priority_pods[row] = sum(1 for p in pods if p.priority == lowest)

    def _pop_pod(self, pod_info: PodInfo, row: int) -> PodInfo:
        """Take the pod with ``pod_info``'s key off ``row``'s list. ``KeyError`` if absent."""
        pods = self.pods[row]
        for i, p in enumerate(pods):
            if p.key == pod_info.key:
                return pods.pop(i)
        raise KeyError(f"pod {pod_info.key} not found on node {self.names[row]}")

    def relabel_pod(self, pod_info: PodInfo, row: int, pod: Pod) -> None:
        """Replace the object of a pod accounted on ``row`` by ``pod``, whose spec is the same
        object and only labels differ (the zone/region labels PodTopologyLabels adds on binding):
        what :meth:`remove_pod` then :meth:`add_pod` would leave — the pod last on its node, the
        listeners told of the removal (old labels) and the addition (new labels) — without
        re-accounting requests, ports and priority, which cannot have changed. Raises
        ``KeyError`` when the pod is not on ``row``."""
        pods = self.pods[row]
        stored = self._pop_pod(pod_info, row)
        for li in self._listeners:
            li.on_pod_removed(self, row, stored)
        pod_info.pod = pod
        pod_info.extra.clear()
        pods.append(pod_info)
        self._bump(row)
        for li in self._listeners:
            li.on_pod_added(self, row, pod_info)

    def _remove_ports(self, row: int, ports: tuple[HostPort, ...]) -> None:
        """Upstream ``HostPortInfo.Remove`` for each of the pod's ports (staging
        ``kube-scheduler/framework/types.go`` L609-624 in v0.37.2, L471-486 in v0.34.12, the same
        code): the used ports are a *set* of ``(hostIP, protocol, port)``, not a count, so the
        tuple goes away even when another pod on the node still holds it. ``hostIP`` is
        sanitised as upstream (``""`` → ``0.0.0.0``), so pods that both ask for ``""``/``0.0.0.0``
        share one entry, while ``0.0.0.0`` and a concrete IP are separate entries."""
        old = self.used_ports[row]
        if not old:
            return
        used = {k: set(v) for k, v in old.items()}  # a new mapping: callers may hold the old one
        for ip, proto, port in ports:
            ips = used.get((proto, port))
            if ips is None:
                continue
            ips.discard(ip)
            if not ips:
                del used[(proto, port)]
        self.used_ports[row] = used or None

    # ───────────────────────────── helpers for plugins ─────────────────────────────

    def rows_for_names(self, names: Any) -> np.ndarray:
        """Rows of the given node names that exist, in ``order()`` order."""
        wanted = {self.row_of[n] for n in names if n in self.row_of}
        if len(wanted) <= 1:
            return np.fromiter(wanted, np.int64, len(wanted))
        order = self.order()
        if len(wanted) <= 64:  # a few names: sort by position in the order instead of scanning it
            pos = self._order_position()
            return np.asarray(sorted(wanted, key=pos.__getitem__), np.int64)
        return order[np.isin(order, np.fromiter(wanted, np.int64, len(wanted)))]

    def _order_position(self) -> dict[int, int]:
        order = self.order()
        if self._order_pos is None or self._order_pos[0] is not order:
            self._order_pos = (order, {r: i for i, r in enumerate(order.tolist())})
        return self._order_pos[1]


_NO_CHECK: AbstractContextManager[None] = nullcontext()


class RowEdit:
    """Temporarily remove/add pods on one row of the real :class:`NodeTable` (upstream works on a
    ``NodeInfo.Snapshot()`` copy). :meth:`restore` puts the row back exactly: the same pods in
    the same order, the same resource sums, host ports and generation. Use as a context manager.
    Listeners see every change and its undo, so their incremental indexes end where they began.
    """

    __slots__ = ("table", "row", "_pods", "_ports", "_gen", "_req", "_nz", "_removed", "_added", "_mutations")

    def __init__(self, table: NodeTable, row: int) -> None:
        self.table = table
        self.row = row
        self._pods = list(table.pods[row])
        used = table.used_ports[row]
        self._ports = None if used is None else {k: set(v) for k, v in used.items()}
        self._gen = int(table.generation[row])
        self._req = table.requested[row].copy()
        self._nz = table.non_zero_requested[row].copy()
        self._removed: dict[str, PodInfo] = {}
        self._added: dict[str, PodInfo] = {}
        self._mutations = table.mutations

    @property
    def node_info(self) -> NodeInfo:
        return self.table.node_info(self.row)

    def remove(self, pi: PodInfo) -> None:
        self.table.remove_pod(pi, self.row)
        if self._added.pop(pi.key, None) is None:
            self._removed[pi.key] = pi

    def add(self, pi: PodInfo) -> None:
        self.table.add_pod(pi, self.row)
        if self._removed.pop(pi.key, None) is None:
            self._added[pi.key] = pi

    def restore(self) -> None:
        t, row = self.table, self.row
        for pi in list(self._added.values()):
            t.remove_pod(pi, row)
        for pi in list(self._removed.values()):
            t.add_pod(pi, row)
        self._added.clear()
        self._removed.clear()
        t.pods[row][:] = self._pods
        if t.used_ports[row] != self._ports:
            # host ports are a set, not a count (upstream HostPortInfo): undoing the addition of a
            # pod whose port another pod on the row also uses dropped it; listeners that index
            # ports (NodePorts) are told of the row's restored ports
            t.used_ports[row] = self._ports
            for li in t._listeners:
                hook = getattr(li, "on_ports_restored", None)
                if hook is not None:
                    hook(t, row)
        else:
            t.used_ports[row] = self._ports
        t.requested[row, :len(self._req)] = self._req
        t.free[:, row] = t.allocatable[row] - t.requested[row]
        t.non_zero_requested[row] = self._nz
        t.generation[row] = self._gen
        t._set_min_priority(row, self._pods)
        t.mutations = self._mutations

    def __enter__(self) -> RowEdit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()


class TableEdit:
    """Temporary pod removals/additions over many rows of the real :class:`NodeTable` (upstream's
    ``MutableSnapshotSharedLister`` between ``StartMutations`` and ``EndMutations``, v1.37.2
    ``backend/cache/snapshot.go``; used by pod-group preemption, which dry-runs on the whole
    cluster). Each row touched gets a :class:`RowEdit` on first touch; :meth:`restore` puts every
    touched row back exactly (last touched first), so the table, its ``mutations`` counter and
    the listeners' indexes end where they began. Use as a context manager.
    """

    __slots__ = ("table", "_rows")

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._rows: dict[int, RowEdit] = {}

    def row(self, row: int) -> RowEdit:
        """The :class:`RowEdit` of ``row`` (made on first use)."""
        edit = self._rows.get(row)
        if edit is None:
            edit = self._rows[row] = RowEdit(self.table, row)
        return edit

    def remove(self, pi: PodInfo, row: int) -> None:
        """Upstream ``RemovePod(pod, nodeName)`` on the mutable snapshot."""
        self.row(row).remove(pi)

    def add(self, pi: PodInfo, row: int) -> None:
        """Upstream ``AddPod(podInfo, nodeName)`` on the mutable snapshot."""
        self.row(row).add(pi)

    def restore(self) -> None:
        for edit in reversed(list(self._rows.values())):
            edit.restore()
        self._rows.clear()

    def __enter__(self) -> TableEdit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()


class NodeInfo:
    """Node-level aggregated information: a view of row ``row`` of a :class:`NodeTable`.

    Mirrors upstream ``framework.NodeInfo``: ``node``, ``pods`` (``list[PodInfo]``),
    ``requested`` / ``non_zero_requested`` / ``allocatable`` (:class:`Resource`),
    ``used_ports``, ``image_states``, ``generation``.
    """

    __slots__ = ("table", "row")

    def __init__(self, table: NodeTable, row: int) -> None:
        self.table = table
        self.row = row

    @property
    def node(self) -> Node:
        return self.table.nodes[self.row]  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return self.table.names[self.row]

    @property
    def pods(self) -> list[PodInfo]:
        return self.table.pods[self.row]

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        return [p for p in self.pods if p.pod.spec.affinity is not None and (
            p.pod.spec.affinity.pod_affinity is not None or p.pod.spec.affinity.pod_anti_affinity is not None)]

    @property
    def pods_with_required_anti_affinity(self) -> list[PodInfo]:
        out = []
        for p in self.pods:
            a = p.pod.spec.affinity
            if a is not None and a.pod_anti_affinity is not None and \
                    a.pod_anti_affinity.required_during_scheduling_ignored_during_execution:
                out.append(p)
        return out

    def _resource(self, matrix: np.ndarray) -> Resource:
        t = self.table
        vec = matrix[self.row]
        scalars = {name: int(vec[col]) for name, col in t.resource_index.items()
                   if col >= t.FIRST_SCALAR and vec[col]}
        return Resource(int(vec[t.CPU]), int(vec[t.MEMORY]), int(vec[t.EPHEMERAL_STORAGE]),
                        int(vec[t.PODS]), scalars)

    @property
    def allocatable(self) -> Resource:
        return self._resource(self.table.allocatable)

    @property
    def requested(self) -> Resource:
        """Sum of the pods' requests; ``allowed_pod_number`` holds the number of pods."""
        return self._resource(self.table.requested)

    @property
    def non_zero_requested(self) -> Resource:
        nz = self.table.non_zero_requested[self.row]
        return Resource(int(nz[0]), int(nz[1]))

    @property
    def used_ports(self) -> dict[tuple[str, int], set[str]]:
        """``(protocol, port) → {hostIP}`` of the ports in use on the node."""
        return self.table.used_ports[self.row] or {}

    @property
    def image_states(self) -> dict[str, tuple[int, int]]:
        """Normalised image name → ``(size in bytes, number of nodes that have it)``."""
        t = self.table
        return {name: (size, len(t.image_nodes.get(name, ()))) for name, size in t.images[self.row].items()}

    @property
    def generation(self) -> int:
        return int(self.table.generation[self.row])

    def __repr__(self) -> str:
        return f"NodeInfo({self.name})"
