"""core/v1 ``Event`` ⇄ events.k8s.io/v1 ``Event`` (one stored object, two views).

Upstream stores one Event and serves it through both groups; field mapping as
``pkg/apis/events/v1/conversion.go``: regarding⇄involvedObject, note⇄message,
reportingController⇄reportingComponent, deprecatedSource⇄source,
deprecatedFirstTimestamp⇄firstTimestamp, deprecatedLastTimestamp⇄lastTimestamp,
deprecatedCount⇄count; the rest share names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["core_to_events", "events_to_core"]

_PAIRS = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)


def events_to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as the stored core/v1 Event (a new dict)."""
    out = dict(obj)
    for new, old in _PAIRS:
        if new in out:
            out[old] = out.pop(new)
    out["apiVersion"] = "v1"
    out["kind"] = "Event"
    return out


def core_to_events(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 (a new dict)."""
    out = dict(obj)
    for new, old in _PAIRS:
        if old in out:
            out[new] = out.pop(old)
    out["apiVersion"] = "events.k8s.io/v1"
    out["kind"] = "Event"
    return out
