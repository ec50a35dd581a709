"""RBAC objects validated, impersonation, and options/decoding checked before any write — held to
kube-apiserver v1.37.2 on both servers (``server`` fixture: the real binary when built, the box
always). Upstream: ``pkg/apis/rbac/validation/validation.go`` and ``pkg/apis/rbac/v1/defaults.go``;
``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation/`` (ConstrainedImpersonation on
by default in v1.37); ``handlers/create.go`` (CreateOptions validated before the body is decoded),
``handlers/patch.go`` (a patched object that does not decode is the patch's 422),
``pkg/registry/core/pod/storage/eviction.go`` (dryRun evictions delete nothing)."""

from __future__ import annotations

import secrets
from typing import Any

RBAC = "/apis/rbac.authorization.k8s.io/v1"
AV = "rbac.authorization.k8s.io/v1"


def _post(server: Any, path: str, obj: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, Any]:
    status, _, body = server.request("POST", path, obj, headers=headers)
    return status, body


def test_roles_rules_are_validated_with_upstreams_messages(server: Any, ns: str) -> None:
    status, body = _post(server, f"{RBAC}/namespaces/{ns}/roles", {
        "apiVersion": AV, "kind": "Role", "metadata": {"name": "r1"},
        "rules": [{"verbs": [], "apiGroups": [""], "resources": ["pods"]},
                  {"verbs": ["get"], "nonResourceURLs": ["/x"]}, {"verbs": ["get"]}]})
    assert status == 422
    # handwritten checks first, then the declaratively validated ones (verbs) without detail
    assert body["message"] == (
        'Role.rbac.authorization.k8s.io "r1" is invalid: [rules[1].nonResourceURLs: Invalid value: ["/x"]: '
        "namespaced rules cannot apply to non-resource URLs, rules[2].apiGroups: Required value: resource rules "
        "must supply at least one api group, rules[2].resources: Required value: resource rules must supply at "
        "least one resource, rules[0].verbs: Required value]")
    name = f"cr-{secrets.token_hex(4)}"
    status, body = _post(server, f"{RBAC}/clusterroles", {
        "apiVersion": AV, "kind": "ClusterRole", "metadata": {"name": name},
        "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x", "/y"], "resources": ["pods"]}],
        "aggregationRule": {"clusterRoleSelectors": []}})
    assert status == 422
    assert body["message"] == (
        f'ClusterRole.rbac.authorization.k8s.io "{name}" is invalid: [rules[0].nonResourceURLs: Invalid value: '
        '["/x","/y"]: rules cannot apply to both regular resources and non-resource URLs, '
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if "
        "aggregationRule is non-nil]")


