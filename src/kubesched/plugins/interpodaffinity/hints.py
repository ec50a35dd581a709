"""QueueingHints of InterPodAffinity (upstream ``plugin.go``: ``isSchedulableAfterPodChange``,
``isSchedulableAfterNodeChange``). Terms are taken as parsed, without resolving namespaceSelector,
and matched with nil namespace labels, as upstream. The queue gives these hints the pending pod's
:class:`~kubesched.framework.node_info.PodInfo` (:func:`~kubesched.framework.events.pod_info_hint`),
so its terms are parsed once per queued pod version (``PodInfo.extra``, shared with the scheduling
cycle) where upstream re-parses them on every event; given a bare pod they parse it, with the same
answers."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from kubesched.framework.events import QueueingHint, pod_info_hint
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.interpodaffinity.index import pod_terms
from kubesched.plugins.interpodaffinity.terms import AffinityTerm, PodTerms, parse_pod_terms

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod

__all__ = ["hint_pod_terms", "is_schedulable_after_node_change", "is_schedulable_after_pod_change", "pod_change_hint"]


def hint_pod_terms(pod: Pod | PodInfo) -> PodTerms:
    """The pod's parsed terms: cached in ``extra`` when given the queued pod's PodInfo, else
    ``parse_pod_terms(pod)``."""
    if isinstance(pod, PodInfo):
        return pod_terms(pod)
    return parse_pod_terms(pod)


_last_event_pod: tuple[Pod, PodTerms] | None = None


def _event_pod_terms(pod: Pod) -> PodTerms:
    """``parse_pod_terms`` of the event's (deleted) pod, kept for the last one: the queue asks
    every pending pod's hint about the same event object in a row. Pods are never mutated once
    stored (an update replaces the object), so identity is the key; the entry holds the pod."""
    global _last_event_pod
    last = _last_event_pod
    if last is not None and last[0] is pod:
        return last[1]
    terms = parse_pod_terms(pod)
    _last_event_pod = (pod, terms)
    return terms


def _matches_all_terms(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` on un-merged terms with nil namespace labels."""
    if not terms:
        return False
    ns, labels = pod.metadata.namespace, pod.metadata.labels
    return all(t.matches(ns, labels, None) for t in terms)


def _matches_any_term(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """Upstream ``podMatchesAnyAffinityTerms`` (1.37) with nil namespace labels."""
    ns, labels = pod.metadata.namespace, pod.metadata.labels
    return any(t.matches(ns, labels, None) for t in terms)


def _scheduled(p: Pod, nominated_counts: bool) -> bool:
    return bool(p.spec.node_name) or (nominated_counts and bool(p.status.nominated_node_name))


def is_schedulable_after_pod_change(pod: Pod | PodInfo, old: Pod | None, new: Pod | None, *,
                                    version: tuple[int, int] = (1, 34)) -> QueueingHint:
    """Upstream ``isSchedulableAfterPodChange`` (1.34) / ``isSchedulableAfterAssignedPodChange``
    (1.37, plugin.go L160-222) at the release ``version``:

    - 1.36+: a pod with a nominated node counts as scheduled; the target pod's own label update
      queues (1.36 compares UIDs; 1.37 registers it as ``TargetPod/UpdatePodLabel`` instead);
      a deleted pod also queues when the target matches the deleted pod's anti-affinity;
    - 1.37+: anti-affinity checks use "matches any term" instead of "all terms".

    ``pod``: the pending pod or its queued PodInfo (terms parsed once)."""
    info = pod
    if isinstance(pod, PodInfo):
        pod = pod.pod
    v136, v137 = version >= (1, 36), version >= (1, 37)
    if (v136 and not v137 and new is not None and old is not None
            and (pod.metadata.uid or pod.metadata.name) == (new.metadata.uid or new.metadata.name)):
        return QueueingHint.QUEUE
    if (new is not None and not _scheduled(new, v136)) or (old is not None and not _scheduled(old, v136)):
        return QueueingHint.SKIP
    terms = hint_pod_terms(info)
    if terms.errors:
        return QueueingHint.QUEUE
    aff, anti = terms.required_affinity, terms.required_anti_affinity
    anti_match = _matches_any_term if v137 else _matches_all_terms
    if new is not None and old is not None:
        if not _matches_all_terms(aff, old) and _matches_all_terms(aff, new):
            return QueueingHint.QUEUE
        if anti_match(anti, old) and not anti_match(anti, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if new is not None:
        return QueueingHint.QUEUE if _matches_all_terms(aff, new) else QueueingHint.SKIP
    if old is None:
        return QueueingHint.SKIP
    if anti_match(anti, old):
        return QueueingHint.QUEUE
    if v136:
        old_terms = _event_pod_terms(old)
        if old_terms.errors:
            return QueueingHint.QUEUE
        if anti_match(old_terms.required_anti_affinity, pod):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def pod_change_hint(version: tuple[int, int]) -> Any:
    """:func:`is_schedulable_after_pod_change` bound to an emulated ``version`` (a
    :func:`pod_info_hint`: the queue passes the queued PodInfo; a bare pod works too)."""
    return pod_info_hint(partial(is_schedulable_after_pod_change, version=version))  # no extra frame per call


@pod_info_hint
def is_schedulable_after_node_change(pod: Pod | PodInfo, old: Any, new: Any) -> QueueingHint:
    """Upstream ``isSchedulableAfterNodeChange``: Queue when the node carries a topology key of
    one of the pod's required (anti-)affinity terms. ``pod``: the pod or its queued PodInfo."""
    terms = hint_pod_terms(pod)
    if terms.errors:
        return QueueingHint.QUEUE
    labels = new.metadata.labels if new is not None else {}
    for t in terms.required_affinity + terms.required_anti_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
