"""Defaulting and validation of the four RBAC kinds (Role, ClusterRole, RoleBinding,
ClusterRoleBinding) as kube-apiserver v1.37.2 does them.

Follows ``pkg/apis/rbac/v1/defaults.go`` (``roleRef.apiGroup`` and a User's or Group's
``apiGroup`` default to ``rbac.authorization.k8s.io``) and ``pkg/apis/rbac/validation/validation.go``
(``ValidatePolicyRule``: verbs non-empty, non-resource URLs only in cluster roles and never with
resources, resource rules need apiGroups and resources; bindings: ``roleRef.apiGroup``
``rbac.authorization.k8s.io``, ``roleRef.kind`` Role/ClusterRole (ClusterRole only for a
ClusterRoleBinding), ``roleRef.name`` a path segment, subjects' kinds ServiceAccount/User/Group with
their apiGroups, a ServiceAccount name a DNS subdomain and its namespace required in a
ClusterRoleBinding; ``roleRef`` immutable on update; ClusterRole ``aggregationRule`` needs a
selector).

Error order as the real server reports them: the handwritten checks first, then the ones that
v1.37.2 reports through declarative validation (``MarkCoveredByDeclarative``: a rule's empty
``verbs``, a subject's empty ``name``, an empty ``roleRef.name``), which carry no detail and come
in the Go types' field order (subjects before roleRef).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubesched.api.validation import (
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    FieldError,
    is_dns1123_subdomain,
    validate_label_selector,
    validate_object_meta,
)

__all__ = ["RBAC_GROUP", "RBAC_KINDS", "default_rbac", "validate_rbac", "validate_rbac_update"]

RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_KINDS = frozenset(("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"))


def _supported(values: list[str]) -> str:
    return "supported values: " + ", ".join(json.dumps(v) for v in values)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def default_rbac(obj: dict[str, Any]) -> dict[str, Any]:
    """``SetDefaults_RoleBinding``/``ClusterRoleBinding``/``Subject`` (mutates and returns ``obj``)."""
    if obj.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
        return obj
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC_GROUP
    for s in _list(obj.get("subjects")):
        if isinstance(s, dict) and not s.get("apiGroup") and s.get("kind") in ("User", "Group"):
            s["apiGroup"] = RBAC_GROUP
    return obj


def _policy_rule(rule: Any, namespaced: bool, path: str, covered: list[FieldError]) -> list[FieldError]:
    """``ValidatePolicyRule``."""
    r = _map(rule)
    errs: list[FieldError] = []
    if not _list(r.get("verbs")):
        covered.append(FieldError(f"{path}.verbs", REQUIRED))
    urls = _list(r.get("nonResourceURLs"))
    if urls:
        if namespaced:
            errs.append(FieldError(f"{path}.nonResourceURLs", INVALID, urls,
                                   "namespaced rules cannot apply to non-resource URLs"))
        if _list(r.get("apiGroups")) or _list(r.get("resources")) or _list(r.get("resourceNames")):
            errs.append(FieldError(f"{path}.nonResourceURLs", INVALID, urls,
                                   "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not _list(r.get("apiGroups")):
        errs.append(FieldError(f"{path}.apiGroups", REQUIRED, "", "resource rules must supply at least one api group"))
    if not _list(r.get("resources")):
        errs.append(FieldError(f"{path}.resources", REQUIRED, "", "resource rules must supply at least one resource"))
    return errs


def _subject(subject: Any, namespaced: bool, path: str, covered: list[FieldError]) -> list[FieldError]:
    """``ValidateRoleBindingSubject``."""
    s = _map(subject)
    errs: list[FieldError] = []
    name, kind, group = _str(s.get("name")), _str(s.get("kind")), _str(s.get("apiGroup"))
    if not name:
        covered.append(FieldError(f"{path}.name", REQUIRED))
    if kind == "ServiceAccount":
        if name:
            errs.extend(FieldError(f"{path}.name", INVALID, name, m) for m in is_dns1123_subdomain(name))
        if group:
            errs.append(FieldError(f"{path}.apiGroup", NOT_SUPPORTED, group, _supported([""])))
        if not namespaced and not _str(s.get("namespace")):
            errs.append(FieldError(f"{path}.namespace", REQUIRED))
    elif kind in ("User", "Group"):
        if group != RBAC_GROUP:
            errs.append(FieldError(f"{path}.apiGroup", NOT_SUPPORTED, group, _supported([RBAC_GROUP])))
    else:
        errs.append(FieldError(f"{path}.kind", NOT_SUPPORTED, kind, _supported(["ServiceAccount", "User", "Group"])))
    return errs


def _path_segment(name: str) -> list[str]:
    """``ValidateRBACName`` = ``content.IsPathSegmentName``."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def validate_rbac(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateRole``/``ValidateClusterRole``/``ValidateRoleBinding``/``ValidateClusterRoleBinding``
    of a defaulted object (by ``kind``); [] for other kinds."""
    kind = _str(obj.get("kind"))
    if kind not in RBAC_KINDS:
        return []
    namespaced = kind in ("Role", "RoleBinding")
    errs = validate_object_meta(obj.get("metadata"), namespaced=namespaced, name_kind="path")
    covered: list[FieldError] = []
    if kind in ("Role", "ClusterRole"):
        for i, rule in enumerate(_list(obj.get("rules"))):
            errs += _policy_rule(rule, namespaced, f"rules[{i}]", covered)
        agg = obj.get("aggregationRule")
        if kind == "ClusterRole" and isinstance(agg, Mapping):
            selectors = _list(agg.get("clusterRoleSelectors"))
            if not selectors:
                errs.append(FieldError("aggregationRule.clusterRoleSelectors", REQUIRED, "",
                                       "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, sel in enumerate(selectors):
                errs += validate_label_selector(sel, f"aggregationRule.clusterRoleSelectors[{i}]")
        return errs + covered
    ref = _map(obj.get("roleRef"))
    group, ref_kind, ref_name = _str(ref.get("apiGroup")), _str(ref.get("kind")), _str(ref.get("name"))
    if group != RBAC_GROUP:
        errs.append(FieldError("roleRef.apiGroup", NOT_SUPPORTED, group, _supported([RBAC_GROUP])))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref_kind not in kinds:
        errs.append(FieldError("roleRef.kind", NOT_SUPPORTED, ref_kind, _supported(kinds)))
    errs.extend(FieldError("roleRef.name", INVALID, ref_name, m) for m in _path_segment(ref_name) if ref_name)
    for i, s in enumerate(_list(obj.get("subjects"))):
        errs += _subject(s, namespaced, f"subjects[{i}]", covered)
    if not ref_name:
        covered.append(FieldError("roleRef.name", REQUIRED))
    return errs + covered


def validate_rbac_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``Validate*Update``: the object's own rules, and a binding's ``roleRef`` immutable
    (``ValidateImmutableField``: the new value shown as Go prints the internal struct)."""
    errs = validate_rbac(new)
    if _str(new.get("kind")) in ("RoleBinding", "ClusterRoleBinding"):
        ref, old_ref = _map(new.get("roleRef")), _map(old.get("roleRef"))
        if dict(ref) != dict(old_ref):
            shown = {"APIGroup": _str(ref.get("apiGroup")), "Kind": _str(ref.get("kind")),
                     "Name": _str(ref.get("name"))}
            errs.append(FieldError("roleRef", INVALID, shown, "field is immutable"))
    return errs
