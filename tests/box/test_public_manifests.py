"""Public manifests (issue 17): Argo CD's install.yaml, kube-prometheus' setup CRDs (with a few of
its custom resources and its ``system:aggregated-metrics-reader`` ClusterRole) and
microservices-demo load with ``simulate -f`` and with ``up -f``. The copies under
tests/data/public name their source and how they were trimmed in a header comment.

``up -f`` creates the CRDs first, waits until they are Established and creates the custom
resources of the same input after them; a kind the box still does not serve (Argo CD's
NetworkPolicies) is skipped with one ``notice:`` line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
PUBLIC = Path(__file__).resolve().parents[1] / "data" / "public"
ARGOCD = PUBLIC / "argocd-install.yaml"
KUBE_PROMETHEUS = PUBLIC / "kube-prometheus"
MICROSERVICES = PUBLIC / "microservices-demo.yaml"

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, kubernetes.io/os: linux}}
status: {capacity: {cpu: "32", memory: 128Gi, pods: "110"}}
"""


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, check=False)


@pytest.mark.parametrize("path", [ARGOCD, KUBE_PROMETHEUS, MICROSERVICES], ids=["argocd", "kube-prometheus",
                                                                              "microservices-demo"])
def test_simulate_loads_public_manifests(path: Path, tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    p = _cli("simulate", "-f", str(path), "-f", str(nodes), "-o", "json")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr


def test_up_loads_public_manifests(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    data = tmp_path / "data"
    p = _cli("up", "-f", str(ARGOCD), "-f", str(KUBE_PROMETHEUS), "-f", str(MICROSERVICES), "-f", str(nodes),
             "--until-idle", "--data-dir", str(data), timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "Traceback" not in out
    notices = [line for line in out.splitlines() if line.startswith("notice:")]
    assert notices == ['notice: 7 NetworkPolicy object(s) not created: no matches for kind "NetworkPolicy" in '
                       'version "networking.k8s.io/v1" (the box does not serve it)']
    # Argo CD's 7 workloads' pods and microservices-demo's 12 all fit on the node
    assert "19 pod(s) to schedule: 19 bound, 0 pending" in out

    from kubesched.apiserver.launcher import run_server

    with run_server(data_dir=data) as srv:
        def names(key: str) -> set[str]:
            return srv.call(lambda s: {e.obj()["metadata"]["name"] for e in s.store.list(key)})

        crds = names("apiextensions.k8s.io/customresourcedefinitions")
        assert {"applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io",
                "alertmanagerconfigs.monitoring.coreos.com", "prometheuses.monitoring.coreos.com",
                "servicemonitors.monitoring.coreos.com"} <= crds
        # custom resources of the same input, created after their CRD was Established
        assert names("monitoring.coreos.com/servicemonitors") == {"prometheus-operator"}
        assert names("monitoring.coreos.com/prometheuses") == {"k8s"}
        assert "system:aggregated-metrics-reader" in names("rbac.authorization.k8s.io/clusterroles")
