"""Filter outcomes, ``Diagnosis`` and ``FitError`` (upstream ``pkg/scheduler/framework/types.go``).

Filter results are kept as arrays per evaluated chunk of nodes (:class:`FilterChunk`); the
per-node ``Status`` objects, the reason histogram and the FailedScheduling message are derived
from them only when someone asks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.framework.interface import Code, FilterResult, ReasonEntry, Status, bits_entry
from kubesched.framework.npfast import count_nonzero

__all__ = ["Diagnosis", "FilterChunk", "FitError", "NO_NODES_AVAILABLE", "NodeToStatus",
           "PluginReasons"]


NO_NODES_AVAILABLE = "no nodes available to schedule pods"
"""Upstream ``ErrNoNodesAvailable``."""


@dataclass(slots=True)
class PluginReasons:
    """Reason table of one filter plugin in one chunk: what a node's non-zero key means.

    The two forms of :class:`~kubesched.framework.interface.FilterResult`: a bit set over
    ``reasons`` / ``codes`` (``statuses is None``), or an interned id ``k ≥ 1`` into
    ``statuses[k - 1]`` (no limit on how many distinct statuses).
    """

    reasons: Sequence[str] = ()
    codes: Sequence[Code] = ()
    statuses: Sequence[ReasonEntry] | None = None

    @classmethod
    def of(cls, res: FilterResult) -> PluginReasons:
        return cls(res.reasons, res.codes, res.statuses)

    def entry(self, key: int) -> ReasonEntry:
        """``(reasons, code)`` of the non-zero key ``key``."""
        if self.statuses is not None:
            return self.statuses[key - 1]
        return bits_entry(self.reasons, self.codes, key)

    def status(self, key: int, plugin: str) -> Status:
        reasons, code = self.entry(key)
        return Status(code, reasons, None, plugin)


@dataclass(slots=True)
class FilterChunk:
    """Filter results for ``rows`` (``int64[M]``, in evaluation order).

    ``fail_plugin[i]`` is the index (into ``plugins``) of the first plugin that rejected
    ``rows[i]``, -1 if it passed; ``fail_key[i]`` (``int64``) the node's key in that plugin's
    reason table ``tables[fail_plugin[i]]`` (a reason bit set or an interned status id, see
    :class:`PluginReasons`). ``ran[i]`` lists nothing per node: the plugins that ran on a node
    are the non-skipped plugins up to and including its first failing one (``skipped``).
    """

    rows: np.ndarray
    fail_plugin: np.ndarray
    fail_key: np.ndarray
    plugins: Sequence[str]
    tables: list[PluginReasons | None]
    skipped: frozenset[int] = frozenset()
    overrides: dict[int, FilterChunk] = field(default_factory=dict)
    """Index → a 1-row chunk that replaces this chunk's result for that node (``fail_plugin``
    is ``OVERRIDDEN`` there): the node was rejected only once the pods nominated to it were
    counted (upstream ``RunFilterPluginsWithNominatedPods``)."""

    PASSED = -1
    OVERRIDDEN = -2

    def ok_mask(self) -> np.ndarray:
        """``bool[M]``: the nodes that passed every filter."""
        ok: np.ndarray = self.fail_plugin == self.PASSED
        return ok

    def passed(self) -> np.ndarray:
        rows: np.ndarray = self.rows[self.ok_mask()]
        return rows

    def override(self, i: int, sub: FilterChunk) -> None:
        self.overrides[i] = sub
        self.fail_plugin[i] = self.OVERRIDDEN

    def reject(self, idx: np.ndarray, plugin: int, keys: np.ndarray, reasons: PluginReasons) -> bool:
        """Record that plugin index ``plugin`` rejects the nodes at positions ``idx`` with
        ``keys`` of ``reasons`` (the pass with nominated pods, where the plain pass let them
        further), in the arrays themselves: the same per-node status as a 1-row
        :meth:`override` each, without one chunk per node. Only when ``reasons`` is a bit set
        meaning what this chunk's table of that plugin means (or the chunk has none yet);
        False (nothing changed) otherwise."""
        if reasons.statuses is not None:
            return False
        cur = self.tables[plugin]
        if cur is None:
            tables = list(self.tables)  # the list may be shared with a truncated copy
            tables[plugin] = reasons
            self.tables = tables
        elif cur is not reasons and (cur.statuses is not None or tuple(cur.reasons) != tuple(reasons.reasons)
                                     or tuple(cur.codes) != tuple(reasons.codes)):
            return False
        self.fail_plugin[idx] = plugin
        self.fail_key[idx] = keys
        return True

    def truncate(self, n: int) -> FilterChunk:
        """Only the first ``n`` evaluated nodes (the rest count as never evaluated)."""
        return FilterChunk(self.rows[:n], self.fail_plugin[:n], self.fail_key[:n], self.plugins,
                           self.tables, self.skipped, {i: c for i, c in self.overrides.items() if i < n})

    def statuses(self, names: Sequence[str]) -> Iterator[tuple[str, Status]]:
        """``(node name, Status)`` for every rejected node."""
        for i in np.flatnonzero(self.fail_plugin >= 0):
            pi = int(self.fail_plugin[i])
            table = self.tables[pi]
            assert table is not None
            yield names[int(self.rows[i])], table.status(int(self.fail_key[i]), self.plugins[pi])
        for sub in self.overrides.values():
            yield from sub.statuses(names)

    def _keys(self) -> Iterator[tuple[int, PluginReasons, int, int]]:
        """``(plugin index, its reason table, a distinct key, how many nodes have it)`` over
        this chunk's rejected nodes (overrides excluded)."""
        fp = self.fail_plugin
        for pi, table in enumerate(self.tables):
            if table is None:
                continue
            sel = fp == pi
            if not sel.any():
                continue
            values, counts = np.unique(self.fail_key[sel], return_counts=True)
            for key, cnt in zip(values.tolist(), counts.tolist()):
                yield pi, table, key, cnt

    def key_counts(self, out: dict[tuple[int, int, int], list[Any]]) -> None:
        """Count this chunk's rejected nodes (overrides included) by status: ``out[(plugin index,
        id(reason table), key)]`` is ``[plugin, table, key, number of nodes]``. The 1-row
        overrides (one per node holding nominated pods) are read without array operations."""
        for sub in self.overrides.values():
            if len(sub.rows) == 1 and sub.fail_plugin[0] >= 0 and not sub.overrides:
                pi = int(sub.fail_plugin[0])
                table = sub.tables[pi]
                assert table is not None
                key = int(sub.fail_key[0])
                k = (pi, id(table), key)
                got = out.get(k)
                if got is None:
                    out[k] = [sub.plugins[pi], table, key, 1]
                else:
                    got[3] += 1
            else:
                sub.key_counts(out)
        for pi, table, key, cnt in self._keys():
            k = (pi, id(table), key)
            got = out.get(k)
            if got is None:
                out[k] = [self.plugins[pi], table, key, cnt]
            else:
                got[3] += cnt

    def add_histogram(self, hist: dict[str, int]) -> None:
        """Add every rejected node's reasons to ``hist`` (reason → number of nodes)."""
        counts: dict[tuple[int, int, int], list[Any]] = {}
        self.key_counts(counts)
        _add_counts(hist, counts)

    def rejecting_plugins(self) -> Iterator[tuple[str, Code]]:
        """``(plugin, code)`` for each plugin and distinct status among the rejected nodes."""
        counts: dict[tuple[int, int, int], list[Any]] = {}
        self.key_counts(counts)
        for plugin, table, key, _ in counts.values():
            yield plugin, table.entry(key)[1]


