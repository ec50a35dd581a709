"""Issue 17 item 2 against the box (``--simulate-kubelets``). A Deployment that makes no progress
for ``progressDeadlineSeconds`` gets ``Progressing=False``, reason ``ProgressDeadlineExceeded``
(``pkg/controller/deployment/progress.go`` ``syncRolloutStatus``, ``util/deployment_util.go``
``DeploymentTimedOut``, v1.37.2), and ``kubectl rollout status`` fails with kubectl's error
(``rollout_status.go``: ``deployment %q exceeded its progress deadline``). A Job's
``podFailurePolicy`` as ``pkg/controller/job/pod_failure_policy.go`` (its test table's cases) with
the simulated kubelet's ``kubesched.io/exit-code`` annotation ending pods with an exit code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import Client, until

from kubesched.apiserver.kubelet import COMPLETE_AFTER_ANNOTATION, EXIT_CODE_ANNOTATION, exit_codes
from kubesched.apiserver.podfailurepolicy import match_pod_failure_policy
from kubesched.apiserver.launcher import ServerHandle

KUBECTL = shutil.which("kubectl")

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "stuck"},
    "spec": {"replicas": 2, "progressDeadlineSeconds": 2, "selector": {"matchLabels": {"app": "stuck"}},
             "template": {"metadata": {"labels": {"app": "stuck"}},
                          "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}}


def _progressing(c: Client) -> dict[str, Any] | None:
    d = c.get("/apis/apps/v1/namespaces/default/deployments/stuck")
    return next((x for x in (d.get("status") or {}).get("conditions") or [] if x["type"] == "Progressing"), None)


def test_no_progress_past_the_deadline_is_progress_deadline_exceeded(ksrv: ServerHandle, tmp_path: Path) -> None:
    c = Client.of(ksrv)
    c.create("/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT)  # no scheduler: pods stay Pending
    first = until(lambda: (p := _progressing(c)) and p, "Progressing condition")
    assert (first["status"], first["reason"]) == ("True", "NewReplicaSetCreated")
    cond = until(lambda: (p := _progressing(c)) and p["status"] == "False" and p, "deadline exceeded", timeout=15)
    assert cond["reason"] == "ProgressDeadlineExceeded"
    rs = c.get("/apis/apps/v1/namespaces/default/replicasets")["items"][0]["metadata"]["name"]
    assert cond["message"] == f'ReplicaSet "{rs}" has timed out progressing.'
    if KUBECTL is None:
        return
    env = {"KUBECONFIG": str(ksrv.kubeconfig_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([KUBECTL, "rollout", "status", "deployment/stuck", "--timeout=20s"], capture_output=True,
                       text=True, env=env, timeout=60, check=False)
    assert p.returncode == 1
    assert 'error: deployment "stuck" exceeded its progress deadline' in p.stderr


# ---- Job podFailurePolicy: matchPodFailurePolicy, cases of upstream's pod_failure_policy_test.go ----

def _failed(*, containers: tuple[tuple[str, int], ...] = (), init: tuple[tuple[str, int], ...] = (),
            conditions: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    def cs(pairs: Any) -> list[dict[str, Any]]:
        return [{"name": n, "state": {"terminated": {"exitCode": c}}} for n, c in pairs]
    return {"metadata": {"name": "mypod", "namespace": "default"},
            "status": {"phase": "Failed", "containerStatuses": cs(containers), "initContainerStatuses": cs(init),
                       "conditions": [{"type": t, "status": s} for t, s in conditions]}}


def _exit_rule(action: str, op: str, values: list[int]) -> dict[str, Any]:
    return {"action": action, "onExitCodes": {"operator": op, "values": values}}


MAIN = "Container main-container for pod default/mypod failed with exit code"


@pytest.mark.parametrize(("rules", "pod", "want"), [
    pytest.param([{"action": "UnknownAction", "onExitCodes": {"operator": "In", "values": [1, 2]}},
                  _exit_rule("FailJob", "In", [2, 3])], _failed(containers=(("main-container", 2),)),
                 (f"{MAIN} 2 matching FailJob rule at index 1", True, "FailJob"), id="unknown action skipped"),
    pytest.param([_exit_rule("FailJob", "UnknownOperator", [1, 2]), _exit_rule("FailJob", "In", [2])],
                 _failed(containers=(("main-container", 2),)),
                 (f"{MAIN} 2 matching FailJob rule at index 1", True, "FailJob"), id="unknown operator skipped"),
    pytest.param([], _failed(containers=(("main-container", 2),)), (None, True, None), id="no policy rules"),
    pytest.param([_exit_rule("Ignore", "In", [1, 2, 3])], _failed(containers=(("main-container", 2),)),
                 (None, False, "Ignore"), id="ignore rule matched for exit codes"),
    pytest.param([_exit_rule("Ignore", "In", [-1, -2, -3])], _failed(containers=(("main-container", -2),)),
                 (None, False, "Ignore"), id="ignore on negative exit codes"),
    pytest.param([_exit_rule("FailJob", "In", [1, 2, 3])], _failed(containers=(("main-container", 2),)),
                 (f"{MAIN} 2 matching FailJob rule at index 0", True, "FailJob"), id="FailJob for exit codes"),
    pytest.param([_exit_rule("FailJob", "NotIn", [111])],
                 _failed(init=(("init-container", 0),), containers=(("main-container", 111), ("support", 0),)),
                 (None, True, None), id="successful containers are skipped"),
    pytest.param([_exit_rule("FailIndex", "In", [1, 2, 3])], _failed(containers=(("main-container", 2),)),
                 (None, True, "FailIndex"), id="FailIndex for exit codes"),
    pytest.param([_exit_rule("FailJob", "NotIn", [0])], _failed(containers=(("main-container", 1), ("support", 0),)),
                 (f"{MAIN} 1 matching FailJob rule at index 0", True, "FailJob"), id="NotIn 0"),
    pytest.param([_exit_rule("Count", "In", [1, 2, 3]), _exit_rule("FailJob", "In", [4, 5, 6])],
                 _failed(containers=(("main-container", 6),)),
                 (f"{MAIN} 6 matching FailJob rule at index 1", True, "FailJob"), id="second FailJob rule"),
    pytest.param([_exit_rule("Count", "In", [1, 2, 3])], _failed(containers=(("main-container", 2),)),
                 (None, True, "Count"), id="count rule for exit codes"),
    pytest.param([{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "False"}]}],
                 _failed(conditions=(("DisruptionTarget", "False"),)), (None, False, "Ignore"), id="status False"),
    pytest.param([{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "False"}]}],
                 _failed(conditions=(("DisruptionTarget", "True"),)), (None, True, None),
                 id="pattern False, actual True"),
    pytest.param([{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}],
                 _failed(conditions=(("DisruptionTarget", "True"),)),
                 ("Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0", True, "FailJob"),
                 id="FailJob for pod conditions"),
    pytest.param([_exit_rule("FailJob", "In", [1]),
                  {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}],
                 _failed(containers=(("main-container", 2),), conditions=(("Ready", "False"),)),
                 (None, True, None), id="no rule matched"),
])
def test_match_pod_failure_policy_as_upstream(rules: list[dict[str, Any]], pod: dict[str, Any],
                                              want: tuple[Any, ...]) -> None:
    assert match_pod_failure_policy({"rules": rules}, pod) == want


def _job(name: str, exit_code: int, policy: dict[str, Any], backoff: int = 6) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": backoff, "podFailurePolicy": policy, "template": {
                "metadata": {"annotations": {COMPLETE_AFTER_ANNOTATION: "0", EXIT_CODE_ANNOTATION: str(exit_code)}},
                "spec": {"restartPolicy": "Never", "nodeName": "n1",
                         "containers": [{"name": "main", "image": "busybox"}]}}}}


def _job_status(c: Client, name: str) -> dict[str, Any]:
    return c.get(f"/apis/batch/v1/namespaces/default/jobs/{name}").get("status") or {}


def test_fail_job_rule_fails_the_job_with_upstreams_message(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                               "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    c.create("/apis/batch/v1/namespaces/default/jobs",
             _job("fj", 42, {"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "main",
                                                                             "operator": "In", "values": [42]}}]}))
    st = until(lambda: (s := _job_status(c, "fj")) and any(x["type"] == "Failed" for x in s.get("conditions") or [])
               and s, "Job failed", timeout=20)
    conds = {x["type"]: x for x in st["conditions"]}
    [pod] = c.get("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dfj")["items"]
    msg = (f"Container main for pod default/{pod['metadata']['name']} failed with exit code 42 "
           "matching FailJob rule at index 0")
    assert (conds["FailureTarget"]["reason"], conds["FailureTarget"]["message"]) == ("PodFailurePolicy", msg)
    assert (conds["Failed"]["reason"], conds["Failed"]["message"]) == ("PodFailurePolicy", msg)
    assert st["failed"] == 1 and "active" not in st
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 42


def test_ignore_rule_does_not_count_towards_backoff_limit(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                               "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    # backoffLimit 0: one counted failure would fail the Job; exit code 3 is ignored, so pods are replaced
    c.create("/apis/batch/v1/namespaces/default/jobs",
             _job("ig", 3, {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}, 0))
    until(lambda: len(c.get("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dig")["items"]) >= 3,
          "failed pods replaced", timeout=20)
    st = _job_status(c, "ig")
    assert not any(x["type"] in ("Failed", "FailureTarget") for x in st.get("conditions") or [])
    assert not st.get("failed")


def test_exit_code_annotation_values() -> None:
    assert exit_codes(None) == (None, {})
    assert exit_codes("42") == (42, {})
    assert exit_codes("main=42, side=0") == (None, {"main": 42, "side": 0})
    with pytest.raises(ValueError):
        exit_codes("main=x")
