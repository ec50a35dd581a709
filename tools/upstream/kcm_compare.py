"""Compare the box's controllers with a real kube-controller-manager for one kubectl sequence.

The same sequence runs against (a) real kube-apiserver + etcd + kube-controller-manager v1.37.2
(``kubesched.testing.upstream.ControlPlane``; kube-controller-manager built from
k8s.io/kubernetes@v1.37.2 ``cmd/kube-controller-manager``, path in ``--kcm`` or
``$KUBESCHED_KCM``) and (b) the box (``kubesched apiserver --simulate-kubelets``), with one
small fake kubelet on both sides (a thread binding pending pods to node ``n1`` and marking bound
pods Running/Ready through the status subresource; on the box its own simulated kubelets do the
same). Sequence: create Deployment (2 replicas) → scale to 3 → ``kubectl set image`` →
``kubectl rollout undo`` → ``kubectl delete`` (background cascade). After each step (once the
rollout is complete) it records the Deployment's status, conditions and revision, its
ReplicaSets (by revision: replicas, ready, annotations) and the live pods per revision, then
prints the differences (names and times normalised away).

Usage::

    KUBESCHED_UPSTREAM_DIR=.cache/upstream/v1.37.2 \
        python tools/upstream/kcm_compare.py --kcm .cache/upstream/v1.37.2/bin/kube-controller-manager
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.testing.upstream import ControlPlane, free_port, http_request

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                   "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}

Req = Callable[..., tuple[int, Any]]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def fake_kubelet(req: Req, stop: threading.Event) -> None:
    """Bind pending pods to n1; mark bound pods Running and Ready; finish deletions."""
    while not stop.wait(0.2):
        code, body = req("GET", "/api/v1/namespaces/default/pods")
        if code != 200:
            continue
        for p in body.get("items", []):
            md, spec, st = p["metadata"], p["spec"], p.get("status") or {}
            base = f"/api/v1/namespaces/default/pods/{md['name']}"
            if md.get("deletionTimestamp"):
                req("DELETE", base, {"gracePeriodSeconds": 0, "preconditions": {"uid": md["uid"]}})
                continue
            if not spec.get("nodeName"):
                req("POST", base + "/binding", {"apiVersion": "v1", "kind": "Binding",
                                                "metadata": {"name": md["name"]},
                                                "target": {"kind": "Node", "name": "n1"}})
                continue
            if st.get("phase") != "Running":
                t = _now()
                st.update(phase="Running", startTime=t, podIP="10.244.0.9", hostIP="172.18.0.2",
                          conditions=[{"type": c, "status": "True", "lastTransitionTime": t}
                                      for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
                          containerStatuses=[{"name": c["name"], "image": c["image"], "imageID": "", "ready": True,
                                              "restartCount": 0, "started": True,
                                              "state": {"running": {"startedAt": t}}}
                                             for c in spec["containers"]])
                p["status"] = st
                req("PUT", base + "/status", p)


def snapshot(req: Req) -> dict[str, Any]:
    """The Deployment, its ReplicaSets and pods, with names and times replaced by revisions."""
    _, d = req("GET", "/apis/apps/v1/namespaces/default/deployments/web")
    _, rss = req("GET", "/apis/apps/v1/namespaces/default/replicasets")
    _, pods = req("GET", "/api/v1/namespaces/default/pods")
    rev_of = {r["metadata"]["labels"].get("pod-template-hash"): r["metadata"].get("annotations", {}).get(
        "deployment.kubernetes.io/revision") for r in rss.get("items", [])}
    out: dict[str, Any] = {}
    if d.get("kind") == "Deployment":
        st = dict(d.get("status") or {})
        conds = sorted((c["type"], c["status"], c.get("reason")) for c in st.pop("conditions", []))
        out["deployment"] = {"status": st, "conditions": conds, "generation": d["metadata"].get("generation"),
                             "revision": d["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision")}
    out["replicasets"] = sorted(
        (r["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision"),
         r["spec"].get("replicas"), r.get("status", {}).get("replicas"), r.get("status", {}).get("readyReplicas"),
         r.get("status", {}).get("availableReplicas"),
         sorted(k for k in r["metadata"].get("annotations", {}) if k.startswith("deployment.kubernetes.io/")),
         r["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision-history"))
        for r in rss.get("items", []))
    live: dict[str, int] = {}
    for p in pods.get("items", []):
        if not p["metadata"].get("deletionTimestamp"):
            k = str(rev_of.get(p["metadata"].get("labels", {}).get("pod-template-hash")))
            live[k] = live.get(k, 0) + 1
    out["pods_by_revision"] = dict(sorted(live.items()))
    return out


def _until(fn: Callable[[], bool], timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return
        time.sleep(0.3)
    raise TimeoutError("condition not reached")


def run_sequence(req: Req, kubectl: Callable[..., str]) -> list[tuple[str, dict[str, Any]]]:
    req("POST", "/api/v1/nodes", NODE)
    _, n = req("GET", "/api/v1/nodes/n1")
    n["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                  "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}]
    req("PUT", "/api/v1/nodes/n1/status", n)
    steps: list[tuple[str, dict[str, Any]]] = []

    def settle(name: str, want: int) -> None:
        def done() -> bool:
            _, d = req("GET", "/apis/apps/v1/namespaces/default/deployments/web")
            st = d.get("status") or {}
            _, pods = req("GET", "/api/v1/namespaces/default/pods")
            return (st.get("observedGeneration") == d["metadata"].get("generation")
                    and st.get("updatedReplicas") == st.get("replicas") == st.get("availableReplicas") == want
                    and len(pods.get("items", [])) == want)
        _until(done)
        time.sleep(1.0)  # let the controllers' last status writes land
        steps.append((name, snapshot(req)))

    req("POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOY)
    settle("create (2 replicas)", 2)
    kubectl("scale", "deployment/web", "--replicas=3")
    settle("scale to 3", 3)
    kubectl("set", "image", "deployment/web", "c=nginx:2")
    settle("set image", 3)
    kubectl("rollout", "undo", "deployment/web")
    settle("rollout undo", 3)
    kubectl("delete", "deployment", "web")

    def gone() -> bool:
        _, rss = req("GET", "/apis/apps/v1/namespaces/default/replicasets")
        _, pods = req("GET", "/api/v1/namespaces/default/pods")
        return not rss.get("items") and not pods.get("items")
    _until(gone)
    steps.append(("delete (background)", snapshot(req)))
    return steps


def _kubectl(kubeconfig: Path, home: Path) -> Callable[..., str]:
    def run(*args: str) -> str:
        p = subprocess.run(["kubectl", *args], capture_output=True, text=True, timeout=60, check=False,
                           env={**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)})
        if p.returncode:
            raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr}")
        return p.stdout
    return run


def _with_fake_kubelet(req: Req, fn: Callable[[], list[tuple[str, dict[str, Any]]]]
                       ) -> list[tuple[str, dict[str, Any]]]:
    stop = threading.Event()
    t = threading.Thread(target=fake_kubelet, args=(req, stop), daemon=True)
    t.start()
    try:
        return fn()
    finally:
        stop.set()
        t.join(5)


def start_kcm(cp: ControlPlane, kcm: str, work: Path) -> subprocess.Popen[bytes]:
    """Start ``kcm`` against ``cp`` (every controller but serviceaccount-token, no leader election,
    one client identity; log in ``work``) and wait for its ``/healthz``."""
    kubeconfig = cp.kubeconfig_for("kubesched")
    port = free_port()
    log = open(work / "kube-controller-manager.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([kcm, f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
                             f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=false",
                             "--bind-address=127.0.0.1", f"--secure-port={port}",
                             f"--cert-dir={work / 'kcm-certs'}", "--controllers=*,-serviceaccount-token",
                             "--use-service-account-credentials=false", "-v=2"],
                            stdout=log, stderr=subprocess.STDOUT)
    insecure = ssl._create_unverified_context()  # noqa: S323 - its self-signed serving cert

    def healthy() -> bool:
        try:
            return http_request(f"https://127.0.0.1:{port}/healthz", None, insecure, "GET")[0] == 200
        except OSError:
            return False
    try:
        _until(healthy, 60)
    except BaseException:
        proc.terminate()
        proc.wait(15)
        raise
    return proc


def upstream_steps(kcm: str, work: Path) -> list[tuple[str, dict[str, Any]]]:
    cp = ControlPlane.start()
    proc = None
    try:
        kubeconfig = cp.kubeconfig_for("kubesched")
        proc = start_kcm(cp, kcm, work)

        def req(method: str, path: str, body: Any = None) -> tuple[int, Any]:
            code, _, out = cp.request(method, path, body)
            return code, out
        return _with_fake_kubelet(req, lambda: run_sequence(req, _kubectl(kubeconfig, work)))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(15)
        cp.stop()


def box_steps(work: Path) -> list[tuple[str, dict[str, Any]]]:
    from kubesched.apiserver.launcher import run_server

    with run_server(work / "box-kubeconfig", simulate_kubelets=True) as srv:
        def req(method: str, path: str, body: Any = None) -> tuple[int, Any]:
            code, _, out = http_request(srv.url + path, srv.token, srv.ssl_context(), method, body)
            return code, out
        assert srv.kubeconfig_path is not None
        return _with_fake_kubelet(req, lambda: run_sequence(req, _kubectl(srv.kubeconfig_path, work)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kcm", default=os.environ.get("KUBESCHED_KCM") or shutil.which("kube-controller-manager"))
    ap.add_argument("--json", action="store_true", help="print both sides' snapshots as JSON")
    args = ap.parse_args()
    if not args.kcm:
        print("error: no kube-controller-manager (--kcm PATH)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="kcm-compare-"))
    up = upstream_steps(args.kcm, work)
    box = box_steps(work)
    if args.json:
        print(json.dumps({"upstream": up, "box": box}, indent=1, default=str))
    same = 0
    for (step, a), (_, b) in zip(up, box, strict=True):
        if a == b:
            same += 1
            print(f"= {step}")
            continue
        print(f"≠ {step}")
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                print(f"    {key}:\n      upstream: {a.get(key)}\n      box:      {b.get(key)}")
    print(f"{same}/{len(up)} steps identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
