"""``DecisionRecord``: everything one scheduling attempt decided, per node and per plugin.

Records are built from the cycle's arrays (:class:`FilterChunk`, :class:`ScoreResult`) only
when someone asks — ``simulate --record-results``/``--results-file``, ``--explain`` — so they
cost nothing on the hot path, and they have no size cap. The annotation shapes follow
kube-scheduler-simulator's (``filter-result``, ``score-result``, ``finalscore-result``).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.runtime import ScoreResult

__all__ = ["DecisionRecord", "FilterResults", "NodeColumns", "NodeScores", "NodeTotals", "build_record",
           "names_snapshot", "same_rows"]

PASSED = "passed"
_V = TypeVar("_V")


@dataclass
class DecisionRecord:
    """One attempt.

    ``filter``: node → plugin → ``"passed"`` or the list of reasons, in the order the plugins
    ran on that node (a node never evaluated is absent). ``score``: node → plugin → raw
    Score() value; ``normalized_score``: node → plugin → after NormalizeScore; ``final_score``:
    node → plugin → normalized × weight; ``total_score``: node → sum of those (all four only
    when scoring ran, i.e. more than one feasible node). ``pre_filter``: plugin → status message of a
    rejecting PreFilter. ``message``: the FailedScheduling message ("" when scheduled).
    """

    pod: str
    profile: str
    attempt: int
    time: float
    selected_node: str | None = None
    result: str = ""
    """``scheduled``, ``unschedulable`` or ``error``."""
    message: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    pre_filter: dict[str, str] = field(default_factory=dict)
    filter: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    score: Mapping[str, dict[str, int]] = field(default_factory=dict)
    final_score: Mapping[str, dict[str, int]] = field(default_factory=dict)
    normalized_score: Mapping[str, dict[str, int]] = field(default_factory=dict)
    total_score: Mapping[str, int] = field(default_factory=dict)
    """node → sum of its weighted scores (upstream ``NodePluginScores.TotalScore``; a
    :class:`NodeTotals` when built from a cycle)."""
    post_filter: dict[str, Any] = field(default_factory=dict)
    nominated_node: str | None = None
    group: dict[str, Any] | None = None
    """For a member of a PodGroup scheduled in a pod-group cycle (GenericWorkload): the group's
    decision — ``podGroup`` (``namespace/name``), ``policy`` (``gang``/``basic``), ``minCount``,
    ``members`` (considered in this cycle), ``result`` (``scheduled``, ``unschedulable``,
    ``waiting_on_preemption``, ``error``), ``message`` (the group status), and with
    TopologyAwareWorkloadScheduling ``placements`` (per placement: ``name``, ``nodes``,
    ``feasible``, ``status``, and for scored ones ``scores`` plugin → weighted score and ``total``)
    and ``chosenPlacement``."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def filter_results(table: NodeTable, chunks: list[Any]) -> dict[str, dict[str, Any]]:
    """node → plugin → "passed" | [reasons] for every evaluated node (chunks in order)."""
    out: dict[str, dict[str, Any]] = {}
    names = table.names
    for chunk in chunks:
        plugins = chunk.plugins
        skipped = chunk.skipped
        ran = [pi for pi in range(len(plugins)) if pi not in skipped]
        passed_all = {plugins[pi]: PASSED for pi in ran}  # the entry of a feasible node
        fails = chunk.fail_plugin.tolist()
        keys = chunk.fail_key.tolist()
        for i, row in enumerate(chunk.rows.tolist()):
            fp = fails[i]
            if fp == chunk.PASSED:
                out[names[row]] = passed_all.copy()
                continue
            if fp == chunk.OVERRIDDEN:
                out.update(filter_results(table, [chunk.overrides[i]]))
                continue
            entry: dict[str, Any] = {plugins[pi]: PASSED for pi in ran if pi < fp}
            entry[plugins[fp]] = list(chunk.tables[fp].entry(int(keys[i]))[0])
            out[names[row]] = entry
    return out


class _LazyMapping(Mapping[str, _V]):
    """A read-only mapping that builds its dict (``_materialized``) only when iterated; equal to,
    printed as, pickled and deep-copied as that plain dict."""

    __slots__ = ()

    def _materialized(self) -> dict[str, _V]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._materialized() == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._materialized())

    def __reduce__(self) -> Any:  # pickle / copy.deepcopy (dataclasses.asdict): a plain dict
        return (dict, (self._materialized(),))


