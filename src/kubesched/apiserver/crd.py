"""CustomResourceDefinitions and the custom resources they define, served generically.

Follows k8s.io/apiextensions-apiserver@v0.37.2:

* CRD validation: ``pkg/apis/apiextensions/validation/validation.go``
  (``ValidateCustomResourceDefinition``: name = ``<plural>.<group>``, group a domain with a dot,
  scope, names, versions with exactly one storage version, per-version schema required, printer
  columns) and ``pkg/apiserver/schema/validation.go`` (structural schema: ``type`` at the root and
  for every specified field, ``metadata`` only at the root, list/map extensions);
  defaults from ``pkg/apis/apiextensions/v1/defaults.go`` (singular, listKind, conversion,
  storedVersions).
* Status: the naming and establishing controllers (``pkg/controller/status/naming_controller.go``,
  ``pkg/controller/establish``): ``acceptedNames``, ``NamesAccepted`` and ``Established``.
* Custom resources (``pkg/apiserver/customresource_handler.go`` ``unstructuredSchemaCoercer``):
  unknown fields pruned (``pkg/apiserver/schema/pruning``; ``x-kubernetes-preserve-unknown-fields``
  keeps them, ``x-kubernetes-embedded-resource`` keeps apiVersion/kind/metadata), non-nullable
  nulls without default dropped, then ``default``s applied
  (``pkg/apiserver/schema/defaulting/algorithm.go``), then the OpenAPI v3 schema checked
  (``pkg/apiserver/validation/validation.go``: kube-openapi's messages turned into field errors,
  ``spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"``).
* Tables (``pkg/registry/customresource/tableconvertor``): Name, then ``additionalPrinterColumns``
  (default: Age from ``.metadata.creationTimestamp``), simple JSONPath.

CEL rules (``x-kubernetes-validations``) and string ``format``s: :mod:`kubesched.apiserver.crd_cel`.

Versions convert by rewriting ``apiVersion`` (the ``None`` strategy); conversion webhooks are not
called (:mod:`kubesched.apiserver.crd_conversion` answers upstream's 500 instead).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from kubesched.api.validation import (
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    FieldError,
    invalid_message,
    is_dns1035_label,
    is_dns1123_subdomain,
    status_causes,
    validate_object_meta,
)
from kubesched.apiserver.crd_cel import BLOCKED_MESSAGE, cel_errors, format_errors, has_blocking_error, has_rules
from kubesched.apiserver.resources import ResourceInfo

__all__ = [
    "CRD_FINALIZER",
    "CRD_GROUP",
    "CustomResource",
    "Registry",
    "admit_custom_resource",
    "crd_status",
    "invalid_status",
    "unknown_fields",
    "default_crd",
    "validate_crd",
]

CRD_GROUP = "apiextensions.k8s.io"
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
#: FieldValueTypeInvalid renders as "Invalid value" (field.ErrorTypeTypeInvalid)
TYPE_INVALID = INVALID

_PRINTER_TYPES = ("boolean", "date", "integer", "number", "string")
_PRINTER_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "name", "password")
_CREATION_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More "
    "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generated name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)


def _m(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


# ------------------------------------------------------------------------------------ CRDs
def default_crd(crd: dict[str, Any]) -> None:
    """``SetDefaults_CustomResourceDefinition`` (v1), in place: singular, listKind, conversion."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        if not names.get("singular") and isinstance(names.get("kind"), str):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind") and names.get("kind"):
            names["listKind"] = f"{names['kind']}List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}


