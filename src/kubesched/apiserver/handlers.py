"""The REST handlers of the box: request decoding, responses, get/create/update/patch/delete.

Follows ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers`` (``rest.go`` limitedReadBody,
``create.go``, ``update.go``, ``patch.go`` incl. server-side apply, ``delete.go``,
``get.go``'s request options) over :class:`~kubesched.apiserver.registry.Registry`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from kubesched.api.labels import Selector
from kubesched.apiserver import apply as ssa
from kubesched.apiserver import crd as crdmod
from kubesched.apiserver import fieldvalidation as fv
from kubesched.apiserver import patch as patchmod
from kubesched.apiserver import protobuf
from kubesched.apiserver import resources as res
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.eventsconv import events_to_core
from kubesched.apiserver.registry import Registry, now_rfc3339
from kubesched.apiserver.resources import ResourceInfo
from kubesched.apiserver.selectors import (
    FieldSelector,
    SelectorParseError,
    parse_field_selector,
    parse_label_selector,
)
from kubesched.apiserver.storage import Entry

__all__ = ["JSON_MEDIA_TYPE", "MAX_REQUEST_BODY_BYTES", "Handlers", "Route", "check_resource_version_type", "dry_run",
           "json_response", "matcher"]

JSON_MEDIA_TYPE = "application/json"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    return web.Response(body=data, status=status, content_type=JSON_MEDIA_TYPE, headers=headers)


def matcher(lsel: Selector, fsel: FieldSelector) -> Callable[[Entry], bool] | None:
    if lsel.is_empty and fsel.empty:
        return None
    if fsel.empty:
        return lambda e: lsel.matches(e.labels)
    if lsel.is_empty:
        return lambda e: fsel.matches(e.fields)
    return lambda e: lsel.matches(e.labels) and fsel.matches(e.fields)


#: kube-apiserver's ``MaxRequestBodyBytes`` (``server/config.go``: 3 MiB): a larger write body is
#: answered 413 "Request entity too large: limit is 3145728" (``handlers/rest.go`` limitedReadBody).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


#: request body media types the box decodes (besides protobuf): JSON and YAML, as kube-apiserver's serializers
_BODY_MEDIA_TYPES = frozenset(("application/json", "application/yaml", "application/apply-patch+yaml"))


def _unsupported_body(media: str) -> dict[str, Any]:
    """``errors.NewUnsupportedMediaType`` for a write body of an unknown format."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the body of the request was in an unknown format - accepted media types include: "
                       "application/json, application/yaml, application/vnd.kubernetes.protobuf",
            "reason": "UnsupportedMediaType", "details": {}, "code": 415}


def _decode_yaml_body(raw: bytes, json_error: Exception) -> Any:
    """A YAML request body, with the API server's limits: a "billion laughs" document is refused
    before it is expanded (go-yaml's alias limit: 400 ``... yaml: document contains excessive
    aliasing``), and nesting too deep for the decoder is a 400, not a 500."""
    import yaml

    from kubesched.api.yamllimits import EXCESSIVE_ALIASING, excessive_aliasing

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        loader = loader_cls(raw)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if excessive_aliasing(node):
                raise APIError.bad_request(f"the object provided is unrecognized (must be of type JSON or YAML): "
                                           f"error converting YAML to JSON: {EXCESSIVE_ALIASING}")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError):
        raise APIError.bad_request(f"the object provided is unrecognized (must be of type "
                                   f"JSON or YAML): {json_error}") from None


def dry_run(request: web.Request, options_kind: str) -> bool:
    """``dryRun`` of a write (``All``, or absent); any other value is the options' validation error
    (metav1 ``ValidateDryRun``: 422 ``CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported
    value: ["Bogus"]: supported values: "All"``, the value as JSON as field.Error renders it), before
    anything is written."""
    values = request.query.getall("dryRun", [])
    if any(v != "All" for v in values):
        shown = json.dumps(values, separators=(",", ":"), ensure_ascii=False)
        msg = f'dryRun: Unsupported value: {shown}: supported values: "All"'
        raise APIError.invalid(options_kind, "meta.k8s.io", "", [("FieldValueNotSupported", "dryRun", msg)])
    return bool(values)


