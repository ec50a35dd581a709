"""PodTopologySpread (upstream ``pkg/scheduler/framework/plugins/podtopologyspread``), vectorised.

* :mod:`.plugin` — the plugin (:class:`PodTopologySpread`, factory :func:`new`);
* :mod:`.common` — constraints, ``DefaultSelector``, node-inclusion policies;
* :mod:`.index` — :class:`SpreadIndex`, incremental per-node counts of matching pods;
* :mod:`.reference` — the plain per-node reference the tests compare against;
* :mod:`.gomath` — Go's ``math.Log``/``math.Round`` for bit-exact scores.
"""

from kubesched.plugins.podtopologyspread.common import SYSTEM_DEFAULT_CONSTRAINTS, Constraint, default_selector
from kubesched.plugins.podtopologyspread.index import SpreadIndex, spread_index
from kubesched.plugins.podtopologyspread.plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    PodTopologySpread,
    PreFilterState,
    PreScoreState,
    new,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "PodTopologySpread",
    "PreFilterState",
    "PreScoreState",
    "SpreadIndex",
    "default_selector",
    "new",
    "spread_index",
]
