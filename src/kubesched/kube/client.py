"""Placeholder for branch ``live``'s ``APIClient`` (``../notes/live-contract.md``).

Only the error types of the contract, so that branch ``liveops`` can be written and unit-tested
before ``live`` lands; on merge the owner's module replaces this file entirely.
"""

from __future__ import annotations

from typing import Any

__all__ = ["APIConnectionError", "APIError"]


class APIError(Exception):
    """The API server answered with an error Status."""

    def __init__(self, status: int, reason: str = "", message: str = "", body: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}


class APIConnectionError(Exception):
    """The API server could not be reached."""
