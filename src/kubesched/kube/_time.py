"""Kubernetes wire timestamps.

``metav1.MicroTime`` is RFC 3339 with exactly six fractional digits (``RFC3339Micro``,
staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/micro_time.go); ``metav1.Time`` is whole
seconds (time.go). Python's ``isoformat()`` drops the fraction when it is zero, hence these.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["micro_time", "parse_time", "rfc3339", "utcnow"]


def utcnow() -> datetime:
    """The wall clock, timezone-aware UTC."""
    return datetime.now(UTC)


def micro_time(dt: datetime | None = None) -> str:
    """``2026-11-24T08:00:00.000000Z``: UTC, always six fractional digits (MicroTime)."""
    dt = utcnow() if dt is None else (dt if dt.tzinfo is UTC else dt.astimezone(UTC))
    # isoformat, not strftime (3x cheaper; called per Event): fixed ``timespec`` keeps the zeros
    return dt.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def rfc3339(dt: datetime | None = None) -> str:
    """``2026-11-24T08:00:00Z``: UTC, whole seconds (metav1.Time)."""
    dt = utcnow() if dt is None else dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (``Z`` or offset, with or without a fraction).

    Raises:
        ValueError: not an RFC 3339 timestamp.
    """
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        raise ValueError(f"timestamp without a time zone: {text!r}")
    return dt.astimezone(UTC)
