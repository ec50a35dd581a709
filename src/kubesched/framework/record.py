"""``DecisionRecord``: everything one scheduling attempt decided, per node and per plugin.

Records are built from the cycle's arrays (:class:`FilterChunk`, :class:`ScoreResult`) only
when someone asks — ``simulate --record-results``/``--results-file``, ``--explain`` — so they
cost nothing on the hot path, and they have no size cap. The annotation shapes follow
kube-scheduler-simulator's (``filter-result``, ``score-result``, ``finalscore-result``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.runtime import ScoreResult

__all__ = ["DecisionRecord", "build_record"]

PASSED = "passed"


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
    filter: dict[str, dict[str, Any]] = field(default_factory=dict)
    score: dict[str, dict[str, int]] = field(default_factory=dict)
    final_score: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized_score: dict[str, dict[str, int]] = field(default_factory=dict)
    total_score: dict[str, int] = field(default_factory=dict)
    """node → sum of its weighted scores (upstream ``NodePluginScores.TotalScore``)."""
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


def score_results(table: NodeTable, scores: ScoreResult) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """``(raw, weighted)``: node → plugin → score, for the scored rows."""
    raw, _norm, final = score_results3(table, scores)
    return raw, final


def score_results3(table: NodeTable, scores: ScoreResult) -> tuple[dict[str, dict[str, int]], ...]:
    """``(raw, normalized, weighted)``: node → plugin → score, for the scored rows."""
    names = [table.names[r] for r in scores.rows.tolist()]
    plugins = scores.plugins
    if not plugins:
        return {n: {} for n in names}, {n: {} for n in names}, {n: {} for n in names}

    def per_node(arrays: list[Any]) -> dict[str, dict[str, int]]:
        rows = np.stack(arrays).T.tolist()  # nodes × plugins
        return {n: dict(zip(plugins, r)) for n, r in zip(names, rows)}

    return per_node(scores.raw), per_node(scores.normalized), per_node(scores.weighted)


def build_record(*, pod: str, profile: str, attempt: int, time: float, table: NodeTable,
                 chunks: list[Any], scores: ScoreResult | None, selected: str | None,
                 result: str, message: str = "", pre_filter: dict[str, str] | None = None,
                 post_filter: dict[str, Any] | None = None, nominated: str | None = None,
                 extender_statuses: dict[str, Any] | None = None) -> DecisionRecord:
    """Assemble a :class:`DecisionRecord` from a cycle's arrays. ``extender_statuses`` (node →
    Status) are the scheduler extenders' rejections: recorded under the "plugin" ``Extender``."""
    filt = filter_results(table, chunks)
    feasible = sum(int(c.ok_mask().sum()) for c in chunks)
    for node, st in (extender_statuses or {}).items():
        entry = filt.setdefault(node, {})
        if all(v == PASSED for v in entry.values()):
            feasible -= 1 if entry else 0
        entry["Extender"] = list(st.reasons)
    rec = DecisionRecord(pod=pod, profile=profile, attempt=attempt, time=time, selected_node=selected,
                         result=result, message=message, evaluated_nodes=len(filt),
                         feasible_nodes=feasible, pre_filter=pre_filter or {}, filter=filt,
                         post_filter=post_filter or {}, nominated_node=nominated)
    if scores is not None:
        rec.score, rec.normalized_score, rec.final_score = score_results3(table, scores)
        rec.total_score = dict(zip([table.names[r] for r in scores.rows.tolist()], scores.total.tolist()))
    return rec