def _add_counts(hist: dict[str, int], counts: dict[tuple[int, int, int], list[Any]]) -> None:
    """Add the reasons of :meth:`FilterChunk.key_counts`' statuses to ``hist``, each status's
    reasons counted once per node."""
    for _, table, key, cnt in counts.values():
        for reason in table.entry(key)[0]:
            hist[reason] = hist.get(reason, 0) + cnt


@dataclass
class Diagnosis:
    """Why a pod did not fit (upstream ``framework.Diagnosis``).

    ``chunks`` hold the explicit per-node statuses; ``absent_status`` applies to every node of
    the snapshot with no explicit status (PreFilter rejections, nodes outside a
    PreFilterResult). ``unschedulable_plugins`` / ``pending_plugins`` decide requeueing.
    """

    chunks: list[FilterChunk] = field(default_factory=list)
    extra_statuses: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    _counts: tuple[tuple[tuple[int, int], ...], dict[tuple[int, int, int], list[Any]]] | None = field(
        default=None, repr=False, compare=False)
    """The last :meth:`_key_counts` and the chunks it counted (``collect_plugins`` and the
    FailedScheduling message both read it; chunks are not edited once appended)."""

    def num_explicit(self) -> int:
        return sum(int(count_nonzero(c.fail_plugin != c.PASSED)) for c in self.chunks) + len(self.extra_statuses)

    def add_plugin_status(self, status: Status) -> None:
        """Upstream ``AddPluginStatus``: remember the plugin of a rejection."""
        if not status.plugin:
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)

    def collect_plugins(self) -> None:
        """Upstream ``AddPluginStatus`` for every rejected node's status (each distinct plugin and
        code once)."""
        seen: set[tuple[str, Code]] = set()
        for plugin, table, key, _ in self._key_counts().values():
            pc = (plugin, table.entry(key)[1])
            if pc not in seen:
                seen.add(pc)
                self.add_plugin_status(Status(pc[1], (), None, plugin))

    def _key_counts(self) -> dict[tuple[int, int, int], list[Any]]:
        seen = tuple((id(c), len(c.overrides)) for c in self.chunks)
        if self._counts is not None and self._counts[0] == seen:
            return self._counts[1]
        counts: dict[tuple[int, int, int], list[Any]] = {}
        for c in self.chunks:
            c.key_counts(counts)
        self._counts = (seen, counts)
        return counts

    def node_to_status(self, names: Sequence[str]) -> dict[str, Status]:
        """Explicit statuses by node name."""
        out: dict[str, Status] = {}
        for c in self.chunks:
            out.update(c.statuses(names))
        out.update(self.extra_statuses)
        return out

    def histogram(self, num_all_nodes: int) -> dict[str, int]:
        hist: dict[str, int] = {}
        _add_counts(hist, self._key_counts())
        for st in self.extra_statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        if self.absent_status is not None:
            absent = num_all_nodes - self.num_explicit()
            if absent > 0:
                for r in self.absent_status.reasons:
                    hist[r] = hist.get(r, 0) + absent
        return hist


