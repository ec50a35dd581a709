"""``kubesched snapshot`` over real HTTP against the box: objects created through the API
(``kubectl apply``), exported, read back by ``simulate -f DIR`` with the same decisions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.apiserver.launcher import run_server
from kubesched.cli.main import main
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.snapshot import SNAPSHOT_RESOURCES, take_snapshot


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def node(name: str, cpu: str, zone: str, taints: list | None = None) -> dict:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                               "topology.kubernetes.io/zone": zone}},
                         "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                                                "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
    if taints:
        d["spec"]["taints"] = taints
    return d


def pod(name: str, cpu: str, node_name: str | None = None, ns: str = "default", app: str = "x",
        **spec: Any) -> dict:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
                         "spec": {"containers": [{"name": "c", "image": "img",
                                                  "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
                                  **spec}}
    if node_name:
        d["spec"]["nodeName"] = node_name
    return d


def cluster() -> list[dict]:
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "spread"}}}]
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000},
        node("a1", "2", "a"), node("a2", "4", "a"), node("b1", "4", "b"),
        node("gpu1", "8", "b", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
        pod("bound1", "1500m", "a1", app="bound"), pod("bound2", "3", "b1", ns="team"),
        # pending: names sort in input order, as the API lists them
        pod("p1-big", "2500m"), pod("p2-vip", "1", priorityClassName="high"),
        pod("p3-spread1", "200m", app="spread", topologySpreadConstraints=spread),
        pod("p4-spread2", "200m", app="spread", topologySpreadConstraints=spread),
        pod("p5-gpu", "6", tolerations=[{"key": "gpu", "operator": "Exists"}]),
        pod("p6-nofit", "16"),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "bound"}}}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
    ]


def decisions(out: str) -> dict[str, str | None]:
    items = json.loads(out)["items"]
    return {f"{i['metadata']['namespace']}/{i['metadata']['name']}": i["spec"].get("nodeName")
            for i in items if i["kind"] == "Pod"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_snapshot_then_simulate_gives_the_same_decisions(tmp_path: Path) -> None:
    docs = cluster()
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    with run_server(tmp_path / "kubeconfig") as srv:
        kc = str(srv.kubeconfig_path)
        # through the API, as a user would (kubectl over HTTPS with the bearer token)
        subprocess.run(["kubectl", "--kubeconfig", kc, "apply", "-f", str(manifest)], check=True,
                       capture_output=True, timeout=60)
        # a finished pod: not read by the scheduler, not in the snapshot
        done = pod("finished", "1", "a2")
        srv.create(done)
        subprocess.run(["kubectl", "--kubeconfig", kc, "patch", "pod", "finished", "--subresource", "status",
                        "--type", "merge", "-p", '{"status":{"phase":"Succeeded"}}'], check=True,
                       capture_output=True, timeout=60)
        out_dir = tmp_path / "snap"
        code, _, err = run("snapshot", "--kubeconfig", kc, "-o", str(out_dir))
        assert code == 0, err
        assert "wrote " in err
        # a second snapshot into the same folder needs --overwrite
        code, _, err = run("snapshot", "--kubeconfig", kc, "-o", str(out_dir))
        assert code == 2 and "--overwrite" in err
        code, _, err = run("snapshot", "--kubeconfig", kc, "-o", str(out_dir), "--overwrite")
        assert code == 0, err

    files = sorted(p.name for p in out_dir.iterdir())
    assert "02-nodes.json" in files and files[-1] == "22-pods.json"
    pods = json.loads((out_dir / "22-pods.json").read_text())
    assert pods["kind"] == "List"
    names = [p["metadata"]["name"] for p in pods["items"]]
    assert "finished" not in names and len(names) == 8
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" and "managedFields" not in p["metadata"]
               for p in pods["items"])
    nodes = json.loads((out_dir / "02-nodes.json").read_text())["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["a1", "a2", "b1", "gpu1"]

    code, direct, err = run("simulate", "-f", str(manifest), "-o", "json")
    assert code == 0, err
    code, from_snapshot, err = run("simulate", "-f", str(out_dir), "-o", "json")
    assert code == 0, err
    want = decisions(direct)
    got = decisions(from_snapshot)
    assert got == want
    # the scenario is not trivial: spread across zones, a toleration, a pod that fits nowhere
    assert {want["default/p3-spread1"][0], want["default/p4-spread2"][0]} == {"a", "b"}
    assert want["default/p5-gpu"] == "gpu1" and want["default/p6-nofit"] is None


def test_snapshot_lists_each_object_once_across_pages_and_skips_terminal_pods(tmp_path: Path) -> None:
    import asyncio

    with run_server(tmp_path / "kubeconfig") as srv:
        for i in range(3):
            srv.create(node(f"n{i}", "4", "a"))
        for i in range(11):
            srv.create(pod(f"p{i:02d}", "100m", "n0" if i % 2 else None))
        srv.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "c", "image": "img"}]}}}})

        async def go() -> Any:
            async with APIClient(load_config(str(srv.kubeconfig_path), qps=-1)) as client:
                return await take_snapshot(client, page_size=2)  # 11 pods: 6 pages

        snap = asyncio.run(go())
    assert [p["metadata"]["name"] for p in snap.objects["Pod"]] == [f"p{i:02d}" for i in range(11)]
    assert len(snap.objects["Node"]) == 3
    assert [d["metadata"]["name"] for d in snap.objects["Deployment"]] == ["web"]
    assert list(snap.objects) == [k for k in SNAPSHOT_RESOURCES if k not in snap.skipped]

    # the Deployment comes back through simulate's workload controllers: 2 pods created and scheduled
    out_dir = tmp_path / "snap"
    out_dir.mkdir()
    from kubesched.sim.manifests import write_list

    for kind, items in snap.objects.items():
        with open(out_dir / f"{kind}.json", "w") as fh:
            write_list(items, "json", fh)
    code, out, err = run("simulate", "-f", str(out_dir), "-o", "json")
    assert code == 0, err
    web = [p for p in json.loads(out)["items"] if p["kind"] == "Pod" and p["metadata"]["name"].startswith("web-")]
    assert len(web) == 2 and all(p["spec"].get("nodeName") for p in web)


def test_snapshot_of_an_unresponsive_server_fails_cleanly_and_writes_nothing(tmp_path: Path) -> None:
    with run_server(tmp_path / "kubeconfig") as srv:
        srv.create(node("n1", "4", "a"))
        srv.faults.pause()  # every request hangs
        try:
            out_dir = tmp_path / "snap"
            code, _, err = run("snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(out_dir),
                               "--timeout", "1")
        finally:
            srv.faults.resume()
        assert code == 1
        assert err.startswith("error: ") and "within 1s" in err and len(err.strip().splitlines()) == 1
        assert list(out_dir.iterdir()) == []
        # once the server answers again, the same command succeeds (here as YAML)
        code, _, err = run("snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(out_dir),
                           "--format", "yaml")
        assert code == 0, err
        assert yaml.safe_load((out_dir / "02-nodes.yaml").read_text())["items"][0]["metadata"]["name"] == "n1"
    code, out, err = run("simulate", "-f", str(out_dir), "-o", "json")
    assert code == 0, err


def test_snapshot_bad_output_dir_and_kubeconfig(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    (tmp_path / "kc").write_text("not: [a kubeconfig")
    code, _, err = run("snapshot", "--kubeconfig", str(tmp_path / "kc"), "-o", str(tmp_path / "o"))
    assert code == 1 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    with run_server(tmp_path / "kubeconfig") as srv:
        code, _, err = run("snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(f))
        assert code == 2 and "is a file" in err  # click checks the path
        d = tmp_path / "mine"
        d.mkdir()
        (d / "notes.txt").write_text("keep me")
        code, _, err = run("snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(d), "--overwrite")
        assert code == 2 and "refusing" in err and (d / "notes.txt").read_text() == "keep me"


def test_snapshot_of_reconciled_workloads_creates_nothing_more_in_simulate(tmp_path: Path) -> None:
    """Workloads the box's controllers already reconciled: simulate schedules their pods and
    creates none (the ReplicaSet's template equals the Deployment's once defaulted)."""
    import time

    tmpl = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "100m"}}}]}}
    with run_server(tmp_path / "kubeconfig", simulate_kubelets=True) as srv:
        srv.create(node("n1", "4", "a"))
        srv.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": tmpl}})
        srv.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                    "spec": {"replicas": 2, "podManagementPolicy": "Parallel", "serviceName": "db",
                             "selector": {"matchLabels": {"app": "db"}},
                             "template": {**tmpl, "metadata": {"labels": {"app": "db"}}}}})
        deadline = time.monotonic() + 10
        while srv.call(lambda s: s.store.count("pods")) < 5:
            assert time.monotonic() < deadline, "box controllers did not create the pods"
            time.sleep(0.05)
        out_dir = tmp_path / "snap"
        code, _, err = run("snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(out_dir))
        assert code == 0, err
    code, out, err = run("simulate", "-f", str(out_dir), "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    pods = [i for i in items if i["kind"] == "Pod"]
    assert len(pods) == 5 and all(p["spec"].get("nodeName") == "n1" for p in pods)
    assert sum(i["kind"] == "ReplicaSet" for i in items) == 1
    assert "notice" not in err