def test_bindings_role_refs_and_subjects_are_validated(server: Any, ns: str) -> None:
    status, body = _post(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
        "apiVersion": AV, "kind": "RoleBinding", "metadata": {"name": "b1"},
        "roleRef": {"apiGroup": "x", "kind": "Foo", "name": ""},
        "subjects": [{"kind": "Bad", "name": "a"}, {"kind": "ServiceAccount", "name": "Bad_Name", "apiGroup": "x"},
                     {"kind": "User", "name": "", "apiGroup": "x"}]})
    assert status == 422
    assert body["message"].startswith(
        'RoleBinding.rbac.authorization.k8s.io "b1" is invalid: [roleRef.apiGroup: Unsupported value: "x": '
        'supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Foo": supported values: '
        '"Role", "ClusterRole", subjects[0].kind: Unsupported value: "Bad": supported values: "ServiceAccount", '
        '"User", "Group", subjects[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')
    assert body["message"].endswith(
        'subjects[1].apiGroup: Unsupported value: "x": supported values: "", subjects[2].apiGroup: Unsupported '
        'value: "x": supported values: "rbac.authorization.k8s.io", subjects[2].name: Required value, '
        "roleRef.name: Required value]")
    name = f"crb-{secrets.token_hex(4)}"
    status, body = _post(server, f"{RBAC}/clusterrolebindings", {
        "apiVersion": AV, "kind": "ClusterRoleBinding", "metadata": {"name": name},
        "roleRef": {"kind": "Role", "name": "x/y"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Group", "name": "g"}]})
    assert status == 422
    assert body["message"] == (
        f'ClusterRoleBinding.rbac.authorization.k8s.io "{name}" is invalid: [roleRef.kind: Unsupported value: '
        '"Role": supported values: "ClusterRole", roleRef.name: Invalid value: "x/y": may not contain \'/\', '
        "subjects[0].namespace: Required value]")


def test_binding_defaults_and_immutable_role_ref(server: Any, ns: str) -> None:
    status, body = _post(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
        "apiVersion": AV, "kind": "RoleBinding", "metadata": {"name": "b2"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "sa"}]})
    assert status == 201, body
    assert body["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    assert body["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                                {"kind": "ServiceAccount", "name": "sa"}]
    status, _, body = server.request("PATCH", f"{RBAC}/namespaces/{ns}/rolebindings/b2",
                                     b'{"roleRef":{"name":"edit"}}',
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 422
    assert body["message"] == (
        'RoleBinding.rbac.authorization.k8s.io "b2" is invalid: roleRef: Invalid value: '
        '{"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable')
    # the subjects may change
    status, _, body = server.request("PATCH", f"{RBAC}/namespaces/{ns}/rolebindings/b2",
                                     b'{"subjects":[{"kind":"Group","name":"devs"}]}',
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and body["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                                                   "name": "devs"}]


def _pod_reader(server: Any, ns: str, subjects: list[dict[str, Any]]) -> None:
    assert _post(server, f"{RBAC}/namespaces/{ns}/roles", {
        "apiVersion": AV, "kind": "Role", "metadata": {"name": "pod-reader"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]})[0] == 201
    assert _post(server, f"{RBAC}/namespaces/{ns}/rolebindings", {
        "apiVersion": AV, "kind": "RoleBinding", "metadata": {"name": "pod-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": subjects})[0] == 201


def test_impersonated_requests_are_authorized_as_the_impersonated_user(server: Any, ns: str) -> None:
    """The admin (system:masters) may impersonate anyone; the request is then authorized as that
    user: a RoleBinding's user or service account reads pods there and nothing else."""
    _pod_reader(server, ns, [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                             {"kind": "ServiceAccount", "name": "sa", "namespace": ns}])
    pods = f"/api/v1/namespaces/{ns}/pods"
    sa = f"system:serviceaccount:{ns}:sa"
    for who in ("alice", sa):
        assert server.request("GET", pods, headers={"Impersonate-User": who})[0] == 200, who
        status, _, body = server.request("GET", "/api/v1/nodes", headers={"Impersonate-User": who})
        assert status == 403
        assert body["message"] == (f'nodes is forbidden: User "{who}" cannot list resource "nodes" in API group "" '
                                   "at the cluster scope")
    status, _, body = server.request("GET", pods, headers={"Impersonate-User": "bob"})
    assert status == 403 and body["message"] == (
        f'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "{ns}"')
    status, _, body = server.request("GET", pods, headers={"Impersonate-Group": "g"})
    assert status == 400 and body["message"] == (
        'requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g"}, Extra:map[string][]string(nil)} '
        "without impersonating a user name")


def test_self_subject_reviews_answer_for_the_impersonated_user(server: Any, ns: str) -> None:
    """What ``kubectl --as=... auth whoami`` and ``auth can-i`` send."""
    _pod_reader(server, ns, [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}])
    h = {"Impersonate-User": "carol", "Impersonate-Group": "devs"}
    status, body = _post(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, h)
    assert status == 201 and body["status"]["userInfo"] == {"username": "carol",
                                                           "groups": ["devs", "system:authenticated"]}
    status, body = _post(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                         {"Impersonate-User": f"system:serviceaccount:{ns}:sa"})
    assert status == 201 and body["status"]["userInfo"] == {
        "username": f"system:serviceaccount:{ns}:sa",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]}

    def can(verb: str, resource: str) -> bool:
        status, body = _post(server, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": ns, "verb": verb, "resource": resource}}}, h)
        assert status == 201, body
        return bool(body["status"]["allowed"])

    assert can("list", "pods") and not can("delete", "pods") and not can("list", "secrets")


def test_kubectl_as_auth_can_i(server: Any, ns: str, need_kubectl: None) -> None:
    _pod_reader(server, ns, [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}])
    out = server.kubectl("auth", "can-i", "list", "pods", "-n", ns, "--as=alice", check=False)
    assert (out.returncode, out.stdout.strip()) == (0, "yes"), out.stderr
    out = server.kubectl("auth", "can-i", "delete", "pods", "-n", ns, "--as=alice", check=False)
    assert (out.returncode, out.stdout.strip()) == (1, "no"), out.stderr
    out = server.kubectl("auth", "whoami", "--as=alice", "-o", "jsonpath={.status.userInfo.username}")
    assert out.stdout == "alice"


def test_options_and_body_decoding_before_any_write(server: Any, ns: str) -> None:
    """Invalid dryRun → 422 and a resourceVersion that is a JSON number → 400 on every write,
    subresources included, before anything is written; dryRun=All evictions delete nothing; a
    patch giving resourceVersion a number is the patch's 422."""
    pods = f"/api/v1/namespaces/{ns}/pods"
    assert _post(server, pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}})[0] == 201
    ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"}}
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"}, "target": {"name": "n1"}}
    for sub, body in (("eviction", ev), ("binding", binding)):
        status, out = _post(server, f"{pods}/p1/{sub}?dryRun=Bogus", body)
        assert status == 422 and out["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"')
        kind = body["kind"]
        status, out = _post(server, f"{pods}/p1/{sub}", {**body, "metadata": {"name": "p1", "resourceVersion": 5}})
        assert status == 400 and out["message"] == (
            f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal number into Go struct '
            "field ObjectMeta.metadata.resourceVersion of type string")
    assert _post(server, f"{pods}/p1/eviction?dryRun=All", ev)[0] == 201
    status, _, pod = server.request("GET", f"{pods}/p1")
    assert status == 200 and not pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp")
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    status, out = _post(server, cms, {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "c1", "resourceVersion": 5}})
    assert status == 400
    assert server.request("GET", f"{cms}/c1")[0] == 404
    assert _post(server, cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}})[0] == 201
    status, _, out = server.request("PATCH", f"{cms}/c1", b'{"metadata":{"resourceVersion":5}}',
                                    headers={"Content-Type": "application/merge-patch+json"})
    assert status == 422 and out["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":')
    assert out["message"].endswith("json: cannot unmarshal number into Go struct field "
                                   "ObjectMeta.metadata.resourceVersion of type string")
    status, _, out = server.request("DELETE", f"{cms}?dryRun=All")
    assert status == 200
    assert server.request("GET", f"{cms}/c1")[0] == 200  # a dry-run deletecollection deletes nothing
