"""QueueingHints of InterPodAffinity (upstream ``plugin.go``: ``isSchedulableAfterPodChange``,
``isSchedulableAfterNodeChange``). Terms are taken as parsed, without resolving namespaceSelector,
and matched with nil namespace labels, as upstream."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.events import QueueingHint
from kubesched.plugins.interpodaffinity.terms import AffinityTerm, parse_pod_terms

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod

__all__ = ["is_schedulable_after_node_change", "is_schedulable_after_pod_change"]


def _matches_all_terms(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` on un-merged terms with nil namespace labels."""
    if not terms:
        return False
    ns, labels = pod.metadata.namespace, pod.metadata.labels
    return all(t.matches(ns, labels, None) for t in terms)


def is_schedulable_after_pod_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """Upstream ``isSchedulableAfterPodChange``."""
    if (new is not None and not new.spec.node_name) or (old is not None and not old.spec.node_name):
        return QueueingHint.SKIP
    terms = parse_pod_terms(pod)
    if terms.errors:
        return QueueingHint.QUEUE
    aff, anti = terms.required_affinity, terms.required_anti_affinity
    if new is not None and old is not None:
        if not _matches_all_terms(aff, old) and _matches_all_terms(aff, new):
            return QueueingHint.QUEUE
        if _matches_all_terms(anti, old) and not _matches_all_terms(anti, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if new is not None:
        return QueueingHint.QUEUE if _matches_all_terms(aff, new) else QueueingHint.SKIP
    return QueueingHint.QUEUE if old is not None and _matches_all_terms(anti, old) else QueueingHint.SKIP


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Upstream ``isSchedulableAfterNodeChange``: Queue when the node carries a topology key of
    one of the pod's required (anti-)affinity terms."""
    terms = parse_pod_terms(pod)
    if terms.errors:
        return QueueingHint.QUEUE
    labels = new.metadata.labels if new is not None else {}
    for t in terms.required_affinity + terms.required_anti_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
