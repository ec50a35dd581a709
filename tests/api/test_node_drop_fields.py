"""The node strategy's ``drop_disabled_node_fields`` (which now returns early when a node has
neither gated field) drops exactly what the full check dropped, for any node, old node and gates."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import strategy
from kubesched.features import FeatureGate, default_feature_gate

_VAL = st.none() | st.just(["a"]) | st.just("Never")
_PART = st.none() | st.just("x") | st.fixed_dictionaries(
    {}, optional={"declaredFeatures": _VAL, "podPreemptionPolicy": _VAL, "other": st.just(1)})


def _reference(node: dict[str, Any], old_node: dict[str, Any] | None, fg: FeatureGate) -> None:
    """The function before the early return (``pkg/registry/core/node/strategy.go`` L95)."""
    old = strategy._dict(old_node) if old_node is not None else {}
    status = node.get("status")
    if isinstance(status, dict) and not fg.enabled("NodeDeclaredFeatures") and \
            strategy._dict(old.get("status")).get("declaredFeatures") is None:
        status.pop("declaredFeatures", None)
    spec = node.get("spec")
    if isinstance(spec, dict) and not fg.enabled("InPlacePodVerticalScalingSchedulerPreemption") and \
            strategy._dict(old.get("spec")).get("podPreemptionPolicy") is None:
        spec.pop("podPreemptionPolicy", None)


_GATES = [default_feature_gate(), FeatureGate.from_flags("1.34"),  # (on, off), (off, off)
          FeatureGate.from_flags("1.35", "NodeDeclaredFeatures=true"),  # (on, off)
          FeatureGate.from_flags("1.37", "InPlacePodVerticalScalingSchedulerPreemption=true")]  # (on, on)


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({}, optional={"status": _PART, "spec": _PART}),
       st.none() | st.fixed_dictionaries({}, optional={"status": _PART, "spec": _PART}),
       st.sampled_from(range(4)))
def test_drop_disabled_node_fields_is_the_full_check(node: dict, old: dict | None, gates: int) -> None:
    fg = _GATES[gates]
    want = copy.deepcopy(node)
    _reference(want, old, fg)
    strategy.drop_disabled_node_fields(node, old, fg)
    assert node == want
