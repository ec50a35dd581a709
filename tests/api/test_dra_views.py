"""The typed DRA views (kubesched.api.dra) read exactly what the camelCase mapping holds, with the
API's empty values for absent or null fields and None for unset pointers (k8s.io/api resource/v1
types: ResourceClaim, AllocationResult, DeviceRequest, ResourceSlice, DeviceClass).

DynamicResources used to read these mappings with ``dict_path(obj, *keys)`` (None where a step
is missing) followed by ``or ()`` / ``or ""``; each property is checked against that reading."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from tests.api.view_strategies import NAME as _name
from tests.api.view_strategies import SETTINGS as _SETTINGS
from tests.api.view_strategies import metadata
from tests.api.view_strategies import partial as _partial

from kubesched.api.dra import (
    AllocationResultView,
    DeviceClassView,
    DeviceRequestView,
    ResourceClaimView,
    ResourceSliceView,
)
from kubesched.plugins.dra_structured import dict_path

_stamp = st.sampled_from(["2026-01-01T00:00:00Z", "2026-11-27T22:00:00Z"])
_meta = metadata(creationTimestamp=_stamp, finalizers=st.lists(_name, max_size=2))
_result = _partial({"request": _name, "driver": _name, "pool": _name, "device": _name,
                    "bindingConditions": st.lists(_name, max_size=2)})
_allocation = _partial({"devices": _partial({"results": st.lists(_result, max_size=3),
                                             "config": st.lists(st.just({"opaque": {"driver": "d"}}), max_size=1)}),
                        "nodeSelector": st.just({"nodeSelectorTerms": [{"matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}),
                        "allocationTimestamp": _stamp})
_selector = st.fixed_dictionaries({"cel": st.fixed_dictionaries({"expression": st.just("true")})})
_request = _partial({"name": _name,
                     "exactly": _partial({"deviceClassName": _name, "count": st.integers(1, 4),
                                          "selectors": st.lists(_selector, max_size=1)}),
                     "firstAvailable": st.lists(_partial({"name": _name, "deviceClassName": _name}), max_size=2)})
_claim = _partial({
    "metadata": _meta,
    "spec": _partial({"devices": _partial({"requests": st.lists(_request, max_size=3),
                                           "config": st.lists(st.just({"requests": ["r"]}), max_size=1)})}),
    "status": _partial({"allocation": _allocation,
                        "reservedFor": st.lists(_partial({"resource": st.just("pods"), "name": _name, "uid": _name}),
                                                max_size=3),
                        "devices": st.lists(_partial({"driver": _name, "pool": _name, "device": _name}), max_size=2)}),
})
_slice = _partial({"metadata": _meta, "spec": _partial({
    "driver": _name, "pool": _partial({"name": _name, "generation": st.integers(0, 3)}),
    "devices": st.lists(_partial({"name": _name}), max_size=3)})})
_class = _partial({"metadata": _meta, "spec": _partial({
    "extendedResourceName": _name, "selectors": st.lists(_selector, max_size=2),
    "config": st.lists(st.just({"opaque": {"driver": "d"}}), max_size=1)})})


def _check_meta(view: Any, obj: dict[str, Any]) -> None:
    assert view.raw is obj
    assert view.name == (dict_path(obj, "metadata", "name") or "")
    assert view.namespace == (dict_path(obj, "metadata", "namespace") or "")
    assert view.uid == (dict_path(obj, "metadata", "uid") or "")
    assert view.owner_references == (dict_path(obj, "metadata", "ownerReferences") or [])
    assert view.finalizers == (dict_path(obj, "metadata", "finalizers") or [])
    assert view.deletion_timestamp == dict_path(obj, "metadata", "deletionTimestamp")
    assert view.creation_timestamp == (dict_path(obj, "metadata", "creationTimestamp") or "")
    assert dict(view.annotations) == (dict_path(obj, "metadata", "annotations") or {})


@_SETTINGS
@given(_claim)
def test_claim_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = ResourceClaimView(obj)
    _check_meta(v, obj)
    assert v.requests == (dict_path(obj, "spec", "devices", "requests") or [])
    assert v.config == (dict_path(obj, "spec", "devices", "config") or [])
    assert v.allocation == dict_path(obj, "status", "allocation")
    assert v.allocation_results == (dict_path(obj, "status", "allocation", "devices", "results") or [])
    assert v.reserved_for == (dict_path(obj, "status", "reservedFor") or [])
    assert v.devices == (dict_path(obj, "status", "devices") or [])
    if v.allocation is not None:
        a = AllocationResultView(v.allocation)
        assert a.raw is obj["status"]["allocation"]
        assert a.results == v.allocation_results
        assert a.node_selector == dict_path(obj, "status", "allocation", "nodeSelector")
        assert a.allocation_timestamp == dict_path(obj, "status", "allocation", "allocationTimestamp")
    for raw in v.requests:
        r = DeviceRequestView(raw)
        assert r.name == (raw.get("name") or "")
        assert r.exactly == raw.get("exactly")
        assert r.device_class_name == (dict_path(raw, "exactly", "deviceClassName") or "")
        assert r.first_available == (raw.get("firstAvailable") or [])


@_SETTINGS
@given(_slice)
def test_slice_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = ResourceSliceView(obj)
    _check_meta(v, obj)
    assert v.driver == (dict_path(obj, "spec", "driver") or "")
    assert v.pool_name == (dict_path(obj, "spec", "pool", "name") or "")
    assert v.devices == (dict_path(obj, "spec", "devices") or [])


@_SETTINGS
@given(_class)
def test_device_class_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = DeviceClassView(obj)
    _check_meta(v, obj)
    assert v.extended_resource_name == dict_path(obj, "spec", "extendedResourceName")
    assert v.selectors == (dict_path(obj, "spec", "selectors") or [])
    assert v.config == (dict_path(obj, "spec", "config") or [])


def test_views_never_copy_or_change_the_mapping() -> None:
    claim = {"metadata": {"name": "c"}, "status": {"allocation": {"devices": {"results": [{"request": "r"}]}}}}
    before = repr(claim)
    v = ResourceClaimView(claim)
    assert v.allocation is claim["status"]["allocation"]
    assert v.allocation_results[0] is claim["status"]["allocation"]["devices"]["results"][0]
    assert repr(claim) == before
