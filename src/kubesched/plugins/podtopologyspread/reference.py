"""A plain per-node reference of PodTopologySpread, shaped like upstream's Go code.

No index and no arrays: counts come from looping over every pod of every node
(``countPodsMatchSelector``), domains are dicts keyed by label value, nodes are judged one at
a time with :mod:`kubesched.api.nodeselector` / :mod:`kubesched.api.taints`. Slow on purpose;
the tests compare the vectorised plugin against it on random clusters.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kubesched.api.nodeselector import RequiredNodeAffinity
from kubesched.api.taints import TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, find_matching_untolerated_taint
from kubesched.framework.interface import Code, Status
from kubesched.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    Constraint,
    node_labels_match,
)
from kubesched.plugins.podtopologyspread.gomath import go_log

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeTable
    from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["count_pods_match_selector", "reference_filter", "reference_scores"]

_REASON = "node(s) didn't match pod topology spread constraints"
_REASON_LABEL = _REASON + " (missing required label)"


def count_pods_match_selector(pods: list[PodInfo], c: Constraint, ns: str) -> int:
    """Upstream ``countPodsMatchSelector``: same namespace, not terminating, selector matches."""
    n = 0
    for p in pods:
        meta = p.pod.metadata
        if meta.deletion_timestamp is not None or meta.namespace != ns:
            continue
        if c.selector.matches(meta.labels):
            n += 1
    return n


def _included(c: Constraint, pod: Pod, node: Node, req: RequiredNodeAffinity,
              comparison_operators: bool = False) -> bool:
    if c.node_affinity_policy == HONOR and not req.match(node.metadata.labels, node.metadata.name):
        return False
    if c.node_taints_policy == HONOR and find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations,
            lambda t: t.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE),
            comparison_operators) is not None:
        return False
    return True


def _node(table: NodeTable, row: int) -> Node:
    node = table.nodes[row]
    if node is None:  # the rows here come from table.order(): live rows only
        raise KeyError(f"row {row} holds no node")
    return node


def _all_rows(table: NodeTable) -> list[int]:
    return [int(r) for r in table.order()]


def reference_filter(plugin: PodTopologySpread, table: NodeTable, pod: Pod,
                     rows: list[int] | None = None) -> dict[int, Status | None] | None:
    """PreFilter + Filter: row → Status (None = passes) for ``rows`` (default: all nodes), or
    None when PreFilter skips (no DoNotSchedule constraint)."""
    constraints = plugin.get_constraints(pod, DO_NOT_SCHEDULE)
    if not constraints:
        return None
    req = RequiredNodeAffinity(pod)
    ns = pod.metadata.namespace
    match_num: list[dict[str, int]] = [{} for _ in constraints]
    for row in _all_rows(table):
        node = _node(table, row)
        if not node_labels_match(node.metadata.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _included(c, pod, node, req, plugin.comparison_operators):
                continue
            v = node.metadata.labels[c.topology_key]
            match_num[i][v] = match_num[i].get(v, 0) + count_pods_match_selector(table.pods[row], c, ns)
    out: dict[int, Status | None] = {}
    for row in (rows if rows is not None else _all_rows(table)):
        labels = _node(table, row).metadata.labels
        st = None
        for i, c in enumerate(constraints):
            if c.topology_key not in labels:
                st = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, _REASON_LABEL)
                break
            m = min(match_num[i].values()) if match_num[i] else 2**31 - 1
            if len(match_num[i]) < c.min_domains:
                m = 0
            self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
            if match_num[i].get(labels[c.topology_key], 0) + self_match - m > c.max_skew:
                st = Status.of(Code.UNSCHEDULABLE, _REASON)
                break
        out[row] = st
    return out


def reference_scores(plugin: PodTopologySpread, table: NodeTable, pod: Pod,
                     filtered: list[int]) -> tuple[list[int], list[int]] | None:
    """PreScore + Score + NormalizeScore over the feasible ``filtered`` rows: ``(raw, normalized)``,
    or None when PreScore skips."""
    if len(table) == 0:
        return None
    constraints = plugin.get_constraints(pod, SCHEDULE_ANYWAY)
    if not constraints:
        return None
    require_all = bool(pod.spec.topology_spread_constraints) or not plugin.system_defaulted
    ignored: set[int] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for row in filtered:
        labels = _node(table, row).metadata.labels
        if require_all and not node_labels_match(labels, constraints):
            ignored.add(row)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                continue
            v = labels.get(c.topology_key, "")
            if v not in counts[i]:
                counts[i][v] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        sz = len(filtered) - len(ignored) if c.topology_key == HOSTNAME else topo_size[i]
        weights.append(go_log(float(sz + 2)))
    req = RequiredNodeAffinity(pod)
    ns = pod.metadata.namespace
    for row in _all_rows(table):
        node = _node(table, row)
        if require_all and not node_labels_match(node.metadata.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _included(c, pod, node, req, plugin.comparison_operators):
                continue
            v = node.metadata.labels.get(c.topology_key, "")
            if v not in counts[i]:
                continue
            counts[i][v] += count_pods_match_selector(table.pods[row], c, ns)
    raw: list[int] = []
    for row in filtered:
        if row in ignored:
            raw.append(0)
            continue
        labels = _node(table, row).metadata.labels
        score = 0.0
        for i, c in enumerate(constraints):
            if c.topology_key in labels:
                if c.topology_key == HOSTNAME:
                    cnt = count_pods_match_selector(table.pods[row], c, ns)
                else:
                    cnt = counts[i][labels[c.topology_key]]
                score += float(cnt) * weights[i] + float(c.max_skew - 1)
        fl = math.floor(score)
        raw.append(int(fl) + (1 if score - fl >= 0.5 else 0))  # math.Round: half away from zero
    lo, hi = 2**63 - 1, 0
    for row, s in zip(filtered, raw):
        if row in ignored:
            continue
        lo, hi = min(lo, s), max(hi, s)
    norm = []
    for row, s in zip(filtered, raw):
        if row in ignored:
            norm.append(0)
        elif hi == 0:
            norm.append(100)
        else:
            norm.append(100 * (hi + lo - s) // hi)
    return raw, norm
