"""What a simulation decided and why, as data: per-node explanations of one attempt, per-pod
summaries, preemptions, and the figures of the HTML report.

Everything here is read from :class:`~kubesched.framework.record.DecisionRecord` (the per-node,
per-plugin arrays of one scheduling attempt) and the :class:`~kubesched.sim.store.ClusterStore`
after the run; nothing is recomputed, so an explanation is exactly what the engine saw. The
renderers live in the cli layer (``kubesched.cli.explain_view``, ``kubesched.cli.report_html``).

The scoring terms are upstream's (``pkg/scheduler/framework/runtime/framework.go``
``RunScorePlugins``): *raw* = the plugin's Score(), *normalized* = after NormalizeScore (0–100),
*weighted* = normalized × the plugin's weight; a node's *total* is the sum of the weighted scores
(``NodePluginScores.TotalScore``) and the highest total wins (``selectHost``, ties broken at
random by the seed). Scoring runs only when more than one node is feasible.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import node_allocatable
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.errors import InputError
from kubesched.framework.record import PASSED, DecisionRecord
from kubesched.sim.store import Preemption

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.sim.simulate import SimulationResult

__all__ = [
    "Explanation",
    "NodeExplanation",
    "PluginScore",
    "PodSummary",
    "ZONE_LABEL",
    "explain_pod",
    "explain_record",
    "pod_summaries",
    "preemption_lines",
    "profile_weights",
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

    ``nodes``: feasible nodes first (best total first), then the rejected ones (input order of
    the record). ``runner_up``: the best-scored node other than the selected one (None when
    fewer than two nodes were scored). ``scoring_skipped``: exactly one node was feasible, so
    upstream skips scoring. ``preempted``: pods this pod evicted (any attempt);
    ``preempted_by``: set when this pod was itself evicted. ``history``: one
    ``{attempt, result, message, node}`` per earlier attempt of the pod (when known).
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
    preempted: list[Preemption] = field(default_factory=list)
    preempted_by: Preemption | None = None
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["preempted"] = [_preemption_dict(p) for p in self.preempted]
        d["preempted_by"] = _preemption_dict(self.preempted_by) if self.preempted_by else None
        return d


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
    for node, per in rec.normalized_score.items():
        fin = rec.final_score.get(node, {})
        for plugin, z in per.items():
            if plugin not in out and z:
                out[plugin] = fin.get(plugin, 0) // z
    return out


def explain_record(rec: DecisionRecord, *, total_nodes: int | None = None,
                   preemptions: list[Preemption] | None = None,
                   weights: dict[str, int] | None = None) -> Explanation:
    """The per-node explanation of one attempt (reusable by any command that has a record).

    ``total_nodes``: the cluster size, to tell nodes not evaluated (``percentageOfNodesToScore``)
    from rejected ones. ``preemptions``: the run's evictions; those made by or of ``rec.pod`` are kept.
    ``weights``: the profile's Score plugin weights (else read back from the record where it can be).
    """
    weights = {**_weights(rec), **(weights or {})}
    plugins: list[str] = []
    for per in rec.score.values():
        for p in per:
            if p not in plugins:
                plugins.append(p)
    nodes: list[NodeExplanation] = []
    for node, entry in rec.filter.items():
        reasons = _reasons(entry)
        ne = NodeExplanation(node, not reasons, dict(entry), reasons)
        if node in rec.score:
            raw = rec.score[node]
            norm = rec.normalized_score.get(node, {})
            fin = rec.final_score.get(node, {})
            ne.scores = [PluginScore(p, raw.get(p, 0), norm.get(p, raw.get(p, 0)), fin.get(p, 0), weights.get(p))
                         for p in plugins if p in raw]
            ne.total = sum(s.weighted for s in ne.scores)
        ne.selected = node == rec.selected_node
        nodes.append(ne)
    scored = sorted((n for n in nodes if n.total is not None), key=lambda n: (-(n.total or 0), not n.selected))
    for i, n in enumerate(scored, 1):
        n.rank = i
    runner = next((n for n in scored if not n.selected), None) if rec.selected_node else (
        scored[1] if len(scored) > 1 else None)
    if runner is not None:
        runner.runner_up = True
    selected = next((n for n in nodes if n.selected), None)
    feasible_unscored = [n for n in nodes if n.feasible and n.total is None]
    rejected = [n for n in nodes if not n.feasible]
    ex = Explanation(
        pod=rec.pod, profile=rec.profile, attempt=rec.attempt, result=rec.result, message=rec.message,
        selected_node=rec.selected_node, runner_up=runner.node if runner else None,
        margin=(selected.total - runner.total) if (selected is not None and runner is not None
                                                   and selected.total is not None and runner.total is not None)
        else None,
        evaluated_nodes=rec.evaluated_nodes, feasible_nodes=rec.feasible_nodes, total_nodes=total_nodes,
        scoring_skipped=rec.feasible_nodes == 1 and not rec.score,
        pre_filter=dict(rec.pre_filter), post_filter=dict(rec.post_filter), nominated_node=rec.nominated_node,
        plugins=plugins, weights=weights, nodes=scored + feasible_unscored + rejected)
    for pre in preemptions or ():
        if pre.preemptor == rec.pod:
            ex.preempted.append(pre)
        elif pre.victim == rec.pod:
            ex.preempted_by = pre
    return ex


def explain_pod(result: SimulationResult, key: str, records: list[DecisionRecord] | None = None) -> Explanation:
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
            why = (f'it was already bound to node "{pod.spec.node_name}" in the input'
                   if pod is not None and pod.spec.node_name else "it was never attempted")
        raise InputError(f'pod "{key}" has no scheduling attempt to explain: {why}', "--explain")
    ex = explain_record(last, total_nodes=len(result.store.nodes), preemptions=preemptions,
                        weights=profile_weights(result, last.profile))
    ex.history = [{"attempt": r.attempt, "result": r.result, "message": r.message, "node": r.selected_node,
                   "nominatedNode": r.nominated_node} for r in recs[:-1]]
    if ex.result == "scheduled" and key in result.store.pods:
        ex.selected_node = result.store.pods[key].spec.node_name or ex.selected_node
    return ex


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


def pod_summaries(result: SimulationResult) -> list[PodSummary]:
    """One :class:`PodSummary` per pending pod of the input, in outcome order."""
    by_preemptor: dict[str, list[str]] = {}
    for p in result.store.preemptions:
        by_preemptor.setdefault(p.preemptor, []).append(p.victim)
    out: list[PodSummary] = []
    for o in result.outcomes:
        s = PodSummary(o.key, o.node, o.message, o.attempts, preempted=by_preemptor.get(o.key, []))
        rec = result.records.get(o.key)
        if rec is not None:
            ex = explain_record(rec)
            s.feasible_nodes, s.evaluated_nodes = ex.feasible_nodes, ex.evaluated_nodes
            s.nominated_node = rec.nominated_node
            chosen = next((n for n in ex.nodes if n.selected), None)
            runner = next((n for n in ex.nodes if n.runner_up), None)
            s.score = chosen.total if chosen is not None else None
            if runner is not None:
                s.runner_up, s.runner_up_score = runner.node, runner.total
        out.append(s)
    return out


# ───────────────────────────── the report's figures ─────────────────────────────


def _terminal(pod: Any) -> bool:
    return (getattr(pod.status, "phase", None) or "") in ("Succeeded", "Failed")


def report_data(result: SimulationResult, *, title: str = "kubesched simulate",
                max_nodes_per_pod: int = 50) -> dict[str, Any]:
    """JSON-ready figures of a run for the HTML report.

    Shape::

        {"title", "summary": {nodes, pods, pending, scheduled, unschedulable, preempted, attempts},
         "resources": ["cpu", "memory", "pods", …],
         "nodes": [{"name", "zone", "allocatable": {res: int}, "requested": {res: int},
                    "utilisation": {res: 0..1 | None}, "pods": [pod keys]}],
         "zones": [{"zone", "nodes", "allocatable": {…}, "requested": {…}, "utilisation": {…}}],
         "pending": [{"reason", "count", "pods": [keys]}],
         "pods": [{"key", "node", "result", "message", "attempts", "explanation": Explanation.to_dict() | None}],
         "preemptions": [{"victim", "preemptor", "node", …}]}

    cpu in millicores, memory in bytes; utilisation = requested / allocatable (None when the node
    has none of that resource). Succeeded and Failed pods hold no resources. Each explanation
    keeps at most ``max_nodes_per_pod`` nodes (best first; the chosen node and the runner-up
    always) and counts the rest in ``nodes_omitted``.
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
        rec = result.records.get(o.key)
        ex = _trimmed(explain_pod(result, o.key), max_nodes_per_pod) if rec is not None else None
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


def _trimmed(ex: Explanation, cap: int) -> dict[str, Any]:
    if cap > 0 and len(ex.nodes) > cap:
        keep = ex.nodes[:cap] + [n for n in ex.nodes[cap:] if n.selected or n.runner_up]
        omitted = len(ex.nodes) - len(keep)
        ex.nodes = keep
        d = ex.to_dict()
        d["nodes_omitted"] = omitted
        return d
    return ex.to_dict()


def preemption_lines(preemptions: list[Preemption]) -> list[str]:
    """``"ns/victim (priority 0) evicted by ns/preemptor (priority 100) on node n1"`` per eviction."""
    return [f"{p.victim} (priority {p.victim_priority}) evicted by {p.preemptor} "
            f"(priority {p.preemptor_priority}) on node {p.node}" for p in preemptions]
