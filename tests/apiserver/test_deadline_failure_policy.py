"""Issue 17 item 2 against the box (``--simulate-kubelets``): a Deployment that makes no progress
for ``progressDeadlineSeconds`` gets ``Progressing=False``, reason ``ProgressDeadlineExceeded``
(``pkg/controller/deployment/progress.go`` ``syncRolloutStatus``, ``util/deployment_util.go``
``DeploymentTimedOut``, v1.37.2), and ``kubectl rollout status`` fails with kubectl's error
(``rollout_status.go``: ``deployment %q exceeded its progress deadline``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from apiserver_helpers import Client, until

from kubesched.apiserver.testing import ServerHandle

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
