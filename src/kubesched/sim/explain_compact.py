"""The report's per-pod explanations, encoded once as records arrive.

``simulate --report`` embeds, for every pending pod, the capped explanation of its last attempt
(:meth:`kubesched.sim.explain.Explanation.to_compact_dict`: ten nodes, their reasons and each Score
plugin's raw → normalized → weighted score). Building that as objects — an ``Explanation``, ten
``NodeExplanation``\\ s, a hundred ``PluginScore``\\ s, then their compact dicts — for each of
thousands of pods, and keeping them all until the page is written, cost more than the run
itself (and the garbage collector walked them all, again and again). :class:`CompactCollector`
reads the kept nodes from the record's columns (:func:`~kubesched.sim.explain_columns.column_plan`),
their scores as one numpy block, and keeps one JSON text per pod: the exact text
``json.dumps(explanation.to_compact_dict(), separators=(",", ":"))`` gives, with the few
figures known only after the run (total nodes, the profile's weights, history, preemptions)
spliced in by :meth:`CompactCollector.finish`. tests/sim/test_explain_compact.py compares it with
:class:`~kubesched.sim.explain.ExplanationCollector` on records hypothesis draws and on runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kubesched.framework.record import DecisionRecord, NodeScores
from kubesched.sim.explain import (
    RawJSON,
    _preemption_dict,
    _totals,
    _weights,
    dict_plan,
    profile_weights,
)
from kubesched.sim.explain_columns import KeptNode, column_plan

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.sim.simulate import SimulationResult

__all__ = ["CompactCollector", "compact_explanation"]


_dumps = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps(value, separators=(",", ":"))


class _Parts(NamedTuple):
    """One attempt's compact explanation as JSON text around the figures known after the run:
    ``head`` + total nodes + ``mid`` + weights + ``tail`` + history + ``group`` + preempted,
    preempted_by + ``nodes``."""

    profile: str
    head: str
    mid: str
    weights: dict[str, int]
    tail: str
    group: str
    nodes: str
    summary: dict[str, Any]
    """The one-line history entry this attempt becomes when the pod is attempted again."""

    def text(self, *, total_nodes: int | None, weights: Mapping[str, int], history: list[dict[str, Any]],
             preempted: list[dict[str, Any]], preempted_by: dict[str, Any] | None) -> RawJSON:
        return RawJSON(f"{self.head}{_dumps(total_nodes)}{self.mid}{_dumps(weights)}{self.tail}{_dumps(history)}"
                       f"{self.group},\"preempted\":{_dumps(preempted)},\"preempted_by\":{_dumps(preempted_by)}"
                       f"{self.nodes}")


def _scores(rec: DecisionRecord, plugins: list[str], kept: list[KeptNode]) -> list[Any]:
    """Per kept node, ``[raw, normalized, weighted]`` per Score plugin in ``plugins`` order
    (``None`` for a plugin that did not score the node; ``[]`` for an unscored node) — one numpy
    block when the record's scores are arrays."""
    scored = [k for k in kept if k.total is not None]
    raw, norm, fin = rec.score, rec.normalized_score, rec.final_score
    out: list[Any] = [[] for _ in kept]
    if not scored:
        return out
    arrays = (raw, norm, fin) if isinstance(raw, NodeScores) and isinstance(norm, NodeScores) \
        and isinstance(fin, NodeScores) else ()
    if arrays and all(a.plugins == plugins for a in arrays) \
            and all(a.node_at(k.col) == k.node for a in arrays for k in scored):
        if not plugins:
            return out
        cols = [k.col for k in scored]
        block = np.stack([a.block(cols) for a in arrays])
        triples = iter(block.transpose(2, 1, 0).tolist())  # node × plugin × (raw, normalized, weighted)
        for i, k in enumerate(kept):
            if k.total is not None:
                out[i] = next(triples)
        return out
    for i, k in enumerate(kept):
        if k.total is None:
            continue
        r, z, f = raw.get(k.node, {}), norm.get(k.node, {}), fin[k.node]
        by = {p: [r.get(p, 0), z.get(p, r.get(p, 0)), f.get(p, 0)] for p in plugins if p in f}
        out[i] = [by.get(p) for p in plugins] if by else []
    return out


