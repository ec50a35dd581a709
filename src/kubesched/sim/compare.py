"""``kubesched compare``: one cluster through two scheduler configurations, side by side.

Each configuration runs :func:`~kubesched.sim.simulate.simulate` on its own copy of the
manifests (same seed, same registry). Per run: scheduled / unschedulable counts, the
utilisation of every resource (requested / allocatable over all nodes, bound pods included),
the nodes in use, node skew (max − min pods per node, and the spread of cpu utilisation) and
zone skew (max − min pods per ``topology.kubernetes.io/zone``).

Pods placed differently are explained from the decision records
(:class:`~kubesched.framework.record.DecisionRecord`): B runs with recording on, and A a
second time with it on when some pod differs (runs are deterministic: same seed, same input,
same decisions),
keeping, for each pod, only the two nodes in question — under each profile, the per-plugin
weighted scores of its own node and of the other profile's node, or why the other node was not
a candidate (rejected by a filter, not evaluated because of sampling).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from kubesched.config import KubeSchedulerConfiguration
from kubesched.features import default_feature_gate
from kubesched.framework.node_table import NodeTable
from kubesched.framework.record import DecisionRecord
from kubesched.sim.manifests import RawObject
from kubesched.sim.simulate import SimulationResult, simulate

__all__ = ["CompareResult", "Difference", "RunSummary", "TableFigures", "compare", "table_figures"]

ZONE_LABEL = "topology.kubernetes.io/zone"


@dataclass
class RunSummary:
    """One configuration's outcome. ``utilisation``: resource → requested / allocatable (0–1)
    over all nodes; ``node_skew``: max − min pods per node; ``cpu_spread``: max − min cpu
    utilisation per node; ``zone_pods``: zone → pods (nodes without the zone label under "")."""

    label: str
    scheduled: int
    unschedulable: int
    placements: dict[str, str | None]
    utilisation: dict[str, float]
    nodes_used: int
    nodes: int
    node_skew: int
    cpu_spread: float
    zone_pods: dict[str, int]

    @property
    def zone_skew(self) -> int:
        v = list(self.zone_pods.values())
        return max(v) - min(v) if v else 0

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "scheduled": self.scheduled, "unschedulable": self.unschedulable,
                "utilisation": {k: round(v, 4) for k, v in self.utilisation.items()},
                "nodesUsed": self.nodes_used, "nodes": self.nodes, "nodeSkew": self.node_skew,
                "cpuUtilisationSpread": round(self.cpu_spread, 4), "zonePods": self.zone_pods,
                "zoneSkew": self.zone_skew}


@dataclass
class Difference:
    """A pod placed differently: ``nodes`` = (node under A, node under B), None = pending.
    ``why``: per side, a short explanation from that profile's decision record."""

    pod: str
    nodes: tuple[str | None, str | None]
    why: tuple[str, str] = ("", "")
    scores: tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]] = field(default_factory=lambda: ({}, {}))

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "a": self.nodes[0], "b": self.nodes[1], "whyA": self.why[0], "whyB": self.why[1],
                "scoresA": self.scores[0], "scoresB": self.scores[1]}


@dataclass
class CompareResult:
    a: RunSummary
    b: RunSummary
    differences: list[Difference]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "SchedulerComparison", "a": self.a.to_dict(), "b": self.b.to_dict(),
                "placedDifferently": len(self.differences),
                "differences": [d.to_dict() for d in self.differences]}


def _copy(raws: list[RawObject]) -> list[RawObject]:
    """Fresh mappings (a run writes ``spec.nodeName`` and conditions into them)."""
    enc, dec = msgspec.msgpack.encode, msgspec.msgpack.decode

    def fresh(data: dict[str, Any]) -> dict[str, Any]:
        try:
            out: dict[str, Any] = dec(enc(data))
        except (TypeError, OverflowError, msgspec.EncodeError):  # e.g. an integer beyond 64 bits
            out = copy.deepcopy(data)
        return out

    return [RawObject(r.kind, r.api_version, fresh(r.data), r.source, r.index) for r in raws]


