"""Authorization as kube-apiserver v1.37.2 does it with ``--authorization-mode=RBAC`` and anonymous
authentication on (its defaults in a real cluster), held against the real binary: every test runs
on both servers (``server`` fixture). Upstream: ``plugin/pkg/auth/authorizer/rbac/rbac.go``,
``pkg/registry/rbac/validation/rule.go``, ``k8s.io/apiserver/pkg/endpoints/filters/authorization.go``
and ``handlers/responsewriters/errors.go`` (the Forbidden message), the bootstrap policy
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``: anonymous users may read /healthz, /livez,
/readyz and /version only; ``system:discovery`` is for authenticated users)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.testing.upstream import http_request
from kubesched.testing.upstream import unique_name as unique

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _ctx(server: Any) -> Any:
    return server.cp.ssl_context() if hasattr(server, "cp") else server.srv.ssl_context()


def _anonymous(server: Any, method: str, path: str) -> tuple[int, Any]:
    status, _, body = http_request(server.url + path, None, _ctx(server), method)
    return status, body


@pytest.mark.parametrize(("method", "path", "message", "details"), [
    ("GET", "/api", 'forbidden: User "system:anonymous" cannot get path "/api"', {}),
    ("GET", "/api/v1/pods",
     'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope',
     {"kind": "pods"}),
    ("GET", "/api/v1/namespaces/default/pods/p1",
     'pods "p1" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace '
     '"default"', {"name": "p1", "kind": "pods"}),
    ("GET", "/api/v1/namespaces/default/pods?watch=true",
     'pods is forbidden: User "system:anonymous" cannot watch resource "pods" in API group "" in the namespace '
     '"default"', {"kind": "pods"}),
    ("DELETE", "/apis/apps/v1/namespaces/kube-system/deployments",
     'deployments.apps is forbidden: User "system:anonymous" cannot deletecollection resource "deployments" in API '
     'group "apps" in the namespace "kube-system"', {"group": "apps", "kind": "deployments"}),
    ("POST", "/api/v1/namespaces/default/pods/p1/binding",
     'pods "p1" is forbidden: User "system:anonymous" cannot create resource "pods/binding" in API group "" in the '
     'namespace "default"', {"name": "p1", "kind": "pods"}),
])
def test_anonymous_requests_are_forbidden_with_upstreams_message(server: Any, method: str, path: str, message: str,
                                                                 details: dict[str, str]) -> None:
    status, body = _anonymous(server, method, path)
    assert status == 403
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert body["message"] == message
    assert body.get("details", {}) == details


def test_anonymous_may_read_version_and_health(server: Any) -> None:
    for path in ("/version", "/healthz", "/livez", "/readyz"):
        assert _anonymous(server, "GET", path)[0] == 200, path


def test_a_wrong_token_is_401_even_with_anonymous_auth(server: Any) -> None:
    status, _, body = http_request(server.url + "/api/v1/pods", "not-the-token", _ctx(server), "GET")
    assert status == 401 and body["reason"] == "Unauthorized"


def _sar(server: Any, spec: dict[str, Any], ns: str | None = None) -> dict[str, Any]:
    kind, path = ("LocalSubjectAccessReview", f"/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews") \
        if ns else ("SubjectAccessReview", "/apis/authorization.k8s.io/v1/subjectaccessreviews")
    status, _, body = server.request("POST", path, {"apiVersion": "authorization.k8s.io/v1", "kind": kind,
                                                    "spec": spec})
    assert status == 201, body
    return dict(body["status"])


def _create(server: Any, path: str, obj: dict[str, Any]) -> None:
    status, _, body = server.request("POST", path, obj)
    assert status == 201, body


def test_subject_access_reviews_follow_the_stored_rbac_objects(server: Any, ns: str) -> None:
    alice, carol, sa = unique("alice"), unique("carol"), unique("robot")
    role = unique("pod-reader")
    _create(server, f"{RBAC}/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}]})
    _create(server, f"{RBAC}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": alice}]})
    _create(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "viewers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": carol},
                     {"kind": "ServiceAccount", "name": sa}]})
    _create(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "dangling"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": carol}]})

    def can(user: str, verb: str, resource: str, namespace: str = "", sub: str = "", group: str = "",
            groups: list[str] | None = None) -> dict[str, Any]:
        attrs = {"verb": verb, "resource": resource, "namespace": namespace, "subresource": sub, "group": group}
        return _sar(server, {"user": user, "groups": groups or [], "resourceAttributes": attrs})

    assert can(alice, "list", "pods") == {
        "allowed": True,
        "reason": f'RBAC: allowed by ClusterRoleBinding "{role}" of ClusterRole "{role}" to User "{alice}"'}
    assert can(alice, "get", "pods", ns, sub="log")["allowed"]
    assert can(alice, "delete", "pods", ns) == {"allowed": False}
    # a RoleBinding to a ClusterRole grants it in its namespace only
    got = can(carol, "get", "pods", ns)
    assert got["allowed"] and got["reason"] == (
        f'RBAC: allowed by RoleBinding "viewers/{ns}" of ClusterRole "{role}" to User "{carol}"')
    assert not can(carol, "get", "pods", "default")["allowed"]
    # a binding to a missing role is reported when nothing else allows
    assert can(carol, "create", "pods", ns) == {
        "allowed": False, "reason": 'rbac: RBAC: role.rbac.authorization.k8s.io "missing" not found'}
    # a service account subject without a namespace is the binding's namespace
    got = can(f"system:serviceaccount:{ns}:{sa}", "list", "pods", ns)
    assert got["allowed"] and got["reason"].endswith(f'to ServiceAccount "{sa}/{ns}"')
    # groups: system:masters always, before RBAC (no reason); bootstrap bindings for the rest
    assert can("someone", "delete", "nodes", groups=["system:masters"]) == {"allowed": True}
    got = _sar(server, {"user": "x", "groups": ["system:authenticated"],
                        "nonResourceAttributes": {"verb": "get", "path": "/apis"}})
    assert got["allowed"] and '"system:discovery"' in got["reason"]
    # a LocalSubjectAccessReview is scoped to its namespace
    assert _sar(server, {"user": carol, "resourceAttributes": {"verb": "list", "resource": "pods",
                                                                "namespace": ns}}, ns=ns)["allowed"]


def test_the_bootstrap_policy_is_served(server: Any) -> None:
    for path, name in ((f"{RBAC}/clusterroles/cluster-admin", "cluster-admin"),
                       (f"{RBAC}/clusterroles/system:kube-scheduler", "system:kube-scheduler"),
                       (f"{RBAC}/clusterrolebindings/system:kube-scheduler", "system:kube-scheduler"),
                       (f"{RBAC}/namespaces/kube-system/roles/extension-apiserver-authentication-reader",
                        "extension-apiserver-authentication-reader")):
        status, _, body = server.request("GET", path)
        assert status == 200, (path, body)
        assert body["metadata"]["name"] == name
        assert body["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"


def _rules_review(server: Any, user: str, namespace: str | None) -> tuple[int, Any]:
    spec = {"namespace": namespace} if namespace is not None else {}
    status, _, body = server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                     {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                                      "spec": spec}, headers={"Impersonate-User": user})
    return status, body


def _body_of(answer: tuple[int, Any]) -> Any:
    """The review's answer with its rules as sorted lists: kube-apiserver visits the bindings in its
    informer cache's order (a map's), so only the set of rules is a fact to compare."""
    status, body = answer
    assert status == 201, body
    st = dict(body["status"])
    for key in ("resourceRules", "nonResourceRules"):
        st[key] = sorted(st[key], key=lambda r: json.dumps(r, sort_keys=True))
    return {"kind": body["kind"], "apiVersion": body["apiVersion"], "spec": body["spec"], "status": st}


def test_self_subject_rules_review_lists_the_users_rbac_rules(upstream_server: Any, box_api_server: Any) -> None:
    """``kubectl auth can-i --list`` (SelfSubjectRulesReview, ``pkg/registry/authorization/
    selfsubjectrulesreview/rest.go`` over RBAC's ``RulesFor``): every rule of every binding that applies
    to the requesting user in ``spec.namespace`` — ClusterRoleBindings then the namespace's RoleBindings
    — resource rules and non-resource rules apart, a missing role as ``evaluationError``, a review
    without a namespace 400. The same objects on both servers give the same answer, and the same
    ``kubectl auth can-i --list`` table (the rules' order aside: see :func:`_body_of`)."""
    user, ns = unique("dana"), unique("team")
    role, crole = unique("pod-reader"), unique("node-viewer")
    answers = []
    for server in (upstream_server, box_api_server):
        _create(server, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        _create(server, f"{RBAC}/namespaces/{ns}/roles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": role},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]},
                      {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"],
                       "verbs": ["get"]}]})
        _create(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
        _create(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
        _create(server, f"{RBAC}/clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": crole},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
                      {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})
        _create(server, f"{RBAC}/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": crole},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": crole},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
        status, body = _rules_review(server, user, ns)
        assert status == 201, body
        st = body["status"]
        assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods", "pods/log"]} \
            in st["resourceRules"]
        assert {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"]} \
            in st["resourceRules"]
        assert {"verbs": ["get"], "nonResourceURLs": ["/metrics"]} in st["nonResourceRules"]
        assert not any("*" in r["resources"] for r in st["resourceRules"])  # not everything: RBAC's rules
        assert st["incomplete"] is False
        assert st["evaluationError"] == 'role.rbac.authorization.k8s.io "missing" not found'
        # in another namespace only the cluster-wide rules apply
        other = _rules_review(server, user, "default")[1]["status"]
        assert not any("pods" in r["resources"] for r in other["resourceRules"]) and "evaluationError" not in other
        assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["nodes"]} in other["resourceRules"]
        status, body = _rules_review(server, user, None)
        assert (status, body["message"]) == (400, "no namespace on request")
        table = server.kubectl("auth", "can-i", "--list", "--as", user, "-n", ns).stdout
        assert "pods/log" in table and "[get list watch]" in table and "[/metrics]" in table
        answers.append((_body_of(_rules_review(server, user, ns)), table))
    assert answers[0] == answers[1]

