"""``metav1.Time`` on the wire: RFC 3339, whole seconds, UTC (``apimachinery/pkg/apis/meta/v1/time.go``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["now_rfc3339", "parse_time"]


def now_rfc3339(delta: float = 0.0) -> str:
    """``metav1.Time`` format: whole seconds, UTC, ``Z``."""
    t = datetime.now(UTC) + timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(s: str) -> datetime | None:
    try:
        return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except (ValueError, TypeError):
        return None
