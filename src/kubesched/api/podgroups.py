"""The workload API (``scheduling.k8s.io/v1beta1`` Workload and PodGroup, ``v1alpha3``
CompositePodGroup) as kube-apiserver v1.37.2 serves it — shared by the box's admission and
``simulate``'s input checks. Objects are plain dicts shaped as the API serves them.

Follows:

* ``k8s.io/api@v0.37.2/scheduling/v1beta1/types.go`` — the ``+k8s:`` declarative validation tags
  (generated into ``pkg/apis/scheduling/v1beta1/zz_generated.validations.go``): unions
  (``schedulingPolicy``: exactly one of ``basic``/``gang``; ``disruptionMode``: ``single``/``all``;
  a resource claim's ``resourceClaimName``/``resourceClaimTemplateName``; Workload
  ``podGroupTemplates``/``compositePodGroupTemplates``), ``required``, ``minimum``/``maximum``,
  ``maxItems``, ``listType=map`` duplicates, formats (``k8s-short-name`` = DNS-1123 label,
  ``k8s-long-name`` = DNS-1123 subdomain, ``k8s-label-key``, ``k8s-path-segment-name``), enums,
  and on update ``immutable`` (``Invalid value: null: field is immutable``), ``NoSet``/``NoUnset``
  (``gang`` can be neither added nor removed; ``minCount`` stays mutable), ``NoAddItem``/
  ``NoRemoveItem`` (template lists). As declarative validation, a field equal to its old value is
  not validated again on update (ratcheting). Message texts are apimachinery's
  ``pkg/api/validate`` (``content.MaxLenError``: "must be no more than 63 bytes").
* ``pkg/apis/scheduling/validation/validation.go`` — the hand-written rules (run first): object
  metadata (PodGroup names: DNS subdomain), ``workloadRef`` required with
  ``parentCompositePodGroupName`` (L77), template names unique across the whole tree (L120),
  template depth ≤ 4 (L173), one priority configuration (L195), every CompositePodGroupTemplate
  has a child (L246); PodGroup status updates: ``metav1.ValidateConditions`` and
  ``resourceClaimStatuses`` names (L259-290).
* ``pkg/apis/scheduling/v1beta1/defaults.go`` ``SetDefaults_PodGroup`` (``preemptionPolicy:
  PreemptLowerPriority`` with PodGroupPreemptionPolicy) and the ``+default={"single": {}}`` of
  ``PodGroupSpec.disruptionMode``.
* ``pkg/registry/scheduling/{podgroup,workload}/strategy.go`` — status cleared on create and kept
  on update, spec (and metadata but for the few status-writable fields) kept on status update,
  fields of disabled gates dropped unless the old object uses them
  (``schedulingConstraints``: TopologyAwareWorkloadScheduling, ``resourceClaims``:
  DRAWorkloadResourceClaims, ``preemptionPolicy``: PodGroupPreemptionPolicy,
  ``parentCompositePodGroupName``/``compositePodGroupTemplates``: CompositePodGroup).
* ``plugin/pkg/admission/priority/admission.go`` ``admitPodGroup`` (L203) /
  ``admitCompositePodGroup`` (L245) — priority resolved from ``priorityClassName`` (or the
  global default class, else 0) on create; a different explicit ``priority`` or
  ``preemptionPolicy`` is Forbidden. Since defaulting runs before admission, a PodGroup without
  ``preemptionPolicy`` whose class says ``Never`` is refused (the default
  ``PreemptLowerPriority`` differs) — as the real v1.37.2 API server does.
* ``plugin/pkg/admission/scheduling/podgroupprotection/admission.go`` — every new PodGroup gets
  the ``scheduling.k8s.io/podgroup-protection`` finalizer; the PodGroupProtection controller
  (``pkg/controller/scheduling/podgroupprotection``) removes it from a PodGroup being deleted
  once no non-terminal pod names it in ``spec.schedulingGroup.podGroupName``
  (:func:`protection_finalizer_removable`).

Which versions serve the kinds: :func:`served_api` — v1beta1 Workload/PodGroup with
GenericWorkload on at emulated version ≥ 1.37 (the real kube-apiserver also needs
``--runtime-config=scheduling.k8s.io/v1beta1=true``: beta APIs are off by default), v1alpha3
CompositePodGroup with CompositePodGroup on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.api import validation as v
from kubesched.api.validation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_MANY,
    FieldError,
)

if TYPE_CHECKING:
    from kubesched.features import FeatureGate

__all__ = [
    "GROUP",
    "KINDS",
    "PROTECTION_FINALIZER",
    "V1ALPHA3",
    "V1BETA1",
    "PodGroupAdmissionError",
    "add_protection_finalizer",
    "admit_priority",
    "default_object",
    "pod_group_condition_patch",
    "prepare_for_create",
    "prepare_for_status_update",
    "prepare_for_update",
    "protection_finalizer_removable",
    "served_api",
    "set_status_condition",
    "validate",
    "validate_job_scheduling",
    "validate_status_update",
    "validate_update",
]

GROUP = "scheduling.k8s.io"
V1BETA1 = "scheduling.k8s.io/v1beta1"
V1ALPHA3 = "scheduling.k8s.io/v1alpha3"
#: kind → plural resource name
KINDS = {"Workload": "workloads", "PodGroup": "podgroups", "CompositePodGroup": "compositepodgroups"}
PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"
#: ``scheduling.HighestUserDefinablePriority``
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.WorkloadMaxTemplateDepth``
MAX_TEMPLATE_DEPTH = 4
_POLICIES = ("Never", "PreemptLowerPriority")


def _gates(features: FeatureGate | None) -> FeatureGate:
    if features is None:
        from kubesched.features import default_feature_gate
        return default_feature_gate()
    return features


def served_api(kind: str, features: FeatureGate | None = None) -> str | None:
    """The ``apiVersion`` the API server of ``features`` serves ``kind`` at, or None when it does
    not serve it (``Workload``/``PodGroup``: ``scheduling.k8s.io/v1beta1`` with GenericWorkload
    at ≥ 1.37; ``CompositePodGroup``: ``scheduling.k8s.io/v1alpha3`` with CompositePodGroup)."""
    f = _gates(features)
    if f.emulated_version < (1, 37) or not f.enabled("GenericWorkload"):
        return None
    if kind in ("Workload", "PodGroup"):
        return V1BETA1
    if kind == "CompositePodGroup" and f.enabled("CompositePodGroup"):
        return V1ALPHA3
    return None


# ───────────────────────────── small helpers ─────────────────────────────


def _d(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _has(obj: Mapping[str, Any], key: str) -> bool:
    return obj.get(key) is not None


def _max_len(n: int) -> str:
    return f"must be no more than {n} bytes"  # apimachinery validate/content MaxLenError


def _short_name(value: str) -> list[str]:
    """``content.IsDNS1123Label`` (format ``k8s-short-name``)."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not v._DNS1123_LABEL.match(value):
        if v._DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(v._regex_error(v._DNS1123_LABEL_MSG, v.DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def _long_name(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain`` (format ``k8s-long-name``)."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not v._DNS1123_SUBDOMAIN.match(value):
        errs.append(v._regex_error(v._DNS1123_SUBDOMAIN_MSG, v.DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _label_key(value: str) -> list[str]:
    """``content.IsLabelKey`` (format ``k8s-label-key``)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _long_name(prefix))
    else:
        return ["a valid label key " + v._regex_error(v._QUALIFIED_NAME_MSG, v.QUALIFIED_NAME_FMT, "MyName",
                                                      "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not v._QUALIFIED_NAME.match(name):
        errs.append("name part " + v._regex_error(v._QUALIFIED_NAME_MSG, v.QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                  "123-abc"))
    return errs


def _path_segment(value: str) -> list[str]:
    """``content.IsPathSegmentName`` (format ``k8s-path-segment-name``)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


_Fmt = Callable[[str], list[str]]


def _string(obj: Mapping[str, Any], key: str, path: str, fmt: _Fmt, *, required: bool = False) -> list[FieldError]:
    """A string field: ``+k8s:required`` (empty → Required value) and a format."""
    value = obj.get(key)
    p = f"{path}.{key}"
    if value is None or value == "":
        return [FieldError(p, REQUIRED)] if required else []
    s = str(value)
    return [FieldError(p, INVALID, s, m) for m in fmt(s)]


def _union(obj: Any, path: str, members: tuple[str, ...], *, empty_list_unset: bool = False) -> list[FieldError]:
    """``validate.Union``: exactly one member set."""
    o = _d(obj)
    if empty_list_unset:
        set_ = [m for m in members if _l(o.get(m))]
    else:
        set_ = [m for m in members if o.get(m) is not None]
    listed = ", ".join(f"`{m}`" for m in members)
    if not set_:
        return [FieldError(path, INVALID, "", f"must specify one of: {listed}")]
    if len(set_) > 1:
        return [FieldError(path, INVALID, "{" + ", ".join(set_) + "}", f"must specify exactly one of: {listed}")]
    return []


def _max_items(items: list[Any], n: int, path: str) -> list[FieldError]:
    if len(items) > n:
        return [FieldError(path, TOO_MANY, len(items), f"must have at most {n} item{'s' if n != 1 else ''}")]
    return []


def _go_json(item: Any, order: tuple[str, ...], always: tuple[str, ...] = ()) -> Any:
    """``item`` re-keyed in Go struct order (the value a Duplicate error prints)."""
    o = _d(item)
    out: dict[str, Any] = {}
    for k in order:
        if k in o and o[k] is not None:
            out[k] = o[k]
        elif k in always:
            out[k] = None
    return out


_PGT_ORDER = ("name", "schedulingPolicy", "schedulingConstraints", "resourceClaims", "disruptionMode",
              "priorityClassName", "priority", "preemptionPolicy")
_CPGT_ORDER = ("name", "schedulingPolicy", "schedulingConstraints", "disruptionMode", "priorityClassName", "priority",
               "preemptionPolicy", "podGroupTemplates", "compositePodGroupTemplates")
_CLAIM_ORDER = ("name", "resourceClaimName", "resourceClaimTemplateName")


def _list_map(items: list[Any], path: str, order: tuple[str, ...], always: tuple[str, ...] = ()) -> list[FieldError]:
    """``+k8s:listType=map +k8s:listMapKey=name``: a repeated key is a Duplicate of the item."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        name = str(_d(item).get("name") or "")
        if name in seen:
            errs.append(FieldError(f"{path}[{i}]", DUPLICATE, _go_json(item, order, always)))
        seen.add(name)
    return errs


def _priority(obj: Mapping[str, Any], path: str) -> list[FieldError]:
    p = obj.get("priority")
    if isinstance(p, int) and not isinstance(p, bool) and p > HIGHEST_USER_DEFINABLE_PRIORITY:
        return [FieldError(f"{path}.priority", INVALID, p,
                           f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}")]
    return []


def _preemption_policy(obj: Mapping[str, Any], path: str) -> list[FieldError]:
    p = obj.get("preemptionPolicy")
    if p is None or p in _POLICIES:
        return []
    return [FieldError(f"{path}.preemptionPolicy", NOT_SUPPORTED, str(p),
                       "supported values: " + ", ".join(f'"{x}"' for x in _POLICIES))]


def _scheduling_policy(policy: Any, path: str, *, composite: bool = False) -> list[FieldError]:
    """``PodGroupSchedulingPolicy`` / ``CompositePodGroupSchedulingPolicy``."""
    errs = _union(policy, path, ("basic", "gang"))
    gang = _d(policy).get("gang")
    if isinstance(gang, dict):
        key = "minGroupCount" if composite else "minCount"
        n = gang.get(key)
        if not n:
            errs.append(FieldError(f"{path}.gang.{key}", REQUIRED))
        elif isinstance(n, int) and n < 1:
            errs.append(FieldError(f"{path}.gang.{key}", INVALID, n, "must be greater than or equal to 1"))
    return errs


def _constraints(c: Any, path: str) -> list[FieldError]:
    if c is None:
        return []
    topo = _l(_d(c).get("topology"))
    errs = _max_items(topo, 1, f"{path}.topology")
    for i, t in enumerate(topo):
        errs += _string(_d(t), "key", f"{path}.topology[{i}]", _label_key, required=True)
    return errs


def _resource_claims(claims: list[Any], path: str) -> list[FieldError]:
    errs = _max_items(claims, 4, path)
    errs += _list_map(claims, path, _CLAIM_ORDER)
    for i, c in enumerate(claims):
        p = f"{path}[{i}]"
        errs += _union(c, p, ("resourceClaimName", "resourceClaimTemplateName"))
        cd = _d(c)
        errs += _string(cd, "name", p, _short_name, required=True)
        errs += _string(cd, "resourceClaimName", p, _long_name)
        errs += _string(cd, "resourceClaimTemplateName", p, _long_name)
    return errs


def _disruption_mode(dm: Any, path: str) -> list[FieldError]:
    return [] if dm is None else _union(dm, path, ("single", "all"))


def _priority_fields(o: Mapping[str, Any], path: str) -> list[FieldError]:
    return (_string(o, "priorityClassName", path, _long_name) + _priority(o, path) + _preemption_policy(o, path))


def _workload_ref(ref: Any, path: str) -> list[FieldError]:
    if ref is None:
        return []
    r = _d(ref)
    return (_string(r, "workloadName", path, _long_name, required=True)
            + _string(r, "templateName", path, _short_name, required=True))


# ───────────────────────────── per-kind spec validation ─────────────────────────────


def _pod_group_spec(spec: Mapping[str, Any], path: str = "spec") -> list[FieldError]:
    """``Validate_PodGroupSpec`` (declarative), in struct field order."""
    errs = _string(spec, "parentCompositePodGroupName", path, _long_name)
    errs += _workload_ref(spec.get("workloadRef"), f"{path}.workloadRef")
    errs += _scheduling_policy(spec.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    errs += _constraints(spec.get("schedulingConstraints"), f"{path}.schedulingConstraints")
    errs += _resource_claims(_l(spec.get("resourceClaims")), f"{path}.resourceClaims")
    errs += _disruption_mode(spec.get("disruptionMode"), f"{path}.disruptionMode")
    errs += _priority_fields(spec, path)
    return errs


def _pod_group_template(t: Mapping[str, Any], path: str) -> list[FieldError]:
    errs = _string(t, "name", path, _short_name, required=True)
    errs += _scheduling_policy(t.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    errs += _constraints(t.get("schedulingConstraints"), f"{path}.schedulingConstraints")
    errs += _resource_claims(_l(t.get("resourceClaims")), f"{path}.resourceClaims")
    errs += _disruption_mode(t.get("disruptionMode"), f"{path}.disruptionMode")
    errs += _priority_fields(t, path)
    return errs


def _template_lists(o: Mapping[str, Any], path: str) -> list[FieldError]:
    """``podGroupTemplates`` and ``compositePodGroupTemplates`` of a Workload spec or a
    CompositePodGroupTemplate (each ≤ 8, names unique per list)."""
    errs: list[FieldError] = []
    pgts = _l(o.get("podGroupTemplates"))
    p = f"{path}.podGroupTemplates"
    errs += _max_items(pgts, 8, p)
    errs += _list_map(pgts, p, _PGT_ORDER, ("schedulingConstraints",))
    for i, t in enumerate(pgts):
        errs += _pod_group_template(_d(t), f"{p}[{i}]")
    cpgts = _l(o.get("compositePodGroupTemplates"))
    p = f"{path}.compositePodGroupTemplates"
    errs += _max_items(cpgts, 8, p)
    errs += _list_map(cpgts, p, _CPGT_ORDER)
    for i, t in enumerate(cpgts):
        errs += _composite_template(_d(t), f"{p}[{i}]")
    return errs


def _composite_template(t: Mapping[str, Any], path: str) -> list[FieldError]:
    errs = _string(t, "name", path, _short_name, required=True)
    errs += _scheduling_policy(t.get("schedulingPolicy"), f"{path}.schedulingPolicy", composite=True)
    errs += _constraints(t.get("schedulingConstraints"), f"{path}.schedulingConstraints")
    errs += _disruption_mode(t.get("disruptionMode"), f"{path}.disruptionMode")
    errs += _priority_fields(t, path)
    errs += _template_lists(t, path)
    return errs


def _workload_spec(spec: Mapping[str, Any], path: str = "spec") -> list[FieldError]:
    """``Validate_WorkloadSpec`` (declarative)."""
    errs = _union(spec, path, ("podGroupTemplates", "compositePodGroupTemplates"), empty_list_unset=True)
    ref = spec.get("controllerRef")
    if ref is not None:
        r, p = _d(ref), f"{path}.controllerRef"
        errs += _string(r, "apiGroup", p, _long_name)
        errs += _string(r, "kind", p, _path_segment, required=True)
        errs += _string(r, "name", p, _path_segment, required=True)
    errs += _template_lists(spec, path)
    return errs


def _workload_manual(spec: Mapping[str, Any], path: str = "spec") -> list[FieldError]:
    """``ValidateWorkloadSpec`` (validation.go L112): names unique across the tree, depth,
    one priority configuration, composite templates with children."""
    errs: list[FieldError] = []
    names = {str(_d(t).get("name") or "") for t in _l(spec.get("podGroupTemplates"))}

    def cpg_list(p: str, templates: list[Any]) -> None:  # validateCompositePodGroupTemplateListNames
        listed: set[str] = set()
        for i, child in enumerate(templates):
            n = str(_d(child).get("name") or "")
            if n in names:
                errs.append(FieldError(f"{p}.compositePodGroupTemplates[{i}].name", DUPLICATE, n))
            listed.add(n)
        names.update(listed)
        for i, child in enumerate(templates):
            cpg_names(_d(child), f"{p}.compositePodGroupTemplates[{i}]")

    def cpg_names(cpg: Mapping[str, Any], p: str) -> None:  # validateCompositePodGroupTemplateNames
        listed: set[str] = set()
        for i, child in enumerate(_l(cpg.get("podGroupTemplates"))):
            n = str(_d(child).get("name") or "")
            if n in names:
                errs.append(FieldError(f"{p}.podGroupTemplates[{i}].name", DUPLICATE, n))
            listed.add(n)
        names.update(listed)
        cpg_list(p, _l(cpg.get("compositePodGroupTemplates")))

    cpg_list(path, _l(spec.get("compositePodGroupTemplates")))

    def depth_ok(cpg: Mapping[str, Any], depth: int) -> bool:
        if depth == MAX_TEMPLATE_DEPTH:
            return False
        return all(depth_ok(_d(c), depth + 1) for c in _l(cpg.get("compositePodGroupTemplates")))

    for i, cpg in enumerate(_l(spec.get("compositePodGroupTemplates"))):
        if not depth_ok(_d(cpg), 1):
            errs.append(FieldError(f"{path}.compositePodGroupTemplates[{i}]", INVALID,
                                   _go_templates(_l(_d(cpg).get("compositePodGroupTemplates"))),
                                   f"maximum template hierarchy depth is {MAX_TEMPLATE_DEPTH}"))
    errs += _workload_priority(spec, path)
    for i, cpg in enumerate(_l(spec.get("compositePodGroupTemplates"))):
        errs += _has_child(_d(cpg), f"{path}.compositePodGroupTemplates[{i}]")
    return errs


def _go_templates(templates: list[Any]) -> Any:
    """The internal Go value ``%v``-JSON of CompositePodGroupTemplates (the depth error prints it)."""
    def pol(p: Any) -> dict[str, Any]:
        d = _d(p)
        return {"Basic": {} if d.get("basic") is not None else None,
                "Gang": ({"MinGroupCount": _d(d["gang"]).get("minGroupCount", 0)} if d.get("gang") is not None
                         else None)}

    def pgt(t: Any) -> dict[str, Any]:
        d = _d(t)
        return {"Name": d.get("name", ""), "SchedulingPolicy": {"Basic": {} if _d(d.get("schedulingPolicy")).get(
            "basic") is not None else None, "Gang": ({"MinCount": _d(_d(d.get("schedulingPolicy")).get("gang")).get(
                "minCount", 0)} if _d(d.get("schedulingPolicy")).get("gang") is not None else None)},
            "SchedulingConstraints": None, "ResourceClaims": None, "DisruptionMode": None,
            "PriorityClassName": d.get("priorityClassName", ""), "Priority": d.get("priority"),
            "PreemptionPolicy": d.get("preemptionPolicy")}

    def cpgt(t: Any) -> dict[str, Any]:
        d = _d(t)
        return {"Name": d.get("name", ""), "SchedulingPolicy": pol(d.get("schedulingPolicy")),
                "SchedulingConstraints": None, "DisruptionMode": None,
                "PriorityClassName": d.get("priorityClassName", ""), "Priority": d.get("priority"),
                "PreemptionPolicy": d.get("preemptionPolicy"),
                "PodGroupTemplates": [pgt(c) for c in _l(d.get("podGroupTemplates"))] or None,
                "CompositePodGroupTemplates": [cpgt(c) for c in _l(d.get("compositePodGroupTemplates"))] or None}

    return [cpgt(t) for t in templates] if templates else None


def _workload_priority(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateWorkloadPriority`` (L195)."""
    first: list[tuple[str, Any]] = []

    def check(t: Mapping[str, Any]) -> bool:
        cur = (str(t.get("priorityClassName") or ""), t.get("priority"))
        if not first:
            first.append(cur)
            return True
        return first[0] == cur

    for t in _l(spec.get("podGroupTemplates")):
        if not check(_d(t)):
            return [FieldError(path, INVALID, None, "detected multiple priority configurations")]

    def check_cpg(cpg: Mapping[str, Any]) -> bool:
        if not check(cpg):
            return False
        if not all(check_cpg(_d(c)) for c in _l(cpg.get("compositePodGroupTemplates"))):
            return False
        return all(check(_d(c)) for c in _l(cpg.get("podGroupTemplates")))

    for cpg in _l(spec.get("compositePodGroupTemplates")):
        if not check_cpg(_d(cpg)):
            return [FieldError(path, INVALID, None,
                               "all priority and priorityClassName values must be identical, detected multiple values")]
    return []


def _has_child(cpg: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not _l(cpg.get("podGroupTemplates")) and not _l(cpg.get("compositePodGroupTemplates")):
        errs.append(FieldError(path, INVALID, str(cpg.get("name") or ""),
                               "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"))
    for i, c in enumerate(_l(cpg.get("compositePodGroupTemplates"))):
        errs += _has_child(_d(c), f"{path}.compositePodGroupTemplates[{i}]")
    return errs


def _composite_pod_group_spec(spec: Mapping[str, Any], path: str = "spec") -> list[FieldError]:
    """v1alpha3 ``CompositePodGroupSpec``: ``workloadRef`` required."""
    errs = _string(spec, "parentCompositePodGroupName", path, _long_name)
    if spec.get("workloadRef") is None:
        errs.append(FieldError(f"{path}.workloadRef", REQUIRED))
    else:
        errs += _workload_ref(spec.get("workloadRef"), f"{path}.workloadRef")
    errs += _scheduling_policy(spec.get("schedulingPolicy"), f"{path}.schedulingPolicy", composite=True)
    errs += _constraints(spec.get("schedulingConstraints"), f"{path}.schedulingConstraints")
    errs += _disruption_mode(spec.get("disruptionMode"), f"{path}.disruptionMode")
    errs += _priority_fields(spec, path)
    return errs


# ───────────────────────────── public validation ─────────────────────────────


def validate(obj: Mapping[str, Any]) -> list[FieldError]:
    """Create validation of a (defaulted, prepared) Workload, PodGroup or CompositePodGroup:
    the hand-written rules, then the declarative ones. Other kinds: ``[]``."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    spec = _d(obj.get("spec"))
    if kind == "PodGroup":
        errs = v.validate_object_meta(meta, namespaced=True)
        if spec.get("parentCompositePodGroupName") is not None and spec.get("workloadRef") is None:
            errs.append(FieldError("spec.workloadRef", REQUIRED, "",
                                   "must be set when parentCompositePodGroupName is set"))
        return errs + _pod_group_spec(spec)
    if kind == "Workload":
        errs = v.validate_object_meta(meta, namespaced=True)
        return errs + _workload_manual(spec) + _workload_spec(spec)
    if kind == "CompositePodGroup":
        return v.validate_object_meta(meta, namespaced=True) + _composite_pod_group_spec(spec)
    return []


def _at(obj: Any, path: str) -> tuple[bool, Any]:
    """The value at a field path (``spec.podGroupTemplates[1].name``); list items of the
    ``name``-keyed lists are correlated by index here and by name in :func:`_correlate`."""
    cur = obj
    for part in path.replace("]", "").replace("[", ".").split("."):
        if part == "":
            continue
        if isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                return False, None
        elif isinstance(cur, dict):
            if part not in cur:
                return False, None
            cur = cur[part]
        else:
            return False, None
    return True, cur


def _correlate(new: Any, old: Any, path: str) -> tuple[bool, Any]:
    """The old value at the path of ``new``'s field ``path``, correlating list-map items by
    ``name`` (``+k8s:listMapKey=name``) as declarative validation does."""
    cur_new, cur_old = new, old
    for part in path.replace("]", "").replace("[", ".").split("."):
        if part == "":
            continue
        if isinstance(cur_new, list):
            try:
                item = cur_new[int(part)]
            except (ValueError, IndexError):
                return False, None
            if not isinstance(cur_old, list):
                return False, None
            key = _d(item).get("name") if isinstance(item, dict) else None
            if key is None:
                return False, None
            match = [o for o in cur_old if _d(o).get("name") == key]
            if not match:
                return False, None
            cur_new, cur_old = item, match[0]
        elif isinstance(cur_new, dict):
            if not isinstance(cur_old, dict) or part not in cur_old:
                return False, None
            cur_new, cur_old = cur_new.get(part), cur_old[part]
        else:
            return False, None
    return True, cur_old


def _ratchet(errs: list[FieldError], new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """Declarative validation does not validate a field again when it equals the old value."""
    out = []
    for e in errs:
        if e.path.startswith("spec"):
            found, cur = _at(new, e.path)
            ofound, prev = _correlate(new, old, e.path)
            if found and ofound and cur == prev:
                continue
        out.append(e)
    return out


_IMMUTABLE_PG = ("parentCompositePodGroupName", "workloadRef", "schedulingConstraints", "resourceClaims",
                 "disruptionMode", "priorityClassName", "priority", "preemptionPolicy")


def _immutable(new: Mapping[str, Any], old: Mapping[str, Any], path: str, keys: tuple[str, ...]) -> list[FieldError]:
    return [FieldError(f"{path}.{k}", INVALID, None, "field is immutable")
            for k in keys if (new.get(k) or None) != (old.get(k) or None)]


def _policy_update(new: Any, old: Any, path: str) -> list[FieldError]:
    """``basic`` immutable; ``gang`` NoSet/NoUnset (``minCount`` mutable)."""
    n, o = _d(new), _d(old)
    errs: list[FieldError] = []
    if n.get("basic") != o.get("basic"):
        errs.append(FieldError(f"{path}.basic", INVALID, None, "field is immutable"))
    if n.get("gang") is not None and o.get("gang") is None:
        errs.append(FieldError(f"{path}.gang", INVALID, None, "field cannot be set once created"))
    elif n.get("gang") is None and o.get("gang") is not None:
        errs.append(FieldError(f"{path}.gang", INVALID, None, "field cannot be cleared once set"))
    return errs


def _template_list_update(new: list[Any], old: list[Any], path: str) -> list[FieldError]:
    """``NoAddItem``/``NoRemoveItem`` over a name-keyed template list."""
    old_names = {_d(t).get("name") for t in old}
    new_names = {_d(t).get("name") for t in new}
    errs = [FieldError(f"{path}[{i}]", FORBIDDEN, "", "item may not be added")
            for i, t in enumerate(new) if _d(t).get("name") not in old_names]
    if old_names - new_names:
        errs.append(FieldError(path, FORBIDDEN, "", "item may not be removed"))
    return errs


def _templates_update(new: Mapping[str, Any], old: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, fields in (("podGroupTemplates", ("schedulingConstraints", "resourceClaims", "disruptionMode",
                                               "priorityClassName", "priority", "preemptionPolicy")),
                        ("compositePodGroupTemplates", ("schedulingConstraints", "disruptionMode",
                                                        "priorityClassName", "priority", "preemptionPolicy"))):
        nl, ol = _l(new.get(key)), _l(old.get(key))
        p = f"{path}.{key}"
        errs += _template_list_update(nl, ol, p)
        olds = {_d(t).get("name"): _d(t) for t in ol}
        for i, t in enumerate(nl):
            o = olds.get(_d(t).get("name"))
            if o is None:
                continue
            tp = f"{p}[{i}]"
            errs += _policy_update(_d(t).get("schedulingPolicy"), o.get("schedulingPolicy"), f"{tp}.schedulingPolicy")
            errs += _immutable(_d(t), o, tp, fields)
            if key == "compositePodGroupTemplates":
                errs += _templates_update(_d(t), o, tp)
    return errs


#: PodGroupSpec fields ``+k8s:ifDisabled(<gate>)=+k8s:forbidden``
_GATED_PG = (("parentCompositePodGroupName", "CompositePodGroup"),
             ("schedulingConstraints", "TopologyAwareWorkloadScheduling"),
             ("preemptionPolicy", "PodGroupPreemptionPolicy"))


def validate_update(new: Mapping[str, Any], old: Mapping[str, Any],
                    features: FeatureGate | None = None) -> list[FieldError]:
    """Update validation (main resource): ``ValidateObjectMetaUpdate``-level checks are the
    caller's; here the spec rules with ratcheting, then the update constraints: a gated field set
    while its gate is off is Forbidden when it changes; ``schedulingConstraints`` is immutable only
    with TopologyAwareWorkloadScheduling (``+k8s:ifEnabled(...)=+k8s:immutable``)."""
    kind = new.get("kind")
    nspec, ospec = _d(new.get("spec")), _d(old.get("spec"))
    if kind == "PodGroup":
        f = _gates(features)
        errs = _ratchet(_pod_group_spec(nspec), new, old)
        errs += _policy_update(nspec.get("schedulingPolicy"), ospec.get("schedulingPolicy"), "spec.schedulingPolicy")
        for key, gate in _GATED_PG:
            if not f.enabled(gate) and nspec.get(key) is not None and nspec.get(key) != ospec.get(key):
                errs.append(FieldError(f"spec.{key}", FORBIDDEN))
        immutable = tuple(k for k in _IMMUTABLE_PG
                          if k != "schedulingConstraints" or f.enabled("TopologyAwareWorkloadScheduling"))
        errs += _immutable(nspec, ospec, "spec", immutable)
        return _sorted(errs)
    if kind == "Workload":
        errs = _workload_manual(nspec) + _ratchet(_workload_spec(nspec), new, old)
        errs += _immutable(nspec, ospec, "spec", ("controllerRef",))
        errs += _templates_update(nspec, ospec, "spec")
        return errs
    if kind == "CompositePodGroup":
        errs = _ratchet(_composite_pod_group_spec(nspec), new, old)
        errs += _immutable(nspec, ospec, "spec", ("parentCompositePodGroupName", "workloadRef", "schedulingPolicy",
                                                  "schedulingConstraints", "disruptionMode", "priorityClassName",
                                                  "priority", "preemptionPolicy"))
        return errs
    return []


_PG_FIELD_ORDER = ("parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "schedulingConstraints",
                   "resourceClaims", "disruptionMode", "priorityClassName", "priority", "preemptionPolicy")


def _sorted(errs: list[FieldError]) -> list[FieldError]:
    """Declarative errors in struct field order (a field's own checks before its children's)."""
    def key(e: FieldError) -> tuple[int, str]:
        parts = e.path.split(".")
        top = parts[1].split("[")[0] if len(parts) > 1 else ""
        return (_PG_FIELD_ORDER.index(top) if top in _PG_FIELD_ORDER else -1, "")
    return sorted(errs, key=key)


_CONDITION_REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


def _validate_conditions(conditions: list[Any], path: str) -> list[FieldError]:
    """``metav1validation.ValidateConditions``."""
    import re

    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        cd, p = _d(c), f"{path}[{i}]"
        t = str(cd.get("type") or "")
        if t in seen:
            errs.append(FieldError(p, DUPLICATE, t))
        seen.add(t)
        if not t:
            errs.append(FieldError(f"{p}.type", REQUIRED, "", "must be set"))
        else:
            errs.extend(FieldError(f"{p}.type", INVALID, t, m) for m in v.is_qualified_name(t))
        status = cd.get("status")
        if status not in ("True", "False", "Unknown"):
            errs.append(FieldError(f"{p}.status", NOT_SUPPORTED, str(status or ""),
                                   'supported values: "False", "True", "Unknown"'))
        og = cd.get("observedGeneration")
        if isinstance(og, int) and og < 0:
            errs.append(FieldError(f"{p}.observedGeneration", INVALID, og, "must be greater than or equal to zero"))
        if not cd.get("lastTransitionTime"):
            errs.append(FieldError(f"{p}.lastTransitionTime", REQUIRED))
        reason = str(cd.get("reason") or "")
        if not reason:
            errs.append(FieldError(f"{p}.reason", REQUIRED))
        else:
            if not re.match(_CONDITION_REASON, reason):
                errs.append(FieldError(f"{p}.reason", INVALID, reason, v._regex_error(
                    "a condition reason must start with alphabetic character, optionally followed by a string of "
                    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
                    "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?", "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB",
                    "ReasonA:ReasonB")))
            if len(reason) > 1024:
                errs.append(FieldError(f"{p}.reason", "FieldValueTooLong", "", "may not be more than 1024 bytes"))
        msg = str(cd.get("message") or "")
        if len(msg) > 32768:
            errs.append(FieldError(f"{p}.message", "FieldValueTooLong", "", "may not be more than 32768 bytes"))
    return errs


def validate_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodGroupStatusUpdate`` / ``ValidateCompositePodGroupStatusUpdate`` (L259)."""
    status = _d(new.get("status"))
    errs = _validate_conditions(_l(status.get("conditions")), "status.conditions")
    if new.get("kind") == "PodGroup":
        names = {_d(c).get("name") for c in _l(_d(new.get("spec")).get("resourceClaims"))}
        for i, s in enumerate(_l(status.get("resourceClaimStatuses"))):
            n = _d(s).get("name")
            if n not in names:
                errs.append(FieldError(f"status.resourceClaimStatuses[{i}].name", INVALID, str(n or ""),
                                       "must match the name of an entry in `spec.resourceClaims`"))
    return errs


def validate_job_scheduling(job: Mapping[str, Any], old: Mapping[str, Any] | None,
                            features: FeatureGate | None = None) -> list[FieldError]:
    """The declarative rules of ``Job.spec.scheduling`` (k8s.io/api batch/v1 types.go L488-530):
    ``+k8s:ifDisabled(WorkloadWithJob)=+k8s:forbidden`` (a new or changed value), and on update
    ``NoSet``/``NoUnset`` of the field and of its ``schedulingPolicy``, immutable constraints and
    disruption mode (``minCount`` stays mutable)."""
    new = _d(job.get("spec")).get("scheduling")
    prev = _d((old or {}).get("spec")).get("scheduling") if old is not None else None
    errs: list[FieldError] = []
    if new is not None and new != prev and not _gates(features).enabled("WorkloadWithJob"):
        return [FieldError("spec.scheduling", FORBIDDEN)]
    if old is None:
        return errs
    if new is not None and prev is None:
        return [FieldError("spec.scheduling", INVALID, None, "field cannot be set once created")]
    if new is None and prev is not None:
        return [FieldError("spec.scheduling", INVALID, None, "field cannot be cleared once set")]
    if new is None:
        return errs
    n, o = _d(new), _d(prev)
    np_, op_ = n.get("schedulingPolicy"), o.get("schedulingPolicy")
    if np_ is not None and op_ is not None and (_d(np_).get("basic") is None) != (_d(op_).get("basic") is None):
        # validateJobSchedulingUpdate (pkg/apis/batch/validation/validation.go L693)
        errs.append(FieldError("spec.scheduling.schedulingPolicy", INVALID, None,
                               "the basic/gang policy variant is immutable after creation; only "
                               "schedulingPolicy.gang.minCount may be updated"))
    if n.get("schedulingPolicy") is not None and o.get("schedulingPolicy") is None:
        errs.append(FieldError("spec.scheduling.schedulingPolicy", INVALID, None, "field cannot be set once created"))
    elif n.get("schedulingPolicy") is None and o.get("schedulingPolicy") is not None:
        errs.append(FieldError("spec.scheduling.schedulingPolicy", INVALID, None, "field cannot be cleared once set"))
    errs += _immutable(n, o, "spec.scheduling", ("schedulingConstraints", "disruptionMode"))
    return errs


# ───────────────────────────── defaulting and strategies ─────────────────────────────


def default_object(obj: dict[str, Any], features: FeatureGate | None = None) -> dict[str, Any]:
    """v1beta1/v1alpha3 defaulting (runs while decoding, before admission): a PodGroup's (and a
    CompositePodGroup's) ``disruptionMode`` ``{"single": {}}``, ``preemptionPolicy``
    ``PreemptLowerPriority`` with PodGroupPreemptionPolicy (PodGroup only, ``SetDefaults_PodGroup``)."""
    kind = obj.get("kind")
    if kind not in ("PodGroup", "CompositePodGroup"):
        return obj
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("disruptionMode") is None:
        spec["disruptionMode"] = {"single": {}}
    if kind == "PodGroup" and _gates(features).enabled("PodGroupPreemptionPolicy") \
            and spec.get("preemptionPolicy") is None:
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    return obj


def _drop_pg_spec(spec: dict[str, Any], old: Mapping[str, Any] | None, f: FeatureGate) -> None:
    o = old or {}
    if not f.enabled("TopologyAwareWorkloadScheduling") and o.get("schedulingConstraints") is None:
        spec.pop("schedulingConstraints", None)
    if not f.enabled("DRAWorkloadResourceClaims") and not o.get("resourceClaims"):
        spec.pop("resourceClaims", None)
    if not f.enabled("PodGroupPreemptionPolicy") and o.get("preemptionPolicy") is None:
        spec.pop("preemptionPolicy", None)
    if not f.enabled("CompositePodGroup") and o.get("parentCompositePodGroupName") is None:
        spec.pop("parentCompositePodGroupName", None)


def _drop_templates(spec: dict[str, Any], old: Mapping[str, Any] | None, f: FeatureGate) -> None:
    """``dropDisabledWorkloadSpecFields`` (workload/strategy.go L102): per PodGroupTemplate
    (correlated by index) constraints, claims, preemptionPolicy; composite templates (by name)."""
    o = old or {}
    olds = _l(o.get("podGroupTemplates"))
    for i, t in enumerate(_l(spec.get("podGroupTemplates"))):
        if isinstance(t, dict):
            ot = _d(olds[i]) if i < len(olds) else {}
            if not f.enabled("TopologyAwareWorkloadScheduling") and ot.get("schedulingConstraints") is None:
                t.pop("schedulingConstraints", None)
            if not f.enabled("DRAWorkloadResourceClaims") and not ot.get("resourceClaims"):
                t.pop("resourceClaims", None)
            if not f.enabled("PodGroupPreemptionPolicy") and ot.get("preemptionPolicy") is None:
                t.pop("preemptionPolicy", None)
    cpgs = _l(spec.get("compositePodGroupTemplates"))
    if not f.enabled("CompositePodGroup") and not _l(o.get("compositePodGroupTemplates")):
        spec.pop("compositePodGroupTemplates", None)
    old_cpgs = {_d(t).get("name"): _d(t) for t in _l(o.get("compositePodGroupTemplates"))}
    for t in cpgs:
        if isinstance(t, dict):
            ot = old_cpgs.get(t.get("name"), {})
            if not f.enabled("PodGroupPreemptionPolicy") and ot.get("preemptionPolicy") is None:
                t.pop("preemptionPolicy", None)
            _drop_templates(t, ot, f)


def prepare_for_create(obj: dict[str, Any], features: FeatureGate | None = None) -> None:
    """The registry's ``PrepareForCreate``: status cleared (PodGroup, CompositePodGroup), fields of
    disabled gates dropped. ``metadata.generation`` is not set (these strategies do not set it)."""
    f = _gates(features)
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind in ("PodGroup", "CompositePodGroup"):
        obj["status"] = {}
    if not isinstance(spec, dict):
        return
    if kind == "PodGroup":
        _drop_pg_spec(spec, None, f)
    elif kind == "Workload":
        _drop_templates(spec, None, f)


def prepare_for_update(obj: dict[str, Any], old: Mapping[str, Any], features: FeatureGate | None = None) -> None:
    """``PrepareForUpdate`` of the main resource: the old status is kept; gated fields the old
    object does not use are dropped."""
    f = _gates(features)
    kind = obj.get("kind")
    if kind in ("PodGroup", "CompositePodGroup"):
        if old.get("status") is not None:
            obj["status"] = json.loads(json.dumps(old["status"]))
        else:
            obj.pop("status", None)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind == "PodGroup":
        _drop_pg_spec(spec, _d(old.get("spec")), f)
    elif kind == "Workload":
        _drop_templates(spec, _d(old.get("spec")), f)


#: ``metav1.ResetObjectMetaForStatus``: metadata a status write cannot change
_STATUS_RESET_META = ("deletionTimestamp", "generation", "selfLink", "labels", "annotations", "finalizers",
                      "ownerReferences")


def prepare_for_status_update(obj: dict[str, Any], old: Mapping[str, Any],
                              features: FeatureGate | None = None) -> None:
    """The status strategy's ``PrepareForUpdate``: the spec and most metadata are the old ones;
    ``resourceClaimStatuses`` dropped without DRAWorkloadResourceClaims unless in use."""
    obj["spec"] = json.loads(json.dumps(old.get("spec") or {}))
    meta = obj.setdefault("metadata", {})
    old_meta = _d(old.get("metadata"))
    for k in _STATUS_RESET_META:
        if k in old_meta:
            meta[k] = old_meta[k]
        else:
            meta.pop(k, None)
    if obj.get("kind") == "PodGroup" and not _gates(features).enabled("DRAWorkloadResourceClaims") \
            and not _l(_d(old.get("spec")).get("resourceClaims")):
        status = obj.get("status")
        if isinstance(status, dict):
            status.pop("resourceClaimStatuses", None)


def add_protection_finalizer(obj: dict[str, Any], features: FeatureGate | None = None) -> None:
    """The PodGroupProtection admission plugin (on create, GenericWorkload on)."""
    if obj.get("kind") != "PodGroup" or not _gates(features).enabled("GenericWorkload"):
        return
    meta = obj.setdefault("metadata", {})
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = meta["finalizers"] = []
    if PROTECTION_FINALIZER not in finalizers:
        finalizers.append(PROTECTION_FINALIZER)


def protection_finalizer_removable(pod_group: Mapping[str, Any], pods: list[Mapping[str, Any]]) -> bool:
    """The PodGroupProtection controller's decision (``processPodGroup``): the PodGroup is being
    deleted, carries the finalizer, and no non-terminal pod of its namespace names it."""
    meta = _d(pod_group.get("metadata"))
    if not meta.get("deletionTimestamp") or PROTECTION_FINALIZER not in _l(meta.get("finalizers")):
        return False
    ns, name = meta.get("namespace") or "", meta.get("name")
    for p in pods:
        pm = _d(p.get("metadata"))
        if (pm.get("namespace") or "") != ns:
            continue
        if _d(p.get("status")).get("phase") in ("Succeeded", "Failed"):
            continue
        if _d(_d(p.get("spec")).get("schedulingGroup")).get("podGroupName") == name:
            return False
    return True


# ───────────────────────────── Priority admission ─────────────────────────────


class PodGroupAdmissionError(ValueError):
    """A create the Priority admission plugin forbids; ``str()`` is the plugin's message (the
    caller wraps it as ``podgroups.scheduling.k8s.io "x" is forbidden: <message>``)."""


def admit_priority(obj: dict[str, Any], *, get_class: Callable[[str], Mapping[str, Any] | None],
                   list_classes: Callable[[], Sequence[Mapping[str, Any]]],
                   features: FeatureGate | None = None) -> None:
    """``admitPodGroup`` / ``admitCompositePodGroup`` on create: resolve ``spec.priority`` (and,
    with PodGroupPreemptionPolicy, ``spec.preemptionPolicy``) from the PriorityClass. Mutates
    ``obj``; raises :class:`PodGroupAdmissionError`. Classes are PriorityClass dicts."""
    f = _gates(features)
    kind = obj.get("kind")
    if kind == "PodGroup":
        if not f.enabled("GenericWorkload"):
            return
        what = "pod group"
    elif kind == "CompositePodGroup":
        if not f.enabled("CompositePodGroup"):
            return
        what = "composite pod group"
    else:
        return
    spec = obj.setdefault("spec", {})
    class_name = str(spec.get("priorityClassName") or "")
    policy: Any
    if not class_name:
        defaults = [c for c in list_classes() if c.get("globalDefault")]
        if defaults:
            pc = min(defaults, key=lambda c: int(c.get("value") or 0))
            class_name, priority, policy = str(_d(pc.get("metadata")).get("name") or ""), \
                int(pc.get("value") or 0), pc.get("preemptionPolicy")
        else:
            priority, policy = 0, "PreemptLowerPriority"
    else:
        found = get_class(class_name)
        if found is None:
            raise PodGroupAdmissionError(f"no PriorityClass with name {class_name} was found")
        priority, policy = int(found.get("value") or 0), found.get("preemptionPolicy")
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise PodGroupAdmissionError(f"priority set in the {what} ({spec['priority']}) must match the priority "
                                     f"computed ({priority}) based on the priority class set in the spec")
    spec["priority"] = priority
    if class_name:
        spec["priorityClassName"] = class_name
    else:
        spec.pop("priorityClassName", None)
    if f.enabled("PodGroupPreemptionPolicy") and policy is not None:
        if policy not in _POLICIES:
            raise PodGroupAdmissionError(f"preemptionPolicy set in the PriorityClass object ({policy}) must match one "
                                         f"of the allowed values of PreemptionPolicy type in {what}")
        if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
            raise PodGroupAdmissionError(
                f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be provided in {what} "
                f"spec; priority admission controller computed {policy} from the given PriorityClass name")
        spec["preemptionPolicy"] = policy


# ───────────────────────────── the scheduler's PodGroup condition ─────────────────────────────


def set_status_condition(conditions: list[dict[str, Any]], new: Mapping[str, Any], now: str) -> bool:
    """apimachinery ``meta.SetStatusCondition`` on ``metav1.Condition`` dicts (mutates
    ``conditions``): ``lastTransitionTime`` set (to ``now`` unless given) when the condition is new
    or its status changes; reason, message, observedGeneration replaced (a zero
    ``observedGeneration`` is omitted, Go's ``omitempty``). Returns whether anything changed."""
    gen = int(new.get("observedGeneration") or 0)
    for c in conditions:
        if c.get("type") == new.get("type"):
            changed = False
            if c.get("status") != new.get("status"):
                c["status"] = new.get("status")
                c["lastTransitionTime"] = new.get("lastTransitionTime") or now
                changed = True
            for k in ("reason", "message"):
                if (c.get(k) or "") != (new.get(k) or ""):
                    c[k] = new.get(k) or ""
                    changed = True
            if int(c.get("observedGeneration") or 0) != gen:
                if gen:
                    c["observedGeneration"] = gen
                else:
                    c.pop("observedGeneration", None)
                changed = True
            return changed
    item: dict[str, Any] = {"type": new.get("type"), "status": new.get("status")}
    if gen:
        item["observedGeneration"] = gen
    item["lastTransitionTime"] = new.get("lastTransitionTime") or now
    item["reason"] = new.get("reason") or ""
    item["message"] = new.get("message") or ""
    conditions.append(item)
    return True


def pod_group_condition_patch(pod_group: Mapping[str, Any], condition: Mapping[str, Any],
                              now: str) -> dict[str, Any] | None:
    """The strategic merge patch the scheduler sends to ``podgroups/{name}/status`` for
    ``condition`` (``{"type", "status", "reason", "message"}``), or None when there is nothing to
    send — upstream ``updatePodGroupCondition`` (schedule_one_podgroup.go L943) +
    ``util.PatchPodGroupStatus`` (util/utils.go L158): a True condition never goes back to
    False, ``observedGeneration`` is the PodGroup's ``metadata.generation``, the condition is set
    as ``SetStatusCondition`` sets it, and the patch is the two-way strategic merge diff of the
    old and new status: ``$setElementOrder/conditions`` and the changed element (merged by
    ``type``) with only its changed fields. ``now``: RFC 3339 time for ``lastTransitionTime``."""
    status = _d(pod_group.get("status"))
    old_conds = [dict(c) for c in _l(status.get("conditions")) if isinstance(c, dict)]
    existing = next((c for c in old_conds if c.get("type") == condition.get("type")), None)
    if existing is not None and existing.get("status") == "True" and condition.get("status") != "True":
        return None
    cond = dict(condition)
    cond["observedGeneration"] = _d(pod_group.get("metadata")).get("generation") or 0
    new_conds = json.loads(json.dumps(old_conds))
    if not set_status_condition(new_conds, cond, now):
        return None
    ctype = condition.get("type")
    element = next(c for c in new_conds if c.get("type") == ctype)
    if existing is not None:
        diff: dict[str, Any] = {k: val for k, val in element.items() if existing.get(k) != val}
        diff.update({k: None for k in existing if k not in element})
        element = {"type": ctype, **diff}
    return {"status": {"$setElementOrder/conditions": [{"type": c.get("type")} for c in new_conds],
                       "conditions": [element]}}
