"""Bulk fills of a :class:`~kubesched.framework.node_table.NodeTable`: many nodes in one pass.

:func:`set_nodes` leaves the table exactly as :meth:`NodeTable.set_node` called once per node in
order would (rows, free list, capacity, every column, the label dictionaries and their value ids,
taint sets, declared-feature lists, images, the zone tree, ``generation``, ``mutations``), but does the per-node work by
column: label values are interned per distinct value of each key (first-appearance order, as one
by one), allocatable lists parsed once per distinct list, image names normalised once per
distinct name. The initial LIST of a cluster (``kubesched simulate``'s build, a live scheduler's
first sync) is the case it is for: upstream fills its cache one informer event at a time
(``pkg/scheduler/backend/cache/cache.go`` ``AddNode``, v1.37.2), which is what the result equals.

Listeners are told once per distinct row, after the whole batch is in, with ``old`` = the node the
row held before the batch (None for a new row): the net change, as a listener that reconciles a
row's state needs it (an intermediate version replaced within the same batch is never shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Node, node_allocatable
from kubesched.api.quantity import to_int
from kubesched.errors import QuantityError
from kubesched.framework.node_table import normalized_image_name, zone_key

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_table import NodeTable

__all__ = ["set_nodes"]


def _parse_allocatables(nodes: Sequence[Node]) -> tuple[list[int], list[list[tuple[str, int]]]]:
    """Per node the index of its distinct allocatable list, and the parsed distinct lists
    (``[(resource, canonical int)]`` in the node's order). Raises ``_BadQuantity`` (index of
    the first node whose list does not parse, and the error) — nothing is changed then."""
    distinct: dict[tuple[tuple[str, Any], ...], int] = {}
    parsed: list[list[tuple[str, int]]] = []
    which: list[int] = []
    for i, node in enumerate(nodes):
        items = tuple(node_allocatable(node).items())
        try:
            k = distinct.get(items)
        except TypeError:  # an unhashable value: not a quantity, to_int says so below
            k = None
        if k is None:
            try:
                parsed.append([(name, to_int(name, q)) for name, q in items])
            except QuantityError as e:  # raised after the nodes before it are set
                raise _BadQuantity(i, e) from None
            k = len(parsed) - 1
            try:
                distinct[items] = k
            except TypeError:
                pass
        which.append(k)
    return which, parsed


class _BadQuantity(Exception):
    def __init__(self, index: int, error: QuantityError) -> None:
        super().__init__(index)
        self.index = index
        self.error = error


def set_nodes(table: NodeTable, nodes: Sequence[Node]) -> list[int]:
    """:meth:`NodeTable.set_node` for each node of ``nodes`` in order (see the module docstring);
    returns each node's row (``list[int]``, one per node, the same row for a name given twice).

    Raises :class:`~kubesched.errors.QuantityError` for an invalid allocatable quantity, with the
    nodes before the offending one set (as one by one) and nothing of it or after it.
    """
    if not nodes:
        return []
    try:
        which, parsed = _parse_allocatables(nodes)
    except _BadQuantity as bad:
        set_nodes(table, nodes[:bad.index])
        raise bad.error from None
    t = table
    n = len(nodes)
    # ── rows, as set_node allocates them (the free list popped, grown when empty) ──
    row_of = t.row_of
    rows: list[int] = []
    final: dict[int, int] = {}  # row → index in nodes of its last version
    olds: dict[int, Node | None] = {}  # row → the node it held before the batch
    names = [node.metadata.name for node in nodes]
    for i, name in enumerate(names):
        row = row_of.get(name)
        if row is None:
            if not t._free:
                t._grow()
            row = t._free.pop()
            row_of[name] = row
            t.names[row] = name
            t.alive[row] = True
            olds[row] = None
        elif row not in olds:
            olds[row] = t.nodes[row]
        rows.append(row)
        final[row] = i
    repeated = len(final) != n
    last = list(final.values()) if repeated else range(n)  # rows in first-set order, their last version
    frows = np.fromiter(final.keys(), np.int64, len(final))
    fnodes = [nodes[i] for i in last] if repeated else list(nodes)
    # ── resource columns (created in first-appearance order), then allocatable per distinct list ──
    for lst in parsed:
        for name, _ in lst:
            t.resource_column(name, create=True)
    vecs = np.zeros((len(parsed), len(t.resource_names)), np.int64)
    index = t.resource_index
    for k, lst in enumerate(parsed):
        for name, v in lst:
            vecs[k, index[name]] = v
    t.allocatable[frows] = vecs[np.fromiter((which[i] for i in last), np.intp, len(final))]
    t.free[:, frows] = (t.allocatable[frows] - t.requested[frows]).T
    # ── nodes, unschedulable, taint sets ──
    for row, node in zip(final, fnodes, strict=True):
        t.nodes[row] = node
    t.unschedulable[frows] = np.fromiter((bool(nd.spec.unschedulable) for nd in fnodes), bool, len(final))
    tids = np.zeros(len(final), np.int32)
    set_ids = t._taint_set_ids
    for k, nd in enumerate(nodes if repeated else fnodes):  # every version interns its set, as one by one
        taints = nd.spec.taints
        if not taints:
            continue
        tkey = tuple((tt.key, tt.value, tt.effect) for tt in taints)
        tid = set_ids.get(tkey)
        if tid is None:
            tid = set_ids[tkey] = len(t.taint_sets)
            t.taint_sets.append(tuple(taints))
        if not repeated:
            tids[k] = tid
    if repeated:
        for k, nd in enumerate(fnodes):
            taints = nd.spec.taints
            if taints:
                tids[k] = set_ids[tuple((tt.key, tt.value, tt.effect) for tt in taints)]
    t.taint_set[frows] = tids
    # ── declared-feature lists: interned version by version, as one by one ──
    intern = t.declared_feature_set_id
    fids = [intern(nd.status.declared_features) for nd in nodes]
    t.declared_feature_set[frows] = fids if not repeated else [fids[i] for i in last]
    _fill_labels(t, nodes, fnodes, frows, olds)
    _fill_images(t, fnodes, frows, olds)
    # ── the zone tree: set_node's move for each version in order ──
    row_zone = t._row_zone
    for row, nd in zip(rows, nodes, strict=True):
        zone = zone_key(nd.metadata.labels)
        if row_zone.get(row) != zone:
            t._tree_remove(row)
            t._tree_add(row, zone)
    # ── generation and the change counter: one bump per node, as set_node ──
    gen0 = t._gen
    t._gen += n
    t.mutations += n
    t.generation[frows] = gen0 + 1 + np.fromiter(last, np.int64, len(final))
    for li in t._listeners:
        for row, old in olds.items():
            li.on_node_set(t, row, old)
    return rows


def _fill_labels(t: NodeTable, nodes: Sequence[Node], fnodes: list[Node], frows: np.ndarray,
                 olds: dict[int, Node | None]) -> None:
    """Label columns: one pass over every ``(key, value)`` of the batch. Values are interned per
    key in first-appearance order over every version (as one by one: the distinct pairs of the
    flattened batch, in order), the columns set from the final versions (absent = -1)."""
    all_labels = [nd.metadata.labels for nd in nodes]
    pairs = list(chain.from_iterable(map(dict.items, all_labels)))
    distinct = dict.fromkeys(pairs)  # first appearance of each (key, value)
    columns: list[np.ndarray] = []
    col_of: dict[str, int] = {}
    pair_col = np.empty(len(distinct), np.intp)
    pair_vid = np.empty(len(distinct), np.int32)
    for i, pair in enumerate(distinct):
        key, value = pair
        c = col_of.get(key)
        if c is None:
            col = t.labels.get(key)
            if col is None:
                col = t.labels[key] = np.full(t.capacity, -1, np.int32)
                t.label_values[key] = []
                t._label_ids[key] = {}
            c = col_of[key] = len(columns)
            columns.append(col)
        ids = t._label_ids[key]
        vid = ids.get(value)
        if vid is None:
            vid = ids[value] = len(ids)
            t.label_values[key].append(value)
        pair_col[i] = c
        pair_vid[i] = vid
        distinct[pair] = i
    replaced = [row for row, old in olds.items() if old is not None]
    if replaced:  # a replaced row keeps none of its old labels
        gone = np.asarray(replaced, np.int64)
        for col in t.labels.values():
            col[gone] = -1
    if len(fnodes) == len(nodes):
        final_pairs = pairs
        lens = np.fromiter(map(len, all_labels), np.intp, len(all_labels))
    else:
        final_labels = [nd.metadata.labels for nd in fnodes]
        final_pairs = list(chain.from_iterable(map(dict.items, final_labels)))
        lens = np.fromiter(map(len, final_labels), np.intp, len(final_labels))
    which = np.fromiter(map(distinct.__getitem__, final_pairs), np.intp, len(final_pairs))
    item_rows = np.repeat(frows, lens)
    item_col = pair_col[which]
    item_vid = pair_vid[which]
    order = np.argsort(item_col, kind="stable")
    bounds = np.searchsorted(item_col[order], np.arange(len(columns) + 1))
    for c, col in enumerate(columns):
        sel = order[bounds[c]:bounds[c + 1]]
        col[item_rows[sel]] = item_vid[sel]


def _fill_images(t: NodeTable, fnodes: list[Node], frows: np.ndarray, olds: dict[int, Node | None]) -> None:
    """Per row the normalised image name → size map, and ``image_nodes`` (each name's rows);
    names normalised once per distinct name."""
    image_nodes = t.image_nodes
    for row, old in olds.items():  # a replaced row leaves the sets of the images it had
        if old is None:
            continue
        for name in t.images[row]:
            s = image_nodes.get(name)
            if s is not None:
                s.discard(row)
                if not s:
                    del image_nodes[name]
    norm: dict[str, str] = {}
    by_name: dict[str, list[int]] = {}
    images = t.images
    for row, nd in zip(frows.tolist(), fnodes, strict=True):
        imgs: dict[str, int] = {}
        for image in nd.status.images:
            size = image.size_bytes
            for raw in image.names:
                got = norm.get(raw)
                if got is None:
                    got = norm[raw] = normalized_image_name(raw)
                imgs[got] = size
        images[row] = imgs
        for name in imgs:
            lst = by_name.get(name)
            if lst is None:
                by_name[name] = [row]
            else:
                lst.append(row)
    for name, lst in by_name.items():
        s = image_nodes.get(name)
        if s is None:
            image_nodes[name] = set(lst)
        else:
            s.update(lst)