class _Segment:
    """Evaluated nodes ``start:stop`` of one :class:`FilterChunk` (no override among them), with
    their rows and results copied out of the cycle's buffers; their names are read from the
    table's names as they were then (:func:`names_snapshot`) when asked for."""

    __slots__ = ("_names", "fail", "keys", "plugins", "ran", "rejected", "rows", "snap", "tables")

    def __init__(self, chunk: Any, start: int, stop: int, snap: list[str], rejected: int | None = None) -> None:
        self.rows = chunk.rows[start:stop].copy()  # the table's rows, for matching against the scored ones
        self.snap = snap
        self._names: list[str] | None = None
        self.fail = chunk.fail_plugin[start:stop].copy()  # int16: plugin index, < 0 passed
        self.keys = chunk.fail_key[start:stop].copy()
        self.plugins = chunk.plugins
        self.tables = list(chunk.tables)
        skipped = chunk.skipped
        self.ran = [pi for pi in range(len(self.plugins)) if pi not in skipped] if skipped \
            else list(range(len(self.plugins)))
        #: how many of the nodes a plugin rejected, when known (None: count ``fail >= 0``)
        self.rejected = rejected

    @property
    def names(self) -> list[str]:
        """The nodes' names in evaluation order (gathered once)."""
        if self._names is None:
            self._names = names_of(self.snap, self.rows)
        return self._names

    def entry(self, i: int) -> dict[str, Any]:
        fp = int(self.fail[i])
        if fp < 0:
            return {self.plugins[pi]: PASSED for pi in self.ran}
        out: dict[str, Any] = {self.plugins[pi]: PASSED for pi in self.ran if pi < fp}
        out[self.plugins[fp]] = list(self.tables[fp].entry(int(self.keys[i]))[0])
        return out


def _segments(chunks: list[Any], snap: list[str], out: list[_Segment], feasible: list[int] | None = None,
              ) -> list[_Segment]:
    """The chunks cut at their overrides, each override's 1-row chunk in its node's place
    (``feasible``: each chunk's count of nodes that passed, when known)."""
    for ci, chunk in enumerate(chunks):
        start = 0
        n = len(chunk.rows)
        if not chunk.overrides:
            if n:
                out.append(_Segment(chunk, 0, n, snap, None if feasible is None else n - feasible[ci]))
            continue
        for i in sorted(chunk.overrides):
            if i > start:
                out.append(_Segment(chunk, start, i, snap))
            _segments([chunk.overrides[i]], snap, out)
            start = i + 1
        if n > start:
            out.append(_Segment(chunk, start, n, snap))
    return out


class _NameSnapshot:
    """A table's node names (indexed by row) as of its last node addition or removal: a copy
    made on first use after a change and never changed, so records share it instead of each
    gathering their nodes' names. Kept by the table (``NodeTable.derived``) as a listener."""

    __slots__ = ("names",)

    def __init__(self, table: NodeTable) -> None:
        self.names: list[str] | None = None
        table.add_listener(self)

    def on_node_set(self, table: NodeTable, row: int, old: Any) -> None:
        if old is None:  # a new node: a name at ``row`` (a replaced node keeps its name)
            self.names = None

    def on_node_removed(self, table: NodeTable, row: int, old: Any) -> None:
        self.names = None

    def on_pod_added(self, table: NodeTable, row: int, pod_info: Any) -> None:
        pass

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: Any) -> None:
        pass


_SNAPSHOT_KEY = (__name__, "names")


def names_snapshot(table: NodeTable) -> list[str]:
    """``table.names`` as they are now, as a list nobody changes (shared until a node is added
    or removed; a fresh copy for a table without ``derived``, e.g. a test's stand-in)."""
    derived = getattr(table, "derived", None)
    if derived is None:
        return list(table.names)
    snap: _NameSnapshot = derived(_SNAPSHOT_KEY, _NameSnapshot)
    names = snap.names
    if names is None:
        names = snap.names = list(table.names)
    return names


