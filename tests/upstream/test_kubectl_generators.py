"""kubectl's typed generators send protobuf bodies (``application/vnd.kubernetes.protobuf``):
``kubectl create namespace|deployment|configmap|secret|job|priorityclass``, ``kubectl run``,
``kubectl expose``. The box decodes them (:mod:`kubesched.apiserver.protobuf`) and stores the
same objects the real kube-apiserver stores for the same commands."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

#: (kubectl arguments after the namespace is known, resource to read back)
COMMANDS: list[tuple[list[str], str]] = [
    (["create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=8080"], "deployment/web"),
    (["create", "deployment", "idle", "--image=nginx:1.27", "--replicas=0"], "deployment/idle"),
    (["create", "configmap", "cfg", "--from-literal=a=b", "--from-literal=c=d"], "configmap/cfg"),
    (["create", "secret", "generic", "s", "--from-literal=pw=hunter2"], "secret/s"),
    (["run", "nginx", "--image=nginx", "--labels=app=x,tier=web", "--port=80", "--env=A=1"], "pod/nginx"),
    (["expose", "pod", "nginx", "--port=80", "--target-port=8080"], "service/nginx"),
    (["create", "job", "j", "--image=busybox", "--", "echo", "hi"], "job/j"),
]

#: fields each server fills in its own way (identity, times, versions, bookkeeping, cluster IPs)
_VOLATILE_META = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"}


def _normalise(obj: dict[str, Any]) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj))
    md = obj.get("metadata", {})
    for k in _VOLATILE_META:
        md.pop(k, None)
    obj.pop("status", None)
    spec = obj.get("spec") or {}
    for k in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"):
        spec.pop(k, None)
    # Job: the controller-uid selector/labels are random per server
    if obj.get("kind") == "Job":
        spec.pop("selector", None)
        tmpl_md = spec.get("template", {}).get("metadata", {})
        tmpl_md.pop("labels", None)
        md.pop("labels", None)
    return obj


def _run_all(server: Any) -> dict[str, dict[str, Any]]:
    ns = f"gen-{secrets.token_hex(3)}"
    out = server.kubectl("create", "namespace", ns)
    assert f"namespace/{ns} created" in out.stdout
    got: dict[str, dict[str, Any]] = {}
    for args, what in COMMANDS:
        server.kubectl("-n", ns, *args)
        got[what] = json.loads(server.kubectl("get", what, "-n", ns, "-o", "json").stdout)
    return got


@pytest.mark.usefixtures("need_kubectl")
def test_generators_store_what_kubectl_meant(box_api_server: Any) -> None:
    got = _run_all(box_api_server)
    web = got["deployment/web"]["spec"]
    assert web["replicas"] == 3 and web["selector"] == {"matchLabels": {"app": "web"}}
    c = web["template"]["spec"]["containers"][0]
    assert (c["image"], c["ports"]) == ("nginx:1.27", [{"containerPort": 8080, "protocol": "TCP"}])
    assert got["deployment/idle"]["spec"]["replicas"] == 0  # a pointer: 0 is kept, not defaulted to 1
    assert "minReadySeconds" not in web and "paused" not in web  # omitempty zeros are dropped
    assert got["configmap/cfg"]["data"] == {"a": "b", "c": "d"}
    assert got["secret/s"]["data"] == {"pw": "aHVudGVyMg=="} and got["secret/s"]["type"] == "Opaque"
    pod = got["pod/nginx"]
    assert pod["metadata"]["labels"] == {"app": "x", "tier": "web"}
    assert pod["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    svc = got["service/nginx"]["spec"]
    assert svc["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert svc["selector"] == {"app": "x", "tier": "web"}
    job = got["job/j"]["spec"]["template"]["spec"]
    assert job["restartPolicy"] == "Never" and job["containers"][0]["command"] == ["echo", "hi"]


@pytest.mark.usefixtures("need_kubectl")
def test_generators_match_the_real_api_server(box_api_server: Any, upstream_server: Any) -> None:
    ours = _run_all(box_api_server)
    theirs = _run_all(upstream_server)
    for what in theirs:
        a, b = _normalise(ours[what]), _normalise(theirs[what])
        a["metadata"].pop("namespace", None)
        b["metadata"].pop("namespace", None)
        assert a == b, what