@dataclass
class TableFigures:
    """The cluster as a NodeTable leaves it: ``utilisation`` resource → requested ÷ allocatable
    (0–1) over all nodes (resources with allocatable only); ``pods`` per alive row (row order);
    ``node_skew`` max − min pods per node; ``cpu_spread`` max − min cpu utilisation per node;
    ``zone_pods`` zone → pods (nodes without the zone label under "")."""

    rows: np.ndarray
    utilisation: dict[str, float]
    pods: np.ndarray
    nodes_used: int
    node_skew: int
    cpu_spread: float
    zone_pods: dict[str, int]


def table_figures(table: NodeTable) -> TableFigures:
    """:class:`TableFigures` of ``table`` (alive rows, in row order)."""
    rows = np.asarray(sorted(table.row_of.values()), np.int64)
    alloc = table.allocatable[rows]
    req = table.requested[rows]
    util: dict[str, float] = {}
    for name, col in table.resource_index.items():
        total = int(alloc[:, col].sum())
        if total > 0:
            util[name] = float(req[:, col].sum()) / total
    pods = req[:, NodeTable.PODS] if len(rows) else np.zeros(0, np.int64)
    cpu_alloc = alloc[:, NodeTable.CPU]
    with np.errstate(divide="ignore", invalid="ignore"):
        cpu_u = np.where(cpu_alloc > 0, req[:, NodeTable.CPU] / np.maximum(cpu_alloc, 1), 0.0)
    zones: dict[str, int] = {}
    for r, n in zip(rows.tolist(), pods.tolist(), strict=True):
        z = table.row_labels(r).get(ZONE_LABEL, "")
        zones[z] = zones.get(z, 0) + int(n)
    return TableFigures(rows, util, pods, int((pods > 0).sum()), int(pods.max() - pods.min()) if len(rows) else 0,
                        float(cpu_u.max() - cpu_u.min()) if len(rows) else 0.0, zones)


def _summary(label: str, res: SimulationResult) -> RunSummary:
    f = table_figures(res.scheduler.table)
    placements = {o.key: o.node for o in res.outcomes}
    sched = sum(1 for v in placements.values() if v)
    return RunSummary(label, sched, len(placements) - sched, placements, f.utilisation, f.nodes_used, len(f.rows),
                      f.node_skew, f.cpu_spread, f.zone_pods)


def _explain(rec: DecisionRecord | None, mine: str | None, other: str | None,
             heap_order: bool = False) -> tuple[str, dict[str, dict[str, int]]]:
    """Why this profile chose ``mine`` over ``other``, from its record of the pod's last attempt.
    ``heap_order``: ties are broken by the Go heap over the feasible nodes (v1.35+, no
    prioritize extender), not at random."""
    if rec is None:
        if mine is None:
            return "not attempted: no profile of this configuration has the pod's schedulerName", {}
        return "no decision record", {}
    if mine is None:
        return rec.message or "unschedulable", {}
    if rec.selected_node != mine:  # the recorded rerun decided otherwise: something is not deterministic
        return f"the recorded rerun chose {rec.selected_node or 'no node'} (a plugin is not deterministic)", {}
    fs = rec.final_score
    scores = {n: fs[n] for n in (mine, other) if n and n in fs}
    if other is None:
        return f"{mine}: the other profile left the pod pending", scores
    if other not in fs:
        verdict = rec.filter.get(other)
        if verdict is None:
            if rec.feasible_nodes <= 1 and mine in rec.filter:
                return f"{other} was not evaluated (only {mine} was feasible)", scores
            return f"{other} was not evaluated (percentageOfNodesToScore sampling)", scores
        failed = {p: v for p, v in verdict.items() if v != "passed"}
        if failed:
            plugin, reasons = next(iter(failed.items()))
            return f"{other} rejected by {plugin}: {', '.join(reasons)}", scores
        return f"{other} passed the filters but was not scored (a single feasible node)", scores
    if mine not in fs:
        return f"{mine} was the only feasible node", scores
    a, b = fs[mine], fs[other]
    ta, tb = sum(a.values()), sum(b.values())
    diffs = sorted(((p, a.get(p, 0) - b.get(p, 0)) for p in set(a) | set(b)), key=lambda t: (-abs(t[1]), t[0]))
    parts = ", ".join(f"{p} {d:+d}" for p, d in diffs if d)
    if ta == tb:
        how = "broken by the heap order of the feasible nodes" if heap_order else "broken at random"
        return f"{mine} and {other} tie at {ta}: {how}" + (f" ({parts})" if parts else ""), scores
    return f"{mine} {ta} vs {other} {tb}" + (f": {parts}" if parts else ""), scores


