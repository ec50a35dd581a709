"""``metav1.Time`` on the wire: RFC 3339, whole seconds, UTC (``apimachinery/pkg/apis/meta/v1/time.go``)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

__all__ = ["now_rfc3339", "parse_time"]

#: the last second formatted and its text: every write stamps a time (managedFields, conditions),
#: mostly within the same second
_last: tuple[int, str] = (0, "")


def now_rfc3339(delta: float = 0.0) -> str:
    """``metav1.Time`` format of now + ``delta`` seconds: whole seconds (truncated), UTC, ``Z``."""
    global _last
    sec = math.floor(time.time() + delta)
    last = _last
    if last[0] == sec:
        return last[1]
    text = datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last = (sec, text)
    return text


def parse_time(s: str) -> datetime | None:
    try:
        return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except (ValueError, TypeError):
        return None
