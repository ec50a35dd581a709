"""A Job's ``successPolicy`` (Indexed Jobs): when its rules declare the Job succeeded early.

Follows k8s.io/kubernetes@v1.37.2 ``pkg/controller/job/success_policy.go`` (``matchSuccessPolicy``,
``matchSucceededIndexesRule``) and ``indexed_job_utils.go`` (``parseIndexesFromString``). A rule
with ``succeededIndexes`` matches when every listed index below ``completions`` succeeded, or —
with ``succeededCount`` — when that many of them did; a rule with only ``succeededCount`` when
that many indexes succeeded. The first matching rule (by position) names the message
``Matched rules at index N``; the Job controller then adds ``SuccessCriteriaMet`` (reason
``SuccessPolicy``), deletes the remaining active pods and, once none runs, ``Complete`` with the
same reason and message (``job_controller.go`` ``syncJob``, ``trackJobStatusAndRemoveFinalizers``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REASON_SUCCESS_POLICY", "match_success_policy", "parse_indexes"]

#: ``batch.JobReasonSuccessPolicy``
REASON_SUCCESS_POLICY = "SuccessPolicy"


def parse_indexes(text: str, completions: int) -> list[tuple[int, int]]:
    """Ordered, merged ``(first, last)`` intervals of ``text`` (``"0,2-4"``) below ``completions``:
    a corrupted interval is skipped, parsing stops at the first one starting at or beyond
    ``completions``, and a last index beyond it is cut to ``completions - 1``."""
    out: list[tuple[int, int]] = []
    if not text:
        return out
    for part in text.split(","):
        limits = part.split("-")
        try:
            first = int(limits[0])
        except ValueError:
            continue
        if first >= completions:
            break
        last = first
        if len(limits) > 1:
            try:
                last = min(int(limits[1]), completions - 1)
            except ValueError:
                continue
        if out and out[-1][1] == first - 1:
            out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def _intervals(indexes: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for k in sorted(set(indexes)):
        if out and out[-1][1] == k - 1:
            out[-1] = (out[-1][0], k)
        else:
            out.append((k, k))
    return out


def _total(intervals: list[tuple[int, int]]) -> int:
    return sum(last - first + 1 for first, last in intervals)


def _match_indexes_rule(rule: list[tuple[int, int]], succeeded: list[tuple[int, int]], count: int | None) -> bool:
    contains = r = s = 0
    while r < len(rule) and s < len(succeeded):
        overlap = min(rule[r][1], succeeded[s][1]) - max(rule[r][0], succeeded[s][0]) + 1
        if overlap > 0:
            contains += overlap
        if succeeded[s][1] < rule[r][1]:
            s += 1
        elif succeeded[s][1] > rule[r][1]:
            r += 1
        else:
            s += 1
            r += 1
    return contains == _total(rule) or (count is not None and contains >= count)


def match_success_policy(policy: Mapping[str, Any] | None, completions: int,
                         succeeded_indexes: Iterable[int]) -> str | None:
    """The message of the first rule of ``policy`` (``spec.successPolicy``) the succeeded indexes
    meet (``Matched rules at index N``), else None (also without a policy or a succeeded index)."""
    succeeded = _intervals(succeeded_indexes)
    if not policy or not succeeded:
        return None
    for i, rule in enumerate(policy.get("rules") or ()):
        if not isinstance(rule, Mapping):
            continue
        count = rule.get("succeededCount") if isinstance(rule.get("succeededCount"), int) else None
        if isinstance(rule.get("succeededIndexes"), str):
            required = parse_indexes(rule["succeededIndexes"], completions)
            if required and _match_indexes_rule(required, succeeded, count):
                return f"Matched rules at index {i}"
        elif count is not None and _total(succeeded) >= count:
            return f"Matched rules at index {i}"
    return None