def _resource_version_type_error(obj: Any) -> str | None:
    """The JSON decoder's error for a ``metadata.resourceVersion`` that is not a string, or None."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    rv = md.get("resourceVersion") if isinstance(md, dict) else None
    if rv is None or isinstance(rv, str):
        return None
    kind = "bool" if isinstance(rv, bool) else "number" if isinstance(rv, (int, float)) else \
        "array" if isinstance(rv, list) else "object"
    return f"json: cannot unmarshal {kind} into Go struct field ObjectMeta.metadata.resourceVersion of type string"


def check_resource_version_type(info: ResourceInfo | tuple[str, str], obj: dict[str, Any]) -> None:
    """The decoder's 400 for a ``metadata.resourceVersion`` that is not a string, before the server
    uses the field (create resets it, update compares it) or writes anything. ``info``: the
    served resource, or (kind, version) of a subresource's body (Binding, Eviction)."""
    err = _resource_version_type_error(obj)
    if err is not None:
        kind, version = info if isinstance(info, tuple) else (info.kind, info.version)
        raise APIError.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}')


class Route:
    __slots__ = ("info", "name", "ns", "sub")

    def __init__(self, info: ResourceInfo, ns: str | None, name: str | None, sub: str) -> None:
        self.info = info
        self.ns = ns
        self.name = name
        self.sub = sub


