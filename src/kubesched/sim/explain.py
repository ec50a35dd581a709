"""What a simulation decided and why, as data: per-node explanations of one attempt, per-pod
summaries, preemptions, and the figures of the HTML report.

Everything here is read from :class:`~kubesched.framework.record.DecisionRecord` (the per-node,
per-plugin arrays of one scheduling attempt) and the :class:`~kubesched.sim.store.ClusterStore`
after the run; nothing is recomputed, so an explanation is exactly what the engine saw. The
renderers live in the cli layer (``kubesched.cli.explain_view``, ``kubesched.cli.report_html``).

The scoring terms are upstream's (``pkg/scheduler/framework/runtime/framework.go``
``RunScorePlugins``): *raw* = the plugin's Score(), *normalized* = after NormalizeScore (0–100),
*weighted* = normalized × the plugin's weight; a node's *total* is the sum of the weighted scores
(``NodePluginScores.TotalScore``) and the highest total wins (v1.34 ``selectHost``: ties broken at
random by the seed; v1.35+: the first pop of a Go heap over the feasible nodes, random only among
nodes prioritize extenders scored). Scoring runs only when more than one node is feasible.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import node_allocatable
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.errors import InputError
from kubesched.framework.record import PASSED, DecisionRecord, FilterResults, NodeScores, NodeTotals
from kubesched.sim.explain_columns import KeptNode, Plan, column_plan, every_node_scored, kept_scores
from kubesched.sim.store import Preemption

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.sim.simulate import SimulationResult

__all__ = [
    "PREEMPTED_ANNOTATION",
    "annotate_preemptions",
    "Explanation",
    "ExplanationCollector",
    "NodeExplanation",
    "PluginScore",
    "PodSummary",
    "RawJSON",
    "ZONE_LABEL",
    "explain_pod",
    "explain_record",
    "history_entry",
    "pod_summaries",
    "preemption_lines",
    "profile_weights",
    "record_digest",
    "report_data",
]

ZONE_LABEL = "topology.kubernetes.io/zone"
REPORT_RESOURCES = ("cpu", "memory", "pods")


@dataclass
class PluginScore:
    """One Score plugin on one node: ``raw`` → ``normalized`` (0–100) → ``weighted``
    (= normalized × ``weight``; ``weight`` is None when it cannot be told: every normalized
    score of that plugin was 0)."""

    plugin: str
    raw: int
    normalized: int
    weighted: int
    weight: int | None = None


@dataclass
class NodeExplanation:
    """One node in one attempt.

    ``feasible``: every Filter plugin passed. ``filter``: plugin → ``"passed"`` or the list of
    reasons, in the order the plugins ran (the first failing plugin ends the list, as upstream).
    ``reasons``: ``"Plugin: reason"`` lines of the failing plugin. ``scores``/``total``/``rank``
    (1 = best) only for scored nodes.
    """

    node: str
    feasible: bool
    filter: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    scores: list[PluginScore] = field(default_factory=list)
    total: int | None = None
    rank: int | None = None
    selected: bool = False
    runner_up: bool = False


@dataclass
class Explanation:
    """One pod's scheduling attempt, node by node.

    ``nodes``: scored nodes first (best total first), then feasible unscored ones, then the
    rejected ones, near misses first (most Filter plugins passed, then fewest reasons; record
    order among equals); with a cap, ``nodes_omitted`` more were left out (the chosen
    node and the runner-up never are) and ``omitted_reasons`` counts their Filter reasons
    (``"feasible"`` for feasible ones). ``runner_up``: the best-scored node other than the
    selected one (None when fewer than two nodes were scored). ``scoring_skipped``: exactly one
    node was feasible, so upstream skips scoring. ``preempted``: pods this pod evicted (any
    attempt); ``preempted_by``: set when this pod was itself evicted. ``history``: one
    ``{attempt, result, message, node, nominatedNode}`` per earlier attempt (when known).
    """

    pod: str
    profile: str = ""
    attempt: int = 0
    result: str = ""
    message: str = ""
    selected_node: str | None = None
    runner_up: str | None = None
    margin: int | None = None
    """Total of the selected node minus the runner-up's."""
    selected_ties: int = 0
    """Other scored nodes with the selected node's total (v1.34 ``selectHost`` picks among them at
    random; v1.35+ the heap order decides)."""
    runner_up_ties: int = 0
    """Other nodes (not the selected one) with the runner-up's total."""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    total_nodes: int | None = None
    scoring_skipped: bool = False
    pre_filter: dict[str, str] = field(default_factory=dict)
    post_filter: dict[str, Any] = field(default_factory=dict)
    nominated_node: str | None = None
    plugins: list[str] = field(default_factory=list)
    """Score plugins that ran, in order."""
    weights: dict[str, int] = field(default_factory=dict)
    nodes: list[NodeExplanation] = field(default_factory=list)
    nodes_omitted: int = 0
    omitted_reasons: dict[str, int] = field(default_factory=dict)
    preempted: list[Preemption] = field(default_factory=list)
    preempted_by: Preemption | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    group: dict[str, Any] | None = None
    """The PodGroup decision this attempt was part of (:attr:`DecisionRecord.group`), else None."""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["preempted"] = [_preemption_dict(p) for p in self.preempted]
        d["preempted_by"] = _preemption_dict(self.preempted_by) if self.preempted_by else None
        return d

    def to_compact_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` for embedding many of them (the HTML report): per node no ``filter``
        map (``reasons`` says it), and ``scores`` as ``[raw, normalized, weighted]`` triples in
        the order of ``plugins`` (``null`` for a plugin that did not score the node)."""
        d = {k: v for k, v in self.__dict__.items() if k not in ("nodes", "preempted", "preempted_by")}
        d["plugins"] = list(self.plugins)
        d["weights"] = dict(self.weights)
        d["pre_filter"], d["post_filter"] = dict(self.pre_filter), dict(self.post_filter)
        d["omitted_reasons"], d["history"] = dict(self.omitted_reasons), list(self.history)
        d["preempted"] = [_preemption_dict(p) for p in self.preempted]
        d["preempted_by"] = _preemption_dict(self.preempted_by) if self.preempted_by else None
        nodes = []
        for n in self.nodes:
            by = {s.plugin: [s.raw, s.normalized, s.weighted] for s in n.scores}
            nodes.append({"node": n.node, "feasible": n.feasible, "reasons": n.reasons, "total": n.total,
                          "rank": n.rank, "selected": n.selected, "runner_up": n.runner_up,
                          "scores": [by.get(p) for p in self.plugins] if n.scores else []})
        d["nodes"] = nodes
        return d


class RawJSON(str):
    """A JSON text that a writer embeds as is (e.g. a pod's explanation in :func:`report_data`,
    encoded once by :class:`kubesched.sim.explain_compact.CompactCollector`): what
    ``json.dumps(value, separators=(",", ":"))`` of the value it stands for gives."""

    __slots__ = ()


def _preemption_dict(p: Preemption) -> dict[str, Any]:
    return {"victim": p.victim, "preemptor": p.preemptor, "node": p.node,
            "victimPriority": p.victim_priority, "preemptorPriority": p.preemptor_priority}


def _reasons(entry: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for plugin, v in entry.items():
        if v != PASSED:
            out.extend(f"{plugin}: {r}" for r in (v or ["rejected"]))
    return out


def _weights(rec: DecisionRecord) -> dict[str, int]:
    """plugin → weight, read back from weighted / normalized (the record keeps both)."""
    out: dict[str, int] = {}
    want = None
    norm = rec.normalized_score
    if isinstance(norm, NodeScores) and isinstance(rec.final_score, NodeScores):
        return norm.weights(rec.final_score)
    for node, per in norm.items():
        if want is None:
            want = len(per)
        fin = rec.final_score.get(node, {})
        for plugin, z in per.items():
            if z and plugin not in out:
                out[plugin] = fin.get(plugin, 0) // z
        if len(out) == want:
            break
    return out


def _last(entry: dict[str, Any]) -> Any:
    return entry[next(reversed(entry))] if entry else PASSED


_FEASIBLE = ("", "")


def _failures(flt: Mapping[str, dict[str, Any]]) -> tuple[dict[str, tuple[str, Any]], dict[str, tuple[int, int]]]:
    """For every evaluated node, in record order: node → ``(failing plugin, its reasons)``
    (``("", "")`` for a feasible node, reasons ``("rejected",)`` when a rejection gave none: the
    last item of the node's entry, plugins run in order), and node → :func:`_near_miss_key`.
    Read from a :class:`FilterResults`' columns when it can (no entry dicts, no per-node loop)."""
    cols = flt.rejections() if isinstance(flt, FilterResults) else None
    if cols is not None:
        names, outcomes = cols
        near = {o: (-o[1], len(o[0][1]) if o[0][0] else 0) for o in set(outcomes)}
        return (dict(zip(names, map(operator.itemgetter(0), outcomes))),
                dict(zip(names, map(near.__getitem__, outcomes))))
    outcome: dict[str, tuple[str, Any]] = {}
    nearest: dict[str, tuple[int, int]] = {}
    for n, entry in flt.items():
        k: tuple[str, Any] = _FEASIBLE
        if _last(entry) != PASSED:
            plugin = next(reversed(entry))
            k = (plugin, tuple(entry[plugin] or ("rejected",)))
        outcome[n] = k
        nearest[n] = _near_miss_key(entry)
    return outcome, nearest


def _near_miss_key(entry: dict[str, Any]) -> tuple[int, int]:
    """Sort key of a rejected node: (−Filter plugins passed, number of failing reasons)."""
    passed = sum(1 for v in entry.values() if v == PASSED)
    failing = sum(len(v or ("rejected",)) for v in entry.values() if v != PASSED)
    return -passed, failing


def _totals(rec: DecisionRecord) -> Mapping[str, int]:
    if rec.total_score or not rec.final_score:
        return rec.total_score
    return {n: sum(per.values()) for n, per in rec.final_score.items()}


def _ranked(rec: DecisionRecord, totals: Mapping[str, int]) -> list[str]:
    """Scored nodes, best total first (the selected node first among equals, the others in
    record order)."""
    ranked = sorted(totals, key=totals.__getitem__, reverse=True)  # stable: equals keep their order
    sel = rec.selected_node
    if sel is not None and sel in totals:
        ranked.remove(sel)
        best = totals[sel]
        i = 0
        while i < len(ranked) and totals[ranked[i]] > best:
            i += 1
        ranked.insert(i, sel)
    return ranked


def _runner_up(rec: DecisionRecord, ranked: list[str]) -> str | None:
    if rec.selected_node:
        return next((n for n in ranked if n != rec.selected_node), None)
    return ranked[1] if len(ranked) > 1 else None


def explain_record(rec: DecisionRecord, *, total_nodes: int | None = None,
                   preemptions: list[Preemption] | None = None,
                   weights: dict[str, int] | None = None, max_nodes: int = 0) -> Explanation:
    """The per-node explanation of one attempt (reusable by any command that has a record).

    ``total_nodes``: the cluster size, to tell nodes not evaluated (``percentageOfNodesToScore``)
    from rejected ones. ``preemptions``: the run's evictions; those made by or of ``rec.pod`` are
    kept. ``weights``: the profile's Score plugin weights (else read back from the record where
    it can be). ``max_nodes`` > 0 keeps that many nodes (plus the chosen one and the runner-up)
    and summarises the rest; the cost is then O(nodes) dict look-ups, not O(nodes) objects.
    """
    weights = {**_weights(rec), **(weights or {})}
    plugins: list[str] = []
    if isinstance(rec.score, NodeScores):
        plugins = list(rec.score.plugins)
    else:
        for per in rec.score.values():
            for p in per:
                if p not in plugins:
                    plugins.append(p)
            break  # every scored node has the same plugins
    totals = _totals(rec)
    plan = column_plan(rec, totals, max_nodes)
    flt = rec.filter
    # from the columns, with every evaluated node scored in evaluation order: a kept node's
    # column is its evaluation too (its Filter entry read there, no node → position index), and
    # the kept nodes' scores are one block of the record's arrays
    columns = plan is not None and isinstance(totals, NodeTotals)
    at_col = columns and isinstance(flt, FilterResults) and every_node_scored(flt, totals, flt.count())
    if plan is None:
        plan = dict_plan(rec, totals, max_nodes)
    triples = kept_scores(rec, plugins, plan.nodes, columns)
    nodes: list[NodeExplanation] = []
    for kept, per in zip(plan.nodes, triples, strict=True):
        node = kept.node
        entry = flt.entry_at(kept.col) if at_col and kept.col >= 0 else dict(flt.get(node, {}))  # type: ignore[attr-defined]
        ne = NodeExplanation(node, not kept.reasons, entry, kept.reasons)
        if kept.total is not None:
            ne.scores = [PluginScore(p, t[0], t[1], t[2], weights.get(p))
                         for p, t in zip(plugins, per, strict=False) if t is not None]  # ([] when none scored it)
            ne.total = kept.total
            ne.rank = kept.rank
        ne.selected = node == rec.selected_node
        ne.runner_up = node == plan.runner_up
        nodes.append(ne)
    ex = Explanation(
        pod=rec.pod, profile=rec.profile, attempt=rec.attempt, result=rec.result, message=rec.message,
        selected_node=rec.selected_node, runner_up=plan.runner_up, margin=plan.margin,
        selected_ties=plan.selected_ties, runner_up_ties=plan.runner_up_ties,
        evaluated_nodes=rec.evaluated_nodes, feasible_nodes=rec.feasible_nodes, total_nodes=total_nodes,
        scoring_skipped=rec.feasible_nodes == 1 and not rec.score,
        pre_filter=dict(rec.pre_filter), post_filter=dict(rec.post_filter), nominated_node=rec.nominated_node,
        plugins=plugins, weights=weights, nodes=nodes, nodes_omitted=plan.nodes_omitted,
        omitted_reasons=plan.omitted_reasons, group=rec.group)
    _attach_preemptions(ex, preemptions)
    return ex


def dict_plan(rec: DecisionRecord, totals: Mapping[str, int], max_nodes: int) -> Plan:
    """The :class:`~kubesched.sim.explain_columns.Plan` of ``rec`` read from its dicts (any
    record; :func:`~kubesched.sim.explain_columns.column_plan` is the same from the columns)."""
    ranked = _ranked(rec, totals)
    runner = _runner_up(rec, ranked)
    rank = dict(zip(ranked, range(1, len(ranked) + 1)))
    flt = rec.filter
    # per node: the failing plugin and its reasons (the last of its entry: plugins run in order)
    # and how many plugins it passed, from the record's columns when it has them
    outcome, near = _failures(flt)
    unscored = list(itertools.filterfalse(totals.__contains__, outcome))
    unscored_outcomes = list(map(outcome.__getitem__, unscored))
    feasible_unscored = list(itertools.compress(unscored, map(_FEASIBLE.__eq__, unscored_outcomes)))
    # rejected nodes: near misses first — the more Filter plugins a node passed before one
    # rejected it, and the fewer reasons, the closer it came (record order among equals)
    rejected = sorted(itertools.compress(unscored, map(_FEASIBLE.__ne__, unscored_outcomes)),
                      key=near.__getitem__)
    order = ranked + feasible_unscored + rejected
    omitted: Counter[str] = Counter()
    n_omitted = 0
    if 0 < max_nodes < len(order):
        keep = order[:max_nodes]
        rest = order[max_nodes:]
        # the chosen node and the runner-up stay, in their order; the rest is counted by failure
        at = sorted(rest.index(n) for n in (rec.selected_node, runner) if n is not None and n in rest)
        keep += [rest[i] for i in at]
        for i in reversed(at):
            del rest[i]
        n_omitted = len(rest)
        by_failure = Counter(map(outcome.get, rest, itertools.repeat(_FEASIBLE)))
        for (plugin, reasons), c in by_failure.items():
            if not plugin:
                omitted["feasible"] += c
            else:
                for r in reasons:
                    omitted[f"{plugin}: {r}"] += c
        order = keep
    nodes = [KeptNode(node, _reasons(flt.get(node, {})), totals.get(node), rank.get(node)) for node in order]
    sel_total = totals.get(rec.selected_node or "")
    by_total = Counter(totals.values())
    sel_ties = by_total[sel_total] - 1 if sel_total is not None else 0
    run_ties = 0
    if runner is not None:
        run_ties = by_total[totals[runner]] - 1 - (1 if sel_total == totals[runner] else 0)
    margin = (sel_total - totals[runner]) if (sel_total is not None and runner is not None) else None
    return Plan(nodes, runner, margin, sel_ties, run_ties, n_omitted, dict(omitted.most_common()))


def _attach_preemptions(ex: Explanation, preemptions: list[Preemption] | None) -> None:
    ex.preempted = []
    for pre in preemptions or ():
        if pre.preemptor == ex.pod:
            ex.preempted.append(pre)
        elif pre.victim == ex.pod:
            ex.preempted_by = pre


def history_entry(rec: DecisionRecord) -> dict[str, Any]:
    """The one-line summary of an earlier attempt kept in :attr:`Explanation.history`."""
    return {"attempt": rec.attempt, "result": rec.result, "message": rec.message, "node": rec.selected_node,
            "nominatedNode": rec.nominated_node}


def explain_pod(result: SimulationResult, key: str, records: list[DecisionRecord] | None = None, *,
                max_nodes: int = 0) -> Explanation:
    """The explanation of ``key``'s last attempt in ``result``; ``records`` (every attempt of
    that pod, in order) adds the history. Raises :class:`InputError` when the pod is not in the
    input or was never attempted (already bound, or left to another scheduler)."""
    recs = list(records or [])
    last = recs[-1] if recs else result.records.get(key)
    preemptions = result.store.preemptions
    if last is None:
        victim = next((p for p in preemptions if p.victim == key), None)
        known = key in result.store.pods or victim is not None or any(
            r.kind == "Pod" and f"{r.namespace or ''}/{r.name}" == key for r in result.raws)
        if not known:
            raise InputError(f'pod "{key}" is not in the input', "--explain")
        if victim is not None:
            return Explanation(pod=key, result="preempted", preempted_by=victim,
                               message=f"evicted by {victim.preemptor} on node {victim.node}")
        if key in result.other_scheduler_pods:
            why = "it names a scheduler with no profile here"
        else:
            pod = result.store.pods.get(key)
            if pod is not None and pod.spec.node_name:
                why = f'it was already bound to node "{pod.spec.node_name}" in the input'
            elif pod is not None and pod.spec.scheduling_gates:
                gates = ", ".join(g.name for g in pod.spec.scheduling_gates)
                why = f"it is gated (spec.schedulingGates: {gates}), so it never left PreEnqueue"
            elif pod is not None and (held := _pre_enqueue_rejection(result, pod)) is not None:
                why = f"it never left PreEnqueue: {held}"
            else:
                why = "it was never attempted"
        raise InputError(f'pod "{key}" has no scheduling attempt to explain: {why}', "--explain")
    ex = explain_record(last, total_nodes=len(result.store.nodes), preemptions=preemptions,
                        weights=profile_weights(result, last.profile), max_nodes=max_nodes)
    ex.history = [history_entry(r) for r in recs[:-1]]
    return ex


def _pre_enqueue_rejection(result: SimulationResult, pod: Any) -> str | None:
    """Why a pending pod never left PreEnqueue (e.g. GangScheduling's "waiting for minCount pods from
    a gang to appear in scheduling queue"): its profile's PreEnqueue plugins, run again on the state
    the run ended with; None when they all admit it."""
    fw = result.scheduler.profiles.get(pod.spec.scheduler_name or "default-scheduler")
    if fw is None:
        return None
    st = fw.run_pre_enqueue_plugins(pod)
    if st is None or st.is_success():
        return None
    return f"{st.plugin}: {st.message()}" if st.plugin else st.message()


def profile_weights(result: SimulationResult, profile: str) -> dict[str, int]:
    """Score plugin → weight in ``profile`` of the run's scheduler (empty when unknown)."""
    fw = result.scheduler.profiles.get(profile)
    if fw is None:
        return {}
    return {p.name: int(fw.score_weights.get(p.name, 1)) for p in fw.score_plugins}


@dataclass
class PodSummary:
    """One attempted pod for ``-o wide``: where it went, its score, the runner-up and its score,
    feasible/evaluated node counts, attempts, nominated node, preemption."""

    pod: str
    node: str | None
    message: str
    attempts: int
    score: int | None = None
    runner_up: str | None = None
    runner_up_score: int | None = None
    feasible_nodes: int | None = None
    evaluated_nodes: int | None = None
    nominated_node: str | None = None
    preempted: list[str] = field(default_factory=list)
    """Victims this pod evicted (``namespace/name``)."""


def record_digest(rec: DecisionRecord) -> dict[str, Any]:
    """The few figures ``-o wide`` shows of an attempt (so the record itself can be dropped):
    ``{score, runner_up, runner_up_score, feasible_nodes, evaluated_nodes, nominated_node}``."""
    totals = _totals(rec)
    sel = rec.selected_node or ""
    if isinstance(totals, NodeTotals):
        return _column_digest(rec, totals, sel)
    if sel:  # the best of the others: a max, not a sort (first of equals, as _ranked)
        others = dict(totals)
        others.pop(sel, None)
        runner = max(others, key=others.__getitem__, default=None)
    else:
        runner = _runner_up(rec, _ranked(rec, totals))
    return {"score": totals.get(sel), "runner_up": runner,
            "runner_up_score": totals.get(runner) if runner else None, "feasible_nodes": rec.feasible_nodes,
            "evaluated_nodes": rec.evaluated_nodes, "nominated_node": rec.nominated_node}


def _column_digest(rec: DecisionRecord, totals: NodeTotals, sel: str) -> dict[str, Any]:
    """:func:`record_digest` read from the totals' array (an argmax, no dict of the nodes)."""
    arr = totals.array
    sel_i = totals.find(sel) if sel else -1
    runner_i = -1
    if sel:  # the best of the others: the first of equals, as max() over the dict
        others = np.delete(arr, sel_i) if sel_i >= 0 else arr
        if len(others):
            runner_i = int(np.argmax(others))
            runner_i += 1 if 0 <= sel_i <= runner_i else 0
    elif len(arr) > 1:  # the second of a stable best-first sort
        runner_i = int(np.argsort(-arr, kind="stable")[1])
    runner = totals.columns.name(runner_i) if runner_i >= 0 else None
    return {"score": int(arr[sel_i]) if sel_i >= 0 else None, "runner_up": runner,
            "runner_up_score": int(arr[runner_i]) if runner else None, "feasible_nodes": rec.feasible_nodes,
            "evaluated_nodes": rec.evaluated_nodes, "nominated_node": rec.nominated_node}


def pod_summaries(result: SimulationResult, digests: dict[str, dict[str, Any]] | None = None) -> list[PodSummary]:
    """One :class:`PodSummary` per pending pod of the input, in outcome order; ``digests``
    (pod → :func:`record_digest` of its last attempt) stands in for ``result.records``."""
    by_preemptor: dict[str, list[str]] = {}
    for p in result.store.preemptions:
        by_preemptor.setdefault(p.preemptor, []).append(p.victim)
    out: list[PodSummary] = []
    for o in result.outcomes:
        s = PodSummary(o.key, o.node, o.message, o.attempts, preempted=by_preemptor.get(o.key, []))
        d = digests.get(o.key) if digests is not None else None
        if d is None and o.key in result.records:
            d = record_digest(result.records[o.key])
        if d is not None:
            for k, v in d.items():
                setattr(s, k, v)
        out.append(s)
    return out


class ExplanationCollector:
    """An ``on_record`` sink that keeps, per pod, the capped explanation of its last attempt and
    a one-line history of the earlier ones — what the report needs, at O(``max_nodes``) memory
    per pod instead of a whole record. :meth:`finish` adds what is known only after the run."""

    def __init__(self, max_nodes: int = 10) -> None:
        self.max_nodes = max_nodes
        self.explanations: dict[str, Explanation] = {}
        self._history: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, rec: DecisionRecord) -> None:
        prev = self.explanations.get(rec.pod)
        if prev is not None:
            self._history.setdefault(rec.pod, []).append(
                {"attempt": prev.attempt, "result": prev.result, "message": prev.message,
                 "node": prev.selected_node, "nominatedNode": prev.nominated_node})
        self.explanations[rec.pod] = explain_record(rec, max_nodes=self.max_nodes)

    def finish(self, result: SimulationResult) -> dict[str, Explanation]:
        """Total nodes, profile weights, history and preemptions filled in; pod → explanation."""
        total = len(result.store.nodes)
        for key, ex in self.explanations.items():
            ex.total_nodes = total
            w = profile_weights(result, ex.profile)
            if w:
                ex.weights = {**ex.weights, **w}
                for n in ex.nodes:
                    for sc in n.scores:
                        sc.weight = ex.weights.get(sc.plugin, sc.weight)
            ex.history = self._history.get(key, [])
            _attach_preemptions(ex, result.store.preemptions)
        return self.explanations


# ───────────────────────────── the report's figures ─────────────────────────────


def _terminal(pod: Any) -> bool:
    return (getattr(pod.status, "phase", None) or "") in ("Succeeded", "Failed")


def report_data(result: SimulationResult, *, title: str = "kubesched simulate", max_nodes_per_pod: int = 10,
                explanations: Mapping[str, Explanation | RawJSON] | None = None) -> dict[str, Any]:
    """JSON-ready figures of a run for the HTML report.

    Shape::

        {"title", "summary": {nodes, pods, pending, scheduled, unschedulable, preempted, attempts},
         "resources": ["cpu", "memory", "pods", …],
         "nodes": [{"name", "zone", "allocatable": {res: int}, "requested": {res: int},
                    "utilisation": {res: 0..1 | None}, "pods": [pod keys]}],
         "zones": [{"zone", "nodes", "allocatable": {…}, "requested": {…}, "utilisation": {…}}],
         "pending": [{"reason", "count", "pods": [keys]}],
         "pods": [{"key", "node", "result", "message", "attempts",
                   "explanation": Explanation.to_compact_dict() | its RawJSON | None}],
         "preemptions": [{"victim", "preemptor", "node", …}]}

    cpu in millicores, memory in bytes; utilisation = requested / allocatable (None when the node
    has none of that resource). Succeeded and Failed pods hold no resources. ``explanations``
    (from :class:`ExplanationCollector`, or already encoded by
    :class:`~kubesched.sim.explain_compact.CompactCollector`) stand in for ``result.records``; explanations made here
    keep at most ``max_nodes_per_pod`` nodes (best first; the chosen node and the runner-up always).
    """
    store = result.store
    nodes: dict[str, dict[str, Any]] = {}
    extra: list[str] = []
    for name, node in store.nodes.items():
        alloc: dict[str, int] = {}
        for res, q in node_allocatable(node).items():
            try:
                alloc[res] = to_int(res, q)
            except InputError:
                continue
            if res not in REPORT_RESOURCES and res not in extra and not res.startswith(("hugepages-", "ephemeral")):
                extra.append(res)
        labels = node.metadata.labels or {}
        nodes[name] = {"name": name, "zone": labels.get(ZONE_LABEL, ""), "allocatable": alloc,
                       "requested": {}, "pods": []}
    for key, pod in store.pods.items():
        n = nodes.get(pod.spec.node_name or "")
        if n is None or _terminal(pod):
            continue
        req = n["requested"]
        for res, v in pod_requests(pod).items():
            req[res] = req.get(res, 0) + v
        req["pods"] = req.get("pods", 0) + 1
        n["pods"].append(key)
    resources = list(REPORT_RESOURCES) + sorted(extra)

    def util(alloc: dict[str, int], req: dict[str, int]) -> dict[str, float | None]:
        return {r: (req.get(r, 0) / alloc[r]) if alloc.get(r) else None for r in resources}

    for n in nodes.values():
        n["utilisation"] = util(n["allocatable"], n["requested"])
    zones: dict[str, dict[str, Any]] = {}
    for n in nodes.values():
        z = zones.setdefault(n["zone"], {"zone": n["zone"], "nodes": 0, "allocatable": {}, "requested": {}})
        z["nodes"] += 1
        for part in ("allocatable", "requested"):
            for r, v in n[part].items():
                z[part][r] = z[part].get(r, 0) + v
    for z in zones.values():
        z["utilisation"] = util(z["allocatable"], z["requested"])
    reasons: Counter[str] = Counter()
    reason_pods: dict[str, list[str]] = {}
    pods: list[dict[str, Any]] = []
    for o in result.outcomes:
        exp = explanations.get(o.key) if explanations is not None else None
        if exp is None and o.key in result.records:
            exp = explain_pod(result, o.key, max_nodes=max_nodes_per_pod)
        ex = exp if exp is None or isinstance(exp, RawJSON) else exp.to_compact_dict()
        pods.append({"key": o.key, "node": o.node, "result": "scheduled" if o.node else "unschedulable",
                     "message": o.message, "attempts": o.attempts, "explanation": ex})
        if not o.node:
            reason = o.message or "not attempted"
            reasons[reason] += 1
            reason_pods.setdefault(reason, []).append(o.key)
    for p in store.preemptions:
        pods.append({"key": p.victim, "node": None, "result": "preempted",
                     "message": f"evicted by {p.preemptor} on node {p.node}", "attempts": 0,
                     "explanation": None})
    scheduled = sum(1 for o in result.outcomes if o.node)
    return {
        "title": title,
        "summary": {"nodes": len(nodes), "pods": len(store.pods), "pending": len(result.outcomes),
                    "scheduled": scheduled, "unschedulable": len(result.outcomes) - scheduled,
                    "preempted": len(store.preemptions), "attempts": result.attempts},
        "resources": resources,
        "nodes": sorted(nodes.values(), key=lambda n: (n["zone"], n["name"])),
        "zones": sorted(zones.values(), key=lambda z: z["zone"]),
        "pending": [{"reason": r, "count": c, "pods": reason_pods[r]} for r, c in reasons.most_common()],
        "pods": pods,
        "preemptions": [_preemption_dict(p) for p in store.preemptions],
    }


PREEMPTED_ANNOTATION = "kubesched.io/preempted-pods"


def annotate_preemptions(result: SimulationResult) -> None:
    """With ``--record-results``: each preemptor in the output carries
    ``kubesched.io/preempted-pods`` = JSON ``[{"pod": victim, "node": node, "priority": p}]``, so the
    victims (deleted, hence absent from the List) stay visible in the data too."""
    import json

    by: dict[str, list[dict[str, Any]]] = {}
    for p in result.store.preemptions:
        by.setdefault(p.preemptor, []).append({"pod": p.victim, "node": p.node, "priority": p.victim_priority})
    for key, victims in by.items():
        ns, _, name = key.partition("/")
        raw = result.store.raw.get(("Pod", ns, name))
        if raw is None:
            continue
        meta = raw.setdefault("metadata", {})
        if not isinstance(meta.get("annotations"), dict):
            meta["annotations"] = {}
        meta["annotations"][PREEMPTED_ANNOTATION] = json.dumps(victims, separators=(",", ":"))


def preemption_lines(preemptions: list[Preemption]) -> list[str]:
    """``"ns/victim (priority 0) evicted by ns/preemptor (priority 100) on node n1"`` per eviction."""
    return [f"{p.victim} (priority {p.victim_priority}) evicted by {p.preemptor} "
            f"(priority {p.preemptor_priority}) on node {p.node}" for p in preemptions]
