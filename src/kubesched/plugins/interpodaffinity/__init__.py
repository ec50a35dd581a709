"""InterPodAffinity: required/preferred pod affinity and anti-affinity (upstream
``pkg/scheduler/framework/plugins/interpodaffinity``, v1.34), vectorised over the NodeTable with
an incremental index (:mod:`.index`); :mod:`.reference` is the plain per-node port used by tests."""

from kubesched.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    InterPodAffinity,
    PreFilterState,
    PreScoreState,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    new,
    normalize_min_max,
)
from kubesched.plugins.interpodaffinity.terms import apply_match_label_keys, parse_pod_terms

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
    "PreFilterState",
    "PreScoreState",
    "apply_match_label_keys",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "new",
    "normalize_min_max",
    "parse_pod_terms",
]
