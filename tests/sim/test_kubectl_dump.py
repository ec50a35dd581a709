"""A dump written by the real ``kubectl get ... -A -o yaml|json`` (against the box API server on
127.0.0.1) loads into ``kubesched simulate`` as it is (issue 10 §3): kubectl's own YAML layout,
the server's uids, resourceVersions and status, built-in PriorityClasses (not in the dump), pods
that already carry ``spec.priority`` — and places the pending pods as simulating the original
manifests does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.apiserver.launcher import run_server

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")
REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_kubectl_dump_simulates(tmp_path: Path, fmt: str) -> None:
    assert KUBECTL is not None
    with run_server(tmp_path / "kubeconfig") as srv:
        env = {**os.environ, "KUBECONFIG": str(srv.kubeconfig_path), "HOME": str(tmp_path)}

        def kubectl(*args: str) -> str:
            p = subprocess.run([KUBECTL, "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True,
                               text=True, env=env, timeout=120, check=False)
            assert p.returncode == 0, p.stderr
            return p.stdout

        # the quickstart minus its system PriorityClasses: the API server has them built in
        pcs = [d for d in yaml.safe_load_all((QUICKSTART / "01-priorityclasses.yaml").read_text())
               if d and not d["metadata"]["name"].startswith("system-")]
        pc_file = tmp_path / "pcs.yaml"
        pc_file.write_text(yaml.safe_dump_all(pcs))
        kubectl("apply", "-f", str(QUICKSTART / "00-namespaces.yaml"))
        kubectl("apply", "-f", str(pc_file))
        for name in ("05-services.yaml", "10-nodes.yaml", "20-running-pods.yaml", "30-pending-pods.yaml"):
            kubectl("apply", "-f", str(QUICKSTART / name))
        dump = kubectl("get", "nodes,pods,pv,pvc,sc,pdb,priorityclasses", "-A", "-o", fmt, "--show-managed-fields")
    f = tmp_path / f"dump.{fmt}"
    f.write_text(dump)
    doc = yaml.safe_load(dump) if fmt == "yaml" else json.loads(dump)
    assert doc["kind"] == "List" and all(i["metadata"].get("uid") for i in doc["items"])
    r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", str(f), "-o", "json"],
                       env={**os.environ, "PYTHONPATH": str(REPO / "src")}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    pods = [i for i in out["items"] if i["kind"] == "Pod"]
    assert pods and sum(1 for p in pods if p["spec"].get("nodeName")) > len(pods) // 2
    # the same placements as simulating the manifests themselves
    direct = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", str(QUICKSTART),
                             "-o", "json"], env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                            capture_output=True, text=True, timeout=300)
    assert direct.returncode == 0, direct.stderr
    bound = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods if p["spec"].get("nodeName")}
    bound_direct = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in json.loads(direct.stdout)["items"]
                    if p["kind"] == "Pod" and p["spec"].get("nodeName")}
    assert bound == bound_direct
