"""The pod strategy's create step (``prepare_pod_for_create``, which now returns at once for a pod
with no field it could drop or merge) changes exactly what the full step changed, for any pod
and gates."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubesched.api import strategy


def _reference(pod: dict[str, Any], fg: Any) -> None:
    """The create step without the early return."""
    strategy.drop_disabled_pod_fields(pod, None, fg)
    strategy.mutate_pod_affinity(pod, fg)
    strategy.mutate_topology_spread_constraints(pod, fg)


_KEYS = st.lists(st.sampled_from(["app", "tier", "zone"]), max_size=2)
_SELECTOR = st.fixed_dictionaries(
    {}, optional={"matchLabels": st.just({"app": "web"}),
                  "matchExpressions": st.just([{"key": "k", "operator": "Exists"}])}) | st.sampled_from([None, "x"])
_TERM = st.fixed_dictionaries({}, optional={"labelSelector": _SELECTOR, "matchLabelKeys": _KEYS,
                                            "mismatchLabelKeys": _KEYS, "topologyKey": st.just("zone")})
_POD_AFFINITY = st.fixed_dictionaries(
    {}, optional={"requiredDuringSchedulingIgnoredDuringExecution": st.lists(_TERM | st.just(2), max_size=2),
                  "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
                      st.fixed_dictionaries({"weight": st.just(1)}, optional={"podAffinityTerm": _TERM | st.just(3)}),
                      max_size=2)}) | st.sampled_from([None, {}, 1])
_AFFINITY = st.fixed_dictionaries(
    {}, optional={"podAffinity": _POD_AFFINITY, "podAntiAffinity": _POD_AFFINITY,
                  "nodeAffinity": st.just({"requiredDuringSchedulingIgnoredDuringExecution": {}})}) \
    | st.sampled_from([None, "x"])
_TSC = st.none() | st.just([]) | st.just({}) | st.lists(
    st.fixed_dictionaries({"topologyKey": st.just("zone")},
                          optional={"labelSelector": _SELECTOR, "matchLabelKeys": _KEYS}) | st.just(4), max_size=2)
_SPEC = st.fixed_dictionaries(
    {}, optional={"affinity": _AFFINITY, "topologySpreadConstraints": _TSC, "schedulingGroup": st.just({"a": 1}),
                  "nodeName": st.just("n1"), "containers": st.just([{"name": "c"}])}) | st.sampled_from([None, "x"])
_STATUS = st.none() | st.just("x") | st.fixed_dictionaries(
    {}, optional={"nodeAllocatableResourceClaimStatuses": st.just([{"a": 1}]),
                  "extendedResourceClaimStatus": st.none() | st.just({"a": 1}), "phase": st.just("Pending")})
_POD = st.fixed_dictionaries({"metadata": st.just({"name": "p", "labels": {"app": "web", "zone": "z1"}})},
                             optional={"spec": _SPEC, "status": _STATUS})

_MERGED_TERM = {"labelSelector": {}, "matchLabelKeys": ["app"], "mismatchLabelKeys": ["zone"]}
_GATE_NAMES = ["MatchLabelKeysInPodAffinity", "MatchLabelKeysInPodTopologySpread",
               "MatchLabelKeysInPodTopologySpreadSelectorMerge", "GenericWorkload", "DRAExtendedResource",
               "DRANodeAllocatableResources"]


class _Gates:
    """Any on/off combination of the gates the step reads (locked ones included: the early return
    must hold whatever they are)."""

    def __init__(self, on: set[str]) -> None:
        self.on = on

    def enabled(self, name: str) -> bool:
        return name in self.on


@settings(max_examples=500, deadline=None)
@given(_POD, st.sets(st.sampled_from(_GATE_NAMES)) | st.just(set(_GATE_NAMES)))
@example({"metadata": {"labels": {"app": "a", "zone": "z"}}, "spec": {"affinity": {"podAntiAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": _MERGED_TERM}]}}}}, set(_GATE_NAMES))
@example({"metadata": {"labels": {"app": "a"}}, "spec": {"affinity": {"podAntiAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [_MERGED_TERM]}}}}, set())
@example({"metadata": {}, "spec": {}, "status": {"extendedResourceClaimStatus": {}}}, set())
@example({"metadata": {}, "spec": {}, "status": {"nodeAllocatableResourceClaimStatuses": []}}, set())
def test_prepare_pod_for_create_is_the_full_step(pod: dict, on: set[str]) -> None:
    fg: Any = _Gates(on)
    pod = copy.deepcopy(pod)  # the @example objects are shared
    want = copy.deepcopy(pod)
    _reference(want, fg)
    strategy.prepare_pod_for_create(pod, fg)
    assert pod == want