def _versions_value(versions: list[Any]) -> Any:
    return versions


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """``ValidateCustomResourceDefinition`` (create) / ``…Update``: the checks kubectl users hit.

    Returns field errors (empty: valid); paths as upstream (``spec.versions[0].schema.openAPIV3Schema.type``).
    """
    errs = [e for e in validate_object_meta(crd.get("metadata"), namespaced=False)
            if not (e.path == "metadata.finalizers" and e.value == CRD_FINALIZER)]
    spec = _m(crd.get("spec"))
    names = _m(spec.get("names"))
    group = _s(spec.get("group"))
    plural = _s(names.get("plural"))
    name = _s(_m(crd.get("metadata")).get("name"))
    if name and name != f"{plural}.{group}":
        errs.append(FieldError("metadata.name", INVALID, name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(FieldError("spec.group", REQUIRED))
    elif (msgs := is_dns1123_subdomain(group)):
        errs.append(FieldError("spec.group", INVALID, group, ",".join(msgs)))
    elif len(group.split(".")) < 2:
        errs.append(FieldError("spec.group", INVALID, group, "should be a domain with at least one dot"))
    scope = _s(spec.get("scope"))
    if not scope:
        errs.append(FieldError("spec.scope", REQUIRED))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(FieldError("spec.scope", NOT_SUPPORTED, scope, 'supported values: "Cluster", "Namespaced"'))
    versions = _l(spec.get("versions"))
    preserve = spec.get("preserveUnknownFields") is True
    storage = 0
    seen: set[str] = set()
    unique = True
    for i, v in enumerate(versions):
        v = _m(v)
        vpath = f"spec.versions[{i}]"
        vname = _s(v.get("name"))
        if v.get("storage") is True:
            storage += 1
        if vname in seen:
            unique = False
        seen.add(vname)
        if (msgs := is_dns1035_label(vname)):
            errs.append(FieldError(f"{vpath}.name", INVALID, vname, ",".join(msgs)))
        schema = _m(v.get("schema")).get("openAPIV3Schema")
        if not preserve and v.get("served") is True and not isinstance(schema, dict):
            errs.append(FieldError(f"{vpath}.schema.openAPIV3Schema", REQUIRED, "",
                                   "because otherwise all fields are pruned"))
        if isinstance(schema, dict):
            status_on = "status" in _m(v.get("subresources"))
            errs.extend(_validate_schema_root(schema, f"{vpath}.schema.openAPIV3Schema", status_on))
        for j, col in enumerate(_l(v.get("additionalPrinterColumns"))):
            errs.extend(_validate_column(_m(col), f"{vpath}.additionalPrinterColumns[{j}]"))
    if not versions:
        errs.append(FieldError("spec.versions", INVALID, [], "must have exactly one version marked as storage "
                               "version"))
    else:
        if not unique:
            errs.append(FieldError("spec.versions", INVALID, _versions_value(versions),
                                   "must contain unique version names"))
        if storage != 1:
            errs.append(FieldError("spec.versions", INVALID, _versions_value(versions),
                                   "must have exactly one version marked as storage version"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(FieldError(f"spec.names.{key}", REQUIRED))
    errs.extend(_validate_names(names, "spec.names"))
    if old is not None:
        oldspec = _m(old.get("spec"))
        if oldspec.get("group") != spec.get("group"):
            errs.append(FieldError("spec.group", INVALID, group, "field is immutable"))
        if _m(oldspec.get("names")).get("plural") != plural:
            errs.append(FieldError("spec.names.plural", INVALID, plural, "field is immutable"))
    return errs


def _validate_names(names: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        v = _s(names.get(key))
        if v and (msgs := is_dns1035_label(v)):
            errs.append(FieldError(f"{path}.{key}", INVALID, v, ",".join(msgs)))
    for key in ("kind", "listKind"):
        v = _s(names.get(key))
        if v and (msgs := is_dns1035_label(v.lower())):
            errs.append(FieldError(f"{path}.{key}", INVALID, v,
                                   "may have mixed case, but should otherwise match: " + ",".join(msgs)))
    for i, sn in enumerate(_l(names.get("shortNames"))):
        if (msgs := is_dns1035_label(_s(sn))):
            errs.append(FieldError(f"{path}.shortNames[{i}]", INVALID, sn, ",".join(msgs)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(FieldError(f"{path}.listKind", INVALID, names["listKind"], "kind and listKind may not be the same"))
    for i, c in enumerate(_l(names.get("categories"))):
        if (msgs := is_dns1035_label(_s(c))):
            errs.append(FieldError(f"{path}.categories[{i}]", INVALID, c, ",".join(msgs)))
    return errs


def _validate_column(col: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceColumnDefinition``."""
    errs: list[FieldError] = []
    types = ",".join(_PRINTER_TYPES)
    if not col.get("name"):
        errs.append(FieldError(f"{path}.name", REQUIRED))
    t = _s(col.get("type"))
    if not t:
        errs.append(FieldError(f"{path}.type", REQUIRED, "", f"must be one of {types}"))
    elif t not in _PRINTER_TYPES:
        errs.append(FieldError(f"{path}.type", INVALID, t, f"must be one of {types}"))
    fmt = _s(col.get("format"))
    if fmt and fmt not in _PRINTER_FORMATS:
        errs.append(FieldError(f"{path}.format", INVALID, fmt, f"must be one of {','.join(_PRINTER_FORMATS)}"))
    if not col.get("jsonPath"):
        errs.append(FieldError(f"{path}.JSONPath", REQUIRED))
    elif _parse_jsonpath(_s(col.get("jsonPath"))) is None:
        errs.append(FieldError(f"{path}.JSONPath", INVALID, col["jsonPath"], "must be a simple json path"))
    return errs


def _validate_schema_root(schema: dict[str, Any], path: str, status_on: bool) -> list[FieldError]:
    """The structural-schema checks (``schema/validation.go`` ``ValidateStructural``) plus the root rules
    of ``validateCustomResourceDefinitionValidation``."""
    errs: list[FieldError] = []
    if schema.get("nullable") is True:
        errs.append(FieldError(f"{path}.nullable", FORBIDDEN, "", "nullable cannot be true at the root"))
    if status_on and schema.get("type") not in (None, "object"):
        errs.append(FieldError(f"{path}.type", INVALID, schema.get("type"),
                               'only "object" is allowed as the type at the root of the schema if the status '
                               "subresource is enabled"))
    errs.extend(_structural(schema, path, root=True, items=False))
    return errs


_SCALAR_TYPES = ("string", "integer", "number", "boolean")


def _structural(s: dict[str, Any], path: str, *, root: bool, items: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    t = s.get("type")
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(FieldError(f"{path}.x-kubernetes-preserve-unknown-fields", INVALID, False,
                               "must be true or undefined"))
    if not t and not int_or_string and not preserve:
        if root:
            errs.append(FieldError(f"{path}.type", REQUIRED, "", "must not be empty at the root"))
        elif items:
            errs.append(FieldError(f"{path}.type", REQUIRED, "", "must not be empty for specified array items"))
        else:
            errs.append(FieldError(f"{path}.type", REQUIRED, "", "must not be empty for specified object fields"))
    elif root and t and t != "object":
        errs.append(FieldError(f"{path}.type", INVALID, t, "must be object at the root"))
    if t and t not in ("object", "array", *_SCALAR_TYPES):
        errs.append(FieldError(f"{path}.type", NOT_SUPPORTED, t,
                               'supported values: "array", "boolean", "integer", "number", "object", "string"'))
    if t == "array" and not isinstance(s.get("items"), dict):
        errs.append(FieldError(f"{path}.items", REQUIRED, "", "must be specified"))
    if root and "additionalProperties" in s:
        errs.append(FieldError(f"{path}.additionalProperties", FORBIDDEN, "", "must not be used at the root"))
    props = _m(s.get("properties"))
    if props and isinstance(s.get("additionalProperties"), dict):
        errs.append(FieldError(f"{path}.additionalProperties", FORBIDDEN, "",
                               "additionalProperties and properties are mutual exclusive"))
    if root and "metadata" in props:
        md = _m(props["metadata"])
        if md.get("type") not in (None, "object"):
            errs.append(FieldError(f"{path}.properties[metadata].type", INVALID, md.get("type"), "must be object"))
        if set(_m(md.get("properties"))) - {"name", "generateName"}:
            errs.append(FieldError(f"{path}.properties[metadata]", FORBIDDEN, "",
                                   "must not specify anything other than name and generateName, but metadata is "
                                   "implicitly specified"))
    lt = s.get("x-kubernetes-list-type")
    if lt is not None:
        if t != "array":
            errs.append(FieldError(f"{path}.type", REQUIRED if not t else INVALID, t or "",
                                   "must be array if x-kubernetes-list-type is specified"))
        elif lt not in ("atomic", "set", "map"):
            errs.append(FieldError(f"{path}.x-kubernetes-list-type", NOT_SUPPORTED, lt,
                                   'supported values: "atomic", "set", "map"'))
        elif lt == "map":
            keys = _l(s.get("x-kubernetes-list-map-keys"))
            item = _m(s.get("items"))
            if not keys:
                errs.append(FieldError(f"{path}.x-kubernetes-list-map-keys", REQUIRED, "",
                                       "must not be empty if x-kubernetes-list-type is map"))
            elif item.get("type") != "object":
                errs.append(FieldError(f"{path}.items.type", INVALID, item.get("type"),
                                       "must be object if parent array's x-kubernetes-list-type is map"))
            elif any(k not in _m(item.get("properties")) for k in keys):
                errs.append(FieldError(f"{path}.x-kubernetes-list-map-keys", INVALID, keys,
                                       "entries must all be names of item properties"))
    mt = s.get("x-kubernetes-map-type")
    if mt is not None and mt not in ("atomic", "granular"):
        errs.append(FieldError(f"{path}.x-kubernetes-map-type", NOT_SUPPORTED, mt,
                               'supported values: "atomic", "granular"'))
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            go_regex(pattern)
        except re.error as e:
            errs.append(FieldError(f"{path}.pattern", INVALID, pattern,
                                   f"must be a valid regular expression, but isn't: {e}"))
    for k, sub in props.items():
        if isinstance(sub, dict):
            errs.extend(_structural(sub, f"{path}.properties[{k}]", root=False, items=False))
    if isinstance(s.get("items"), dict):
        errs.extend(_structural(s["items"], f"{path}.items", root=False, items=True))
    if isinstance(s.get("additionalProperties"), dict):
        errs.extend(_structural(s["additionalProperties"], f"{path}.additionalProperties", root=False, items=False))
    return errs


def crd_status(crd: dict[str, Any], others: Iterable[dict[str, Any]], now: str) -> dict[str, Any]:
    """The status the naming and establishing controllers write: ``acceptedNames``, the
    ``NamesAccepted`` / ``Established`` conditions (a name another CRD of the group already
    accepted is a conflict, as ``naming_controller.go`` ``getAcceptedNamesForGroup``), ``storedVersions``."""
    spec = _m(crd.get("spec"))
    names = dict(_m(spec.get("names")))
    old = _m(crd.get("status"))
    conds = {c.get("type"): c for c in _l(old.get("conditions")) if isinstance(c, dict)}
    group = spec.get("group")
    taken_kinds: set[str] = set()
    taken_names: set[str] = set()
    for o in others:
        if _m(o.get("spec")).get("group") != group or _m(o.get("metadata")).get("name") == \
                _m(crd.get("metadata")).get("name"):
            continue
        acc = _m(_m(o.get("status")).get("acceptedNames"))
        taken_kinds.update(_s(acc.get(k)) for k in ("kind", "listKind"))
        taken_names.update([_s(acc.get("plural")), _s(acc.get("singular")), *map(_s, _l(acc.get("shortNames")))])
    reason, message = "NoConflicts", "no conflicts found"
    if names.get("kind") in taken_kinds:
        reason, message = "KindConflict", f'"{names.get("kind")}" is already in use'
    elif names.get("singular") in taken_names:
        reason, message = "SingularConflict", f'"{names.get("singular")}" is already in use'
    accepted = reason == "NoConflicts"

    def cond(ctype: str, status: str, r: str, msg: str) -> dict[str, Any]:
        prev = conds.get(ctype)
        ts = prev["lastTransitionTime"] if prev and prev.get("status") == status and \
            prev.get("lastTransitionTime") else now
        return {"type": ctype, "status": status, "lastTransitionTime": ts, "reason": r, "message": msg}

    out: dict[str, Any] = {"conditions": [cond("NamesAccepted", "True" if accepted else "False", reason, message)]}
    if accepted:
        out["conditions"].append(cond("Established", "True", "InitialNamesAccepted",
                                      "the initial names have been accepted"))
        out["acceptedNames"] = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind",
                                                      "categories") if names.get(k)}
    else:
        out["conditions"].append(cond("Established", "False", "NotAccepted", "not all names are accepted"))
        out["acceptedNames"] = dict(_m(old.get("acceptedNames"))) or {"plural": "", "kind": ""}
    if "Terminating" in conds:
        out["conditions"].append(conds["Terminating"])
    stored = [v for v in _l(old.get("storedVersions")) if isinstance(v, str)]
    for v in _l(spec.get("versions")):
        if _m(v).get("storage") is True and v.get("name") not in stored:
            stored.append(v["name"])
    out["storedVersions"] = stored
    return out


def invalid_status(kind: str, group: str, name: str, errs: list[FieldError]) -> dict[str, Any]:
    """The 422 ``Status`` of ``errors.NewInvalid`` (message: every error; causes: path + ``ErrorBody``)."""
    details: dict[str, Any] = {"name": name, "group": group, "kind": kind, "causes": status_causes(errs)}
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": invalid_message(kind, name, errs, group=group), "reason": "Invalid", "details": details,
            "code": 422}


# ------------------------------------------------------------------------ the registry
@dataclass(frozen=True)
class CustomResource:
    """One served version of a custom resource: its :class:`ResourceInfo` and schema facts."""

    info: ResourceInfo
    crd_name: str
    schema: dict[str, Any] | None
    preserve_unknown: bool
    status: bool
    scale: dict[str, Any] | None
    columns: tuple[dict[str, Any], ...]
    storage_version: str
    list_kind: str = ""


@dataclass
class Registry:
    """The custom resources served, rebuilt from the Established CRDs (:meth:`rebuild`)."""

    by_gvr: dict[tuple[str, str, str], CustomResource] = field(default_factory=dict)
    by_gvk: dict[tuple[str, str, str], CustomResource] = field(default_factory=dict)

    def rebuild(self, crds: Iterable[dict[str, Any]]) -> None:
        self.by_gvr.clear()
        self.by_gvk.clear()
        for crd in crds:
            for cr in custom_resources(crd):
                self.by_gvr[(cr.info.group, cr.info.version, cr.info.plural)] = cr
                self.by_gvk[(cr.info.group, cr.info.version, cr.info.kind)] = cr

    def find(self, group: str, version: str, plural: str) -> CustomResource | None:
        return self.by_gvr.get((group, version, plural))

    def find_kind(self, group: str, version: str, kind: str) -> CustomResource | None:
        return self.by_gvk.get((group, version, kind))

    def infos(self) -> list[ResourceInfo]:
        return [c.info for c in self.by_gvr.values()]

    def of_info(self, info: ResourceInfo) -> CustomResource | None:
        if not self.by_gvr:  # no CRD established (asked several times per request)
            return None
        cr = self.by_gvr.get((info.group, info.version, info.plural))
        return cr if cr is not None and cr.info is info else None

    def for_crd(self, name: str) -> list[CustomResource]:
        return [c for c in self.by_gvr.values() if c.crd_name == name]


def _established(crd: dict[str, Any]) -> bool:
    return any(_m(c).get("type") == "Established" and _m(c).get("status") == "True"
               for c in _l(_m(crd.get("status")).get("conditions")))


def custom_resources(crd: dict[str, Any]) -> list[CustomResource]:
    """The served versions of an Established CRD (none while it is not Established)."""
    if not _established(crd):
        return []
    spec = _m(crd.get("spec"))
    names = _m(_m(crd.get("status")).get("acceptedNames")) or _m(spec.get("names"))
    group = _s(spec.get("group"))
    plural = _s(names.get("plural"))
    kind = _s(names.get("kind"))
    storage = next((_s(_m(v).get("name")) for v in _l(spec.get("versions")) if _m(v).get("storage")), "")
    out = []
    for v in _l(spec.get("versions")):
        v = _m(v)
        if v.get("served") is not True:
            continue
        subs = _m(v.get("subresources"))
        subresources = tuple(k for k in ("status", "scale") if k in subs)
        info = ResourceInfo(group, _s(v.get("name")), kind, plural, _s(names.get("singular")) or kind.lower(),
                            spec.get("scope") == "Namespaced",
                            short_names=tuple(map(str, _l(names.get("shortNames")))),
                            subresources=subresources, categories=tuple(map(str, _l(names.get("categories")))),
                            generation=True, storage=f"{group}/{plural}")
        out.append(CustomResource(
            info, _s(_m(crd.get("metadata")).get("name")), _m(v.get("schema")).get("openAPIV3Schema"),
            spec.get("preserveUnknownFields") is True, "status" in subs,
            _m(subs.get("scale")) if "scale" in subs else None,
            tuple(_m(c) for c in _l(v.get("additionalPrinterColumns"))), storage,
            _s(names.get("listKind")) or f"{kind}List"))
    return out


# ----------------------------------------------------------------- custom resource writes
def admit_custom_resource(cr: CustomResource, obj: dict[str, Any], old: dict[str, Any] | None,
                          sub: str = "") -> tuple[dict[str, Any], list[str], list[FieldError]]:
    """Prune, drop nulls, default and validate a custom resource write.

    Returns ``(object to store, unknown field paths pruned, field errors)``; ``obj`` is not mutated.
    """
    out = _copy(obj)
    unknown: list[str] = []
    schema = cr.schema
    if schema is not None and not cr.preserve_unknown:
        _prune(out, schema, "", unknown, root=True)
        _prune_nulls(out, schema)
    if schema is not None:
        _default(out, schema)
    errs = validate_object_meta(out.get("metadata"), namespaced=cr.info.namespaced)
    if schema is not None:
        body = {k: v for k, v in out.items() if k != "metadata"}
        errs.extend(_validate(body, schema, ""))
        errs.extend(format_errors(body, schema))
        # x-kubernetes-validations (strategy.go): not run on an object with blocking errors
        if has_blocking_error(errs):
            if has_rules(schema):
                errs.append(FieldError("<nil>", INVALID, None, BLOCKED_MESSAGE))
        else:
            errs.extend(cel_errors(schema, out, old))
    if cr.scale is not None and sub in ("", "scale"):
        errs.extend(_validate_scale(cr.scale, out))
    return out, unknown, errs


def generation_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """A custom resource's ``metadata.generation`` goes up when anything but metadata and status
    changes (``pkg/registry/customresource/strategy.go`` PrepareForUpdate)."""
    def body(o: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in o.items() if k not in ("metadata", "status", "apiVersion", "kind")}
    return body(old) != body(new)


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    try:
        out: dict[str, Any] = orjson.loads(orjson.dumps(obj))
        return out
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(obj)


def unknown_fields(cr: CustomResource, obj: dict[str, Any]) -> list[str]:
    """The paths pruning would drop from ``obj`` (``fieldValidation`` Warn/Strict); ``obj`` is not mutated."""
    if cr.schema is None or cr.preserve_unknown:
        return []
    unknown: list[str] = []
    _prune(_copy(obj), cr.schema, "", unknown, root=True)
    return unknown


def _validate_scale(scale: dict[str, Any], obj: dict[str, Any]) -> list[FieldError]:
    path = _s(scale.get("specReplicasPath"))
    v = _get_path(obj, path)
    if v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
        return []
    return [FieldError(path.lstrip("."), INVALID, v, "should be a non-negative integer")] if isinstance(v, int) \
        and not isinstance(v, bool) else []


def _get_path(obj: Any, path: str) -> Any:
    cur = obj
    for part in [p for p in path.split(".") if p]:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set ``.a.b.c`` in ``obj`` (creating maps on the way)."""
    parts = [p for p in path.split(".") if p]
    cur = obj
    for p in parts[:-1]:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = cur[p] = {}
        cur = nxt
    if parts:
        cur[parts[-1]] = value


def scale_of(cr: CustomResource, obj: dict[str, Any]) -> dict[str, Any]:
    """autoscaling/v1 ``Scale`` of a custom resource
    (``pkg/registry/customresource/etcd.go`` ``scaleFromCustomResource``)."""
    scale = cr.scale or {}
    md = _m(obj.get("metadata"))
    replicas = _get_path(obj, _s(scale.get("specReplicasPath")))
    status_replicas = _get_path(obj, _s(scale.get("statusReplicasPath")))
    out: dict[str, Any] = {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in md},
        "spec": {"replicas": replicas if isinstance(replicas, int) else 0},
        "status": {"replicas": status_replicas if isinstance(status_replicas, int) else 0},
    }
    sel_path = _s(scale.get("labelSelectorPath"))
    if sel_path:
        sel = _get_path(obj, sel_path)
        if isinstance(sel, str):
            out["status"]["selector"] = sel
    return out


def _kind_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(x: Any, s: dict[str, Any] | None, path: str, unknown: list[str], *, root: bool = False) -> None:
    """``pruning.PruneWithOptions``: drop fields the schema does not specify."""
    if s is None:
        return
    if isinstance(x, dict):
        props = _m(s.get("properties"))
        addl = s.get("additionalProperties")
        preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = s.get("x-kubernetes-embedded-resource") is True
        for k in list(x):
            if (root or embedded) and k in ("apiVersion", "kind", "metadata"):
                if k == "metadata" and embedded and isinstance(x[k], dict):
                    _prune_meta(x[k], _child(path, k), unknown)
                continue
            if k in props:
                _prune(x[k], _m(props[k]), _child(path, k), unknown)
            elif isinstance(addl, dict):
                _prune(x[k], addl, _child(path, k), unknown)
            elif addl is True or preserve:
                continue
            else:
                unknown.append(_child(path, k))
                del x[k]
    elif isinstance(x, list):
        item = s.get("items")
        for i, v in enumerate(x):
            _prune(v, item if isinstance(item, dict) else None, f"{path}[{i}]", unknown)


_META_FIELDS = frozenset(("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                          "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "labels", "annotations", "ownerReferences", "finalizers", "managedFields"))


def _prune_meta(md: dict[str, Any], path: str, unknown: list[str]) -> None:
    for k in list(md):
        if k not in _META_FIELDS:
            unknown.append(_child(path, k))
            del md[k]


def _schema_for(s: dict[str, Any] | None, k: str) -> dict[str, Any] | None:
    if s is None:
        return None
    props = _m(s.get("properties"))
    if k in props:
        return _m(props[k])
    addl = s.get("additionalProperties")
    return addl if isinstance(addl, dict) else None


def _prune_nulls(x: Any, s: dict[str, Any] | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``."""
    if isinstance(x, dict):
        for k in list(x):
            ks = _schema_for(s, k)
            if x[k] is None and ks is not None and not ks.get("nullable") and "default" not in ks:
                del x[k]
            else:
                _prune_nulls(x[k], ks)
    elif isinstance(x, list):
        item = s.get("items") if s is not None else None
        for v in x:
            _prune_nulls(v, item if isinstance(item, dict) else None)


def _nonnullable_null(v: Any, s: dict[str, Any] | None) -> bool:
    return v is None and s is not None and not s.get("nullable")


def _default(x: Any, s: dict[str, Any] | None) -> None:
    """``defaulting.Default``: a missing (or non-nullable null) property gets its ``default``."""
    if s is None:
        return
    if isinstance(x, dict):
        for k, prop in _m(s.get("properties")).items():
            if not isinstance(prop, dict) or "default" not in prop or prop["default"] is None:
                continue
            if k not in x or _nonnullable_null(x[k], prop):
                x[k] = copy.deepcopy(prop["default"])
        addl = s.get("additionalProperties")
        props = _m(s.get("properties"))
        for k in x:
            if k in props:
                _default(x[k], _m(props[k]))
            elif isinstance(addl, dict):
                if _nonnullable_null(x[k], addl) and addl.get("default") is not None:
                    x[k] = copy.deepcopy(addl["default"])
                _default(x[k], addl)
    elif isinstance(x, list):
        item = s.get("items")
        if not isinstance(item, dict):
            return
        for i in range(len(x)):
            if _nonnullable_null(x[i], item) and item.get("default") is not None:
                x[i] = copy.deepcopy(item["default"])
            _default(x[i], item)


@functools.lru_cache(maxsize=1024)
def go_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Go (RE2) pattern with Python's ``re``: a flag group ``(?i)`` after the start
    applies to the rest of its group in Go, so it becomes a scoped ``(?i:...)``; ``\\z`` is ``\\Z``.
    Raises :class:`re.error`."""
    out: list[str] = []
    closers = [0]  # per open group: the scoped-flag groups to close with it
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            esc = pattern[i:i + 2]
            out.append("\\Z" if esc == "\\z" else esc)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if pattern[i:i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i:i + 1] == "]":
                out.append("\\]")
                i += 1
            continue
        if c == "(":
            m = _FLAG_GROUP.match(pattern, i)
            if m is not None and (i > 0 or len(closers) > 1):
                out.append(f"(?{m.group(1).replace('U', '')}:")
                closers[-1] += 1
                i = m.end()
                continue
            closers.append(0)
        elif c == ")" and len(closers) > 1:
            out.append(")" * closers.pop())
        out.append(c)
        i += 1
    out.append(")" * closers[0])
    return re.compile("".join(out))


_FLAG_GROUP = re.compile(r"\(\?([imsU]+)\)")


def _go_num(v: Any) -> str:
    """Go's ``%v`` of a float64 bound (``1`` not ``1.0``)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _go_list(values: list[Any]) -> str:
    return "[" + " ".join(v if isinstance(v, str) else json.dumps(v) for v in values) + "]"


def _validate(x: Any, s: dict[str, Any], path: str) -> list[FieldError]:
    """kube-openapi's schema validation of one value, as ``kubeOpenAPIResultToFieldErrors`` reports it."""
    name = path or "."
    t = s.get("type")
    kind = _kind_of(x)
    if s.get("x-kubernetes-int-or-string") is True:
        if kind not in ("integer", "string") and not (x is None and s.get("nullable")):
            return [FieldError(path, TYPE_INVALID, kind, f"{name} in body must be of type integer,string: "
                                                           f"{json.dumps(kind)}")]
    elif x is None:
        if t and not s.get("nullable"):
            return [FieldError(path, TYPE_INVALID, "null", f"{name} in body must be of type {t}: \"null\"")]
        return []
    elif t and not (t == kind or (t == "number" and kind == "integer")):
        return [FieldError(path, TYPE_INVALID, kind, f"{name} in body must be of type {t}: {json.dumps(kind)}")]
    errs: list[FieldError] = []
    enum = s.get("enum")
    if isinstance(enum, list) and x not in enum:
        errs.append(FieldError(path, NOT_SUPPORTED, x,
                               "supported values: " + ", ".join(json.dumps(e) for e in enum)))
    if kind in ("integer", "number"):
        mn, mx = s.get("minimum"), s.get("maximum")
        if isinstance(mn, (int, float)) and (x < mn or (s.get("exclusiveMinimum") and x == mn)):
            op = "greater than" if s.get("exclusiveMinimum") else "greater than or equal to"
            errs.append(FieldError(path, INVALID, x, f"{name} in body should be {op} {_go_num(mn)}"))
        if isinstance(mx, (int, float)) and (x > mx or (s.get("exclusiveMaximum") and x == mx)):
            op = "less than" if s.get("exclusiveMaximum") else "less than or equal to"
            errs.append(FieldError(path, INVALID, x, f"{name} in body should be {op} {_go_num(mx)}"))
        mo = s.get("multipleOf")
        if isinstance(mo, (int, float)) and mo > 0 and (x / mo) != int(x / mo):
            errs.append(FieldError(path, INVALID, x, f"{name} in body should be a multiple of {_go_num(mo)}"))
    elif kind == "string":
        ml, xl = s.get("minLength"), s.get("maxLength")
        if isinstance(xl, int) and len(x) > xl:
            errs.append(FieldError(path, TOO_LONG, "", f"may not be more than {xl} bytes"))
        if isinstance(ml, int) and len(x) < ml:
            errs.append(FieldError(path, INVALID, x, f"{name} in body should be at least {ml} chars long"))
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            try:
                if go_regex(pattern).search(x) is None:
                    errs.append(FieldError(path, INVALID, x, f"{name} in body should match '{pattern}'"))
            except re.error:
                pass
    elif kind == "array":
        errs.extend(_count_errors(len(x), s.get("minItems"), s.get("maxItems"), path, "items"))
        item = s.get("items")
        if isinstance(item, dict):
            for i, v in enumerate(x):
                errs.extend(_validate(v, item, f"{path}[{i}]"))
        errs.extend(_list_type_errors(x, s, path))
    elif kind == "object":
        props = _m(s.get("properties"))
        for req in _l(s.get("required")):
            if req not in x:
                errs.append(FieldError(_child(path, req), REQUIRED))
        errs.extend(_count_errors(len(x), s.get("minProperties"), s.get("maxProperties"), path, "properties"))
        addl = s.get("additionalProperties")
        for k, v in x.items():
            if k in props and isinstance(props[k], dict):
                errs.extend(_validate(v, props[k], _child(path, k)))
            elif isinstance(addl, dict):
                errs.extend(_validate(v, addl, _child(path, k)))
    return errs


def _count_errors(n: int, lo: Any, hi: Any, path: str, unit: str) -> list[FieldError]:
    """maxItems / maxProperties (field.TooMany) and minItems / minProperties (kube-openapi's message)."""
    errs: list[FieldError] = []
    if isinstance(hi, int) and n > hi:
        errs.append(FieldError(path, TOO_MANY, n, f"must have at most {hi} items"))
    if isinstance(lo, int) and n < lo:
        errs.append(FieldError(path, INVALID, n, f"{path or '.'} in body should have at least {lo} {unit}"))
    return errs


def _list_type_errors(x: list[Any], s: dict[str, Any], path: str) -> list[FieldError]:
    """``x-kubernetes-list-type`` set / map: duplicates (``listtype`` validation)."""
    lt = s.get("x-kubernetes-list-type")
    errs: list[FieldError] = []
    if lt == "set":
        seen: list[Any] = []
        for i, v in enumerate(x):
            if v in seen:
                errs.append(FieldError(f"{path}[{i}]", "FieldValueDuplicate", v))
            seen.append(v)
    elif lt == "map":
        keys = [k for k in _l(s.get("x-kubernetes-list-map-keys")) if isinstance(k, str)]
        seen_keys: list[tuple[Any, ...]] = []
        for i, v in enumerate(x):
            if not isinstance(v, dict):
                continue
            key = tuple(v.get(k) for k in keys)
            if key in seen_keys:
                errs.append(FieldError(f"{path}[{i}]", "FieldValueDuplicate", {k: v.get(k) for k in keys}))
            seen_keys.append(key)
    return errs


def unknown_field_messages(paths: list[str]) -> list[str]:
    """``unknown field "spec.foo"`` per pruned path (``fieldValidation`` Warn/Strict)."""
    return [f'unknown field "{p}"' for p in paths]


# ----------------------------------------------------------------------------- tables
_JSONPATH_STEP = re.compile(r"""\.([A-Za-z0-9_\-/]+)|\[(\d+)\]"""
                            r"""|\[\?\(@\.([A-Za-z0-9_\-]+)\s*==\s*['"]([^'"]*)['"]\)\]|\['([^']+)'\]""")


def _parse_jsonpath(path: str) -> list[tuple[str, Any]] | None:
    """A simple JSONPath (``.a.b[0]``, ``.a[?(@.type=="Ready")].status``, ``.a['x.y']``) as steps;
    None if it is not that simple."""
    steps: list[tuple[str, Any]] = []
    pos = 0
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1]
    if not p.startswith("."):
        return None
    while pos < len(p):
        m = _JSONPATH_STEP.match(p, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            steps.append(("key", m.group(1)))
        elif m.group(2) is not None:
            steps.append(("index", int(m.group(2))))
        elif m.group(3) is not None:
            steps.append(("filter", (m.group(3), m.group(4))))
        else:
            steps.append(("key", m.group(5)))
        pos = m.end()
    return steps


def jsonpath_value(obj: Any, path: str) -> Any:
    """The first value ``path`` finds in ``obj`` (None when missing)."""
    steps = _parse_jsonpath(path)
    if steps is None:
        return None
    cur = obj
    for op, arg in steps:
        if op == "key":
            if not isinstance(cur, dict) or arg not in cur:
                return None
            cur = cur[arg]
        elif op == "index":
            if not isinstance(cur, list) or arg >= len(cur):
                return None
            cur = cur[arg]
        else:
            k, v = arg
            if not isinstance(cur, list):
                return None
            cur = next((e for e in cur if isinstance(e, dict) and str(e.get(k)) == v), None)
            if cur is None:
                return None
    return cur


def printer_columns(cr: CustomResource) -> list[dict[str, Any]]:
    """Table column definitions: Name, then the CRD's columns (Age when none)."""
    cols = [{"name": "Name", "type": "string", "format": "name", "description": _NAME_DESC, "priority": 0}]
    for c in cr.columns or ({"name": "Age", "type": "date", "description": _CREATION_DESC,
                             "jsonPath": ".metadata.creationTimestamp"},):
        cols.append({"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
                     "description": c.get("description") or
                     f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}",
                     "priority": int(c.get("priority") or 0)})
    return cols


def printer_row(cr: CustomResource, obj: dict[str, Any], now: datetime, since: Any) -> list[Any]:
    """One row's cells (``since(timestamp, now)``: the human age of a date)."""
    cells: list[Any] = [_m(obj.get("metadata")).get("name", "")]
    cols = cr.columns or ({"type": "date", "jsonPath": ".metadata.creationTimestamp"},)
    for c in cols:
        v = jsonpath_value(obj, _s(c.get("jsonPath")))
        t = c.get("type")
        if v is None:
            cells.append(None)
        elif t == "string":
            cells.append(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))
        elif t == "integer":
            cells.append(int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None)
        elif t == "number":
            cells.append(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None)
        elif t == "boolean":
            cells.append(v if isinstance(v, bool) else None)
        elif t == "date":
            cells.append(since(v, now) if isinstance(v, str) else None)
        else:
            cells.append(None)
    return cells
