"""What ``kubesched run`` costs before its first request, without a server (issue 18 §1, start-up).

A fresh interpreter does what ``kubesched run`` does up to the informers' LIST: imports the command
and the run path, reads a kubeconfig (https, CA and client certificate as ``-data``), builds the
in-tree plugin registry; the ``cert`` variant also generates the self-signed serving pair (a first
start with ``--cert-dir``, every start without). Several source trees alternate, round after round
(``--src DIR`` repeatable: another checkout's ``src``); per tree and variant: the module count
(load-independent) and the process's CPU-s (user + sys) min / median, with the load average.

    PYTHONPATH=src python benchmarks/startup_imports.py --rounds 6 --src /tmp/main/src --src src
"""

from __future__ import annotations

import argparse
import base64
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _kubeconfig(folder: str) -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from kubesched.testing.upstream import _issue, _new_ca, _pem_cert

    ca = _new_ca("startup-ca")
    cert, key = _issue(ca, "startup-user", server=False)

    def b64(b: bytes) -> str:
        return base64.b64encode(b).decode()

    path = os.path.join(folder, "kubeconfig")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443",
                                                               "certificate-authority-data": b64(_pem_cert(ca.cert))}}],
                        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                        "users": [{"name": "u", "user": {"client-certificate-data": b64(cert),
                                                         "client-key-data": b64(key)}}]}, f)
    return path


def _code(kubeconfig: str, cert: bool) -> str:
    code = ("import gc, sys; gc.disable(); from kubesched.cli.main import main; main.get_command(None, 'run'); "
            "import kubesched.kube.runner, kubesched.kube.adapter, kubesched.kube.client, kubesched.kube.endpoints, "
            "kubesched.kube.events, kubesched.kube.informer, kubesched.kube.metrics, kubesched.scheduler, "
            "kubesched.cli._loop, kubesched.config.validation, yaml; "
            f"from kubesched.kube.client import load_config; load_config({kubeconfig!r}); "
            "from kubesched.plugins.registry import in_tree_registry; in_tree_registry(); ")
    if cert:
        code += "from kubesched.kube.endpoints import self_signed_cert; self_signed_cert(); "
    return code + "print(len(sys.modules))"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--src", action="append", default=None, help="a checkout's src folder (repeatable; default: src)")
    a = ap.parse_args()
    srcs = [os.path.abspath(s) for s in (a.src or [str(ROOT / "src")])]
    for s in srcs:  # as an installed package is: no byte-compiling inside the measured processes
        compileall.compile_dir(s, quiet=1)
    with tempfile.TemporaryDirectory(prefix="startup-imports-") as tmp:
        kc = _kubeconfig(tmp)
        variants = {"no cert": _code(kc, False), "cert": _code(kc, True)}
        cpu: dict[tuple[str, str], list[float]] = {(s, v): [] for s in srcs for v in variants}
        mods: dict[tuple[str, str], str] = {}
        for _ in range(a.rounds):
            for v, code in variants.items():
                for s in srcs:
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    out = subprocess.run([sys.executable, "-c", code], cwd=tmp, check=True, capture_output=True,
                                         text=True, env={**os.environ, "PYTHONPATH": s, "OPENBLAS_NUM_THREADS": "1"})
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[(s, v)].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                    mods[(s, v)] = out.stdout.strip()
    for (s, v), t in cpu.items():
        print(f"{s} [{v}]: {mods[(s, v)]} modules, CPU-s min {min(t):.3f} median {statistics.median(t):.3f} "
              f"(n={len(t)})")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
