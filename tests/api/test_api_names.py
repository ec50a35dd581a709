"""Names validated per kind, as upstream's per-kind ``ValidateNameFunc`` (v1.37.2 ``pkg/apis/*/validation``).

Cases from upstream's own tables: ``pkg/apis/rbac/validation/validation_test.go`` (a ClusterRole
named ``system:...`` is valid; ``IsPathSegmentName``'s ``may not contain '/'`` / ``may not be '.'``,
apimachinery ``pkg/api/validate/content/path_test.go``), ``pkg/apis/apps/validation`` (a
StatefulSet name is a DNS-1123 label), ``pkg/apis/core/validation`` (Service: DNS-1035 label).
The same messages are checked against the real kube-apiserver in
``tests/upstream/test_names_upstream.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.validation import invalid_message, name_kind_for, validate_object

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _obj(kind: str, name: str, api: str = "rbac.authorization.k8s.io/v1", ns: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta}
    if kind.endswith("Binding"):  # a binding needs its roleRef (pkg/apis/rbac/validation ValidateRoleBindingSpec)
        obj["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    return obj


@pytest.mark.parametrize("kind,ns", [("ClusterRole", None), ("ClusterRoleBinding", None),
                                     ("Role", "default"), ("RoleBinding", "default")])
@pytest.mark.parametrize("name", ["kubesched:kube-scheduler", "system:aggregated-metrics-reader",
                                  "system:controller:job-controller", "Upper_Case", "a..b"])
def test_rbac_names_are_path_segments(kind: str, ns: str | None, name: str) -> None:
    assert validate_object(_obj(kind, name, ns=ns)) == []


@pytest.mark.parametrize("name,msgs", [
    ("a/b", ["may not contain '/'"]),
    ("a%b", ["may not contain '%'"]),
    ("a/%", ["may not contain '/'", "may not contain '%'"]),
    (".", ["may not be '.'"]),
    ("..", ["may not be '..'"]),
])
def test_rbac_invalid_path_segment_names(name: str, msgs: list[str]) -> None:
    errs = validate_object(_obj("ClusterRole", name))
    assert [e.path for e in errs] == ["metadata.name"] * len(msgs)
    assert [e.detail for e in errs] == msgs


def test_statefulset_name_is_a_dns_label() -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web.v1", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    errs = validate_object(sts)
    assert invalid_message("StatefulSet", "web.v1", errs, group="apps") == (
        'StatefulSet.apps "web.v1" is invalid: metadata.name: Invalid value: "web.v1": must not contain dots')
    sts["metadata"]["name"] = "Web"
    assert [e.detail for e in validate_object(sts)] == [LABEL_MSG]
    sts["metadata"]["name"] = "web"
    assert validate_object(sts) == []
    # a Deployment keeps the subdomain rule: dots are fine
    sts["kind"], sts["metadata"]["name"] = "Deployment", "web.v1"
    assert validate_object(sts) == []


def test_other_kinds_keep_their_rule() -> None:
    assert name_kind_for("ConfigMap") == "subdomain"
    assert name_kind_for("Service") == "dns1035"
    assert name_kind_for("Namespace") == "label"
    assert name_kind_for("Widget") == "subdomain"  # custom resources: NameIsDNSSubdomain
    assert validate_object(_obj("ConfigMap", "a:b", api="v1", ns="default")) != []
    assert validate_object(_obj("CertificateSigningRequest", "Any:Name/x", api="certificates.k8s.io/v1"),
                           namespaced=False) == []
