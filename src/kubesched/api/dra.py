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

from kubesched.api.storage import MappingView, SpecView, mapping_at

__all__ = ["AllocationResultView", "DeviceClassView", "DeviceRequestView", "ResourceClaimView",
           "ResourceSliceView"]

_EMPTY: Mapping[str, Any] = {}


class AllocationResultView(MappingView):
    """A claim's ``status.allocation`` (upstream ``AllocationResult``)."""

    __slots__ = ()

    @property
    def results(self) -> list[Mapping[str, Any]]:
        """``devices.results``: one ``DeviceRequestAllocationResult`` per allocated device
        (``request``, ``driver``, ``pool``, ``device``, ``bindingConditions``, …)."""
        return list(mapping_at(self.raw, "devices").get("results") or ())

    @property
    def node_selector(self) -> Mapping[str, Any] | None:
        """``nodeSelector`` (a NodeSelector mapping), None when the devices are reachable from any node."""
        return self.raw.get("nodeSelector")

    @property
    def allocation_timestamp(self) -> str | None:
        """``allocationTimestamp`` (RFC 3339), None when unset."""
        return self.raw.get("allocationTimestamp")


class DeviceRequestView(MappingView):
    """One ``spec.devices.requests[]`` entry of a claim (upstream ``DeviceRequest``)."""

    __slots__ = ()

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
        return str(mapping_at(self.raw, "exactly").get("deviceClassName") or "")

    @property
    def first_available(self) -> list[Mapping[str, Any]]:
        """``firstAvailable`` subrequests (DeviceSubRequest), in order."""
        return list(self.raw.get("firstAvailable") or ())


class ResourceClaimView(SpecView):
    """A ResourceClaim: ``spec`` and ``status`` read once."""

    __slots__ = ("status",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self.status: Mapping[str, Any] = raw.get("status") or _EMPTY

    @property
    def requests(self) -> list[Mapping[str, Any]]:
        """``spec.devices.requests`` (DeviceRequest mappings; see :class:`DeviceRequestView`)."""
        return list(mapping_at(self.spec, "devices").get("requests") or ())

    @property
    def allocation(self) -> Mapping[str, Any] | None:
        """``status.allocation`` (see :class:`AllocationResultView`), None when not allocated."""
        return self.status.get("allocation")

    @property
    def allocation_results(self) -> list[Mapping[str, Any]]:
        """``status.allocation.devices.results`` ([] when not allocated)."""
        return list(mapping_at(mapping_at(self.status, "allocation"), "devices").get("results") or ())

    @property
    def reserved_for(self) -> list[Mapping[str, Any]]:
        """``status.reservedFor``: ResourceClaimConsumerReferences (``resource``, ``name``, ``uid``)."""
        return list(self.status.get("reservedFor") or ())

    @property
    def config(self) -> list[Mapping[str, Any]]:
        """``spec.devices.config`` (DeviceClaimConfiguration mappings: ``requests``, ``opaque``)."""
        return list(mapping_at(self.spec, "devices").get("config") or ())

    @property
    def devices(self) -> list[Mapping[str, Any]]:
        """``status.devices``: AllocatedDeviceStatus entries (``driver``, ``pool``, ``device``, ``conditions``)."""
        return list(self.status.get("devices") or ())


class ResourceSliceView(SpecView):
    """A ResourceSlice: ``spec`` read once."""

    __slots__ = ()

    @property
    def driver(self) -> str:
        return str(self.spec.get("driver") or "")

    @property
    def pool_name(self) -> str:
        """``spec.pool.name``."""
        return str(mapping_at(self.spec, "pool").get("name") or "")

    @property
    def devices(self) -> list[Mapping[str, Any]]:
        """``spec.devices`` (Device mappings: ``name``, ``attributes``, ``capacity``, …)."""
        return list(self.spec.get("devices") or ())


class DeviceClassView(SpecView):
    """A DeviceClass: ``spec`` read once."""

    __slots__ = ()

    @property
    def extended_resource_name(self) -> str | None:
        """``spec.extendedResourceName``, None when unset."""
        return self.spec.get("extendedResourceName")

    @property
    def selectors(self) -> list[Mapping[str, Any]]:
        """``spec.selectors`` (DeviceSelector mappings, ``{"cel": {"expression"}}``)."""
        return list(self.spec.get("selectors") or ())

    @property
    def config(self) -> list[Mapping[str, Any]]:
        """``spec.config`` (DeviceClassConfiguration mappings, ``{"opaque": {"driver", "parameters"}}``)."""
        return list(self.spec.get("config") or ())
