"""OpenAPI documents for the served kinds, built from upstream's definitions of the emulated
release (v1.34 … v1.37; ``api=(major, minor)`` on every function, None = 1.37).

* ``v3_index(base_url)`` — ``GET /openapi/v3``: ``{"paths": {"api/v1": {"serverRelativeURL":
  "/openapi/v3/api/v1?hash=<sha512>"}, "apis/apps/v1": {...}, ...}}``.
* ``v3_group_version(group, version)`` — ``GET /openapi/v3/api/v1`` (or ``apis/<g>/<v>``): an
  OpenAPI 3.0 document with ``components.schemas`` (the served kinds, their lists and every
  definition they reference) and ``paths`` for each kind: list/create on the collection,
  get/replace/patch/delete on the item (and ``/status``). Every PATCH operation carries
  ``x-kubernetes-group-version-kind`` and the ``dryRun``, ``fieldManager``,
  ``fieldValidation`` and ``force`` query parameters — what kubectl 1.32 checks
  (``staging/src/k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go``) before it sends
  ``fieldValidation=Strict`` for its default ``--validate=strict``.
* ``v2_document()`` — ``GET /openapi/v2``: Swagger 2.0 with the same definitions (each
  top-level kind with ``x-kubernetes-group-version-kind``) and paths. kubectl asks for v2 as
  protobuf and ignores a JSON answer; it serves other clients.

PATCH request bodies advertise ``application/json-patch+json``,
``application/merge-patch+json``, ``application/strategic-merge-patch+json`` (not for custom
resources, as upstream) and ``application/apply-patch+yaml`` (server-side apply,
:mod:`kubesched.apiserver.apply`).
Advertising strategic merge patch is deliberate: kubectl apply then computes its three-way
patch from these v3 schemas, exactly as against kube-apiserver, and the server applies it
with the same merge keys and strategies (:mod:`kubesched.apiserver.patch` is driven by the
same definitions), so client and server agree by construction and kubectl's own compiled-in
types are not needed.

The definitions come from ``kubernetes-validate``'s JSON-Schema conversion of the release's
OpenAPI spec (:mod:`kubesched.api.schemas`) and are mapped back: ``$ref``s point into
``#/definitions`` (v2) or ``#/components/schemas`` (v3), nullable type lists become one type,
``Quantity`` is a string and ``IntOrString`` a string of format ``int-or-string``, and the
``enum`` the conversion adds to ``apiVersion``/``kind`` is dropped. Documents are built once
per set of served kinds and cached as bytes.

``served`` (all functions): an iterable of ``(group, version, kind, plural, namespaced)``;
``None`` means :data:`DEFAULT_SERVED` (the resources of the box).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import orjson

from kubesched.api import schemas

Version = tuple[int, int]

__all__ = [
    "DEFAULT_SERVED",
    "V2_PROTOBUF_CONTENT_TYPE",
    "V2_PROTOBUF_MEDIA_TYPE",
    "Served",
    "gv_path",
    "v2_document",
    "v2_protobuf",
    "v3_group_version",
    "v3_index",
]

#: What kubectl asks ``/openapi/v2`` for (client-go discovery ``OpenAPISchema``) ...
V2_PROTOBUF_MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: ... and the ``Content-Type`` kube-openapi answers it with (``@`` is not valid in a media
#: type; Go's ``mime.ParseMediaType`` in client-go rejects it).
V2_PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

Served = tuple[str, str, str, str, bool]

#: (group, version, kind, plural, namespaced) of the resources the box serves.
DEFAULT_SERVED: tuple[Served, ...] = (
    ("", "v1", "Namespace", "namespaces", False),
    ("", "v1", "Node", "nodes", False),
    ("", "v1", "Pod", "pods", True),
    ("", "v1", "Service", "services", True),
    ("", "v1", "Endpoints", "endpoints", True),
    ("", "v1", "ConfigMap", "configmaps", True),
    ("", "v1", "Secret", "secrets", True),
    ("", "v1", "Event", "events", True),
    ("", "v1", "PersistentVolume", "persistentvolumes", False),
    ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True),
    ("", "v1", "ReplicationController", "replicationcontrollers", True),
    ("", "v1", "ServiceAccount", "serviceaccounts", True),
    ("apps", "v1", "Deployment", "deployments", True),
    ("apps", "v1", "ReplicaSet", "replicasets", True),
    ("apps", "v1", "StatefulSet", "statefulsets", True),
    ("apps", "v1", "DaemonSet", "daemonsets", True),
    ("batch", "v1", "Job", "jobs", True),
    ("batch", "v1", "CronJob", "cronjobs", True),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False),
    ("storage.k8s.io", "v1", "StorageClass", "storageclasses", False),
    ("storage.k8s.io", "v1", "CSINode", "csinodes", False),
    ("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    ("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False),
    ("coordination.k8s.io", "v1", "Lease", "leases", True),
    ("events.k8s.io", "v1", "Event", "events", True),
    ("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    ("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False),
    ("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False),
)

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_EXTRA_DEFS = (
    _META + "Status", _META + "DeleteOptions", _META + "Patch", _META + "WatchEvent", _META + "APIResourceList"
)
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
                "application/apply-patch+yaml")
_CUSTOM_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
_STATUS_SUBRESOURCE = {"Pod", "Node", "Namespace", "Service", "PersistentVolume", "PersistentVolumeClaim",
                       "ReplicationController", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
                       "CronJob", "PodDisruptionBudget", "ResourceClaim", "VolumeAttachment"}


def gv_path(group: str, version: str) -> str:
    """``api/v1`` for the core group, ``apis/<group>/<version>`` otherwise."""
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _normalize(served: Iterable[Served] | None) -> tuple[Served, ...]:
    return tuple(sorted(set(DEFAULT_SERVED if served is None else served)))


# ---- schema conversion ------------------------------------------------------------------------


def _convert(schema: Any, prefix: str, *, top: bool = False) -> Any:
    if isinstance(schema, list):
        return [_convert(s, prefix) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("$schema", "$id"):
            continue
        if key == "$ref" and isinstance(value, str):
            out["$ref"] = prefix + value.split("/")[-1]
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if types:
                out["type"] = types[0]
        elif key == "properties" and isinstance(value, dict):
            props = {}
            for name, sub in value.items():
                conv = _convert(sub, prefix)
                if top and name in ("apiVersion", "kind") and isinstance(conv, dict):
                    conv.pop("enum", None)
                props[name] = conv
            out["properties"] = props
        elif isinstance(value, (dict, list)):
            out[key] = _convert(value, prefix)
        else:
            out[key] = value
    return out


def _definition(name: str, prefix: str, api: Version | None = None) -> dict[str, Any]:
    raw = schemas.definitions(api)[name]
    if name == _QUANTITY:
        return {"description": raw.get("description", ""), "type": "string"}
    if name == _INT_OR_STRING:
        return {"description": raw.get("description", ""), "type": "string", "format": "int-or-string"}
    conv = _convert(raw, prefix, top=True)
    assert isinstance(conv, dict)
    return conv


def _refs(schema: Any, into: set[str]) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            into.add(ref[len("#/$defs/") :])
        for v in schema.values():
            _refs(v, into)
    elif isinstance(schema, list):
        for v in schema:
            _refs(v, into)


def _closure(roots: Iterable[str], api: Version | None = None) -> list[str]:
    defs = schemas.definitions(api)
    todo = [r for r in roots if r in defs]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(defs[name], found)
        todo.extend(found - seen)
    return sorted(seen)


def _kind_defs(served: Iterable[Served], api: Version | None = None) -> list[str]:
    roots: list[str] = list(_EXTRA_DEFS)
    for group, version, kind, _plural, _ns in served:
        for k in (kind, kind + "List"):
            name = schemas.definition_for_gvk(group, version, k, api=api)
            if name:
                roots.append(name)
    return _closure(roots, api)


# ---- paths -----------------------------------------------------------------------------------------


def _op_id(verb: str, group: str, version: str, kind: str, namespaced: bool, suffix: str = "") -> str:
    g = "".join(p.capitalize() for p in (group.split(".")[0] if group else "core").split("-"))
    return f"{verb}{g}{version.capitalize()}{'Namespaced' if namespaced else ''}{kind}{suffix}"


def _query(name: str, description: str, type_: str = "string", *, v3: bool) -> dict[str, Any]:
    if v3:
        return {"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": True}}
    return {"name": name, "in": "query", "description": description, "type": type_, "uniqueItems": True}


_DRY_RUN = "When present, indicates that modifications should not be persisted."
_FIELD_MANAGER = "fieldManager is a name associated with the actor or entity that is making these changes."
_FIELD_VALIDATION = (
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown "
    "or duplicate fields. Valid values are: - Ignore - Warn - Strict"
)
_FORCE = (
    "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by "
    "other people."
)


def _write_params(*, v3: bool, force: bool = False) -> list[dict[str, Any]]:
    params = [
        _query("dryRun", _DRY_RUN, v3=v3),
        _query("fieldManager", _FIELD_MANAGER, v3=v3),
        _query("fieldValidation", _FIELD_VALIDATION, v3=v3),
    ]
    if force:
        params.append(_query("force", _FORCE, "boolean", v3=v3))
    return params


def _response(ref: str, *, v3: bool) -> dict[str, Any]:
    if v3:
        return {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}}
    return {"description": "OK", "schema": {"$ref": ref}}


def _operation(verb: str, action: str, gvk: dict[str, str], op_id: str, ref: str, *, v3: bool,
               params: list[dict[str, Any]] | None = None, body: str | None = None,
               body_types: Iterable[str] = ("application/json",)) -> dict[str, Any]:
    op: dict[str, Any] = {
        "description": f"{verb} the specified {gvk['kind']}",
        "operationId": op_id,
        "responses": {"200": _response(ref, v3=v3), "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    if params:
        op["parameters"] = params
    if body is not None:
        if v3:
            op["requestBody"] = {"content": {t: {"schema": {"$ref": body}} for t in body_types}, "required": True}
        else:
            op.setdefault("parameters", []).insert(
                0, {"name": "body", "in": "body", "required": True, "schema": {"$ref": body}}
            )
            op["consumes"] = list(body_types)
    return op


def _path_params(namespaced: bool, item: bool, *, v3: bool) -> list[dict[str, Any]]:
    out = []
    if item:
        p: dict[str, Any] = {"name": "name", "in": "path", "required": True, "description": "name of the resource"}
        out.append(p)
    if namespaced:
        out.append({"name": "namespace", "in": "path", "required": True,
                    "description": "object name and auth scope, such as for teams and projects"})
    for p in out:
        if v3:
            p["schema"] = {"type": "string", "uniqueItems": True}
        else:
            p["type"] = "string"
            p["uniqueItems"] = True
    out.append(_query("pretty", "If 'true', then the output is pretty printed.", v3=v3))
    return out


def _paths(served: Iterable[Served], prefix: str, *, v3: bool, api: Version | None = None) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for group, version, kind, plural, namespaced in served:
        name = schemas.definition_for_gvk(group, version, kind, api=api)
        if name is None:
            continue
        list_name = schemas.definition_for_gvk(group, version, kind + "List", api=api)
        paths.update(_kind_paths(group, version, kind, plural, namespaced, prefix, prefix + name,
                                 prefix + list_name if list_name else None, kind in _STATUS_SUBRESOURCE, v3=v3))
    return paths


def _kind_paths(group: str, version: str, kind: str, plural: str, namespaced: bool, prefix: str, ref: str,
                list_ref: str | None, status: bool, *, v3: bool,
                patch_types: Iterable[str] = _PATCH_TYPES) -> dict[str, Any]:
    """The collection, item (and ``/status``) paths of one kind."""
    paths: dict[str, Any] = {}
    gvk = {"group": group, "version": version, "kind": kind}
    base = "/" + gv_path(group, version)
    coll = f"{base}/namespaces/{{namespace}}/{plural}" if namespaced else f"{base}/{plural}"
    item = coll + "/{name}"
    coll_ops: dict[str, Any] = {
        "post": _operation("create", "post", gvk, _op_id("create", group, version, kind, namespaced), ref, v3=v3,
                           params=_write_params(v3=v3), body=ref),
        "parameters": _path_params(namespaced, False, v3=v3),
    }
    if list_ref:
        coll_ops["get"] = _operation("list", "list", gvk, _op_id("list", group, version, kind, namespaced),
                                     list_ref, v3=v3)
    paths[coll] = coll_ops
    if namespaced and list_ref:
        paths[f"{base}/{plural}"] = {
            "get": _operation("list", "list", gvk, _op_id("list", group, version, kind, False, "ForAllNamespaces"),
                              list_ref, v3=v3),
            "parameters": [_query("pretty", "If 'true', then the output is pretty printed.", v3=v3)],
        }
    item_ops = {
        "get": _operation("read", "get", gvk, _op_id("read", group, version, kind, namespaced), ref, v3=v3),
        "put": _operation("replace", "put", gvk, _op_id("replace", group, version, kind, namespaced), ref, v3=v3,
                          params=_write_params(v3=v3), body=ref),
        "patch": _operation("partially update", "patch", gvk, _op_id("patch", group, version, kind, namespaced),
                            ref, v3=v3, params=_write_params(v3=v3, force=True), body=prefix + _META + "Patch",
                            body_types=patch_types),
        "delete": _operation("delete", "delete", gvk, _op_id("delete", group, version, kind, namespaced),
                             prefix + _META + "Status", v3=v3, params=[_query("dryRun", _DRY_RUN, v3=v3)],
                             body=prefix + _META + "DeleteOptions"),
        "parameters": _path_params(namespaced, True, v3=v3),
    }
    paths[item] = item_ops
    if status:
        paths[item + "/status"] = {
            "get": _operation("read status of", "get", gvk,
                              _op_id("read", group, version, kind, namespaced, "Status"), ref, v3=v3),
            "put": _operation("replace status of", "put", gvk,
                              _op_id("replace", group, version, kind, namespaced, "Status"), ref,
                              v3=v3, params=_write_params(v3=v3), body=ref),
            "patch": _operation("partially update status of", "patch", gvk,
                                _op_id("patch", group, version, kind, namespaced, "Status"),
                                ref, v3=v3, params=_write_params(v3=v3, force=True), body=prefix + _META + "Patch",
                                body_types=patch_types),
            "parameters": _path_params(namespaced, True, v3=v3),
        }
    return paths


# ---- documents -----------------------------------------------------------------------------------


def _release(api: Version | None) -> str:
    """``info.version`` of the documents: the release, ``v1.37.0``."""
    major, minor = api if api is not None else schemas.DEFAULT_VERSION
    return f"v{major}.{minor}.0"


@lru_cache(maxsize=8)
def _v2(served: tuple[Served, ...], api: Version | None = None) -> bytes:
    prefix = "#/definitions/"
    doc = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": _release(api)},
        "paths": _paths(served, prefix, v3=False, api=api),
        "definitions": {name: _definition(name, prefix, api) for name in _kind_defs(served, api)},
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    }
    return orjson.dumps(doc)


def v2_document(served: Iterable[Served] | None = None, api: Version | None = None) -> bytes:
    """The Swagger 2.0 document (JSON bytes) for the served kinds."""
    return _v2(_normalize(served), api)


def _pb_string(field: int, text: str) -> bytes:
    data = text.encode()
    return bytes([field << 3 | 2, len(data)]) + data


def v2_protobuf(api: Version | None = None) -> bytes:
    """``/openapi/v2`` for ``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
    (:data:`V2_PROTOBUF_MEDIA_TYPE`; answer with ``Content-Type`` :data:`V2_PROTOBUF_CONTENT_TYPE`):
    a gnostic ``openapi_v2.Document`` with only ``swagger`` and ``info`` set, no definitions.

    kubectl reads v2 only as protobuf, and only for client-side validation of a kind whose
    v3 document does not advertise ``fieldValidation`` — that is, a kind this server does not
    serve. Such a kind is not in upstream's v2 document either, so kubectl skips its schema
    check ("resource is not present, let's just skip validation") and then reports ``no
    matches for kind "X" in version "Y"``; this document gives the same outcome. A JSON body
    instead would fail kubectl's protobuf parse ("error validating data: proto: cannot parse
    invalid wire-format data").
    """
    info = _pb_string(1, "Kubernetes") + _pb_string(2, _release(api))
    return _pb_string(1, "2.0") + bytes([2 << 3 | 2, len(info)]) + info


@lru_cache(maxsize=64)
def _v3(served: tuple[Served, ...], group: str, version: str, api: Version | None = None) -> bytes | None:
    mine = tuple(s for s in served if s[0] == group and s[1] == version)
    if not mine:
        return None
    prefix = "#/components/schemas/"
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": _release(api)},
        "paths": _paths(mine, prefix, v3=True, api=api),
        "components": {
            "schemas": {name: _definition(name, prefix, api) for name in _kind_defs(mine, api)},
            "securitySchemes": {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                                                "name": "authorization", "in": "header"}},
        },
        "security": [{"BearerToken": []}],
    }
    return orjson.dumps(doc)


def v3_group_version(group: str, version: str, served: Iterable[Served] | None = None,
                     api: Version | None = None) -> bytes | None:
    """The OpenAPI v3 document (JSON bytes) of one group-version, or None when not served."""
    return _v3(_normalize(served), group, version, api)


#: a custom resource of one group-version: (kind, plural, namespaced, openAPIV3Schema or None, status subresource)
CustomKind = tuple[str, str, bool, "dict[str, Any] | None", bool]


def custom_definition_name(group: str, version: str, kind: str) -> str:
    """Upstream's name of a custom resource's definition: the group reversed (``com.example.v1.Widget``)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def v3_custom(group: str, version: str, kinds: Iterable[CustomKind], api: Version | None = None) -> bytes:
    """The OpenAPI v3 document of a custom resources' group-version (``pkg/controller/openapi/builder``):
    each kind's schema with ``apiVersion``, ``kind``, ``metadata`` (ObjectMeta) and its
    ``x-kubernetes-group-version-kind``, its list, and their paths (what ``kubectl explain`` and
    kubectl's field-validation check read)."""
    prefix = "#/components/schemas/"
    comps: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for kind, plural, namespaced, schema, status in kinds:
        name = custom_definition_name(group, version, kind)
        gvk = [{"group": group, "version": version, "kind": kind}]
        body: dict[str, Any] = dict(schema) if isinstance(schema, dict) else \
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        props = dict(body.get("properties") or {})
        props["apiVersion"] = {"type": "string", "description": _API_VERSION_DESC}
        props["kind"] = {"type": "string", "description": _KIND_DESC}
        props["metadata"] = {"$ref": prefix + _META + "ObjectMeta"}
        body["properties"] = props
        body["x-kubernetes-group-version-kind"] = gvk
        comps[name] = body
        comps[name + "List"] = {
            "type": "object", "required": ["items"], "description": f"{kind}List is a list of {kind}",
            "properties": {"apiVersion": {"type": "string", "description": _API_VERSION_DESC},
                           "items": {"type": "array", "items": {"$ref": prefix + name}},
                           "kind": {"type": "string", "description": _KIND_DESC},
                           "metadata": {"$ref": prefix + _META + "ListMeta"}},
            "x-kubernetes-group-version-kind": [{**gvk[0], "kind": kind + "List"}],
        }
        # no strategic merge patch for custom resources (kubectl apply then sends a JSON merge patch)
        paths.update(_kind_paths(group, version, kind, plural, namespaced, prefix, prefix + name,
                                 prefix + name + "List", status, v3=True, patch_types=_CUSTOM_PATCH_TYPES))
    for dname in _closure([_META + n for n in ("ObjectMeta", "ListMeta", "Status", "Patch", "DeleteOptions")], api):
        comps.setdefault(dname, _definition(dname, prefix, api))
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}, "paths": paths,
           "components": {"schemas": comps}}
    return orjson.dumps(doc)


_API_VERSION_DESC = ("APIVersion defines the versioned schema of this representation of an object. Servers "
                     "should convert recognized schemas to the latest internal value, and may reject unrecognized "
                     "values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
_KIND_DESC = ("Kind is a string value representing the REST resource this object represents. Servers may infer this "
              "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
              "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")


def v3_index(base_url: str = "", served: Iterable[Served] | None = None,
             api: Version | None = None) -> dict[str, Any]:
    """``GET /openapi/v3``. ``serverRelativeURL`` carries the document's hash, which clients
    use as a cache key; ``base_url`` is accepted for symmetry and not needed (URLs are relative)."""
    del base_url
    norm = _normalize(served)
    paths: dict[str, Any] = {}
    for group, version in sorted({(s[0], s[1]) for s in norm}):
        body = _v3(norm, group, version, api)
        if body is None:
            continue
        digest = hashlib.sha512(body).hexdigest().upper()
        gp = gv_path(group, version)
        paths[gp] = {"serverRelativeURL": f"/openapi/v3/{gp}?hash={digest}"}
    return {"paths": paths}
