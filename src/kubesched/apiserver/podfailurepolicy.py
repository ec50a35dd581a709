"""A Job's ``spec.podFailurePolicy``: which rule a failed pod matches, as the Job controller
decides it.

Follows ``pkg/controller/job/pod_failure_policy.go`` (v1.37.2) ``matchPodFailurePolicy``: the
rules in order; an ``onExitCodes`` rule matches the first terminated container (then init
container) with a non-zero exit code, of ``containerName`` when given, whose code is ``In`` /
``NotIn`` the values; an ``onPodConditions`` rule matches a pod condition of that type and
status. Actions: ``Ignore`` (not counted towards ``backoffLimit``), ``Count`` (counted, as
without a policy), ``FailJob`` (the Job fails with reason ``PodFailurePolicy`` and the message
below), ``FailIndex`` (counted; the box has no ``backoffLimitPerIndex``, so it acts as ``Count``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["JOB_REASON_POD_FAILURE_POLICY", "failure_policy_outcomes", "match_pod_failure_policy"]

#: job_controller.go ``batch.JobReasonPodFailurePolicy``
JOB_REASON_POD_FAILURE_POLICY = "PodFailurePolicy"


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _matching_container(statuses: list[Any], req: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``getMatchingContainerFromList``: a terminated container, non-zero exit code, the
    requirement's container (any when unset), its operator matching."""
    values = _list(req.get("values"))
    for cs in statuses:
        term = _map(_map(_map(cs).get("state")).get("terminated"))
        if not term:
            continue  # still terminating: no exit code to match
        if req.get("containerName") is not None and req.get("containerName") != _map(cs).get("name"):
            continue
        code = term.get("exitCode")
        if not isinstance(code, int) or code == 0:
            continue
        op = req.get("operator")
        if (op == "In" and code in values) or (op == "NotIn" and code not in values):
            return _map(cs)
    return None


def match_pod_failure_policy(policy: Mapping[str, Any] | None, pod: Mapping[str, Any]
                             ) -> tuple[str | None, bool, str | None]:
    """``(FailJob message or None, counts towards backoffLimit, matched action or None)`` for a
    failed ``pod`` under ``policy`` (``matchPodFailurePolicy``); no policy or no matching rule:
    ``(None, True, None)``."""
    if not policy:
        return None, True, None
    status = _map(pod.get("status"))
    meta = _map(pod.get("metadata"))
    where = f"{meta.get('namespace')}/{meta.get('name')}"
    for index, rule in enumerate(_list(policy.get("rules"))):
        rule = _map(rule)
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            req = _map(rule.get("onExitCodes"))
            cs = _matching_container(_list(status.get("containerStatuses")), req) or \
                _matching_container(_list(status.get("initContainerStatuses")), req)
            if cs is None:
                continue
            code = _map(_map(cs.get("state")).get("terminated")).get("exitCode")
            msg = (f"Container {cs.get('name')} for pod {where} failed with exit code {code} "
                   f"matching {action} rule at index {index}")
        elif rule.get("onPodConditions") is not None:
            patterns = [_map(p) for p in _list(rule.get("onPodConditions"))]
            cond = next((_map(c) for c in _list(status.get("conditions"))
                         if any(_map(c).get("type") == p.get("type")
                                and _map(c).get("status") == (p.get("status") or "True") for p in patterns)), None)
            if cond is None:
                continue
            msg = f"Pod {where} has condition {cond.get('type')} matching {action} rule at index {index}"
        else:
            continue
        if action == "Ignore":
            return None, False, "Ignore"
        if action == "FailJob":
            return msg, True, "FailJob"
        if action in ("FailIndex", "Count"):
            return None, True, str(action)
    return None, True, None


def _controller_uid(obj: Mapping[str, Any]) -> Any:
    return next((r.get("uid") for r in _list(_map(obj.get("metadata")).get("ownerReferences"))
                 if _map(r).get("controller")), None)


def failure_policy_outcomes(jobs: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
                            ) -> tuple[set[str], dict[str, str]]:
    """Over the unfinished Jobs with a ``podFailurePolicy``: the uids of their failed pods that
    match an ``Ignore`` rule (not counted: ``failed`` and ``backoffLimit`` leave them out), and,
    per Job uid, the ``FailJob`` message of the first failed pod matching a ``FailJob`` rule (or
    of the ``FailureTarget`` condition already written, reason ``PodFailurePolicy``)."""
    ignored: set[str] = set()
    failing: dict[str, str] = {}
    policies: dict[Any, Mapping[str, Any]] = {}
    for job in jobs:
        meta, spec, status = _map(job.get("metadata")), _map(job.get("spec")), _map(job.get("status"))
        conds = [_map(c) for c in _list(status.get("conditions"))]
        if job.get("kind") != "Job" or not spec.get("podFailurePolicy") or meta.get("deletionTimestamp") or any(
                c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conds):
            continue
        policies[meta.get("uid")] = _map(spec.get("podFailurePolicy"))
        target = next((c for c in conds if c.get("type") == "FailureTarget"
                       and c.get("reason") == JOB_REASON_POD_FAILURE_POLICY), None)
        if target is not None:
            failing[str(meta.get("uid"))] = str(target.get("message") or "")
    for pod in pods:
        uid = _controller_uid(pod)
        if uid not in policies or _map(pod.get("status")).get("phase") != "Failed":
            continue
        msg, _, action = match_pod_failure_policy(policies[uid], pod)
        if action == "Ignore":
            ignored.add(str(_map(pod.get("metadata")).get("uid")))
        elif action == "FailJob" and msg is not None:
            failing.setdefault(str(uid), msg)
    return ignored, failing