class Handlers(Registry):
    """The REST verbs over the registry: GET of one object, POST, PUT, PATCH (JSON, merge,
    strategic merge, apply), DELETE and DELETE of a collection; request bodies (JSON, YAML,
    protobuf; 415 for other media types), ``dryRun``, ``fieldValidation``, ``as=Table`` answers.
    Every error is :class:`~kubesched.apiserver.errors.APIError`, answered as its ``Status``."""

    def _get_entry(self, r: Route) -> Entry:
        assert r.name is not None
        entry = self.store.get(r.info.key, self._space_ns(r.info, r.ns), r.name)
        if entry is None:
            raise APIError.not_found(r.info.plural, r.info.group, r.name)
        return entry

    def _object_response(self, request: web.Request, info: ResourceInfo, data: bytes,
                         status: int = 200) -> web.Response:
        if self._wants_table(request):
            table = self._table(request, info, [orjson.loads(self._out(info, data))], None)
            if table is not None:
                return json_response(table, status)
        return json_response(self._out(info, data), status)

    @staticmethod
    def _wants_table(request: web.Request) -> bool:
        acc = request.headers.get("Accept", "")
        return "as=Table" in acc

    def _table(self, request: web.Request, info: ResourceInfo, items: list[dict[str, Any]],
               meta: dict[str, Any] | None) -> dict[str, Any] | None:
        from kubesched.apiserver import tables  # loaded at the first table asked for (kubectl get)

        include = request.query.get("includeObject", "Metadata")
        if info.group == "events.k8s.io":  # the printer reads the core/v1 fields
            items = [events_to_core(i) for i in items]
        printer = None
        cr = self.crds.of_info(info)
        if cr is not None:  # additionalPrinterColumns
            printer = (crdmod.printer_columns(cr),
                       lambda o, now, cr=cr: crdmod.printer_row(cr, dict(o), now, tables.since))
        try:
            table: dict[str, Any] = tables.to_table(info.plural, items, now=datetime.now(UTC),
                                                     include_object=include, list_meta=meta, printer=printer)
        except ValueError as e:
            raise APIError.bad_request(str(e)) from None
        return table

    async def _read_body(self, request: web.Request) -> dict[str, Any]:
        ctype = request.headers.get("Content-Type", "")
        raw = await request.read()
        media = ctype.split(";", 1)[0].strip().lower()
        if media and media not in _BODY_MEDIA_TYPES and not media.startswith(protobuf.MEDIA_TYPE):
            # negotiation.NegotiateInputSerializer: an unknown body format is 415 (an empty type is read as JSON)
            raise APIError(_unsupported_body(media))
        if ctype.startswith(protobuf.MEDIA_TYPE):
            # kubectl's typed generators (create namespace|deployment|…, run, expose)
            try:
                return protobuf.decode_object(raw)
            except protobuf.ProtobufError as e:
                raise APIError.bad_request(str(e)) from None
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            ctype = request.headers.get("Content-Type", "")
            if "yaml" in ctype:
                obj = _decode_yaml_body(raw, e)
            else:
                raise APIError.bad_request(f"the object provided is unrecognized: {e}") from None
        if not isinstance(obj, dict):
            raise APIError.bad_request("the object provided is unrecognized: not an object")
        return obj

    def _field_validation(self, request: web.Request, info: ResourceInfo, obj: Any, *,
                          patch_ctype: str | None = None, patch_body: bytes = b"") -> None:
        """``fieldValidation`` (Strict | Warn | Ignore; server default Warn) on a decoded body or
        a patched result (upstream ``handlers/create.go``, ``patch.go``)."""
        directive = request.query.get("fieldValidation", "Warn") or "Warn"
        if directive not in fv.VALIDATION_DIRECTIVES:
            raise APIError.bad_request(f'fieldValidation: Unsupported value: "{directive}": supported values: '
                                       f'"Ignore", "Strict", "Warn"')
        if directive == "Ignore":
            return
        cr = self.crds.of_info(info)
        if cr is not None:  # the fields pruning drops (customresource_handler.go unstructuredSchemaCoercer)
            unknown = crdmod.unknown_fields(cr, obj if isinstance(obj, dict) else {})
            if not unknown:
                return
            if directive == "Strict":
                raise APIError.bad_request(f'{info.kind} in version "{info.version}" cannot be handled as a '
                                           f'{info.kind}: strict decoding error: '
                                           + ", ".join(crdmod.unknown_field_messages(unknown)))
            request["warnings"] = fv.warning_headers(crdmod.unknown_field_messages(unknown))
            return
        msgs = fv.unknown_fields((info.group, info.version, info.kind), obj, self.api_version)
        if not msgs:
            return
        if directive == "Strict":
            if patch_ctype is not None:
                raise APIError(fv.patch_strict_status(patch_ctype, patch_body, obj, msgs))
            raise APIError.bad_request(fv.decode_error_message(info.kind, info.version, msgs))
        request["warnings"] = fv.warning_headers(msgs)

    def _parse_selectors(self, request: web.Request, info: ResourceInfo) -> tuple[Selector, FieldSelector]:
        q = request.query
        try:
            lsel = parse_label_selector(q.get("labelSelector", ""))
            fsel = parse_field_selector(q.get("fieldSelector", ""))
        except SelectorParseError as e:
            raise APIError.bad_request(str(e)) from None
        allowed = info.field_names if info.group != "events.k8s.io" else res.find("", "v1", "events").field_names  # type: ignore[union-attr]
        for name in fsel.names():
            if name not in allowed:
                raise APIError.bad_request(f'field label not supported: {name}')
        return lsel, fsel

    @staticmethod
    def _parse_rv(value: str | None) -> int | None:
        if value is None or value == "":
            return None
        try:
            rv = int(value)
        except ValueError:
            raise APIError.bad_request(f'resourceVersion: Invalid value: "{value}": must be a valid '
                                       f'resource version') from None
        if rv < 0:
            raise APIError.bad_request(f'resourceVersion: Invalid value: "{value}": must be a valid resource version')
        return rv

    async def _create(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        self.write_fault(info, "", "create")
        dry = dry_run(request, "CreateOptions")
        obj = await self._read_body(request)
        check_resource_version_type(info, obj)
        self._field_validation(request, info, obj)
        entry = self.create_object(info, r.ns or "", obj, dry_run=dry, manager=self._field_manager(request))
        return self._object_response(request, info, entry.data, 201)

    async def _put(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self.write_fault(info, r.sub, "update")
        obj = await self._read_body(request)
        check_resource_version_type(info, obj)
        self._field_validation(request, info, obj)
        self._check_type(info, obj)
        entry = self._get_entry(r)
        md = obj.get("metadata") or {}
        rv_s = md.get("resourceVersion")
        if not rv_s and info.kind not in ("Namespace",):
            # upstream: unconditional updates are allowed for most kinds (AllowUnconditionalUpdate)
            precondition = None
        else:
            precondition = self._parse_rv(rv_s) if rv_s else None
        ns = self._space_ns(info, r.ns)
        if info.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise APIError.bad_request("the namespace of the provided object does not match the namespace sent "
                                       "on the request")
        dry = dry_run(request, "UpdateOptions")
        new_entry = self.commit_update(info, ns, r.name, obj, entry, r.sub, precondition, dry,
                                        manager=self._field_manager(request))
        return self._object_response(request, info, new_entry.data)

    async def _patch(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self.write_fault(info, r.sub, "patch")
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
        body = await request.read()
        if ctype == "application/apply-patch+yaml":
            return self._server_side_apply(request, r, body)
        entry = self._get_entry(r)
        original = orjson.loads(self._out(info, entry.data))
        patched = self._apply_patch(info, ctype, original, body)
        if not isinstance(patched, dict):
            raise APIError.bad_request("the patch produced a non-object")
        rv_err = _resource_version_type_error(patched)
        if rv_err is not None:  # patch.go: the patched JSON does not decode into the object
            shown = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()
            msg = f"patch: Invalid value: {json.dumps(shown, ensure_ascii=False)}: {rv_err}"
            raise APIError.invalid("", "", "", [("FieldValueInvalid", "patch", msg)])
        self._field_validation(request, info, patched, patch_ctype=ctype, patch_body=body)
        md = patched.get("metadata") if isinstance(patched.get("metadata"), dict) else {}
        rv_s = md.get("resourceVersion") if md else None
        precondition = None
        if rv_s and rv_s != str(entry.rv):
            orig_md = original.get("metadata") or {}
            if rv_s != orig_md.get("resourceVersion"):
                precondition = self._parse_rv(rv_s)
        if info.kind and patched.get("kind", info.kind) != info.kind:
            raise APIError.bad_request(f"the kind in the data ({patched.get('kind')}) does not match the expected "
                                       f"kind ({info.kind})")
        dry = dry_run(request, "PatchOptions")
        ns = self._space_ns(info, r.ns)
        new_entry = self.commit_update(info, ns, r.name, patched, entry, r.sub, precondition, dry,
                                        manager=self._field_manager(request))
        return self._object_response(request, info, new_entry.data)

    def _apply_patch(self, info: ResourceInfo, ctype: str, original: dict[str, Any], body: bytes) -> Any:
        try:
            return patchmod.apply_patch(ctype, original, body, gvk=(info.group, info.version, info.kind))
        except patchmod.PatchError as e:
            raise APIError(e.status) from None

    @staticmethod
    def _field_manager(request: web.Request) -> str:
        """``fieldManager``, else the User-Agent's prefix (``prefixFromUserAgent``)."""
        return request.query.get("fieldManager") or ssa.manager_from_user_agent(request.headers.get("User-Agent", ""))

    def _server_side_apply(self, request: web.Request, r: Route, body: bytes) -> web.Response:
        """PATCH ``application/apply-patch+yaml`` (``handlers/patch.go`` applyPatcher): create when
        absent, else merge with conflicts unless ``force=true`` (:mod:`kubesched.apiserver.apply`)."""
        info = r.info
        assert r.name is not None
        q = request.query
        manager = q.get("fieldManager") or ""
        if not manager:
            raise APIError.invalid("PatchOptions", "meta.k8s.io", "", [(
                "FieldValueRequired", "fieldManager", "fieldManager: Required value: is required for apply patch")])
        force = q.get("force") in ("true", "1", "True")
        try:
            applied = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            applied = _decode_yaml_body(body, e)
        if not isinstance(applied, dict):
            raise APIError.bad_request("the object provided is unrecognized: not an object")
        self._check_type(info, applied)
        amd_raw = applied.get("metadata")
        amd: dict[str, Any] = amd_raw if isinstance(amd_raw, dict) else {}
        if amd.get("name") is not None and amd.get("name") != r.name:
            raise APIError.bad_request(f"the name of the object ({amd.get('name')}) does not match the name on the "
                                       f"URL ({r.name})")
        if amd.get("managedFields"):
            raise APIError.bad_request("metadata.managedFields must be nil")
        self._field_validation(request, info, applied)
        ns = self._space_ns(info, r.ns)
        schema, resolve = self._ssa_schema(info)
        entry = self.store.get(info.key, ns, r.name)
        strip_status = r.sub == "" and "status" in info.subresources
        live = entry.obj() if entry is not None else None
        try:
            new = ssa.apply(live, applied, schema, resolve, manager=manager, force=force,
                            api_version=info.api_version, now=now_rfc3339(), strip_status=strip_status,
                            subresource=r.sub)
        except ssa.ApplyConflict as e:
            raise APIError(e.status(info.plural, info.group, r.name)) from None
        dry = dry_run(request, "PatchOptions")
        if entry is None:
            if r.sub:
                raise APIError.not_found(info.plural, info.group, r.name)
            new.setdefault("metadata", {})["name"] = r.name
            created = self.create_object(info, r.ns or "", new, dry_run=dry)
            return self._object_response(request, info, created.data, 201)
        new_entry = self.commit_update(info, ns, r.name, new, entry, r.sub, None, dry)
        return self._object_response(request, info, new_entry.data)

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        opts: dict[str, Any] = {}
        if raw.strip() and request.headers.get("Content-Type", "").startswith(protobuf.MEDIA_TYPE):
            # client-go's typed clients send DeleteOptions as protobuf (e.g. helm purging its
            # release Secrets on uninstall)
            try:
                opts = protobuf.decode_object(raw)
            except protobuf.ProtobufError as e:
                raise APIError.bad_request(str(e)) from None
        elif raw.strip():
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise APIError.bad_request(f"the object provided is unrecognized: {e}") from None
            if isinstance(o, dict):
                opts = o
        q = request.query
        if "gracePeriodSeconds" in q:
            try:
                opts["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
            except ValueError:
                raise APIError.bad_request("invalid gracePeriodSeconds") from None
        if "propagationPolicy" in q:
            opts["propagationPolicy"] = q["propagationPolicy"]
        policy = opts.get("propagationPolicy")
        if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
            # metav1 validation.ValidateDeleteOptions
            msg = (f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", '
                   '"Background", "Orphan", "nil"')
            raise APIError.invalid("DeleteOptions", "meta.k8s.io", "", [("FieldValueNotSupported",
                                                                          "propagationPolicy", msg)])
        return opts

    async def _delete(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self.write_fault(info, "", "delete")
        opts = await self._delete_options(request)
        entry = self._get_entry(r)
        ns = self._space_ns(info, r.ns)
        if dry_run(request, "DeleteOptions"):
            return self._object_response(request, info, entry.data)
        out = self.delete_object(info, ns, r.name, opts, entry)
        return self._object_response(request, info, out.data)

    async def _delete_collection(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        self.write_fault(info, "", "delete")
        opts = await self._delete_options(request)
        dry = dry_run(request, "DeleteOptions")
        lsel, fsel = self._parse_selectors(request, info)
        match = matcher(lsel, fsel)
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        out = []
        for e in self.store.list(info.key, ns):
            if match is not None and not match(e):
                continue
            o = orjson.loads(e.data)["metadata"]
            if dry:
                out.append(self._out(info, e.data))
                continue
            try:
                d = self.delete_object(info, o.get("namespace", "") if info.namespaced else "", o["name"], opts, e)
                out.append(self._out(info, d.data))
            except APIError:
                continue
        head = orjson.dumps({"kind": f"{info.kind}List", "apiVersion": info.api_version,
                             "metadata": {"resourceVersion": str(self.store.current_rev)}})
        return web.Response(body=head[:-1] + b',"items":[' + b",".join(out) + b"]}", content_type=JSON_MEDIA_TYPE)
