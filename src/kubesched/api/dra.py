"""Typed read-only views over the ``resource.k8s.io/v1`` objects DynamicResources reads.

ResourceClaims, ResourceSlices and DeviceClasses reach the plugin as the camelCase mappings the
store holds (decoded to builtins once, where the plugin takes them from the lister or the shared
DRA manager; the manager's assume cache copies and rewrites claims, PreBind writes them back).
As for the storage objects (:mod:`kubesched.api.storage`), each view wraps the mapping and
exposes the fields the plugin reads, snake_case and typed; it never copies or mutates it
(``raw`` is the mapping itself). The allocator (``plugins/dra_structured``) reads the same
mappings on its own hot path.

Field names follow ``k8s.io/api@v0.37.2`` ``resource/v1/types.go`` (ResourceClaim,
ResourceClaimSpec, DeviceClaim, DeviceRequest, ExactDeviceRequest, ResourceClaimStatus,
AllocationResult, DeviceAllocationResult, ResourceClaimConsumerReference, AllocatedDeviceStatus,
ResourceSlice, ResourceSliceSpec, ResourcePool, DeviceClass). An absent or null field reads as
the type's empty value (``""``, ``[]``, ``False``) except where upstream distinguishes "unset"
(pointers: ``status.allocation``, ``exactly``, timestamps), which read as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.storage import ObjectView

__all__ = ["AllocationResultView", "DeviceClassView", "DeviceRequestView", "ResourceClaimView",
           "ResourceSliceView"]

_EMPTY: Mapping[str, Any] = {}


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]``, an empty mapping when absent or null."""
    v: Mapping[str, Any] = obj.get(key) or _EMPTY
    return v


class AllocationResultView:
    """A claim's ``status.allocation`` (upstream ``AllocationResult``)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def results(self) -> list[Mapping[str, Any]]:
        """``devices.results``: one ``DeviceRequestAllocationResult`` per allocated device
        (``request``, ``driver``, ``pool``, ``device``, ``bindingConditions``, …)."""
        return list(_map(self.raw, "devices").get("results") or ())

    @property
    def node_selector(self) -> Mapping[str, Any] | None:
        """``nodeSelector`` (a NodeSelector mapping), None when the devices are reachable from any node."""
        return self.raw.get("nodeSelector")

    @property
    def allocation_timestamp(self) -> str | None:
        """``allocationTimestamp`` (RFC 3339), None when unset."""
        return self.raw.get("allocationTimestamp")


class DeviceRequestView:
    """One ``spec.devices.requests[]`` entry of a claim (upstream ``DeviceRequest``)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def name(self) -> str:
        return str(self.raw.get("name") or "")

    @property
    def exactly(self) -> Mapping[str, Any] | None:
        """``exactly`` (ExactDeviceRequest), None when the request lists ``firstAvailable``."""
        return self.raw.get("exactly")

    @property
    def device_class_name(self) -> str:
        """``exactly.deviceClassName`` ("" without ``exactly``)."""
        return str(_map(self.raw, "exactly").get("deviceClassName") or "")

    @property
    def first_available(self) -> list[Mapping[str, Any]]:
        """``firstAvailable`` subrequests (DeviceSubRequest), in order."""
        return list(self.raw.get("firstAvailable") or ())


class ResourceClaimView(ObjectView):
    """A ResourceClaim: ``spec`` and ``status`` read once."""

    __slots__ = ("spec", "status")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.metadata = raw.get("metadata") or _EMPTY
        self.spec: Mapping[str, Any] = raw.get("spec") or _EMPTY
        self.status: Mapping[str, Any] = raw.get("status") or _EMPTY

    @property
    def requests(self) -> list[Mapping[str, Any]]:
        """``spec.devices.requests`` (DeviceRequest mappings; see :class:`DeviceRequestView`)."""
        return list(_map(self.spec, "devices").get("requests") or ())

    @property
    def allocation(self) -> Mapping[str, Any] | None:
        """``status.allocation`` (see :class:`AllocationResultView`), None when not allocated."""
        return self.status.get("allocation")

    @property
    def allocation_results(self) -> list[Mapping[str, Any]]:
        """``status.allocation.devices.results`` ([] when not allocated)."""
        return list(_map(_map(self.status, "allocation"), "devices").get("results") or ())

    @property
    def reserved_for(self) -> list[Mapping[str, Any]]:
        """``status.reservedFor``: ResourceClaimConsumerReferences (``resource``, ``name``, ``uid``)."""
        return list(self.status.get("reservedFor") or ())

    @property
    def config(self) -> list[Mapping[str, Any]]:
        """``spec.devices.config`` (DeviceClaimConfiguration mappings: ``requests``, ``opaque``)."""
        return list(_map(self.spec, "devices").get("config") or ())

    @property
    def devices(self) -> list[Mapping[str, Any]]:
        """``status.devices``: AllocatedDeviceStatus entries (``driver``, ``pool``, ``device``, ``conditions``)."""
        return list(self.status.get("devices") or ())


class ResourceSliceView(ObjectView):
    """A ResourceSlice: ``spec`` read once."""

    __slots__ = ("spec",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.metadata = raw.get("metadata") or _EMPTY
        self.spec: Mapping[str, Any] = raw.get("spec") or _EMPTY

    @property
    def driver(self) -> str:
        return str(self.spec.get("driver") or "")

    @property
    def pool_name(self) -> str:
        """``spec.pool.name``."""
        return str(_map(self.spec, "pool").get("name") or "")

    @property
    def devices(self) -> list[Mapping[str, Any]]:
        """``spec.devices`` (Device mappings: ``name``, ``attributes``, ``capacity``, …)."""
        return list(self.spec.get("devices") or ())


class DeviceClassView(ObjectView):
    """A DeviceClass."""

    __slots__ = ()

    @property
    def extended_resource_name(self) -> str | None:
        """``spec.extendedResourceName``, None when unset."""
        return _map(self.raw, "spec").get("extendedResourceName")

    @property
    def selectors(self) -> list[Mapping[str, Any]]:
        """``spec.selectors`` (DeviceSelector mappings, ``{"cel": {"expression"}}``)."""
        return list(_map(self.raw, "spec").get("selectors") or ())

    @property
    def config(self) -> list[Mapping[str, Any]]:
        """``spec.config`` (DeviceClassConfiguration mappings, ``{"opaque": {"driver", "parameters"}}``)."""
        return list(_map(self.raw, "spec").get("config") or ())
