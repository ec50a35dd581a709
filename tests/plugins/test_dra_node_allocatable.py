"""DRANodeAllocatableResources (α 1.37, off by default): the claim-sharing rejection only.

Ported from v1.37.2 ``dynamicresources_test.go`` (``node-allocatable-mapping-sharing-rejected``,
``node-allocatable-mapping-and-overhead-sharing-rejected``,
``node-allocatable-overhead-only-sharing-allowed``, L3760-3900) and
``nodeallocatabledynamicresources_test.go`` (validateNodeAllocatableDRAClaimSharing, L280-400):
an allocated claim whose device maps node-allocatable resources (``nodeAllocatableResources[*].mapping``)
and is reserved for another pod is rejected on every node. The pod-level footprint, the node fit of
DRA-derived requests and the pod status patch are not modelled.
"""

from __future__ import annotations

import pytest
from test_dynamicresources import DRIVER, V137, Harness, device, device_class, pod_with, resource_slice
from test_dynamicresources import claim as plugin_claim

from kubesched.features import FeatureGate
from kubesched.framework.interface import Code

ON = FeatureGate(overrides={"DRANodeAllocatableResources": True})
MSG = "node allocatable resource claim my-claim has a mapped device and cannot be shared across pods"
MAPPING = {"mapping": {"deviceMultiplier": "1"}}
OVERHEAD = {"overhead": {"perPod": "100"}}


def setup(nar: dict | None, reserved_uid: str = "other-pod-uid", features: FeatureGate = ON) -> Harness:
    d = device("instance-1")
    if nar is not None:
        d["nodeAllocatableResources"] = {"cpu": nar}
    sl = resource_slice("s", [d], node="worker", pool="worker")
    c = plugin_claim(allocation={
        "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}},
        reserved_for=[{"resource": "pods", "name": "other", "uid": reserved_uid}])
    return Harness(device_class(), c, sl, features=features)


@pytest.mark.parametrize("nar,want", [
    (MAPPING, MSG),
    ({**MAPPING, **OVERHEAD}, MSG),
    (OVERHEAD, None),
    (None, None),
], ids=["mapping-sharing-rejected", "mapping-and-overhead-sharing-rejected", "overhead-only-sharing-allowed",
        "no-node-allocatable-resources"])
def test_sharing(nar, want) -> None:  # noqa: ANN001
    h = setup(nar)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    # the worker node: rejected with the message; worker-2 is outside the claim's node selector
    # (the claim is unavailable there, checked first)
    got = filt["worker"]
    if want is None:
        assert got is None
    else:
        assert got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and got.reasons == (want,)
    assert filt["worker-2"].reasons == ("resourceclaim not available on the node",)


def test_reserved_for_this_pod_is_not_shared() -> None:
    h = setup(MAPPING, reserved_uid="pod-uid")
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None and filt["worker"] is None


def test_gate_off_allows_sharing() -> None:
    h = setup(MAPPING, features=V137)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None and filt["worker"] is None