class FilterResults(_LazyMapping[dict[str, Any]]):
    """node → plugin → ``"passed"`` | [reasons] for every evaluated node (the mapping
    :func:`filter_results` builds), read from the cycle's Filter chunks when read.

    ``-o wide`` reads none of it and the report a handful of nodes, so one dict per evaluated node
    for every attempt is left until someone iterates (as :class:`NodeScores` does for scores):
    ``len``, ``in``, ``[]`` and ``get`` answer from the columns; iteration builds the dicts once.
    :meth:`rejections` gives what the report ranks nodes by, per node, without building entries.
    Not a ``dict``: encode it through :meth:`DecisionRecord.to_dict` or ``dict(...)``.
    """

    __slots__ = ("_data", "_index", "_len", "_segs", "_starts")

    def __init__(self, table: NodeTable, chunks: list[Any], *, snap: list[str] | None = None,
                 feasible: list[int] | None = None) -> None:
        # rows and results copied now (the cycle reuses its buffers), names read from the table's
        # names as they are now (``snap``: :func:`names_snapshot`) when asked for; ``feasible``:
        # each chunk's count of nodes that passed, when the caller has it
        self._segs = _segments(chunks, names_snapshot(table) if snap is None else snap, [], feasible)
        self._index: dict[str, int] | None = None
        self._starts: list[int] = []
        self._len: int | None = None
        self._data: dict[str, dict[str, Any]] | None = None

    def names(self) -> list[str]:
        """The evaluated nodes in evaluation order (a node evaluated twice: each time)."""
        if len(self._segs) == 1:
            return list(self._segs[0].names)
        return [n for seg in self._segs for n in seg.names]

    def count(self) -> int:
        """How many evaluations the record holds (:meth:`names`' length; ``len`` counts nodes)."""
        return sum(len(seg.rows) for seg in self._segs)

    def name_at(self, i: int) -> str:
        """``names()[i]`` without gathering the others."""
        for seg in self._segs:
            n = len(seg.rows)
            if i < n:
                return seg.snap[int(seg.rows[i])] if seg._names is None else seg._names[i]
            i -= n
        raise IndexError(i)

    def entry_at(self, i: int) -> dict[str, Any]:
        """The entry of ``names()[i]`` (plugin → ``"passed"`` | [reasons]) as evaluated there,
        without the node → position index (a fresh dict)."""
        if self._data is None:
            for seg in self._segs:
                n = len(seg.rows)
                if i < n:
                    return seg.entry(i)
                i -= n
            raise IndexError(i)
        return dict(self._data[self.name_at(i)])

    def all_feasible(self) -> bool:
        """Whether every evaluated node passed every Filter plugin (no reasons recorded)."""
        for seg in self._segs:
            rejected = seg.rejected
            if rejected is None:
                rejected = seg.rejected = int(np.count_nonzero(seg.fail >= 0))
            if rejected:
                return False
        return True

    def rows(self) -> np.ndarray:
        """The evaluated nodes' rows in the node table (as :meth:`names`, ``int64``): equal rows
        are equal nodes within one record (the names were read at the same time)."""
        if len(self._segs) == 1:
            one: np.ndarray = self._segs[0].rows
            return one
        return np.concatenate([seg.rows for seg in self._segs]) if self._segs else np.empty(0, np.int64)

    def _positions(self) -> dict[str, int]:
        """node → its position in :meth:`names` (the last one: the last evaluation wins, as in the dict)."""
        if self._index is None:
            names = self.names()
            self._index = dict(zip(names, range(len(names))))
            start = 0
            for seg in self._segs:
                self._starts.append(start)
                start += len(seg.names)
        return self._index

    def _at(self, key: str) -> tuple[_Segment, int]:
        pos = self._positions()[key]
        k = bisect.bisect_right(self._starts, pos) - 1
        return self._segs[k], pos - self._starts[k]

    def _materialized(self) -> dict[str, dict[str, Any]]:
        if self._data is None:
            self._data = {n: seg.entry(i) for seg in self._segs for i, n in enumerate(seg.names)}
        return self._data

    def rejections(self) -> tuple[list[str], list[tuple[tuple[str, Any], int]]] | None:
        """The evaluated nodes in order and, per node, ``((plugin, reasons), plugins passed)``:
        the last item of the node's entry (``("", "")`` for a feasible node; ``reasons`` as a
        tuple, ``("rejected",)`` if empty) and how many of its items are ``"passed"`` (one tuple
        object per distinct outcome). None when a node was evaluated twice (read the dicts)."""
        names = self.names()
        if self._data is not None or len(names) != len(self):
            return None
        out: list[tuple[tuple[str, Any], int]] = []
        for seg in self._segs:
            feasible = (("", ""), len(seg.ran))
            memo: dict[tuple[int, int], tuple[tuple[str, Any], int]] = {}
            for fp, key in zip(seg.fail.tolist(), seg.keys.tolist()):
                if fp < 0:
                    out.append(feasible)
                    continue
                hit = memo.get((fp, key))
                if hit is None:
                    reasons = tuple(seg.tables[fp].entry(int(key))[0]) or ("rejected",)
                    hit = memo[(fp, key)] = ((seg.plugins[fp], reasons), sum(1 for pi in seg.ran if pi < fp))
                out.append(hit)
        return names, out

    def outcome_codes(self) -> tuple[list[str], np.ndarray, list[tuple[str, tuple[str, ...], int]]] | None:
        """:meth:`rejections` as columns: the evaluated nodes in order, per node an outcome code
        (``int32[nodes]``: −1 feasible, else an index into the outcome list) and the distinct
        outcomes ``(failing plugin, its reasons — ("rejected",) if none —, plugins passed)``,
        found with ``numpy.unique`` per failing plugin (no per-node Python loop). None when a node
        was evaluated twice (read the dicts)."""
        names = self.names()
        if len(names) != len(self):
            return None
        return names, *self.codes()

    def codes(self) -> tuple[np.ndarray, list[tuple[str, tuple[str, ...], int]]]:
        """:meth:`outcome_codes` without the names (read them one at a time with :meth:`name_at`):
        per evaluation an outcome code, and the distinct outcomes. Check first that no node was
        evaluated twice (``count() == len(self)``)."""
        outcomes: list[tuple[str, tuple[str, ...], int]] = []
        parts: list[np.ndarray] = []
        for seg in self._segs:
            codes = np.full(len(seg.fail), -1, np.int32)
            if seg.rejected == 0:
                parts.append(codes)
                continue
            rejected = np.flatnonzero(seg.fail >= 0)
            if len(rejected):
                fails = seg.fail[rejected]
                for fp in np.unique(fails).tolist():
                    mine = fails == fp
                    keys, inverse = np.unique(seg.keys[rejected[mine]], return_inverse=True)
                    passed = sum(1 for pi in seg.ran if pi < fp)
                    codes[rejected[mine]] = len(outcomes) + inverse
                    outcomes.extend((seg.plugins[fp], tuple(seg.tables[fp].entry(k)[0]) or ("rejected",), passed)
                                    for k in keys.tolist())
            parts.append(codes)
        if len(parts) == 1:
            return parts[0], outcomes
        return np.concatenate(parts) if parts else np.empty(0, np.int32), outcomes

    def __getitem__(self, key: str) -> dict[str, Any]:
        if self._data is not None:
            return self._data[key]
        seg, i = self._at(key)
        return seg.entry(i)

    def __contains__(self, key: object) -> bool:
        if self._data is not None:
            return key in self._data
        return key in self._positions()

    def __len__(self) -> int:
        if self._data is not None:
            return len(self._data)
        if self._index is not None:
            return len(self._index)
        if self._len is None:  # distinct rows are distinct nodes (names read at the same time)
            rows = self.rows()
            if len(rows) == 0:
                self._len = 0
            else:
                seen = np.zeros(int(rows.max()) + 1, bool)
                seen[rows] = True
                self._len = int(np.count_nonzero(seen))
        return self._len

    def __iter__(self) -> Iterator[str]:
        return iter(self._materialized())



