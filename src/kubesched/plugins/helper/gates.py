"""The feature gates a plugin factory sees (upstream ``feature.Features`` built from the global gate)."""

from __future__ import annotations

from typing import Any

from kubesched.features import FeatureGate, default_feature_gate

__all__ = ["features_of"]


def features_of(handle: Any) -> FeatureGate:
    """``handle.features``, or the default gates (v1.37) for a handle without them (None, test fakes)."""
    fg = getattr(handle, "features", None)
    return fg if isinstance(fg, FeatureGate) else default_feature_gate()
