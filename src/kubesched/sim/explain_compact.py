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

import orjson

from kubesched.framework.record import DecisionRecord, NodeScores, NodeTotals
from kubesched.sim.explain import (
    RawJSON,
    _preemption_dict,
    _totals,
    _weights,
    dict_plan,
    profile_weights,
)
from kubesched.sim.explain_columns import column_plan, kept_scores
from kubesched.sim.manifests import _has_non_finite_float, _orjson_float_differs

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.sim.simulate import SimulationResult

__all__ = ["CompactCollector", "compact_explanation"]


_dumps = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps(value, separators=(",", ":"))


def compact_json(value: Any, *, no_floats: bool = False) -> str:
    """``json.dumps(value, separators=(",", ":"))``, byte for byte, through orjson (~10× faster
    on an explanation's nodes).

    orjson writes the same text for printable-ASCII strings, ``str`` keys, ints within 64 bits,
    lists, dicts, ``bool``/``None`` and floats from 1e-4 up; anything else — output that is not
    printable ASCII or holds a ``\\u`` escape (the stdlib escapes non-ASCII and DEL, orjson does
    not), a float orjson prints otherwise (:func:`~kubesched.sim.manifests.encode_json`'s checks;
    skipped with ``no_floats`` when the caller built the value from ints), what orjson rejects —
    goes through the stdlib encoder. Raises the stdlib's ``TypeError`` for values JSON has no
    form for."""
    try:
        data = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError included
        return _dumps(value)
    if data.isascii() and b"\\u" not in data and b"\x7f" not in data and (no_floats or (
            not _orjson_float_differs(data) and (data.find(b"null") < 0 or not _has_non_finite_float(value)))):
        return data.decode("ascii")
    return _dumps(value)


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
        return self.spliced(_dumps(total_nodes), _dumps(weights), _dumps(history), _dumps(preempted),
                            _dumps(preempted_by))

    def spliced(self, total_nodes: str, weights: str, history: str, preempted: str, preempted_by: str) -> RawJSON:
        """:meth:`text` from the figures' JSON texts."""
        return RawJSON(f"{self.head}{total_nodes}{self.mid}{weights}{self.tail}{history}"
                       f"{self.group},\"preempted\":{preempted},\"preempted_by\":{preempted_by}{self.nodes}")


_NO_GROUP = ',"group":null'


def _parts(rec: DecisionRecord, max_nodes: int, memo: dict[Any, str] | None = None) -> _Parts:
    """``memo``: texts shared by many attempts (the figures after the head when the record has no
    PreFilter or PostFilter entry), by what they are made of."""
    plugins = list(rec.score.plugins) if isinstance(rec.score, NodeScores) else list(next(iter(rec.score.values()), {}))
    totals = _totals(rec)
    plan = column_plan(rec, totals, max_nodes)
    columns = plan is not None and isinstance(totals, NodeTotals)  # every figure an int of the arrays
    if plan is None:
        plan = dict_plan(rec, totals, max_nodes)
    sel = rec.selected_node
    nodes = [{"node": k.node, "feasible": not k.reasons, "reasons": k.reasons, "total": k.total, "rank": k.rank,
              "selected": k.node == sel, "runner_up": k.node == plan.runner_up, "scores": s}
             for k, s in zip(plan.nodes, kept_scores(rec, plugins, plan.nodes, columns), strict=True)]
    head = compact_json({"pod": rec.pod, "profile": rec.profile, "attempt": rec.attempt, "result": rec.result,
                         "message": rec.message, "selected_node": sel, "runner_up": plan.runner_up,
                         "margin": plan.margin, "selected_ties": plan.selected_ties,
                         "runner_up_ties": plan.runner_up_ties, "evaluated_nodes": rec.evaluated_nodes,
                         "feasible_nodes": rec.feasible_nodes}, no_floats=columns)
    skipped = rec.feasible_nodes == 1 and not rec.score
    key = None if memo is None or rec.pre_filter or rec.post_filter else (skipped, rec.nominated_node, *plugins)
    mid = memo.get(key) if key is not None else None  # type: ignore[union-attr]
    if mid is None:
        mid = compact_json({"scoring_skipped": skipped, "pre_filter": rec.pre_filter, "post_filter": rec.post_filter,
                            "nominated_node": rec.nominated_node, "plugins": plugins})
        mid = "," + mid[1:-1] + ',"weights":'
        if key is not None:
            memo[key] = mid  # type: ignore[index]
    tail = compact_json({"nodes_omitted": plan.nodes_omitted, "omitted_reasons": plan.omitted_reasons},
                        no_floats=True)
    return _Parts(profile=rec.profile, head=head[:-1] + ',"total_nodes":', mid=mid,
                  weights=_weights(rec), tail="," + tail[1:-1] + ',"history":',
                  group=_NO_GROUP if rec.group is None else ',"group":' + compact_json(rec.group),
                  nodes=',"nodes":' + compact_json(nodes, no_floats=columns) + "}",
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
        self._memo: dict[Any, str] = {}

    def __call__(self, rec: DecisionRecord) -> None:
        prev = self._parts.get(rec.pod)
        if prev is not None:
            self._history.setdefault(rec.pod, []).append(prev.summary)
        self._parts[rec.pod] = _parts(rec, self.max_nodes, self._memo)

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
        total_text = _dumps(total)
        # most pods share their weights (the profile's) and have no history or preemption: each
        # distinct text is encoded once
        weight_texts: dict[tuple[str, tuple[tuple[str, int], ...]], str] = {}
        for key, parts in self._parts.items():
            w = by_profile.get(parts.profile)
            if w is None:
                w = by_profile[parts.profile] = profile_weights(result, parts.profile)
            wkey = (parts.profile, tuple(parts.weights.items()))
            wtext = weight_texts.get(wkey)
            if wtext is None:
                wtext = weight_texts[wkey] = _dumps({**parts.weights, **w} if w else parts.weights)
            history, mine, by = self._history.get(key), preempted.get(key), preempted_by.get(key)
            out[key] = parts.spliced(total_text, wtext, _dumps(history) if history else "[]",
                                     _dumps(mine) if mine else "[]", "null" if by is None else _dumps(by))
        return out