def same_rows(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal(a, b)`` for two 1-D row arrays of one dtype, as one byte comparison
    (a C ``memcmp``; ``array_equal`` is ~20× dearer on 1,000 rows)."""
    return a is b or (a.dtype == b.dtype and len(a) == len(b) and a.tobytes() == b.tobytes())


def names_of(names: list[str], rows: np.ndarray) -> list[str]:
    """``[names[r] for r in rows]`` (one C-level gather)."""
    if len(rows) == 0:
        return []
    if len(rows) == 1:
        return [names[int(rows[0])]]
    return list(operator.itemgetter(*rows.tolist())(names))


class NodeColumns:
    """The nodes of a record's score columns: their rows in the node table and the table's names
    when the record was made (:func:`names_snapshot`), read as names only when asked — the report
    reads a dozen of a pod's hundreds of scored nodes. Or a plain list of names
    (:meth:`of_names`). Shared by a record's :class:`NodeScores` and :class:`NodeTotals`."""

    __slots__ = ("_names", "box", "known", "rows", "snap")

    def __init__(self, rows: np.ndarray | None, snap: list[str] | None = None, names: list[str] | None = None,
                 known: tuple[str, int] | None = None) -> None:
        self.rows = rows
        self.snap = snap
        self._names = names
        #: a one-item box for the node → column index, built on the first lookup
        self.box: list[dict[str, int] | None] = [None]
        #: ``(name, row)`` of a node the table was asked about when the record was made (the
        #: selected one): :meth:`find` answers it from the rows
        self.known = known

    @classmethod
    def of_names(cls, names: list[str]) -> NodeColumns:
        return cls(None, None, names)

    @property
    def names(self) -> list[str]:
        """The nodes in column order (gathered once; the list itself: do not change it)."""
        names = self._names
        if names is None:
            assert self.rows is not None and self.snap is not None
            names = self._names = names_of(self.snap, self.rows)
        return names

    def name(self, col: int) -> str:
        """The node of column ``col`` (``0 <= col < len``)."""
        if self._names is not None:
            return self._names[col]
        assert self.rows is not None and self.snap is not None
        return self.snap[int(self.rows[col])]

    def names_at(self, cols: list[int]) -> list[str]:
        """``[name(c) for c in cols]`` (one numpy gather of the rows)."""
        if self._names is not None:
            names = self._names
            return [names[c] for c in cols]
        if not cols:
            return []
        assert self.rows is not None and self.snap is not None
        snap = self.snap
        return [snap[r] for r in self.rows[cols].tolist()]

    def find(self, name: str) -> int:
        """The first column of ``name``, −1 when absent (``names.index``)."""
        known = self.known
        if known is not None and known[0] == name and self._names is None and self.rows is not None:
            hits = np.flatnonzero(self.rows == known[1])
            return int(hits[0]) if len(hits) else -1
        try:
            return self.names.index(name)
        except ValueError:
            return -1

    def __len__(self) -> int:
        return len(self._names) if self._names is not None else len(self.rows)  # type: ignore[arg-type]


class _ByColumn(_LazyMapping[_V]):
    """A :class:`_LazyMapping` over per-node columns: ``_cols`` (the node of each column, a
    :class:`NodeColumns`), a node → column index built on the first lookup (``_index``: a one-item
    box that mappings over the same names share) and the dict once iterated (``_data``)."""

    __slots__ = ("_cols", "_data", "_index")

    _data: dict[str, _V] | None
    _index: list[dict[str, int] | None]
    _cols: NodeColumns

    def _init_columns(self, names: list[str] | NodeColumns, index: list[dict[str, int] | None] | None) -> None:
        self._cols = names if isinstance(names, NodeColumns) else NodeColumns.of_names(names)
        self._index = self._cols.box if index is None else index
        self._data = None

    @property
    def names(self) -> list[str]:
        """The nodes of the columns, in order (the list itself: do not change it)."""
        return self._cols.names

    @property
    def columns(self) -> NodeColumns:
        """The nodes of the columns (shared by the mappings of one record)."""
        return self._cols

    def _positions(self) -> dict[str, int]:
        """node → its column (built on the first lookup)."""
        index = self._index[0]
        if index is None:
            names = self._cols.names
            index = self._index[0] = dict(zip(names, range(len(names))))
        return index

    def __contains__(self, key: object) -> bool:
        if self._data is not None:
            return key in self._data
        return key in self._positions()

    def __len__(self) -> int:
        return len(self._cols)

    def __iter__(self) -> Iterator[str]:
        return iter(self._materialized())


class NodeScores(_ByColumn[dict[str, int]]):
    """node → plugin → score (a read-only mapping), built from a cycle's ``int64[plugins, nodes]``
    array only when read.

    A record holds three of these (raw, normalized, weighted); most consumers read a handful of
    nodes (``-o wide``: none; the report: the ten it shows), so building one dict per node for
    every attempt (O(nodes) dicts per pod) is left until someone iterates: one lookup
    (``get``/``[]``/``in``/``len``) answers from the array, iteration builds the dicts once.
    Not a ``dict``: JSON encoders must go through :meth:`DecisionRecord.to_dict` or ``dict(...)``
    (a dict subclass would be encoded from its empty storage). ``plugins``: the Score plugins in order.
    """

    __slots__ = ("_arr", "plugins", "stack")

    def __init__(self, names: list[str] | NodeColumns, plugins: list[str], arr: np.ndarray,
                 index: list[dict[str, int] | None] | None = None, stack: np.ndarray | None = None,
                 *, copy: bool = True) -> None:
        self.plugins = list(plugins) if copy else plugins  # (``copy=False``: the caller's list, shared)
        self._arr = arr  # int64[plugins, nodes], a private copy
        #: ``int64[3, plugins, nodes]``: the record's raw, normalized and weighted scores in one
        #: array when this mapping is one of them (``_arr`` is then ``stack[i]``), else None
        self.stack = stack
        # node → column, built on the first lookup; ``index``: a one-item box shared by mappings
        # over the same ``names`` (a record's raw, normalized and weighted scores; by default the
        # box of the NodeColumns)
        self._init_columns(names, index)

    def _materialized(self) -> dict[str, dict[str, int]]:
        if self._data is None:
            rows = self._arr.T.tolist()  # nodes × plugins
            self._data = {n: dict(zip(self.plugins, r)) for n, r in zip(self.names, rows)}
        return self._data

    def __getitem__(self, key: str) -> dict[str, int]:
        if self._data is not None:
            return self._data[key]
        i = self._positions()[key]
        return dict(zip(self.plugins, self._arr[:, i].tolist()))

    def iter_rows(self) -> Iterator[tuple[str, dict[str, int]]]:
        """``(node, {plugin: score})`` in node order, one at a time (nothing kept)."""
        if self._data is not None:
            yield from self._data.items()
            return
        for i, n in enumerate(self.names):
            yield n, dict(zip(self.plugins, self._arr[:, i].tolist()))

    def node_at(self, col: int) -> str | None:
        """The node of column ``col`` (None past the end)."""
        return self._cols.name(col) if 0 <= col < len(self._cols) else None

    def block(self, cols: list[int]) -> np.ndarray:
        """``int64[plugins, len(cols)]``: the scores in columns ``cols`` (see :meth:`node_at`)."""
        return self._arr[:, cols]

    def weights(self, final: NodeScores) -> dict[str, int]:
        """plugin → weight read back as ``final // normalized`` at the first node where the
        normalized score is not 0 (``self``: normalized, ``final``: weighted, same nodes); plugins
        that scored 0 everywhere are absent."""
        out: dict[str, int] = {}
        norm, fin = self._arr, final._arr
        if norm.shape[1] == 0:
            return out
        nonzero = norm != 0
        first = nonzero.argmax(axis=1)  # per plugin
        for j, p in enumerate(self.plugins):
            i = int(first[j])
            if nonzero[j, i]:
                out[p] = int(fin[j, i]) // int(norm[j, i])
        return out



def score_results3(table: NodeTable, scores: ScoreResult, names: list[str] | NodeColumns | None = None,
                   ) -> tuple[Mapping[str, dict[str, int]], ...]:
    """``(raw, normalized, weighted)``: node → plugin → score, for the scored rows
    (:class:`NodeScores`, built when read; ``names``: the scored rows' names or
    :class:`NodeColumns` if known)."""
    if names is None:
        names = NodeColumns(scores.rows.copy(), names_snapshot(table))
    cols = names if isinstance(names, NodeColumns) else NodeColumns.of_names(names)
    plugins = scores.plugins
    if not plugins:
        nl = cols.names
        return {n: {} for n in nl}, {n: {} for n in nl}, {n: {} for n in nl}
    # a copy (the cycle's buffers move on): the three np.stack's, in one C-level concatenate
    stack = np.concatenate([*scores.raw, *scores.normalized, *scores.weighted]).reshape(3, len(plugins), len(cols))
    shared = list(plugins)  # one copy for the three (read-only)
    return tuple(NodeScores(cols, shared, arr, None, stack, copy=False) for arr in stack)


class NodeTotals(_ByColumn[int]):
    """node → total score (upstream ``NodePluginScores.TotalScore``) over a cycle's ``int64[nodes]``
    array, a dict only when iterated (as :class:`NodeScores`); :attr:`array`, :attr:`names` and
    :attr:`rows` (the nodes' rows in the node table when the record was made) give the columns.
    Not a ``dict``: encode it through :meth:`DecisionRecord.to_dict` or ``dict(...)``."""

    __slots__ = ("array", "rows")

    def __init__(self, names: list[str] | NodeColumns, totals: np.ndarray, rows: np.ndarray | None = None,
                 index: list[dict[str, int] | None] | None = None) -> None:
        self.array = totals  # int64[nodes], a private copy
        self._init_columns(names, index)
        if rows is None:
            rows = self._cols.rows
            if rows is None:
                raise ValueError("NodeTotals: the nodes' rows are needed (NodeColumns with rows, or rows=)")
        self.rows = rows

    def _materialized(self) -> dict[str, int]:
        if self._data is None:
            self._data = dict(zip(self.names, self.array.tolist()))
        return self._data

    def __getitem__(self, key: str) -> int:
        if self._data is not None:
            return self._data[key]
        return int(self.array[self._positions()[key]])

    def find(self, node: str) -> int:
        """The column of ``node`` (the first), −1 when it was not scored."""
        return self._cols.find(node)


def build_record(*, pod: str, profile: str, attempt: int, time: float, table: NodeTable,
                 chunks: list[Any], scores: ScoreResult | None, selected: str | None,
                 result: str, message: str = "", pre_filter: dict[str, str] | None = None,
                 post_filter: dict[str, Any] | None = None, nominated: str | None = None,
                 extender_statuses: dict[str, Any] | None = None) -> DecisionRecord:
    """Assemble a :class:`DecisionRecord` from a cycle's arrays. ``extender_statuses`` (node →
    Status) are the scheduler extenders' rejections: recorded under the "plugin" ``Extender``.

    The arrays are copied (the cycle reuses its buffers); the nodes' names are not gathered: the
    record keeps their rows and the table's names as they are now (:func:`names_snapshot`)."""
    per_chunk = [int(np.count_nonzero(c.ok_mask())) for c in chunks]
    feasible = sum(per_chunk)
    snap = names_snapshot(table)
    filt: Mapping[str, dict[str, Any]]
    if extender_statuses:  # rare: the plain dicts, with the extenders' entries added
        plain = filter_results(table, chunks)
        for node, st in extender_statuses.items():
            entry = plain.setdefault(node, {})
            if all(v == PASSED for v in entry.values()):
                feasible -= 1 if entry else 0
            entry["Extender"] = list(st.reasons)
        filt = plain
    else:
        filt = FilterResults(table, chunks, snap=snap, feasible=per_chunk)
    rec = DecisionRecord(pod=pod, profile=profile, attempt=attempt, time=time, selected_node=selected,
                         result=result, message=message, evaluated_nodes=len(filt),
                         feasible_nodes=feasible, pre_filter=pre_filter or {}, filter=filt,
                         post_filter=post_filter or {}, nominated_node=nominated)
    if scores is not None:
        rows = scores.rows
        segs = filt._segs if isinstance(filt, FilterResults) else ()
        if len(segs) == 1 and same_rows(segs[0].rows, rows):
            rows = segs[0].rows  # every evaluated node scored (one copy for both)
        else:
            rows = rows.copy()
        row_of = getattr(table, "row_of", None)
        sel_row = row_of.get(selected) if selected is not None and row_of is not None else None
        cols = NodeColumns(rows, snap, known=None if selected is None or sel_row is None else (selected, sel_row))
        rec.score, rec.normalized_score, rec.final_score = score_results3(table, scores, cols)
        rec.total_score = NodeTotals(cols, scores.total.copy())
    return rec
