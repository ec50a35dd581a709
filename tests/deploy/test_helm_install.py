"""``helm install`` / ``upgrade`` / ``rollback`` / ``uninstall`` of deploy/helm/kubesched into
kubesched's own API server (the box, ``kubesched apiserver``) and, when ``make upstream`` built
it, the real kube-apiserver v1.37.2: each step's objects as the API server holds them (read back
with kubectl), the release Secrets helm keeps, and the same objects on both servers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelpers import CHART

from kubesched.apiserver.launcher import run_server
from kubesched.testing.upstream import ControlPlane, UpstreamNotBuilt, find_binaries

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")

NS = "kube-system"


class Cluster:
    def __init__(self, name: str, kubeconfig: Path, workdir: Path, helm: Path) -> None:
        self.name, self.kubeconfig, self.workdir, self.helm = name, kubeconfig, workdir, helm
        self.env = {**os.environ, "HELM_CACHE_HOME": str(workdir / "helm-cache"),
                    "HELM_CONFIG_HOME": str(workdir / "helm-config"), "HELM_DATA_HOME": str(workdir / "helm-data")}

    def helm_run(self, *args: str) -> str:
        proc = subprocess.run([str(self.helm), f"--kubeconfig={self.kubeconfig}", "-n", NS, *args],
                              capture_output=True, text=True, timeout=180, env=self.env)
        assert proc.returncode == 0, f"[{self.name}] helm {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["kubectl", f"--kubeconfig={self.kubeconfig}",
                               f"--cache-dir={self.workdir / 'kubectl-cache'}", *args],
                              capture_output=True, text=True, timeout=60)
        assert not check or proc.returncode == 0, f"[{self.name}] kubectl {' '.join(args)}: {proc.stderr}"
        return proc

    def get(self, kind: str, name: str, ns: str | None = NS) -> dict[str, Any] | None:
        argv = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
        proc = self.kubectl(*argv, check=False)
        if proc.returncode != 0:
            assert "NotFound" in proc.stderr or "not found" in proc.stderr, proc.stderr
            return None
        obj: dict[str, Any] = json.loads(proc.stdout)
        return obj


#: what the chart creates with its defaults: (kind for kubectl, namespaced, name)
OBJECTS = [("serviceaccount", True, "kubesched"), ("configmap", True, "kubesched-config"),
           ("deployment.apps", True, "kubesched"), ("poddisruptionbudget.policy", True, "kubesched"),
           ("service", True, "kubesched-metrics"),
           ("clusterrole.rbac.authorization.k8s.io", False, "kubesched:kube-scheduler"),
           ("clusterrole.rbac.authorization.k8s.io", False, "kubesched:volume-scheduler"),
           ("clusterrole.rbac.authorization.k8s.io", False, "kubesched:extra"),
           ("clusterrolebinding.rbac.authorization.k8s.io", False, "kubesched:kube-scheduler"),
           ("clusterrolebinding.rbac.authorization.k8s.io", False, "kubesched:volume-scheduler"),
           ("clusterrolebinding.rbac.authorization.k8s.io", False, "kubesched:extra"),
           ("clusterrolebinding.rbac.authorization.k8s.io", False, "kubesched:auth-delegator"),
           ("rolebinding.rbac.authorization.k8s.io", True, "kubesched:extension-apiserver-authentication-reader")]


def essence(obj: dict[str, Any]) -> dict[str, Any]:
    """What the chart decides of an object (not what the server adds: uid, times, defaults)."""
    meta = obj["metadata"]
    out = {"kind": obj["kind"], "name": meta["name"], "namespace": meta.get("namespace"),
           "labels": meta.get("labels"), "release": (meta.get("annotations") or {}).get("meta.helm.sh/release-name")}
    for key in ("rules", "roleRef", "subjects", "data"):
        if key in obj:
            out[key] = obj[key]
    if obj["kind"] == "Deployment":
        out["replicas"] = obj["spec"]["replicas"]
        out["args"] = obj["spec"]["template"]["spec"]["containers"][0]["args"]
    return out


def lifecycle(c: Cluster) -> dict[str, Any]:
    """install → upgrade (3 replicas, no PDB) → rollback to 1 → uninstall; returns what install made."""
    c.helm_run("install", "kubesched", str(CHART))
    made = {}
    for kind, namespaced, name in OBJECTS:
        obj = c.get(kind, name, NS if namespaced else None)
        assert obj is not None, (c.name, kind, name)
        assert obj["metadata"]["annotations"]["meta.helm.sh/release-name"] == "kubesched"
        made[f"{kind}/{name}"] = essence(obj)
    dep = c.get("deployment.apps", "kubesched")
    assert dep is not None and dep["spec"]["replicas"] == 2

    c.helm_run("upgrade", "kubesched", str(CHART), "--set", "replicaCount=3",
               "--set", "podDisruptionBudget.enabled=false", "--set", "featureGates.GenericWorkload=true")
    dep = c.get("deployment.apps", "kubesched")
    assert dep is not None and dep["spec"]["replicas"] == 3
    assert "--feature-gates=GenericWorkload=true" in dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert c.get("poddisruptionbudget.policy", "kubesched") is None  # removed from the chart → deleted

    c.helm_run("rollback", "kubesched", "1")
    dep = c.get("deployment.apps", "kubesched")
    assert dep is not None and dep["spec"]["replicas"] == 2
    assert not [a for a in dep["spec"]["template"]["spec"]["containers"][0]["args"] if "feature-gates" in a]
    assert c.get("poddisruptionbudget.policy", "kubesched") is not None

    history = json.loads(c.helm_run("history", "kubesched", "-o", "json"))
    assert [(h["revision"], h["status"]) for h in history] == [(1, "superseded"), (2, "superseded"),
                                                               (3, "deployed")]
    secrets = json.loads(c.kubectl("get", "secrets", "-n", NS, "-l", "owner=helm,name=kubesched",
                                   "-o", "json").stdout)["items"]
    assert sorted(s["metadata"]["name"] for s in secrets) == [f"sh.helm.release.v1.kubesched.v{i}" for i in (1, 2, 3)]
    assert {s["type"] for s in secrets} == {"helm.sh/release.v1"}

    c.helm_run("uninstall", "kubesched")
    for kind, namespaced, name in OBJECTS:
        assert c.get(kind, name, NS if namespaced else None) is None, (c.name, kind, name)
    assert json.loads(c.kubectl("get", "secrets", "-n", NS, "-l", "owner=helm", "-o", "json").stdout)["items"] == []
    return made


@pytest.fixture(scope="module")
def box_made(helm: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    wd = tmp_path_factory.mktemp("helm-box")
    with run_server(wd / "kubeconfig") as srv:
        assert srv.kubeconfig_path is not None
        yield lifecycle(Cluster("box", srv.kubeconfig_path, wd, helm))


def test_install_upgrade_rollback_uninstall_in_the_box(box_made: dict[str, Any]) -> None:
    assert len(box_made) == len(OBJECTS)


def test_the_real_kube_apiserver_makes_the_same_objects(helm: Path, box_made: dict[str, Any],
                                                        tmp_path: Path) -> None:
    try:
        binaries = find_binaries()
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    cp = ControlPlane.start(binaries=binaries)
    try:
        made = lifecycle(Cluster("kube-apiserver", cp.kubeconfig_for("kubectl"), tmp_path, helm))
    finally:
        cp.stop()
    assert made == box_made
