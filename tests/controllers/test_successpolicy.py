"""A Job's successPolicy: ``match_success_policy`` over upstream's ``TestMatchSuccessPolicy`` table
(k8s.io/kubernetes@v1.37.2 pkg/controller/job/success_policy_test.go), and what the Job controller
does once it matches (job_controller.go syncJob: ``SuccessCriteriaMet`` with reason
``SuccessPolicy``, the remaining active pods deleted, ``Complete`` with the same reason and message
once none runs)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched.controllers.successpolicy import match_success_policy, parse_indexes
from kubesched.controllers.workloads import Controllers
from kubesched.controllers.workloadstatus import workload_statuses

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
M0, M1 = "Matched rules at index 0", "Matched rules at index 1"


def _ix(*intervals: tuple[int, int]) -> set[int]:
    return {k for first, last in intervals for k in range(first, last + 1)}


def _rule(indexes: str | None = None, count: int | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {}
    if indexes is not None:
        r["succeededIndexes"] = indexes
    if count is not None:
        r["succeededCount"] = count
    return r


# (name, succeeded intervals, successPolicy, want message); completions 10 throughout
CASES = [
    ("successPolicy is null", [(0, 0)], None, None),
    ("any rules are nothing", [(0, 0)], {"rules": []}, None),
    ("succeededIndexes is invalid format", [(0, 0)], {"rules": [_rule("invalid-form")]}, None),
    ("succeededIndexes matched", [(0, 2), (4, 7)], {"rules": [_rule("0-2")]}, M0),
    ("succeededIndexes didn't match", [(0, 2)], {"rules": [_rule("3")]}, None),
    ("succeededCount matched", [(0, 2)], {"rules": [_rule(count=2)]}, M0),
    ("succeededCount didn't match", [(0, 2)], {"rules": [_rule(count=4)]}, None),
    ("multiple rules; met one", [(0, 2), (4, 7)], {"rules": [_rule("9"), _rule("4,6")]}, M1),
    ("multiple rules; met all", [(0, 2), (4, 7)], {"rules": [_rule("0,1"), _rule("5")]}, M0),
    ("indexes and count; met", [(0, 2), (4, 7)], {"rules": [_rule("3-6", 2)]}, M0),
    ("indexes and count; not met", [(0, 2), (6, 7)], {"rules": [_rule("3-6", 2)]}, None),
    ("succeededIndexes are nothing", [], {"rules": [_rule(count=4)]}, None),
    ("rules proper subset of succeeded", [(1, 5), (6, 9)], {"rules": [_rule("2-4,6-8")]}, M0),
    ("rules equal succeeded", [(2, 4), (6, 9)], {"rules": [_rule("2-4,6-9")]}, M0),
    ("rules subset of succeeded", [(2, 5), (7, 15)], {"rules": [_rule("2-4,8-12")]}, M0),
    ("rules an empty set", [(1, 3)], {"rules": [_rule("")]}, None),
    ("succeeded an empty set", [], {"rules": [_rule("")]}, None),
    ("rules beyond succeeded", [(1, 3), (5, 7)], {"rules": [_rule("10-12,14-16")]}, None),
    ("overlap at first", [(2, 4), (6, 8)], {"rules": [_rule("1-3,5-7")]}, None),
    ("overlap at first; count", [(2, 4), (6, 8)], {"rules": [_rule("1-3,5-7", 4)]}, M0),
    ("overlap at last", [(1, 3), (5, 7)], {"rules": [_rule("2-4,6-9")]}, None),
    ("overlap at last; count", [(1, 3), (5, 7)], {"rules": [_rule("2-4,6-9", 4)]}, M0),
    ("rules completely overlap", [(1, 3), (7, 8)], {"rules": [_rule("0-4,6-9")]}, None),
    ("rules completely overlap; count", [(1, 3), (7, 8)], {"rules": [_rule("0-4,6-9", 5)]}, M0),
    ("overlap multiple at last", [(1, 3), (5, 9)], {"rules": [_rule("0-6,8-9")]}, None),
    ("overlap multiple at last; count", [(1, 3), (5, 9)], {"rules": [_rule("0-6,8-9", 7)]}, M0),
    ("overlap first, equal last", [(1, 5), (7, 10)], {"rules": [_rule("0-5,7-9")]}, None),
    ("overlap first, equal last; count", [(1, 5), (7, 10)], {"rules": [_rule("0-5,7-9", 8)]}, M0),
]


@pytest.mark.parametrize("name,succeeded,policy,want", CASES, ids=[c[0] for c in CASES])
def test_match_success_policy_upstream_table(name: str, succeeded: list[tuple[int, int]],
                                             policy: dict[str, Any] | None, want: str | None) -> None:
    assert match_success_policy(policy, 10, _ix(*succeeded)) == want


@pytest.mark.parametrize("text,completions,want", [
    ("", 10, []), ("1", 10, [(1, 1)]), ("1,3-5,6", 10, [(1, 1), (3, 6)]), ("0-5,7", 5, [(0, 4)]),
    ("0,x,2", 10, [(0, 0), (2, 2)]), ("9-20", 10, [(9, 9)]),
])
def test_parse_indexes_upstream_rules(text: str, completions: int, want: list[tuple[int, int]]) -> None:
    # indexed_job_utils.go parseIndexesFromString: corrupt intervals skipped, stops at completions, last cut
    assert parse_indexes(text, completions) == want


def _job(policy: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "ix", "namespace": "default", "uid": "j1"},
            "spec": {"completions": 3, "parallelism": 3, "completionMode": "Indexed", "successPolicy": policy,
                     "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "j1"}},
                     "template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "j1"}},
                                  "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}


def _pod(i: int, phase: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"ix-{i}", "namespace": "default", "uid": f"p{i}",
                         "labels": {"batch.kubernetes.io/controller-uid": "j1"},
                         "annotations": {"batch.kubernetes.io/job-completion-index": str(i)},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "ix", "uid": "j1",
                                              "controller": True}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": phase}}


def test_success_policy_met_deletes_the_rest_then_completes() -> None:
    job = _job({"rules": [{"succeededIndexes": "0", "succeededCount": 1}]})
    pods = [_pod(0, "Succeeded"), _pod(1, "Running")]
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    assert [(c["type"], c["reason"], c["message"]) for c in st["conditions"]] == [
        ("SuccessCriteriaMet", "SuccessPolicy", M0)]  # pod 1 still runs: not Complete yet
    job["status"] = st
    res = Controllers([job], seed=1).sync(pods, [], [], [])
    assert [p["metadata"]["name"] for p, _ in res.deleted] == ["ix-1"]  # the remaining pod goes
    assert not [p for p, _ in res.created if p["kind"] == "Pod"]  # index 2 is never created
    pods[1]["status"]["phase"] = "Failed"
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    assert [(c["type"], c["reason"], c["message"]) for c in st["conditions"]] == [
        ("SuccessCriteriaMet", "SuccessPolicy", M0), ("Complete", "SuccessPolicy", M0)]


def test_without_a_match_the_job_runs_on() -> None:
    job = _job({"rules": [{"succeededIndexes": "0-1"}]})
    pods = [_pod(0, "Succeeded"), _pod(1, "Running")]
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    assert "conditions" not in st
    res = Controllers([job], seed=1).sync(pods, [], [], [])
    assert not res.deleted
    assert [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
            for p, _ in res.created if p["kind"] == "Pod"] == ["2"]