def _parts(rec: DecisionRecord, max_nodes: int) -> _Parts:
    plugins = list(rec.score.plugins) if isinstance(rec.score, NodeScores) else list(next(iter(rec.score.values()), {}))
    totals = _totals(rec)
    plan = column_plan(rec, totals, max_nodes) or dict_plan(rec, totals, max_nodes)
    sel = rec.selected_node
    nodes = [{"node": k.node, "feasible": not k.reasons, "reasons": k.reasons, "total": k.total, "rank": k.rank,
              "selected": k.node == sel, "runner_up": k.node == plan.runner_up, "scores": s}
             for k, s in zip(plan.nodes, _scores(rec, plugins, plan.nodes), strict=True)]
    head = _dumps({"pod": rec.pod, "profile": rec.profile, "attempt": rec.attempt, "result": rec.result,
                   "message": rec.message, "selected_node": sel, "runner_up": plan.runner_up, "margin": plan.margin,
                   "selected_ties": plan.selected_ties, "runner_up_ties": plan.runner_up_ties,
                   "evaluated_nodes": rec.evaluated_nodes, "feasible_nodes": rec.feasible_nodes})
    mid = _dumps({"scoring_skipped": rec.feasible_nodes == 1 and not rec.score, "pre_filter": rec.pre_filter,
                  "post_filter": rec.post_filter, "nominated_node": rec.nominated_node, "plugins": plugins})
    tail = _dumps({"nodes_omitted": plan.nodes_omitted, "omitted_reasons": plan.omitted_reasons})
    return _Parts(profile=rec.profile, head=head[:-1] + ',"total_nodes":', mid="," + mid[1:-1] + ',"weights":',
                  weights=_weights(rec), tail="," + tail[1:-1] + ',"history":', group=',"group":' + _dumps(rec.group),
                  nodes=',"nodes":' + _dumps(nodes) + "}",
                  summary={"attempt": rec.attempt, "result": rec.result, "message": rec.message, "node": sel,
                           "nominatedNode": rec.nominated_node})


def compact_explanation(rec: DecisionRecord, max_nodes: int = 10, *, total_nodes: int | None = None,
                        weights: Mapping[str, int] | None = None) -> RawJSON:
    """``json.dumps(explain_record(rec, total_nodes=…, weights=…, max_nodes=…).to_compact_dict(),
    separators=(",", ":"))`` (no history, no preemptions), read from the record's columns."""
    parts = _parts(rec, max_nodes)
    return parts.text(total_nodes=total_nodes, weights={**parts.weights, **(weights or {})}, history=[],
                      preempted=[], preempted_by=None)


class CompactCollector:
    """An ``on_record`` sink that keeps, per pod, the compact explanation of its last attempt as
    JSON text and a one-line history of the earlier ones: what :class:`ExplanationCollector` and
    ``to_compact_dict`` give the report, byte for byte, at a few KB per pod.
    :meth:`finish` adds what is known only after the run."""

    def __init__(self, max_nodes: int = 10) -> None:
        self.max_nodes = max_nodes
        self._parts: dict[str, _Parts] = {}
        self._history: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, rec: DecisionRecord) -> None:
        prev = self._parts.get(rec.pod)
        if prev is not None:
            self._history.setdefault(rec.pod, []).append(prev.summary)
        self._parts[rec.pod] = _parts(rec, self.max_nodes)

    def finish(self, result: SimulationResult) -> dict[str, RawJSON]:
        """Pod → its explanation's JSON text, total nodes, profile weights, history and
        preemptions filled in (as :meth:`ExplanationCollector.finish`)."""
        total = len(result.store.nodes)
        by_profile: dict[str, dict[str, int]] = {}
        preempted: dict[str, list[dict[str, Any]]] = {}
        preempted_by: dict[str, dict[str, Any]] = {}
        for pre in result.store.preemptions:  # a pod's own evictions, and the last one of it
            preempted.setdefault(pre.preemptor, []).append(_preemption_dict(pre))
            if pre.victim != pre.preemptor:
                preempted_by[pre.victim] = _preemption_dict(pre)
        out: dict[str, RawJSON] = {}
        for key, parts in self._parts.items():
            w = by_profile.get(parts.profile)
            if w is None:
                w = by_profile[parts.profile] = profile_weights(result, parts.profile)
            out[key] = parts.text(total_nodes=total, weights={**parts.weights, **w} if w else parts.weights,
                                  history=self._history.get(key, []), preempted=preempted.get(key, []),
                                  preempted_by=preempted_by.get(key))
        return out
