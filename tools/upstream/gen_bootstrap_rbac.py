"""Generate ``src/kubesched/apiserver/data/bootstrap_rbac.json``: the RBAC objects kube-apiserver
creates at start (its bootstrap policy), from upstream's own expected-output files
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/*.yaml`` of k8s.io/kubernetes.

    go mod download k8s.io/kubernetes@v1.37.2     # (run from tools/upstream, as the other generators)
    python tools/upstream/gen_bootstrap_rbac.py [--version 1.37.2]

The files are upstream's golden outputs of ``bootstrappolicy.ClusterRoles()`` etc. at the default
feature gates (``cluster-roles-featuregates.yaml`` is the all-gates variant, not used).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import yaml

FILES = ("cluster-roles.yaml", "cluster-role-bindings.yaml", "controller-roles.yaml",
         "controller-role-bindings.yaml", "namespace-roles.yaml", "namespace-role-bindings.yaml")
OUT = Path(__file__).resolve().parents[2] / "src" / "kubesched" / "apiserver" / "data" / "bootstrap_rbac.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--version", default="1.37.2")
    a = ap.parse_args()
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    base = Path(modcache) / f"k8s.io/kubernetes@v{a.version}/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata"
    items: list[dict] = []
    for name in FILES:
        doc = yaml.safe_load((base / name).read_text())
        for item in doc["items"]:
            if item.get("rules") is None and item["kind"] in ("ClusterRole", "Role"):
                item["rules"] = []
            items.append(item)
    OUT.write_text(json.dumps({"source": f"k8s.io/kubernetes@v{a.version} bootstrappolicy/testdata",
                               "items": items}, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"{OUT}: {len(items)} objects")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
