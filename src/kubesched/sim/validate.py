"""The simulator's input checks: what the API server would have said about each manifest.

``kubesched simulate`` reads objects that never went through an API server. Before scheduling,
every object gets, in order, what ``kubectl apply`` and the kube-apiserver of the emulated
version (``features``, a :class:`~kubesched.features.FeatureGate`; default v1.37) would do to it:

1. **kind** — an ``apiVersion``/``kind`` of a built-in API group that the upstream release does
   not serve is kubectl's ``no matches for kind "Pood" in version "v1"``; kinds of other groups
   (CRDs) pass through unchecked, as do built-in kinds the scheduler never reads beyond step 2.
2. **decoding** — with that release's schemas (:mod:`kubesched.api.schemas`; a v1.37 dump's
   ``spec.schedulingGroup`` is an unknown field at 1.34) and field validation (``--validate``,
   kubectl's default ``strict``): fields the kind does not have are ``Pod in version "v1"
   cannot be handled as a Pod: strict decoding error: unknown field
   "spec.containers[0].imagee"`` (strict), a ``Warning: unknown field ...`` line on stderr and
   the field dropped (warn), or dropped silently (ignore), as the API server stores the object;
   a value of the wrong JSON type is the decoder's ``json: cannot unmarshal ...`` error
   whatever the mode.
3. **defaults the scheduler relies on** (``pkg/apis/core/v1/defaults.go``): a container
   resource with a limit and no request gets the limit as request; then, for a Pod or Node
   that is *created* by applying the manifest (no ``metadata.uid`` — a dumped object was
   stored already and is taken as it is), the registry strategy's create step
   (:mod:`kubesched.api.strategy`; DRA objects too): fields of disabled gates dropped
   (``schedulingGroup`` without GenericWorkload, ``status.declaredFeatures`` without
   NodeDeclaredFeatures, ResourceSlice device taints without DRADeviceTaints, ...) and
   ``matchLabelKeys`` merged into the spread/affinity selectors (``key In (value)``), so the
   pod is the one a real API server stores — a dumped pod carries that merge already and is
   not merged again.
4. **validation** (:mod:`kubesched.api.validation`, the module the box's admission uses):
   ``Pod "x" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must
   be greater than or equal to 0`` — for Pods, Nodes, PriorityClasses, PodDisruptionBudgets,
   Namespaces, Services, workloads, PersistentVolumes, PersistentVolumeClaims, StorageClasses,
   CSINodes, the workload API's Workloads, PodGroups and CompositePodGroups
   (:mod:`kubesched.api.podgroups`: served only with GenericWorkload at 1.37, else ``no matches
   for kind``), and the metadata of every other built-in kind.

Every error is a :class:`~kubesched.errors.ManifestError` located at ``file:line`` of the
offending field (:func:`kubesched.sim.manifests.locate`), so the CLI prints one line and exits 2.

Cost: the checks walk an object two or three times in Python (~100 µs for a dumped pod); Pods
and Nodes of the same shape (replicas, a node pool) are checked once per shape, then only their
names (see ``_fast_key``; for Nodes ``_node_key``, which leaves the per-node addresses, images,
nodeInfo... to the C decode pre-check run on every node); ``benchmarks/dump_load.py`` prints the
figures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from typing import Annotated, Any

import msgspec

from kubesched.api import podgroups, schemas, strategy, validation
from kubesched.errors import ManifestError
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.sim.manifests import RawObject, locate

__all__ = ["FIELD_VALIDATION", "apply_defaults", "field_validation_mode", "validate_inputs"]

#: ``--validate`` values (kubectl's) → the API server's ``fieldValidation`` directive.
FIELD_VALIDATION = {"strict": "Strict", "true": "Strict", "warn": "Warn", "ignore": "Ignore", "false": "Ignore"}

#: Kinds validated in full (others: metadata only).
_FULL = {"Pod", "Node", "PriorityClass", "PodDisruptionBudget", "Namespace", "Service", "Deployment", "ReplicaSet",
         "StatefulSet", "DaemonSet", "ReplicationController", "Job", "CronJob", "PersistentVolume",
         "PersistentVolumeClaim", "StorageClass", "CSINode"}
_GO_FIELD = re.compile(r"Go struct field [A-Za-z0-9_]+\.(\S+) of type")


def field_validation_mode(value: str) -> str:
    """kubectl's ``--validate`` value (``strict``, ``warn``, ``ignore``, ``true``, ``false``) →
    ``Strict``/``Warn``/``Ignore``. Raises ValueError for anything else."""
    try:
        return FIELD_VALIDATION[value.lower()]
    except KeyError:
        raise ValueError(f'invalid - validate option "{value}"; must be one of: strict (or true), '
                         "warn, ignore (or false)") from None


@lru_cache(maxsize=8)
def _builtin_groups(api: tuple[int, int]) -> frozenset[str]:
    return frozenset(g for g, _, _ in schemas.gvks(api))


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def apply_defaults(raw: RawObject) -> None:
    """Defaults the scheduler's reading depends on, written into ``raw.data`` as the API server
    stores them: container (and init container) ``resources.requests`` from ``limits`` for every
    resource with a limit and no request (``SetDefaults_Container`` via
    ``pkg/apis/core/v1/defaults.go``)."""
    if raw.kind != "Pod":
        return
    spec = raw.data.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        for c in containers:
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            limits = res.get("limits")
            if not isinstance(limits, dict) or not limits:
                continue
            requests = res.get("requests")
            if requests is None:
                requests = res["requests"] = {}
            if isinstance(requests, dict):
                for name, q in limits.items():
                    requests.setdefault(name, q)


_VOLATILE_META = frozenset({"name", "uid", "resourceVersion", "creationTimestamp", "selfLink"})
#: of those, the ones whose schema type is a string (creationTimestamp is a Time: any JSON value)
_VOLATILE_STR = ("name", "uid", "resourceVersion", "selfLink")
#: the only fields of a Pod's status the Python checks read (the strategy drops them by gate)
_POD_STATUS_READ = ("nodeAllocatableResourceClaimStatuses", "extendedResourceClaimStatus")
_HOST_LABEL = "kubernetes.io/hostname"


def _fast_key(raw: RawObject) -> bytes | None:
    """For Pods and Nodes (the objects that come by the ten thousand): the object with the
    fields that differ from one replica to the next and that the checks read only through a
    per-value rule (name, uid, resourceVersion, creationTimestamp, ``spec.nodeName``, the
    hostname label's value) taken out, encoded — objects with the same key get the same
    verdict, so only the first of each shape is walked in Python. None: no fast path."""
    data = raw.data
    meta = data.get("metadata")
    if raw.kind not in ("Pod", "Node") or not isinstance(meta, dict):
        return None
    m2 = _meta_key(meta)
    rest = {k: v for k, v in data.items() if k != "metadata"}
    spec = rest.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("nodeName"), str):
        rest["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
        rest[" node"] = True
    status = rest.get("status")
    if raw.kind == "Pod" and isinstance(status, dict):
        # podIP, startTime, conditions, containerStatuses: per pod, never read by the Python
        # checks; :func:`_check_one` decode-checks the status of every pod that takes the fast path
        rest["status"] = {k: status[k] for k in _POD_STATUS_READ if k in status}
        rest[" status"] = True
    try:
        return msgspec.json.encode((raw.api_version, raw.kind, m2, rest))
    except (TypeError, ValueError, OverflowError):
        return None


def _meta_key(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata part of a shape key: without the per-replica fields (``_VOLATILE_META``) and
    the hostname label's value (its presence kept), and whether a ``uid`` is there (a dumped
    object is taken as stored, a new one is prepared for create)."""
    m2 = {k: v for k, v in meta.items() if k not in _VOLATILE_META}
    labels = m2.get("labels")
    if isinstance(labels, dict) and isinstance(labels.get(_HOST_LABEL), str):
        m2["labels"] = {k: v for k, v in labels.items() if k != _HOST_LABEL}
        m2[" host"] = True
    m2[" uid"] = "uid" in meta
    return m2


#: The parts of a Node that its checks read beyond the decode pre-check: ``validate_node`` reads
#: the metadata, ``spec.taints`` and ``status.{capacity,allocatable,declaredFeatures}``; the
#: strategy's create step drops ``spec.podPreemptionPolicy`` / ``status.declaredFeatures`` by gate.
_NODE_SPEC_READ = ("taints", "podPreemptionPolicy")
_NODE_STATUS_READ = ("capacity", "allocatable", "declaredFeatures")


def _node_key(raw: RawObject) -> bytes | None:
    """For Nodes: the key of :func:`_fast_key` restricted to the fields :func:`_check_full`
    reads in Python (see ``_NODE_SPEC_READ``/``_NODE_STATUS_READ``), with everything else —
    addresses, images, nodeInfo, conditions, providerID, podCIDR, which differ from one node
    of a pool to the next — left to the decode pre-check, which :func:`_check_one` then runs
    on every node (in C). None: no fast path."""
    data = raw.data
    meta = data.get("metadata")
    spec = data.get("spec", {})
    status = data.get("status", {})
    if not (isinstance(meta, dict) and isinstance(spec, dict) and isinstance(status, dict)):
        return None
    m2 = _meta_key(meta)
    try:
        return msgspec.json.encode((raw.api_version, m2, [spec.get(k, _ABSENT) for k in _NODE_SPEC_READ],
                                    [status.get(k, _ABSENT) for k in _NODE_STATUS_READ],
                                    sorted(k for k in data if k not in ("metadata", "spec", "status"))))
    except (TypeError, ValueError, OverflowError):
        return None


_ABSENT = " absent"


def _per_value_ok(raw: RawObject) -> bool:
    """The checks :func:`_fast_key` leaves out, all passing (else the full path reports)."""
    data = raw.data
    meta = data["metadata"]
    for k in _VOLATILE_STR:  # left out of the key: their JSON type is checked here
        v = meta.get(k)
        if v is not None and type(v) is not str:
            return False
    name = meta.get("name")
    if not name or validation.is_dns1123_subdomain(name):  # missing or invalid: the full path words it
        return False
    host = (meta.get("labels") or {}).get(_HOST_LABEL)
    if isinstance(host, str) and validation.is_valid_label_value(host):
        return False
    node_name = (data.get("spec") or {}).get("nodeName")
    return not (isinstance(node_name, str) and node_name and validation.is_dns1123_subdomain(node_name))


# ---- a C-speed pre-check of decoding: msgspec types built from the same schemas (per release) -----

_QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_ANY_DEFS = {"io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
             "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", "io.k8s.apimachinery.pkg.runtime.RawExtension",
             "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
             "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"}
#: What resource.ParseQuantity accepts: a signed decimal number and one suffix (binary SI, decimal
#: SI or a decimal exponent). Strings outside it take the slow path, which gives the error.
_QUANTITY_TYPE: Any = Annotated[str, msgspec.Meta(
    pattern=r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")]


_INT32_TYPE: Any = Annotated[int, msgspec.Meta(ge=-(1 << 31), le=(1 << 31) - 1)]
_INT64_TYPE: Any = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class _Recursive(Exception):
    """A definition refers to itself: no fast pre-check for that kind."""


def _msgspec_type(schema: dict[str, Any] | None, building: set[str], api: tuple[int, int]) -> Any:
    """The msgspec type accepting exactly what :func:`schemas.decode_error` and
    :func:`schemas.unknown_field_paths` accept without complaint, or less (every field
    nullable, as the Go decoder takes ``null`` anywhere; objects closed to unknown fields)."""
    if schema is None:
        return Any
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        schema = all_of[0]
    ref = schemas.ref_name(schema)
    if ref is not None:
        if ref == _QUANTITY_DEF:
            return _QUANTITY_TYPE | int | float
        if ref in _ANY_DEFS:
            return Any
        return _struct_for(ref, building, api)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return Any
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t == "array":
        items = schema.get("items")
        return list[_msgspec_type(items, building, api) | None] if isinstance(items, dict) else list[Any]  # type: ignore[misc]
    if t == "object":
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if isinstance(props, dict):
            return _make_struct("Inline", props, building, api)
        if isinstance(extra, dict):
            return dict[str, _msgspec_type(extra, building, api) | None]  # type: ignore[misc]
        return dict[str, Any]
    if t == "string":
        return Any if schema.get("format") == "byte" else str
    if t == "boolean":
        return bool
    if t == "integer":  # the Go type's range (strconv ErrRange beyond it), as schemas.decode_error checks
        return _INT32_TYPE if schema.get("format") == "int32" else _INT64_TYPE
    if t == "number":
        return float
    return Any


_STRUCTS: dict[tuple[tuple[int, int], str], Any] = {}


def _make_struct(name: str, props: dict[str, Any], building: set[str], api: tuple[int, int]) -> Any:
    fields = [(f"f{i}", _msgspec_type(sub, building, api) | None, msgspec.field(name=key, default=None))
              for i, (key, sub) in enumerate(props.items()) if isinstance(sub, dict)]
    return msgspec.defstruct(name.rsplit(".", 1)[-1], fields, forbid_unknown_fields=True)


def _struct_for(ref: str, building: set[str], api: tuple[int, int]) -> Any:
    if (api, ref) in _STRUCTS:
        return _STRUCTS[(api, ref)]
    if ref in building:
        raise _Recursive(ref)
    schema = schemas.definitions(api).get(ref) or {}
    props = schema.get("properties")
    if schema.get("x-kubernetes-preserve-unknown-fields") or not isinstance(props, dict):
        return Any
    building.add(ref)
    try:
        struct = _make_struct(ref, props, building, api)
    finally:
        building.discard(ref)
    _STRUCTS[(api, ref)] = struct
    return struct


@cache
def _decode_type(group: str, version: str, kind: str, api: tuple[int, int]) -> Any:
    """The msgspec type of a built-in kind of release ``api``, or None (unknown kind, or a
    recursive schema)."""
    name = schemas.definition_for_gvk(group, version, kind, api=api)
    if name is None:
        return None
    try:
        return _struct_for(name, set(), api)
    except _Recursive:
        return None


def _decodes_cleanly(gvk: tuple[str, str, str], data: dict[str, Any], api: tuple[int, int]) -> bool:
    """True when ``data`` has no unknown field and no value of the wrong type (checked in C);
    False means "maybe not": the Python walk decides and words the error."""
    return _converts_strictly(data, _decode_type(*gvk, api))


def _converts_strictly(data: Any, t: Any) -> bool:
    """True when ``data`` converts to the msgspec type ``t`` strictly (no unknown field, no wrong
    type); False when it does not or there is no type."""
    if t is None:
        return False
    try:
        msgspec.convert(data, t, strict=True)
    except msgspec.ValidationError:
        return False
    return True


def _pod_errors(data: dict[str, Any], ok_specs: set[bytes],
                opts: validation.PodValidationOptions) -> list[validation.FieldError]:
    """``validate_pod``, with the spec part (most of the work) done once per distinct spec
    (``spec.nodeName`` aside): pods of one ReplicaSet in a dump differ in their metadata and
    status, rarely in their spec. Any error: the full validation, for upstream's order."""
    spec = data.get("spec")
    key = None
    if isinstance(spec, dict) and not validation.validate_object_meta(data.get("metadata"), namespaced=True):
        node_name = spec.get("nodeName")
        rest = {k: v for k, v in spec.items() if k != "nodeName"} if isinstance(node_name, str) else spec
        try:
            key = msgspec.json.encode(rest)
        except (TypeError, ValueError, OverflowError):
            key = None
        if key is not None and key in ok_specs and not (
                isinstance(node_name, str) and node_name and validation.is_dns1123_subdomain(node_name)):
            return []
    errs = validation.validate_pod(data, opts)
    if not errs and key is not None:
        ok_specs.add(key)
    return errs


class _Ctx:
    """What one :func:`validate_inputs` run carries: mode, gates, API release, caches."""

    __slots__ = ("api", "decoded_cleanly", "features", "mode", "ok_nodes", "ok_shapes", "ok_specs", "pod_options",
                 "warn")

    def __init__(self, mode: str, warn: Callable[[str], None], features: FeatureGate) -> None:
        self.mode = mode
        self.warn = warn
        self.features = features
        self.api = features.emulated_version
        self.pod_options = validation.pod_validation_options(features)
        self.ok_shapes: set[bytes] = set()
        self.ok_nodes: set[bytes] = set()
        self.decoded_cleanly = False
        """Whether the last :func:`_check_full` passed the decode pre-check."""
        self.ok_specs: set[bytes] = set()


_PREPARED = frozenset({"Pod", "Node", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass",
                       *podgroups.KINDS})


def _prepare(raw: RawObject, ctx: _Ctx) -> None:
    """Defaults, then the registry strategy's create step for a Pod, Node or DRA object without
    a uid."""
    apply_defaults(raw)
    if raw.kind not in _PREPARED:
        return
    meta = raw.data.get("metadata")
    if isinstance(meta, dict) and "uid" in meta:
        return  # a dumped object: stored already (and merged, if it is a pod)
    if raw.kind in podgroups.KINDS:
        # decoding's defaults, the PodGroupProtection finalizer, the strategy's create step; the
        # Priority admission plugin needs every PriorityClass: simulate's build_store runs it
        podgroups.default_object(raw.data, ctx.features)
        podgroups.add_protection_finalizer(raw.data, ctx.features)
        podgroups.prepare_for_create(raw.data, ctx.features)
        return
    if raw.kind == "Pod":
        strategy.prepare_pod_for_create(raw.data, ctx.features)
    elif raw.kind == "Node":
        strategy.prepare_node(raw.data, None, ctx.features)
    else:
        strategy.drop_disabled_dra_fields(raw.data, None, ctx.features)


def _check_one(raw: RawObject, ctx: _Ctx) -> None:
    if raw.kind == "Node":
        _check_node(raw, ctx)
        return
    key = _fast_key(raw)
    if key is not None and key in ctx.ok_shapes and _per_value_ok(raw) and _status_decodes_cleanly(raw, ctx):
        _prepare(raw, ctx)
        return
    ctx.decoded_cleanly = False
    if _check_full(raw, ctx) and key is not None and (raw.kind != "Pod" or ctx.decoded_cleanly):
        ctx.ok_shapes.add(key)


def _status_decodes_cleanly(raw: RawObject, ctx: _Ctx) -> bool:
    """A Pod's ``status`` (left out of :func:`_fast_key`) passes the decode pre-check."""
    if raw.kind != "Pod":
        return True
    status = raw.data.get("status")
    if not isinstance(status, dict):
        return True  # in the key as it is
    return _converts_strictly(status, _field_type(*_split(raw.api_version), raw.kind, ctx.api, "status"))


@cache
def _field_type(group: str, version: str, kind: str, api: tuple[int, int], name: str) -> Any:
    """The pre-check type of the kind's top-level field ``name``, or None."""
    t = _decode_type(group, version, kind, api)
    if t is None:
        return None
    return next((f.type for f in msgspec.structs.fields(t) if f.encode_name == name), None)


def _node_rest_decodes_cleanly(raw: RawObject, ctx: _Ctx) -> bool:
    """For a Node whose :func:`_node_key` is a passing one and whose per-value fields are fine
    (:func:`_per_value_ok`): the decode pre-check of what the key leaves out — ``spec`` and
    ``status`` without the fields the key holds (``_NODE_SPEC_READ``/``_NODE_STATUS_READ``).
    The rest of the node is in the key (the metadata but its per-replica fields, which
    ``_per_value_ok`` type-checks; the other top-level fields' names, and apiVersion/kind) and
    passed with the node that made the key a passing one, so this is the whole node's verdict
    at a fraction of the work (no labels, no quantity patterns). False: "maybe not"."""
    data = raw.data
    group, version = _split(raw.api_version)
    for name, held in (("spec", _NODE_SPEC_READ), ("status", _NODE_STATUS_READ)):
        part = data.get(name)
        if part is None:
            continue
        rest = {k: v for k, v in part.items() if k not in held}  # a dict: the key is not None
        if rest and not _converts_strictly(rest, _field_type(group, version, "Node", ctx.api, name)):
            return False
    return True


def _check_node(raw: RawObject, ctx: _Ctx) -> None:
    """A Node: the Python checks once per :func:`_node_key`, the decode pre-check on every node
    (the key leaves the per-node fields out, so only a node that decodes cleanly may take the
    fast path, and only one that decoded cleanly makes its key a passing one; on the fast path
    only the part outside the key is decode-checked, :func:`_node_rest_decodes_cleanly`)."""
    key = _node_key(raw)
    if key is not None and key in ctx.ok_nodes and _per_value_ok(raw) and _node_rest_decodes_cleanly(raw, ctx):
        _prepare(raw, ctx)
        return
    gvk = (*_split(raw.api_version), raw.kind)
    clean = key is not None and _decodes_cleanly(gvk, raw.data, ctx.api)
    if clean and key in ctx.ok_nodes and _per_value_ok(raw):
        _prepare(raw, ctx)
        return
    if _check_full(raw, ctx) and clean:
        ctx.ok_nodes.add(key)  # type: ignore[arg-type]  # clean implies a key


def _check_full(raw: RawObject, ctx: _Ctx) -> bool:
    """Raise for the first problem; return False when a warning was given or a field dropped
    (no fast path then)."""
    group, version = _split(raw.api_version)
    gvk = (group, version, raw.kind)
    api, mode = ctx.api, ctx.mode
    served_elsewhere = group == podgroups.GROUP and raw.kind in podgroups.KINDS \
        and podgroups.served_api(raw.kind, ctx.features) != raw.api_version
    if served_elsewhere or schemas.definition_for_gvk(*gvk, api=api) is None:
        if served_elsewhere or group in _builtin_groups(api):
            raise ManifestError(f'no matches for kind "{raw.kind}" in version "{raw.api_version}"', raw.source)
        return True  # a custom resource: nothing to check it against
    kind = raw.kind
    data = raw.data
    clean = True
    # neither unknown fields nor type errors (checked in C): the Python walks would find nothing
    ctx.decoded_cleanly = _decodes_cleanly(gvk, data, api)
    if not ctx.decoded_cleanly:
        if mode != "Ignore":
            unknown = schemas.unknown_field_paths(gvk, data, api)
            if unknown:
                messages = [f'unknown field "{p}"' for p in unknown]
                if mode == "Strict":
                    raise ManifestError(f'{kind} in version "{version}" cannot be handled as a {kind}: '
                                        "strict decoding error: " + ", ".join(messages), locate(raw, unknown[0]))
                for path, m in zip(unknown, messages, strict=True):
                    ctx.warn(f"Warning: {m} ({raw.describe()}, {locate(raw, path)})")
                clean = False
        err = schemas.decode_error(gvk, data, api)
        if err:
            field = _GO_FIELD.search(err)
            where = locate(raw, field.group(1)) if field else raw.source
            raise ManifestError(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}', where)
        if mode != "Strict" and schemas.prune_unknown_fields(gvk, data, api):
            clean = False  # dropped, as decoding into the release's Go types does
    _prepare(raw, ctx)
    if kind == "Pod":
        errs = _pod_errors(data, ctx.ok_specs, ctx.pod_options)
    elif kind in podgroups.KINDS and group == podgroups.GROUP:
        errs = podgroups.validate(data)
    elif kind in _FULL:
        errs = validation.validate_object(data, pod_options=ctx.pod_options)
        if kind == "Job" and group == "batch":
            errs += podgroups.validate_job_scheduling(data, None, ctx.features)
    else:
        errs = validation.validate_object_meta(data.get("metadata"), namespaced=raw.namespace is not None,
                                               name_kind=validation.name_kind_for(kind))
    if errs:
        name = raw.name
        raise ManifestError(validation.invalid_message(kind, name, errs, group=group), locate(raw, errs[0].path))
    return clean


def validate_inputs(raws: Iterable[RawObject], *, field_validation: str = "Strict",
                    warn: Callable[[str], None] | None = None, features: FeatureGate | None = None) -> None:
    """Check every object as the API server would (see the module docstring), in input order;
    the first bad object raises :class:`ManifestError` (``file:line`` of the offending field).

    ``field_validation``: ``Strict`` (default), ``Warn`` (``warn(line)`` per unknown field) or
    ``Ignore``. ``features``: the emulated version and gates (None: v1.37 defaults). Pods get
    the defaults of :func:`apply_defaults` and, when new, the create step of
    :mod:`kubesched.api.strategy` written into their data.
    """
    if field_validation not in ("Strict", "Warn", "Ignore"):
        raise ValueError(f"field_validation must be Strict, Warn or Ignore, got {field_validation!r}")
    ctx = _Ctx(field_validation, warn or (lambda _line: None), features or default_feature_gate())
    for raw in raws:
        _check_one(raw, ctx)
