"""Helpers shared by several plugins (upstream ``pkg/scheduler/framework/plugins/helper``).

* :mod:`.nodeselector` — vectorised node-selector / node-affinity matching over the
  :class:`~kubesched.framework.node_table.NodeTable`;
* :mod:`.normalize` — ``DefaultNormalizeScore``.
"""

from kubesched.plugins.helper.nodeselector import (
    node_selector_mask,
    preferred_score,
    required_affinity_mask,
    requirement_mask,
    term_mask,
)
from kubesched.plugins.helper.normalize import default_normalize_score

__all__ = [
    "default_normalize_score",
    "node_selector_mask",
    "preferred_score",
    "required_affinity_mask",
    "requirement_mask",
    "term_mask",
]
