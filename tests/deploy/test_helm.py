"""The Helm chart deploy/helm/kubesched: ``helm lint``, ``helm template`` with its values (what
values.yaml documents each one does), deploy/*.yaml as its rendering, and ``helm install`` /
``upgrade`` / ``rollback`` / ``uninstall`` into kubesched's own API server (the box) and, when
``make upstream`` built it, the real kube-apiserver v1.37.2 — the same objects in both."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml
from deployhelpers import CHART, REPO

from kubesched.config import decode_config


def run(helm: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def template(helm: Path, *sets: str, release: str = "kubesched", ns: str = "kube-system") -> list[dict[str, Any]]:
    argv = ["template", release, str(CHART), "--namespace", ns]
    for s in sets:
        argv += ["--set", s]
    return [d for d in yaml.safe_load_all(run(helm, *argv).stdout) if d]


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, [d["metadata"]["name"] for d in docs if d["kind"] == kind])
    return found[0]


def pod_spec(docs: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = one(docs, "Deployment")["spec"]["template"]["spec"]
    return spec


# ───────────────────────────── lint / template ─────────────────────────────


def test_lint_strict(helm: Path) -> None:
    out = run(helm, "lint", "--strict", str(CHART))
    assert "0 chart(s) failed" in out.stdout


def test_the_plain_manifests_are_the_charts_rendering(helm: Path) -> None:
    proc = subprocess.run([str(REPO / "tools" / "deploy" / "render-manifests.sh"), "--check"],
                          capture_output=True, text=True, env={**os.environ, "HELM": str(helm)})
    assert proc.returncode == 0, f"deploy/*.yaml are stale, run `make manifests`: {proc.stderr}"


def test_defaults(helm: Path) -> None:
    docs = template(helm)
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(["ServiceAccount", "ConfigMap", "Deployment", "PodDisruptionBudget", "Service",
                            "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding",
                            "ClusterRoleBinding", "ClusterRoleBinding", "RoleBinding"])  # no ServiceMonitor
    dep = one(docs, "Deployment")
    assert dep["spec"]["replicas"] == 2
    spec = pod_spec(docs)
    assert spec["priorityClassName"] == "system-cluster-critical"
    [c] = spec["containers"]
    assert c["image"] == "kubesched:0.1.0" and c["args"][0] == "run"
    # soft anti-affinity over hostnames between the replicas
    [term] = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"] == {"minAvailable": 1, "selector": dep["spec"]["selector"]}
    svc = one(docs, "Service")
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    assert svc["spec"]["ports"] == [{"name": "https", "port": 10259, "targetPort": "https", "protocol": "TCP"}]
    cfg = decode_config(one(docs, "ConfigMap")["data"]["config.yaml"], "chart")
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    le = cfg.leader_election
    assert le is not None and le.leader_elect and (le.resource_namespace, le.resource_name) == ("kube-system",
                                                                                                 "kubesched")


def test_delegated_authentication_bindings(helm: Path) -> None:
    docs = template(helm)
    sa = {"kind": "ServiceAccount", "name": "kubesched", "namespace": "kube-system"}
    crb = one(docs, "ClusterRoleBinding", "kubesched:auth-delegator")
    assert crb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                              "name": "system:auth-delegator"} and crb["subjects"] == [sa]
    rb = one(docs, "RoleBinding")
    assert rb["metadata"]["namespace"] == "kube-system"
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                             "name": "extension-apiserver-authentication-reader"} and rb["subjects"] == [sa]
    assert not [d for d in template(helm, "rbac.delegatedAuth=false") if d["kind"] == "RoleBinding"]
    assert not [d for d in template(helm, "rbac.create=false") if "Role" in d["kind"]]


def test_release_name_namespace_and_lease_follow_through(helm: Path) -> None:
    docs = template(helm, release="second", ns="schedulers")
    for d in docs:
        if d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "RoleBinding"):
            assert d["metadata"]["namespace"] == "schedulers", d["kind"]
    assert one(docs, "Deployment")["metadata"]["name"] == "second-kubesched"
    assert pod_spec(docs)["serviceAccountName"] == "second-kubesched"
    cfg = decode_config(one(docs, "ConfigMap")["data"]["config.yaml"], "chart")
    assert cfg.leader_election is not None
    assert (cfg.leader_election.resource_namespace, cfg.leader_election.resource_name) == ("schedulers",
                                                                                           "second-kubesched")
    extra = one(docs, "ClusterRole", "second-kubesched:extra")
    assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["second-kubesched"],
            "verbs": ["get", "update"]} in extra["rules"]
    for b in (d for d in docs if d["kind"].endswith("Binding")):
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": "second-kubesched", "namespace": "schedulers"}]


def test_values(helm: Path, tmp_path: Path) -> None:
    hard = pod_spec(template(helm, "podAntiAffinity=hard"))["affinity"]["podAntiAffinity"]
    [req] = hard["requiredDuringSchedulingIgnoredDuringExecution"]
    assert req["topologyKey"] == "kubernetes.io/hostname"
    assert "affinity" not in pod_spec(template(helm, "podAntiAffinity="))
    assert "priorityClassName" not in pod_spec(template(helm, "priorityClassName="))
    docs = template(helm, "replicaCount=3", "image.repository=registry.example/kubesched", "image.tag=dev",
                    "featureGates.GenericWorkload=true", "featureGates.A=false", "logVerbosity=4",
                    "resources.requests.cpu=1")
    assert one(docs, "Deployment")["spec"]["replicas"] == 3
    [c] = pod_spec(docs)["containers"]
    assert c["image"] == "registry.example/kubesched:dev"
    assert "--feature-gates=A=false,GenericWorkload=true" in c["args"] and "--v=4" in c["args"]
    assert c["resources"]["requests"]["cpu"] == 1
    pdb = one(template(helm, "podDisruptionBudget.minAvailable=", "podDisruptionBudget.maxUnavailable=1"),
              "PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1 and "minAvailable" not in pdb["spec"]
    bad = run(helm, "template", "x", str(CHART), "--set", "podDisruptionBudget.maxUnavailable=1", check=False)
    assert bad.returncode != 0 and "exactly one of minAvailable and maxUnavailable" in bad.stderr
    assert not [d for d in template(helm, "podDisruptionBudget.enabled=false") if d["kind"] == "PodDisruptionBudget"]
    assert not [d for d in template(helm, "metrics.service.enabled=false") if d["kind"] == "Service"]
    # profiles and plugin config verbatim, extra configuration fields at the top level
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({
        "profiles": [{"schedulerName": "kubesched", "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}},
                      "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                          "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}}]},
                     {"schedulerName": "kubesched-spread"}],
        "extraConfig": {"percentageOfNodesToScore": 50}}))
    docs = [d for d in yaml.safe_load_all(run(helm, "template", "kubesched", str(CHART), "-n", "kube-system",
                                              "-f", str(values)).stdout) if d]
    cfg = decode_config(one(docs, "ConfigMap")["data"]["config.yaml"], "chart")
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched", "kubesched-spread"]
    assert cfg.percentage_of_nodes_to_score == 50
    # a new configuration rolls the replicas
    a = one(template(helm), "Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    b = one(docs, "Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert a != b


def test_service_monitor(helm: Path) -> None:
    docs = template(helm, "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom")
    sm = one(docs, "ServiceMonitor")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1" and sm["metadata"]["labels"]["release"] == "prom"
    assert sm["spec"]["selector"]["matchLabels"].items() <= one(docs, "Service")["metadata"]["labels"].items()
    [ep] = sm["spec"]["endpoints"]
    assert (ep["port"], ep["scheme"], ep["path"]) == ("https", "https", "/metrics")
    bad = run(helm, "template", "x", str(CHART), "--set", "metrics.serviceMonitor.enabled=true",
              "--set", "metrics.service.enabled=false", check=False)
    assert bad.returncode != 0 and "metrics.serviceMonitor needs metrics.service.enabled" in bad.stderr
