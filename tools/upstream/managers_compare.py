"""Who owns what: the managedFields of a Deployment → ReplicaSet → pod chain on a real control plane
(kube-apiserver + etcd + kube-controller-manager + kube-scheduler v1.37.2) and on the box.

Sequence: a Node (``kubectl-create``), a Deployment with 2 replicas (``kubectl-create``); the
scheduler binds the pods; a small kubelet stand-in (User-Agent ``kubelet/…``) marks the bound pods
Running/Ready through ``pods/status`` (on the box the simulated kubelets do it). Once the rollout
is complete it prints, per object (Deployment, its ReplicaSet, one pod), the managedFields entries
as ``(manager, operation, subresource, fieldsV1)`` and the differences between both sides.

Usage::

    KUBESCHED_UPSTREAM_DIR=.cache/upstream/v1.37.2 python tools/upstream/managers_compare.py \\
        --kcm .cache/upstream/v1.37.2/bin/kube-controller-manager [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.testing.upstream import ControlPlane, http_request

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)  # kcm_compare, beside this file
from kcm_compare import _now, _until, start_kcm  # noqa: E402

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                   "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
CREATE_UA = {"User-Agent": "kubectl-create/v1.37.2 (linux/amd64) kubernetes/0123456"}
SCHEDULER_UA = {"User-Agent": "kube-scheduler/v1.37.2 (linux/amd64) kubernetes/0123456/scheduler"}
KUBELET_UA = {"User-Agent": "kubelet/v1.37.2 (linux/amd64) kubernetes/0123456"}

Req = Callable[..., tuple[int, Any]]


def managers(obj: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """``(manager, operation, subresource, fieldsV1)`` of each managedFields entry, sorted; uids in
    keys (``k:{"uid":…}`` of ownerReferences) read ``<uid>``, addresses (``podIPs``) ``<ip>``."""
    out = []
    for e in (obj.get("metadata") or {}).get("managedFields") or []:
        fields = json.loads(re.sub(r'\\"(uid|ip)\\":\\"[0-9a-f.:-]+\\"', r'\\"\1\\":\\"<\1>\\"',
                                   json.dumps(e.get("fieldsV1"))))
        out.append((e.get("manager", ""), e.get("operation", ""), e.get("subresource", ""), fields))
    return sorted(out, key=json.dumps)


def kubelet_stand_in(req: Req, stop: threading.Event, *, bind: bool = False) -> None:
    """Mark bound pods Running/Ready with a strategic-merge PATCH of ``pods/status``, as the kubelet's
    status manager does (status_manager.go ``syncPod`` → ``PatchPodStatus``); ``bind`` (the box,
    which has simulated kubelets but no scheduler here): only bind pending pods as kube-scheduler's
    ``DefaultBinder`` does (POST ``pods/binding``)."""
    while not stop.wait(0.2):
        code, body = req("GET", "/api/v1/namespaces/default/pods")
        if code != 200:
            continue
        for p in body.get("items", []):
            if bind:
                if not p["spec"].get("nodeName"):
                    req("POST", f"/api/v1/namespaces/default/pods/{p['metadata']['name']}/binding",
                        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["metadata"]["name"]},
                         "target": {"kind": "Node", "name": "n1"}}, headers=SCHEDULER_UA)
                continue
            if not p["spec"].get("nodeName") or (p.get("status") or {}).get("phase") == "Running":
                continue
            t = _now()
            patch = {"status": {"phase": "Running", "startTime": t, "podIP": "10.244.0.9", "hostIP": "172.18.0.2",
                                "hostIPs": [{"ip": "172.18.0.2"}],
                                "conditions": [{"type": c, "status": "True", "lastTransitionTime": t}
                                               for c in ("PodReadyToStartContainers", "Initialized", "Ready",
                                                         "ContainersReady")],
                                "containerStatuses": [{"name": c["name"], "image": c["image"], "imageID": "",
                                                       "ready": True, "restartCount": 0, "started": True,
                                                       "state": {"running": {"startedAt": t}}}
                                                      for c in p["spec"]["containers"]]}}
            req("PATCH", f"/api/v1/namespaces/default/pods/{p['metadata']['name']}/status", patch,
                headers={**KUBELET_UA, "Content-Type": "application/strategic-merge-patch+json"})


def chain(req: Req) -> dict[str, Any]:
    """Create the Node and Deployment, wait for 2 Ready pods, return each object's managers."""
    assert req("POST", "/api/v1/nodes", NODE, headers=CREATE_UA)[0] == 201
    assert req("POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOY, headers=CREATE_UA)[0] == 201

    def ready() -> bool:
        code, d = req("GET", "/apis/apps/v1/namespaces/default/deployments/web")
        return code == 200 and (d.get("status") or {}).get("availableReplicas") == 2
    _until(ready)
    time.sleep(1.5)  # the last status writes
    _, d = req("GET", "/apis/apps/v1/namespaces/default/deployments/web")
    _, rss = req("GET", "/apis/apps/v1/namespaces/default/replicasets")
    _, pods = req("GET", "/api/v1/namespaces/default/pods")
    _, node = req("GET", "/api/v1/nodes/n1")
    pod = sorted(pods["items"], key=lambda p: p["metadata"]["name"])[0]
    return {"Deployment": managers(d), "ReplicaSet": managers(rss["items"][0]), "Pod": managers(pod),
            "Node": managers(node)}


def _with_kubelet(req: Req, fn: Callable[[], dict[str, Any]], *, bind: bool = False) -> dict[str, Any]:
    stop = threading.Event()
    t = threading.Thread(target=kubelet_stand_in, args=(req, stop), kwargs={"bind": bind}, daemon=True)
    t.start()
    try:
        return fn()
    finally:
        stop.set()
        t.join(5)


def upstream_chain(kcm: str, work: Path) -> dict[str, Any]:
    cp = ControlPlane.start()
    proc = None
    try:
        proc = start_kcm(cp, kcm, work)
        cp.start_kube_scheduler({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                 "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": False}})

        def req(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
                ) -> tuple[int, Any]:
            code, _, out = cp.request(method, path, body, headers=headers)
            return code, out
        return _with_kubelet(req, lambda: chain(req))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(15)
        cp.stop()


def box_chain(work: Path) -> dict[str, Any]:
    from kubesched.apiserver.launcher import run_server

    with run_server(work / "box-kubeconfig", simulate_kubelets=True) as srv:
        def req(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
                ) -> tuple[int, Any]:
            code, _, out = http_request(srv.url + path, srv.token, srv.ssl_context(), method, body, headers=headers)
            return code, out
        return _with_kubelet(req, lambda: chain(req), bind=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kcm", default=os.environ.get("KUBESCHED_KCM") or shutil.which("kube-controller-manager"))
    ap.add_argument("--json", action="store_true", help="print both sides as JSON")
    ap.add_argument("--box-only", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="managers-compare-"))
    box = box_chain(work)
    if args.box_only:
        print(json.dumps(box, indent=1))
        return 0
    if not args.kcm:
        print("error: no kube-controller-manager (--kcm PATH)", file=sys.stderr)
        return 2
    up = upstream_chain(args.kcm, work)
    if args.json:
        print(json.dumps({"upstream": up, "box": box}, indent=1))
    same = 0
    for kind in up:
        if up[kind] == box.get(kind):
            same += 1
            print(f"= {kind}")
            continue
        print(f"≠ {kind}\n    upstream: {json.dumps(up[kind])}\n    box:      {json.dumps(box.get(kind))}")
    print(f"{same}/{len(up)} objects with the same managers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
