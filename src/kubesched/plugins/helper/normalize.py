"""Upstream ``pkg/scheduler/framework/plugins/helper/normalize_score.go``."""

from __future__ import annotations

import numpy as np

from kubesched.framework.npfast import amax

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: np.ndarray) -> None:
    """Scale ``scores`` (``int64[K]``) from ``[0, max(scores)]`` to ``[0, max_priority]`` in place.

    Upstream ``helper.DefaultNormalizeScore``: the max starts at 0 (so negative scores never
    raise it); when it stays 0 the scores are left alone, or all set to ``max_priority`` when
    ``reverse``. Otherwise ``s = max_priority * s / max`` with Go's integer division
    (truncation toward zero), then ``max_priority - s`` when ``reverse``.
    """
    if len(scores) == 0:
        return
    max_count = int(amax(scores))
    if max_count <= 0:
        if reverse:
            scores[:] = max_priority
        return
    num = scores.astype(np.int64) * max_priority
    # Go truncates toward zero; numpy's // floors. Scores are non-negative in every in-tree
    # caller, but keep Go's rounding for negative ones too.
    q = np.abs(num) // max_count
    out = np.where(num < 0, -q, q)
    if reverse:
        out = max_priority - out
    scores[:] = out