class FitError(Exception):
    """No node fits the pod (upstream ``framework.FitError``); ``str()`` is the FailedScheduling
    message in upstream's exact format."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__(pod_key)
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``0/N nodes are available: <PreFilterMsg or sorted histogram>. <PostFilterMsg>``.

    The histogram entries are ``"%d %s"`` strings sorted **as strings** (so "10 X" < "2 Y"),
    joined by ", " — upstream ``FitError.Error()``.
    """
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += " " + diagnosis.pre_filter_msg + "."
    else:
        hist = diagnosis.histogram(num_all_nodes)
        entries = sorted(f"{n} {r}" for r, n in hist.items())
        if entries:
            msg += " " + ", ".join(entries) + "."
    if diagnosis.post_filter_msg:
        msg += " " + diagnosis.post_filter_msg
    return msg


class NodeToStatus:
    """Upstream ``framework.NodeToStatus``: explicit per-node statuses plus the status of every
    node absent from the map. Built lazily from the diagnosis arrays: ``get(name)`` answers for
    any node; ``rows_with_code`` selects nodes by status code without building statuses."""

    def __init__(self, diagnosis: Diagnosis, names: Sequence[str],
                 row_of: dict[str, int] | None = None) -> None:
        self._diagnosis = diagnosis
        self._names = names
        self._row_of = row_of
        self._explicit: dict[str, Status] | None = None
        self.absent_status = diagnosis.absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def explicit(self) -> dict[str, Status]:
        if self._explicit is None:
            self._explicit = self._diagnosis.node_to_status(self._names)
        return self._explicit

    def get(self, name: str) -> Status:
        """The node's status; one node is resolved without building the whole map."""
        if self._explicit is not None or self._row_of is None:
            return self.explicit().get(name, self.absent_status)
        st = self._diagnosis.extra_statuses.get(name)
        if st is not None:
            return st
        row = self._row_of.get(name)
        if row is None:
            return self.absent_status
        for chunk in self._diagnosis.chunks:
            hit = np.flatnonzero(chunk.rows == row)
            if len(hit) == 0:
                continue
            i = int(hit[0])
            fp = int(chunk.fail_plugin[i])
            if fp == chunk.OVERRIDDEN:
                return next(chunk.overrides[i].statuses(self._names))[1]
            if fp >= 0:
                table = chunk.tables[fp]
                assert table is not None
                return table.status(int(chunk.fail_key[i]), chunk.plugins[fp])
        return self.absent_status

    def __len__(self) -> int:
        return self._diagnosis.num_explicit()

    def rows_with_code(self, order: np.ndarray, code: Code) -> np.ndarray:
        """The rows of ``order`` (in that order) whose status has ``code``."""
        n = len(self._names)
        codes = np.full(n, int(self.absent_status.code), np.int8)
        for chunk in self._diagnosis.chunks:
            fp = chunk.fail_plugin
            codes[chunk.rows[fp == chunk.PASSED]] = int(Code.SUCCESS)
            for pi, table in enumerate(chunk.tables):
                if table is None:
                    continue
                sel = np.flatnonzero(fp == pi)
                if len(sel) == 0:
                    continue
                uniq, inv = np.unique(chunk.fail_key[sel], return_inverse=True)
                lut = np.asarray([int(table.entry(k)[1]) for k in uniq.tolist()], np.int8)
                codes[chunk.rows[sel]] = lut[inv]
            if chunk.overrides:
                sub_codes: dict[tuple[int, int], int] = {}  # (id(table), key) → code
                for i, sub in chunk.overrides.items():
                    sfp = int(sub.fail_plugin[0])
                    if len(sub.rows) == 1 and sfp >= 0:
                        stable = sub.tables[sfp]
                        assert stable is not None
                        key = int(sub.fail_key[0])
                        c = sub_codes.get((id(stable), key))
                        if c is None:
                            c = sub_codes[(id(stable), key)] = int(stable.entry(key)[1])
                        codes[int(chunk.rows[i])] = c
                    else:
                        codes[int(chunk.rows[i])] = int(next(sub.statuses(self._names))[1].code)
        if self._diagnosis.extra_statuses:
            index = {nm: r for r, nm in enumerate(self._names)}
            for name, st in self._diagnosis.extra_statuses.items():
                r = index.get(name)
                if r is not None:
                    codes[r] = int(st.code)
        out: np.ndarray = order[codes[order] == int(code)]
        return out
