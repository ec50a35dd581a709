"""The incremental inter-pod affinity index: per-node counts kept up to date by NodeTable events.

Two kinds of :class:`Counter` (an ``int64[cap]`` value per node row, plus cached per-domain sums
for the topology keys asked for, indexed by the label column's value id):

* **targets** — one per distinct tuple of incoming-pod terms ``((namespaces|None, selector), …)``
  seen in a cycle: per node, the number of existing pods that match *all* of them. Built by one
  scan over the known pods when first asked for, then updated in O(#targets) per pod add/remove;
  least-recently-used ones are dropped beyond :data:`MAX_TARGETS`.
* **existing terms** — one per distinct ``(kind, AffinityTerm)`` carried by existing pods, kind
  being required anti-affinity, required affinity, preferred affinity or preferred
  anti-affinity: per node, the number of pods carrying that term (preferred kinds: the sum of
  their weights). A PreFilter/PreScore tests each distinct term once against the incoming pod.

Per-domain arrays have one trailing 0 slot, so ``dom[col[rows]]`` reads 0 for nodes without the
label (value id -1). They are updated in place on every pod add/remove and node relabel, so a
cycle never rescans pods. One index is shared by every plugin instance on the same table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugins.interpodaffinity.terms import AffinityTerm, PodTerms, Target, shared_pod_terms

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["AffinityIndex", "Counter", "MAX_TARGETS", "REQ_AFF", "REQ_ANTI", "PREF_AFF", "PREF_ANTI",
           "get_index", "pod_terms", "grow_domain"]

REQ_ANTI, REQ_AFF, PREF_AFF, PREF_ANTI = 0, 1, 2, 3
MAX_TARGETS = 256
TERMS_KEY = "InterPodAffinity"


def pod_terms(pod_info: PodInfo) -> PodTerms:
    """The parsed terms of a pod, cached in ``pod_info.extra``."""
    t = pod_info.extra.get(TERMS_KEY)
    if isinstance(t, tuple) and t[0] is pod_info.pod:
        return t[1]  # extra[TERMS_KEY] holds (pod, PodTerms)
    terms = shared_pod_terms(pod_info.pod)
    pod_info.extra[TERMS_KEY] = (pod_info.pod, terms)
    return terms


def grow_domain(dom: np.ndarray, n_values: int) -> np.ndarray:
    """``dom`` resized to ``n_values + 1`` slots (last one the 0 sentinel)."""
    if len(dom) >= n_values + 1:
        return dom
    out = np.zeros(n_values + 1, np.int64)
    out[:len(dom) - 1] = dom[:-1]
    return out


class Counter:
    """Per-node values and their per-domain sums (see the module docstring)."""

    __slots__ = ("key", "per_node", "domains", "total", "last_used")

    def __init__(self, key: object, cap: int) -> None:
        self.key = key
        self.per_node = np.zeros(cap, np.int64)
        self.domains: dict[str, np.ndarray] = {}
        self.total = 0
        self.last_used = 0


class _PodRecord:
    __slots__ = ("row", "ns", "labels", "contribs")

    def __init__(self, row: int, ns: str, labels: Mapping[str, str]) -> None:
        self.row = row
        self.ns = ns
        self.labels = labels
        self.contribs: list[tuple[int, AffinityTerm, int]] = []


def _match_all(key: tuple[Target, ...], ns: str, labels: Mapping[str, str]) -> bool:
    for namespaces, selector in key:
        if namespaces is not None and ns not in namespaces:
            return False
        if not selector.matches(labels):
            return False
    return True


class AffinityIndex:
    """A :class:`~kubesched.framework.node_table.NodeTableListener`; see the module docstring."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.cap = table.capacity
        self.targets: dict[tuple[Target, ...], Counter] = {}
        self.existing: tuple[dict[AffinityTerm, Counter], ...] = ({}, {}, {}, {})
        self.pods: dict[str, _PodRecord] = {}
        self.row_pods: dict[int, set[str]] = {}
        self.tick = 0
        table.add_listener(self)
        for row in np.flatnonzero(table.alive).tolist():
            for p in list(table.pods[row]):
                self.on_pod_added(table, row, p)

    # ───────────────────────────── queries ─────────────────────────────

    def target(self, key: tuple[Target, ...]) -> Counter:
        """The counter of existing pods matching all of ``key``, built on first use."""
        c = self.targets.get(key)
        if c is None:
            if len(self.targets) >= MAX_TARGETS:
                victim = min(self.targets, key=lambda k: self.targets[k].last_used)
                del self.targets[victim]
            c = Counter(key, self.cap)
            pn = c.per_node
            for rec in self.pods.values():
                if _match_all(key, rec.ns, rec.labels):
                    pn[rec.row] += 1
                    c.total += 1
            self.targets[key] = c
        c.last_used = self.tick
        return c

    def domain(self, c: Counter, tk: str) -> np.ndarray:
        """Per-domain sums of ``c`` for topology key ``tk`` (``int64[#values + 1]``, read-only
        for callers: they copy before writing)."""
        t = self.table
        n_values = len(t.label_values.get(tk, ()))
        dom = c.domains.get(tk)
        if dom is None:
            col = t.labels.get(tk)
            if col is None or not c.total:
                dom = np.zeros(n_values + 1, np.int64)
            else:
                n = min(len(col), len(c.per_node))
                vids = col[:n]
                m = vids >= 0
                dom = np.zeros(n_values + 1, np.int64)
                dom[:n_values] = np.bincount(vids[m], weights=c.per_node[:n][m], minlength=n_values)[:n_values]
            c.domains[tk] = dom
        elif len(dom) < n_values + 1:
            dom = c.domains[tk] = grow_domain(dom, n_values)
        return dom

    # ───────────────────────────── updates ─────────────────────────────

    def _ensure_cap(self, row: int) -> None:
        if row < self.cap:
            return
        new = max(self.table.capacity, row + 1)
        for c in self._all_counters():
            pn = np.zeros(new, np.int64)
            pn[:self.cap] = c.per_node
            c.per_node = pn
        self.cap = new

    def _all_counters(self):
        yield from self.targets.values()
        for d in self.existing:
            yield from d.values()

    def _bump(self, c: Counter, row: int, delta: int) -> None:
        c.per_node[row] += delta
        c.total += delta
        if c.domains:
            labels = self.table.labels
            for tk, dom in c.domains.items():
                col = labels.get(tk)
                if col is None:
                    continue
                vid = int(col[row])
                if vid < 0:
                    continue
                if vid >= len(dom) - 1:
                    dom = c.domains[tk] = grow_domain(dom, len(self.table.label_values[tk]))
                dom[vid] += delta

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        self._ensure_cap(row)
        pod = pod_info.pod
        key = pod_info.key
        if key in self.pods:  # re-added without a removal: drop the stale record first
            self._remove(key)
        rec = _PodRecord(row, pod.metadata.namespace, dict(pod.metadata.labels))
        self.pods[key] = rec
        self.row_pods.setdefault(row, set()).add(key)
        for tkey, c in self.targets.items():
            if _match_all(tkey, rec.ns, rec.labels):
                self._bump(c, row, 1)
        terms = pod_terms(pod_info)
        if not terms.has_any:
            return
        for kind, items in ((REQ_ANTI, [(t, 1) for t in terms.required_anti_affinity]),
                            (REQ_AFF, [(t, 1) for t in terms.required_affinity]),
                            (PREF_AFF, [(w.term, w.weight) for w in terms.preferred_affinity]),
                            (PREF_ANTI, [(w.term, w.weight) for w in terms.preferred_anti_affinity])):
            d = self.existing[kind]
            for term, value in items:
                ec = d.get(term)
                if ec is None:
                    ec = d[term] = Counter((kind, term), self.cap)
                self._bump(ec, row, value)
                rec.contribs.append((kind, term, value))

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        self._remove(pod_info.key)

    def _remove(self, key: str) -> None:
        rec = self.pods.pop(key, None)
        if rec is None:
            return
        row = rec.row
        keys = self.row_pods.get(row)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self.row_pods[row]
        for tkey, c in self.targets.items():
            if _match_all(tkey, rec.ns, rec.labels):
                self._bump(c, row, -1)
        for kind, term, value in rec.contribs:
            d = self.existing[kind]
            ec = d.get(term)
            if ec is None:
                continue
            self._bump(ec, row, -value)
            if ec.total == 0:
                del d[term]

    def on_node_set(self, table: NodeTable, row: int, old: Node | None) -> None:
        self._ensure_cap(row)
        if old is None or row not in self.row_pods:
            return
        new_labels = table.nodes[row].metadata.labels  # type: ignore[union-attr]
        old_labels = old.metadata.labels
        if new_labels == old_labels:
            return
        self._relabel(row, old_labels)

    def _relabel(self, row: int, old_labels: Mapping[str, str] | None) -> None:
        """Move ``row``'s values from its old domains (``old_labels``) to its current ones
        (``None`` = the row is gone: just subtract)."""
        t = self.table
        for c in self._all_counters():
            v = int(c.per_node[row])
            if not v or not c.domains:
                continue
            for tk, dom in list(c.domains.items()):
                ov = old_labels.get(tk) if old_labels else None
                old_vid = t.label_value_id(tk, ov) if ov is not None else -1
                col = t.labels.get(tk)
                new_vid = int(col[row]) if col is not None and t.alive[row] else -1
                if old_vid == new_vid:
                    continue
                n_values = len(t.label_values.get(tk, ()))
                if len(dom) < n_values + 1:
                    dom = c.domains[tk] = grow_domain(dom, n_values)
                if old_vid >= 0:
                    dom[old_vid] -= v
                if new_vid >= 0:
                    dom[new_vid] += v

    def on_node_removed(self, table: NodeTable, row: int, old: Node) -> None:
        keys = self.row_pods.get(row)
        if not keys:
            return
        # Pods left on a removed node: forget them (their node's labels are gone from the table).
        self._relabel(row, old.metadata.labels)
        for c in list(self._all_counters()):
            c.total -= int(c.per_node[row])
            c.per_node[row] = 0
        for key in list(keys):
            rec = self.pods.pop(key)
            for kind, term, _ in rec.contribs:
                d = self.existing[kind]
                c = d.get(term)
                if c is not None and c.total == 0:
                    del d[term]
        del self.row_pods[row]


_INDEX_KEY = (__name__, "AffinityIndex")


def get_index(table: NodeTable) -> AffinityIndex:
    """The index of ``table``, created (and attached as a listener) on first use; owned by the
    table (:meth:`NodeTable.derived`)."""
    return table.derived(_INDEX_KEY, AffinityIndex)

