"""Resource names as the scheduler classifies them: upstream ``pkg/apis/core/v1/helper``
(``IsExtendedResourceName``, ``IsNativeResource``) and ``pkg/scheduler/util``
(``IsScalarResourceName``) v1.37.2. Shared by NodeResourcesFit / BalancedAllocation
(``noderesources``), DynamicResources and the DRA extended-resource helper.
"""

from __future__ import annotations

import re

__all__ = ["is_extended_resource_name", "is_scalar_resource_name"]

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _is_qualified_name(value: str) -> bool:
    """``validation.IsQualifiedName``: ``[prefix/]name``, name ≤ 63 chars, prefix a DNS subdomain."""
    prefix, sep, name = value.rpartition("/")
    if sep:
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def _is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain prefix, or a ``*kubernetes.io/`` prefix."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """Upstream ``v1helper.IsExtendedResourceName``: a qualified, domain-prefixed name outside
    ``*kubernetes.io/`` and not starting with ``requests.``."""
    if _is_native_resource(name) or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    """Upstream ``schedutil.IsScalarResourceName``: extended, ``hugepages-*``,
    ``*kubernetes.io/*`` (prefixed native) or ``attachable-volumes-*``."""
    return (is_extended_resource_name(name) or name.startswith("hugepages-")
            or "kubernetes.io/" in name or name.startswith("attachable-volumes-"))