def _trim(rec: DecisionRecord, nodes: tuple[str | None, ...]) -> DecisionRecord:
    """``rec`` with its per-node maps cut down to ``nodes`` (counts and messages kept)."""
    keep = {n for n in nodes if n}
    rec.filter = {n: v for n, v in rec.filter.items() if n in keep}
    rec.score = {n: v for n, v in rec.score.items() if n in keep}
    rec.final_score = {n: v for n, v in rec.final_score.items() if n in keep}
    return rec


def compare(raws: list[RawObject], config_a: KubeSchedulerConfiguration | None,
            config_b: KubeSchedulerConfiguration | None, *, labels: tuple[str, str] = ("A", "B"), seed: int = 0,
            registry: dict[str, Any] | None = None, explain: bool = True, features: Any = None,
            features_b: Any = None) -> CompareResult:
    """Run both configurations and compare them (see the module docstring). ``features``: the
    feature gates / emulated version of both runs, or of A only when ``features_b`` is given
    (comparing two releases: each config defaulted for its own version). Raises what
    :func:`simulate` raises for bad input or configuration."""
    fb = features_b if features_b is not None else features
    ra = simulate(_copy(raws), config_a, seed=seed, registry=registry, features=features)
    sa = _summary(labels[0], ra)
    del ra
    # B runs once, recording; each record is cut down at once to the two nodes that matter
    rec_b: dict[str, DecisionRecord] = {}

    def keep_b(rec: DecisionRecord) -> None:
        rec_b[rec.pod] = _trim(rec, (rec.selected_node, sa.placements.get(rec.pod)))

    rb = simulate(_copy(raws), config_b, seed=seed, registry=registry, on_record=keep_b if explain else None,
                  features=fb)
    sb = _summary(labels[1], rb)
    del rb
    keys = list(sa.placements) + [k for k in sb.placements if k not in sa.placements]
    diffs = [Difference(k, (sa.placements.get(k), sb.placements.get(k)))
             for k in keys if sa.placements.get(k) != sb.placements.get(k)]
    if explain and diffs:
        other = {d.pod: d.nodes for d in diffs}
        rec_a: dict[str, DecisionRecord] = {}

        def keep_a(rec: DecisionRecord) -> None:
            if rec.pod in other:
                rec_a[rec.pod] = _trim(rec, other[rec.pod])

        simulate(_copy(raws), config_a, seed=seed, registry=registry, on_record=keep_a,  # same decisions as ra
                 features=features)
        fgs = [f if f is not None else default_feature_gate() for f in (features, fb)]
        heap_a, heap_b = (fg.at_least(1, 35) and not (c is not None and c.extenders)
                          for fg, c in zip(fgs, (config_a, config_b), strict=True))
        for d in diffs:
            wa, sca = _explain(rec_a.get(d.pod), d.nodes[0], d.nodes[1], heap_a)
            wb, scb = _explain(rec_b.get(d.pod), d.nodes[1], d.nodes[0], heap_b)
            d.why, d.scores = (wa, wb), (sca, scb)
    return CompareResult(sa, sb, diffs)
