"""Validation of Kubernetes objects as the API server validates them, on plain dicts.

Pure functions over decoded JSON/YAML objects (``dict``) returning a list of
:class:`FieldError`, each rendering exactly as upstream's ``field.Error`` does::

    spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0

and :func:`invalid_message` renders the whole 422 message as ``errors.NewInvalid`` does
(``Pod "x" is invalid: <e1>`` for one error, ``Pod "x" is invalid: [<e1>, <e2>]`` for more,
duplicates dropped). Shared by the box's admission (:mod:`kubesched.apiserver.admission`) and
the simulator's input checks.

Covered — what the scheduler reads, following upstream v1.37.2 (the rules that changed since
v1.34 are switched by :class:`PodValidationOptions`, built from the emulated version's gates
by :func:`pod_validation_options`, as ``GetValidationOptionsFromPodSpecAndMeta`` in
``pkg/api/pod/util.go`` L409+ builds them):

* ``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go`` — DNS-1123 label /
  subdomain, DNS-1035 label, qualified names, label values, port names (message texts);
* ``staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go`` — error rendering;
* ``staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go`` and
  ``pkg/apis/meta/v1/validation/validation.go`` — object metadata, labels, annotations size,
  label selectors;
* ``pkg/apis/core/validation/validation.go`` — ``ValidatePodSpec`` (containers: non-empty,
  DNS-label unique names, image; ports and host-port conflicts; resources: names,
  non-negative and integer quantities, requests ≤ limits; restartPolicy/dnsPolicy values;
  nodeSelector; node affinity, pod (anti-)affinity terms and weights; tolerations; topology
  spread constraints and their ``matchLabelKeys``; schedulingGates; priorityClassName;
  preemptionPolicy; ``schedulingGroup``), ``ValidateNode`` (taints, capacity/allocatable,
  ``status.declaredFeatures``), names per kind;
* ``pkg/apis/scheduling/validation/validation.go`` — PriorityClass.

Validation runs, as upstream, on the *defaulted* object. Fields that the API server always
defaults (``restartPolicy``, ``dnsPolicy``, ``terminationMessagePolicy``, ``imagePullPolicy``,
port ``protocol``, ``terminationGracePeriodSeconds``) are therefore only checked when set, so
the same functions serve the simulator, which reads manifests without defaulting them.
A quantity that does not parse is reported as an ``Invalid value`` with the parser's message
(the API server rejects it earlier, while decoding — :func:`quantity_decode_errors` finds
those for the box, which answers 400 as upstream).

Upstream quirks kept on purpose: a Node's taint errors live under ``metadata.taints``; a label
*value* error names the labels map (``metadata.labels: Invalid value: "bad value"``); a
request above its limit is reported on the ``requests`` map, not the key; ``Gt``/``Lt``
node-selector operators need exactly one value, whose integer-ness is not checked; a
topology spread ``matchLabelKeys`` key found twice in the (merged) selector is reported at
``spec.topologySpreadConstraints[i][j]`` (the constraint's path indexed by the key's index —
upstream's ``ValidateMatchLabelKeysAndMismatchLabelKeys`` indexes the path it is given, see the
TODO about #129900 in its test).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from kubesched.api.quantity import nano_value
from kubesched.errors import QuantityError

if TYPE_CHECKING:
    from kubesched.features import FeatureGate

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "REQUIRED",
    "TOO_LONG",
    "FieldError",
    "PodValidationOptions",
    "PriorityAdmissionError",
    "aggregate",
    "canonical_quantity",
    "invalid_message",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "label_selector_matches",
    "pod_validation_options",
    "quantity_decode_errors",
    "quantity_parse_error",
    "resolve_pod_priority",
    "status_causes",
    "validate_label_selector",
    "validate_labels",
    "validate_match_label_keys_and_mismatch_label_keys",
    "validate_match_label_keys_in_topology_spread",
    "validate_csi_node",
    "validate_namespace",
    "validate_node",
    "validate_object",
    "validate_object_meta",
    "name_kind_for",
    "validate_persistent_volume",
    "validate_persistent_volume_claim",
    "validate_pod",
    "validate_config_map",
    "validate_pod_disruption_budget",
    "validate_secret",
    "validate_pod_spec",
    "validate_pod_template",
    "validate_pod_update",
    "validate_priority_class",
    "validate_service",
    "validate_storage_class",
    "validate_tolerations",
    "validate_workload",
]

# field.ErrorType values (the Status cause "reason")
NOT_FOUND = "FieldValueNotFound"
REQUIRED = "FieldValueRequired"
DUPLICATE = "FieldValueDuplicate"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
INTERNAL = "InternalError"

_TYPE_TEXT = {
    NOT_FOUND: "Not found",
    REQUIRED: "Required value",
    DUPLICATE: "Duplicate value",
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    TOO_LONG: "Too long",
    TOO_MANY: "Too many",
    INTERNAL: "Internal error",
}
_NO_VALUE_TYPES = {REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL}


def _go_quote(s: str) -> str:
    """Go's ``%q`` for a string (strconv.Quote) for the characters that occur in practice."""
    return json.dumps(s, ensure_ascii=False)


def _render_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return _go_quote(v)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class FieldError:
    """One validation error (upstream ``field.Error``).

    ``path``: the field path (``spec.containers[0].image``); ``type``: the upstream error type
    (``FieldValueInvalid``, ``FieldValueRequired``, ...); ``value``: the bad value (rendered as
    upstream: strings quoted, numbers bare, other values as JSON); ``detail``: the explanation.
    ``str(err)`` is upstream's ``Error()``; :meth:`body` is ``ErrorBody()`` (the Status cause
    message).
    """

    path: str
    type: str
    value: Any = ""
    detail: str = ""

    def body(self) -> str:
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _NO_VALUE_TYPES:
            text = f"{text}: {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.path}: {self.body()}"


def aggregate(errors: Iterable[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: one error as is; several deduplicated as ``[a, b]``."""
    seen: list[str] = []
    for e in errors:
        s = str(e)
        if s not in seen:
            seen.append(s)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def invalid_message(kind: str, name: str, errors: Iterable[FieldError], *, group: str = "") -> str:
    """The message of upstream ``errors.NewInvalid``: ``Kind[.group] "name" is invalid: ...``."""
    qualified = f"{kind}.{group}" if group else kind
    errs = list(errors)
    if not errs:
        return f"{qualified} {_go_quote(name)} is invalid"
    return f"{qualified} {_go_quote(name)} is invalid: {aggregate(errs)}"


def status_causes(errors: Iterable[FieldError]) -> list[dict[str, str]]:
    """``Status.details.causes`` for the errors, as ``errors.NewInvalid`` builds them."""
    return [{"reason": e.type, "message": e.body(), "field": e.path} for e in errors]


# ---- field paths ------------------------------------------------------------------------------


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _key(path: str, k: str) -> str:
    return f"{path}[{k}]"


# ---- apimachinery string checks (util/validation/validation.go) ------------------------------

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
                       "and must start and end with an alphanumeric character")
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FMT}$")
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile(r"[a-z]")


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # upstream apimachinery RegexError, its doubled spaces included: "(e.g. 'a',  or 'b', regex …)"
    ex = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


@lru_cache(maxsize=8192)
def _is_dns1123_label_cached(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1123_label(value))


def is_dns1123_label(value: str) -> list[str]:
    """Upstream ``IsDNS1123Label``: the problems with ``value`` as messages (empty when valid).
    Results are cached (the same keys and names recur across objects)."""
    return list(_is_dns1123_label_cached(value)) if isinstance(value, str) else list(_is_dns1123_label(str(value)))


def _is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: problems with ``value`` (empty list when valid)."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL.match(value):
        if _DNS1123_SUBDOMAIN.match(value):
            # apimachinery util/validation/validation.go:173: a valid subdomain that is no label
            # (the length was checked already) has dots
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@lru_cache(maxsize=8192)
def _is_dns1123_subdomain_cached(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1123_subdomain(value))


def is_dns1123_subdomain(value: str) -> list[str]:
    """Upstream ``IsDNS1123Subdomain``: the problems with ``value`` as messages (empty when valid).
    Results are cached (the same keys and names recur across objects)."""
    if isinstance(value, str):
        return list(_is_dns1123_subdomain_cached(value))
    return list(_is_dns1123_subdomain(str(value)))


def _is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@lru_cache(maxsize=8192)
def _is_dns1035_label_cached(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1035_label(value))


def is_dns1035_label(value: str) -> list[str]:
    """Upstream ``IsDNS1035Label``: the problems with ``value`` as messages (empty when valid).
    Results are cached (the same keys and names recur across objects)."""
    return list(_is_dns1035_label_cached(value)) if isinstance(value, str) else list(_is_dns1035_label(str(value)))


def _is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1035_LABEL.match(value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@lru_cache(maxsize=8192)
def _is_qualified_name_cached(value: str) -> tuple[str, ...]:
    return tuple(_is_qualified_name(value))


def is_qualified_name(value: str) -> list[str]:
    """Upstream ``IsQualifiedName``: the problems with ``value`` as messages (empty when valid).
    Results are cached (the same keys and names recur across objects)."""
    return list(_is_qualified_name_cached(value)) if isinstance(value, str) else list(_is_qualified_name(str(value)))


def _is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (label keys, annotation keys, taint/toleration keys, topology keys)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QUALIFIED_NAME.match(name):
        errs.append("name part "
                    + _regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


@lru_cache(maxsize=8192)
def _is_valid_label_value_cached(value: str) -> tuple[str, ...]:
    return tuple(_is_valid_label_value(value))


def is_valid_label_value(value: str) -> list[str]:
    """Upstream ``IsValidLabelValue``: the problems with ``value`` as messages (empty when valid).
    Results are cached (the same keys and names recur across objects)."""
    if isinstance(value, str):
        return list(_is_valid_label_value_cached(value))
    return list(_is_valid_label_value(str(value)))


def _is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _is_valid_port_name(port: str) -> list[str]:
    errs = []
    if len(port) > 15:
        errs.append(_max_len(15))
    if not _PORT_NAME_CHARSET.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _is_valid_port_num(port: Any) -> list[str]:
    if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
        return []
    return ["must be between 1 and 65535, inclusive"]


def _name_subdomain(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def _name_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def _name_1035(name: str, prefix: bool = False) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def _name_path_segment(name: str, prefix: bool = False) -> list[str]:
    """``content.IsPathSegmentName`` (apimachinery v0.37.2 pkg/api/validate/content/path.go:37):
    not ``.``/``..``, no ``/`` or ``%``; no length limit. RBAC's ``ValidateRBACName`` ignores
    ``prefix`` (pkg/apis/rbac/validation/validation.go:33)."""
    for illegal in (".", ".."):
        if name == illegal:
            return [f"may not be '{illegal}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _name_any(name: str, prefix: bool = False) -> list[str]:
    """``ValidateCertificateRequestName`` (pkg/apis/certificates/validation/validation.go:144): any name."""
    return []


def _name_config_map_key(name: str, prefix: bool = False) -> list[str]:
    """``ValidLeaseCandidateName`` (pkg/apis/coordination/validation/validation.go:77): ``IsConfigMapKey``."""
    return is_config_map_key(name)


def _mask_trailing_dash(name: str) -> str:
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


# ---- quantities ---------------------------------------------------------------------------------

_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def canonical_quantity(q: str | float) -> str:
    """``Quantity.String()``: the canonical text of a quantity (``"0.5"`` → ``"500m"``,
    ``"1.5Gi"`` → ``"1536Mi"``, ``"1000"`` → ``"1k"``). Raises :class:`QuantityError`."""
    text = str(q).strip() if not isinstance(q, str) else q.strip()
    nanos = nano_value(text)
    if nanos == 0:
        return "0"
    stripped = text.lstrip("+-")
    fmt = "decimal"
    if stripped.endswith(_BINARY):
        fmt = "binary"
    elif re.search(r"[0-9.][eE][-+]?[0-9]+$", stripped):
        fmt = "exponent"
    if fmt == "binary":
        if -1024 * 10**9 < nanos < 1024 * 10**9 or nanos % 10**9:
            fmt = "decimal"
        else:
            value = nanos // 10**9
            exp = 0
            while exp < 6 and value % 1024 == 0:
                value //= 1024
                exp += 1
            return f"{value}{('', *_BINARY)[exp]}"
    mantissa, exponent = nanos, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3 != 0:
        mantissa *= 10
        exponent -= 1
    if fmt == "exponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DECIMAL_SUFFIX.get(exponent)
    if suffix is None:
        return f"{mantissa}e{exponent}"
    return f"{mantissa}{suffix}"


def _nanos(q: Any) -> int | None:
    try:
        return nano_value(q)
    except (QuantityError, TypeError, ValueError):
        return None


def quantity_parse_error(q: Any) -> str | None:
    """Upstream ``ParseQuantity``'s error text for ``q`` (a JSON string or number), or None."""
    if isinstance(q, bool) or not isinstance(q, (str, int, float)):
        return _quantity_error(q)
    return None if _nanos(q) is not None else _quantity_error(q)


def _quantity_error(q: Any) -> str:
    try:
        nano_value(q)
    except QuantityError as exc:
        msg = str(exc)
        # kubesched's QuantityError prefixes "invalid quantity '...': "; upstream's text follows it
        return msg.split(": ", 1)[1] if ": " in msg else msg
    except (TypeError, ValueError):
        pass
    return "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _resource_maps(obj: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    kind = obj.get("kind")
    if kind == "Node":
        status = _map(obj.get("status"))
        for name in ("capacity", "allocatable"):
            yield f"status.{name}", _map(status.get(name))
        return
    spec = _map(obj.get("spec"))
    for cname in ("initContainers", "containers"):
        for i, c in enumerate(_list(spec.get(cname))):
            res = _map(_map(c).get("resources"))
            for part in ("limits", "requests"):
                yield f"spec.{cname}[{i}].resources.{part}", _map(res.get(part))
    if isinstance(spec.get("overhead"), dict):
        yield "spec.overhead", spec["overhead"]


def quantity_decode_errors(obj: Mapping[str, Any]) -> list[FieldError]:
    """Quantities of a Pod or Node that do not parse (the API server's decoder rejects them
    with 400 ``... cannot be handled as a Pod: quantities must match the regular expression
    ...``). Each error carries the parser's message as ``detail``."""
    errs = []
    for path, rl in _resource_maps(obj):
        for k, v in rl.items():
            if _nanos(v) is None:
                vpath = _key(path, k) if "resources" in path or path == "spec.overhead" else _child(path, k)
                errs.append(FieldError(vpath, INVALID, v, _quantity_error(v)))
    return errs


# ---- helpers over plain dicts ---------------------------------------------------------------


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


# ---- metadata ----------------------------------------------------------------------------------

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)


def validate_label_name(key: str, path: str) -> list[FieldError]:
    """``ValidateLabelName``."""
    return [FieldError(path, INVALID, key, m) for m in is_qualified_name(key)]


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """``ValidateLabels``: keys are qualified names; values valid label values (errors on the map)."""
    errs: list[FieldError] = []
    for k, v in _map(labels).items():
        errs.extend(validate_label_name(k, path))
        errs.extend(FieldError(path, INVALID, _str(v), m) for m in is_valid_label_value(_str(v)))
    return errs


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys are qualified names (lower-cased), total size ≤ 256 KiB."""
    errs: list[FieldError] = []
    total = 0
    for k, v in _map(annotations).items():
        errs.extend(FieldError(path, INVALID, k, m) for m in is_qualified_name(k.lower()))
        total += len(k.encode()) + len(_str(v).encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError(path, TOO_LONG, "<value omitted>",
                               f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errs


#: The name rules (upstream's ``ValidateNameFunc``s) by the ``name_kind`` that selects them.
_NAME_FNS: dict[str, Callable[[str, bool], list[str]]] = {
    "subdomain": _name_subdomain, "label": _name_label, "dns1035": _name_1035,
    "path": _name_path_segment, "any": _name_any, "configmapkey": _name_config_map_key,
}

#: Kinds whose name rule is not ``NameIsDNSSubdomain`` (the rule of every other built-in kind and
#: of custom resources, apiextensions-apiserver customresource_validator.go), per v1.37.2's
#: ``pkg/apis/*/validation``: Services DNS-1035 labels (core validation.go:298), Namespaces and
#: StatefulSets DNS-1123 labels (generic.go:69, apps validation.go:52), RBAC kinds path-segment
#: names (rbac validation.go:33, so ``system:aggregated-metrics-reader`` is valid), APIServices
#: path segments (kube-aggregator apiregistration validation.go), CSRs anything, LeaseCandidates
#: ConfigMap keys.
NAME_KINDS: dict[str, str] = {
    "Service": "dns1035", "Namespace": "label", "StatefulSet": "label",
    "Role": "path", "ClusterRole": "path", "RoleBinding": "path", "ClusterRoleBinding": "path",
    "APIService": "path", "CertificateSigningRequest": "any", "LeaseCandidate": "configmapkey",
}


def name_kind_for(kind: str) -> str:
    """The ``name_kind`` of :func:`validate_object_meta` for a kind (see :data:`NAME_KINDS`)."""
    return NAME_KINDS.get(kind, "subdomain")


def validate_object_meta(meta: Any, *, namespaced: bool, name_kind: str = "subdomain",
                         path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` on create: name (``name_kind``: a key of ``_NAME_FNS`` —
    ``subdomain``, ``label``, ``dns1035``, ``path``, ``any``, ``configmapkey``; see
    :func:`name_kind_for`), generateName, namespace presence, generation, labels, annotations, finalizers."""
    m = _map(meta)
    fn = _NAME_FNS[name_kind]
    errs: list[FieldError] = []
    gen = _str(m.get("generateName"))
    if gen:
        errs.extend(FieldError(_child(path, "generateName"), INVALID, gen, msg) for msg in fn(gen, True))
    name = _str(m.get("name"))
    if not name:
        errs.append(FieldError(_child(path, "name"), REQUIRED, "", "name or generateName is required"))
    else:
        errs.extend(FieldError(_child(path, "name"), INVALID, name, msg) for msg in fn(name, False))
    ns = _str(m.get("namespace"))
    if namespaced:
        if not ns:
            errs.append(FieldError(_child(path, "namespace"), REQUIRED, ""))
        else:
            errs.extend(FieldError(_child(path, "namespace"), INVALID, ns, msg) for msg in _name_label(ns))
    elif ns:
        errs.append(FieldError(_child(path, "namespace"), FORBIDDEN, "", "not allowed on this type"))
    generation = m.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(FieldError(_child(path, "generation"), INVALID, generation, "must be greater than or equal to 0"))
    errs.extend(validate_labels(m.get("labels"), _child(path, "labels")))
    errs.extend(validate_annotations(m.get("annotations"), _child(path, "annotations")))
    finalizers = [_str(f) for f in _list(m.get("finalizers"))]
    fpath = _child(path, "finalizers")
    for f in finalizers:
        errs.extend(FieldError(fpath, INVALID, f, msg) for msg in is_qualified_name(f))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(FieldError(fpath, INVALID, finalizers,
                               "finalizer orphan and foregroundDeletion cannot be both set"))
    # pkg/apis/core/validation validateKubeFinalizerName: a second name check, plus the standard names
    for f in finalizers:
        errs.extend(FieldError(fpath, INVALID, f, msg) for msg in is_qualified_name(f))
        if "/" not in f and f not in _STANDARD_FINALIZERS:
            errs.append(FieldError(fpath, INVALID, f,
                                   "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}


def validate_label_selector(sel: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector`` (metav1 validation) for a selector that is set."""
    if not isinstance(sel, dict):
        return []
    errs = validate_labels(sel.get("matchLabels"), _child(path, "matchLabels"))
    for i, expr in enumerate(_list(sel.get("matchExpressions"))):
        p = _index(_child(path, "matchExpressions"), i)
        e = _map(expr)
        op = _str(e.get("operator"))
        values = _list(e.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(FieldError(_child(p, "values"), REQUIRED, "",
                                       "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(FieldError(_child(p, "values"), FORBIDDEN, "",
                                       "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(FieldError(_child(p, "operator"), INVALID, op, "not a valid selector operator"))
        errs.extend(validate_label_name(_str(e.get("key")), _child(p, "key")))
        for j, v in enumerate(values):
            errs.extend(FieldError(_index(_child(p, "values"), j), INVALID, _str(v), m)
                        for m in is_valid_label_value(_str(v)))
    return errs


# ---- resources ------------------------------------------------------------------------------------

_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_NATIVE_PREFIX = "kubernetes.io/"
_INTEGER_RESOURCES = {"pods", "count/pods"}


def _is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_PREFIX in name


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _is_overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def _validate_resource_quantity(name: str, value: Any, path: str) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: non-negative; integer for integer resources."""
    nanos = _nanos(value)
    if nanos is None:
        return [FieldError(path, INVALID, _str(value), _quantity_error(value))]
    errs = []
    if nanos < 0:
        errs.append(FieldError(path, INVALID, canonical_quantity(value), "must be greater than or equal to 0"))
    if _is_integer_resource(name) and nanos % 10**9:
        errs.append(FieldError(path, INVALID, canonical_quantity(value), "must be an integer"))
    return errs


def _validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [FieldError(path, INVALID, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            return [FieldError(path, INVALID, name, "must be a standard resource for containers")]
    elif not _is_native(name) and not _is_extended(name):
        return [FieldError(path, INVALID, name, "doesn't follow extended resource name standard")]
    return []


def _validate_pod_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [FieldError(path, INVALID, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
        return [FieldError(path, INVALID, name, "must be a standard resource type or fully qualified")]
    if name not in ("cpu", "memory") and not _is_hugepages(name):
        return [FieldError(path, NOT_SUPPORTED, name, _supported(["cpu", "memory"]))]
    return []


def validate_resource_requirements(res: Any, path: str, *, pod_level: bool = False) -> list[FieldError]:
    """``ValidateContainerResourceRequirements`` (``pod_level``: ``validatePodResourceRequirements``
    for ``spec.resources``): names, quantities, requests ≤ limits."""
    name_check = _validate_pod_resource_name if pod_level else _validate_container_resource_name
    r = _map(res)
    limits = _map(r.get("limits"))
    requests = _map(r.get("requests"))
    lim_path, req_path = _child(path, "limits"), _child(path, "requests")
    errs: list[FieldError] = []
    for name, q in limits.items():
        p = _key(lim_path, name)
        errs.extend(name_check(name, p))
        errs.extend(_validate_resource_quantity(name, q, p))
    for name, q in requests.items():
        p = _key(req_path, name)
        errs.extend(name_check(name, p))
        errs.extend(_validate_resource_quantity(name, q, p))
        req_n = _nanos(q)
        if name in limits:
            lim_n = _nanos(limits[name])
            if req_n is None or lim_n is None:
                continue
            if req_n != lim_n and not _is_overcommit_allowed(name):
                errs.append(FieldError(req_path, INVALID, canonical_quantity(q),
                                       f"must be equal to {name} limit of {canonical_quantity(limits[name])}"))
            elif req_n > lim_n:
                errs.append(FieldError(req_path, INVALID, canonical_quantity(q),
                                       f"must be less than or equal to {name} limit of "
                                       f"{canonical_quantity(limits[name])}"))
        elif not _is_overcommit_allowed(name):
            errs.append(FieldError(lim_path, REQUIRED, "", "Limit must be set for non overcommitable resources"))
    return errs


# ---- containers -------------------------------------------------------------------------------------

_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _supported(values: Iterable[str]) -> str:
    return "supported values: " + ", ".join(_go_quote(v) for v in values)


def _validate_container_ports(ports: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(_list(ports)):
        p = _index(path, i)
        pt = _map(port)
        name = _str(pt.get("name"))
        if name:
            msgs = _is_valid_port_name(name)
            if msgs:
                errs.extend(FieldError(_child(p, "name"), INVALID, name, m) for m in msgs)
            elif name in names:
                errs.append(FieldError(_child(p, "name"), DUPLICATE, name))
            else:
                names.add(name)
        cp = pt.get("containerPort", 0)
        if not cp:
            errs.append(FieldError(_child(p, "containerPort"), REQUIRED, ""))
        else:
            errs.extend(FieldError(_child(p, "containerPort"), INVALID, cp, m) for m in _is_valid_port_num(cp))
        hp = pt.get("hostPort", 0)
        if hp:
            errs.extend(FieldError(_child(p, "hostPort"), INVALID, hp, m) for m in _is_valid_port_num(hp))
        proto = _str(pt.get("protocol"))
        if proto and proto not in _PROTOCOLS:
            errs.append(FieldError(_child(p, "protocol"), NOT_SUPPORTED, proto, _supported(_PROTOCOLS)))
    return errs


def _host_port_conflicts(containers: list[Any], path: str) -> list[FieldError]:
    seen: set[str] = set()
    errs = []
    for ci, c in enumerate(containers):
        for pi, port in enumerate(_list(_map(c).get("ports"))):
            pt = _map(port)
            hp = pt.get("hostPort", 0)
            if not hp:
                continue
            key = f"{_str(pt.get('protocol')) or 'TCP'}/{_str(pt.get('hostIP'))}/{hp}"
            if key in seen:
                port_path = _index(_child(_index(path, ci), "ports"), pi)
                errs.append(FieldError(_child(port_path, "hostPort"), DUPLICATE, key))
            else:
                seen.add(key)
    return errs


_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


def _validate_container_common(c: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = _str(c.get("name"))
    if not name:
        errs.append(FieldError(_child(path, "name"), REQUIRED, ""))
    else:
        errs.extend(FieldError(_child(path, "name"), INVALID, name, m) for m in is_dns1123_label(name))
    if not _str(c.get("image")):
        errs.append(FieldError(_child(path, "image"), REQUIRED, ""))
    tmp = _str(c.get("terminationMessagePolicy"))
    if tmp and tmp not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(FieldError(_child(path, "terminationMessagePolicy"), NOT_SUPPORTED, tmp,
                               _supported(_TERMINATION_MESSAGE_POLICIES)))
    errs.extend(_validate_container_ports(c.get("ports"), _child(path, "ports")))
    pull = _str(c.get("imagePullPolicy"))
    if pull and pull not in _PULL_POLICIES:
        errs.append(FieldError(_child(path, "imagePullPolicy"), NOT_SUPPORTED, pull, _supported(_PULL_POLICIES)))
    errs.extend(validate_resource_requirements(c.get("resources"), _child(path, "resources")))
    return errs


def _validate_containers(containers: Any, path: str) -> list[FieldError]:
    items = _list(containers)
    if not items:
        return [FieldError(path, REQUIRED, "")]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, c in enumerate(items):
        p = _index(path, i)
        cm = _map(c)
        errs.extend(_validate_container_common(cm, p))
        name = _str(cm.get("name"))
        if name in names:
            errs.append(FieldError(_child(p, "name"), DUPLICATE, name))
        else:
            names.add(name)
        if cm.get("restartPolicy") is not None:
            errs.append(FieldError(_child(p, "restartPolicy"), FORBIDDEN, "", "may not be set for non-init containers"))
    errs.extend(_host_port_conflicts(items, path))
    return errs


def _validate_init_containers(init: Any, regular: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {_str(_map(c).get("name")) for c in _list(regular)}
    for i, c in enumerate(_list(init)):
        p = _index(path, i)
        cm = _map(c)
        errs.extend(_validate_container_common(cm, p))
        rp = cm.get("restartPolicy")
        if rp is not None and rp != "Always":
            errs.append(FieldError(_child(p, "restartPolicy"), NOT_SUPPORTED, _str(rp), _supported(["Always"])))
        name = _str(cm.get("name"))
        if name in names:
            errs.append(FieldError(_child(p, "name"), DUPLICATE, name))
        elif name:
            names.add(name)
        errs.extend(_host_port_conflicts([cm], path))
    return errs


# ---- scheduling constraints ------------------------------------------------------------------------

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[FieldError]:
    if not allow_empty and not effect:
        return [FieldError(path, REQUIRED, "")]
    if effect not in _TAINT_EFFECTS:
        return [FieldError(path, NOT_SUPPORTED, effect, _supported(_TAINT_EFFECTS))]
    return []


def validate_tolerations(tolerations: Any, path: str, opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidateTolerations`` (validation.go L4487). ``Lt``/``Gt`` (a decimal integer value) only
    with ``opts.allow_taint_toleration_comparison_operators`` (gate
    TaintTolerationComparisonOperators, or an old pod already using them); otherwise they are
    ``Unsupported value`` listing all four operators."""
    allow_cmp = opts is not None and opts.allow_taint_toleration_comparison_operators
    errs: list[FieldError] = []
    for i, tol in enumerate(_list(tolerations)):
        p = _index(path, i)
        t = _map(tol)
        key = _str(t.get("key"))
        op = _str(t.get("operator"))
        value = _str(t.get("value"))
        effect = _str(t.get("effect"))
        if key:
            errs.extend(validate_label_name(key, _child(p, "key")))
        if not key and op != "Exists":
            errs.append(FieldError(_child(p, "operator"), INVALID, op,
                                   "operator must be Exists when `key` is empty, "
                                   'which means "match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(FieldError(_child(p, "effect"), INVALID, effect,
                                   "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            msgs = is_valid_label_value(value)
            if msgs:
                errs.append(FieldError(_child(p, "operator"), INVALID, value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(FieldError(_child(p, "operator"), INVALID, value,
                                       "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):
            if not allow_cmp:
                errs.append(FieldError(_child(p, "operator"), NOT_SUPPORTED, op,
                                       _supported(["Equal", "Exists", "Lt", "Gt"])))
            else:
                errs.extend(FieldError(_child(p, "value"), INVALID, value, m) for m in _is_decimal_integer(value))
                parse_err = _parse_int64_error(value)
                if parse_err:
                    errs.append(FieldError(_child(p, "value"), INVALID, value, parse_err))
        else:
            errs.append(FieldError(_child(p, "operator"), NOT_SUPPORTED, op, _supported(["Equal", "Exists"])))
        if effect:
            errs.extend(_validate_taint_effect(effect, True, _child(p, "effect")))
    return errs


def _is_decimal_integer(value: str) -> list[str]:
    """``content.IsDecimalInteger`` (apimachinery ``pkg/api/validate/content/decimal_int.go``):
    an optional ``-`` and digits without a leading zero (``0`` alone is fine)."""
    if not value:
        return ["must be non-empty"]
    if re.fullmatch(r"0|-?[1-9][0-9]*", value):
        return []
    return ["must be a valid decimal integer in canonical form"]


def _parse_int64_error(value: str) -> str | None:
    """``strconv.ParseInt(value, 10, 64)``'s error text, or None when it parses."""
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        return f'strconv.ParseInt: parsing {_go_quote(value)}: invalid syntax'
    if not -(2**63) <= int(value) < 2**63:
        return f'strconv.ParseInt: parsing {_go_quote(value)}: value out of range'
    return None


def validate_taints(taints: Any, path: str) -> list[FieldError]:
    """``validateNodeTaints``: key, value, effect required and known, unique (key, effect)."""
    errs: list[FieldError] = []
    seen: dict[str, set[str]] = {}
    for i, taint in enumerate(_list(taints)):
        p = _index(path, i)
        t = _map(taint)
        key, value, effect = _str(t.get("key")), _str(t.get("value")), _str(t.get("effect"))
        errs.extend(validate_label_name(key, _child(p, "key")))
        msgs = is_valid_label_value(value)
        if msgs:
            errs.append(FieldError(_child(p, "value"), INVALID, value, ";".join(msgs)))
        errs.extend(_validate_taint_effect(effect, False, _child(p, "effect")))
        if key in seen.get(effect, set()):
            shown = {k: t[k] for k in ("key", "value", "effect", "timeAdded") if t.get(k)}
            errs.append(FieldError(p, DUPLICATE, shown, "taints must be unique by key and effect pair"))
            continue
        seen.setdefault(effect, set()).add(key)
    return errs


def _validate_node_selector_requirement(req: Any, path: str, allow_invalid_values: bool) -> list[FieldError]:
    r = _map(req)
    op = _str(r.get("operator"))
    values = _list(r.get("values"))
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(FieldError(_child(path, "values"), REQUIRED, "",
                                   "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(FieldError(_child(path, "values"), FORBIDDEN, "",
                                   "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(FieldError(_child(path, "values"), REQUIRED, "",
                                   "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(FieldError(_child(path, "operator"), INVALID, op, "not a valid selector operator"))
    errs.extend(validate_label_name(_str(r.get("key")), _child(path, "key")))
    if not allow_invalid_values:
        for j, v in enumerate(values):
            errs.extend(FieldError(_index(_child(path, "values"), j), INVALID, _str(v), m)
                        for m in is_valid_label_value(_str(v)))
    return errs


def _validate_node_field_selector_requirement(req: Any, path: str) -> list[FieldError]:
    r = _map(req)
    op = _str(r.get("operator"))
    values = _list(r.get("values"))
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(FieldError(_child(path, "values"), REQUIRED, "",
                                   "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(FieldError(_child(path, "operator"), INVALID, op, "not a valid selector operator"))
    key = _str(r.get("key"))
    if key != "metadata.name":
        errs.append(FieldError(_child(path, "key"), INVALID, key, "not a valid field selector key"))
    else:
        for j, v in enumerate(values):
            errs.extend(FieldError(_index(_child(path, "values"), j), INVALID, _str(v), m)
                        for m in _name_subdomain(_str(v)))
    return errs


def _validate_node_selector_term(term: Any, path: str, allow_invalid_values: bool) -> list[FieldError]:
    t = _map(term)
    errs: list[FieldError] = []
    for j, req in enumerate(_list(t.get("matchExpressions"))):
        errs.extend(_validate_node_selector_requirement(req, _index(_child(path, "matchExpressions"), j),
                                                        allow_invalid_values))
    for j, req in enumerate(_list(t.get("matchFields"))):
        errs.extend(_validate_node_field_selector_requirement(req, _index(_child(path, "matchFields"), j)))
    return errs


def _validate_pod_affinity_term(term: Any, path: str) -> list[FieldError]:
    t = _map(term)
    errs = validate_label_selector(t.get("labelSelector"), _child(path, "labelSelector"))
    errs.extend(validate_label_selector(t.get("namespaceSelector"), _child(path, "namespaceSelector")))
    for ns in _list(t.get("namespaces")):
        errs.extend(FieldError(_child(path, "namespace"), INVALID, _str(ns), m) for m in _name_label(_str(ns)))
    errs.extend(validate_match_label_keys_and_mismatch_label_keys(
        path, [_str(k) for k in _list(t.get("matchLabelKeys"))], [_str(k) for k in _list(t.get("mismatchLabelKeys"))],
        t.get("labelSelector")))
    topology_key = _str(t.get("topologyKey"))
    if not topology_key:
        errs.append(FieldError(_child(path, "topologyKey"), REQUIRED, "", "can not be empty"))
    errs.extend(validate_label_name(topology_key, _child(path, "topologyKey")))
    return errs


def _validate_weight(weight: Any, path: str) -> list[FieldError]:
    w = weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
    if w <= 0 or w > 100:
        return [FieldError(path, INVALID, w, "must be in the range 1-100")]
    return []


def _validate_pod_affinity(aff: Any, path: str) -> list[FieldError]:
    a = _map(aff)
    errs: list[FieldError] = []
    req = _child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(_list(a.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        errs.extend(_validate_pod_affinity_term(term, _index(req, i)))
    pref = _child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, wt in enumerate(_list(a.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        w = _map(wt)
        errs.extend(_validate_weight(w.get("weight"), _child(_index(pref, i), "weight")))
        errs.extend(_validate_pod_affinity_term(w.get("podAffinityTerm"), _child(_index(pref, i), "podAffinityTerm")))
    return errs


def _validate_affinity(aff: Any, path: str) -> list[FieldError]:
    a = _map(aff)
    errs: list[FieldError] = []
    na = a.get("nodeAffinity")
    if isinstance(na, dict):
        np = _child(path, "nodeAffinity")
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, dict):
            rp = _child(_child(np, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
            terms = _list(required.get("nodeSelectorTerms"))
            if not terms:
                errs.append(FieldError(rp, REQUIRED, "", "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs.extend(_validate_node_selector_term(term, _index(rp, i), False))
        pp = _child(np, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, pt in enumerate(_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            p = _map(pt)
            errs.extend(_validate_weight(p.get("weight"), _child(_index(pp, i), "weight")))
            errs.extend(_validate_node_selector_term(p.get("preference"), _child(_index(pp, i), "preference"), True))
    if isinstance(a.get("podAffinity"), dict):
        errs.extend(_validate_pod_affinity(a["podAffinity"], _child(path, "podAffinity")))
    if isinstance(a.get("podAntiAffinity"), dict):
        errs.extend(_validate_pod_affinity(a["podAntiAffinity"], _child(path, "podAntiAffinity")))
    return errs


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION = ("Honor", "Ignore")


@dataclass(frozen=True)
class PodValidationOptions:
    """The part of upstream ``PodValidationOptions`` (validation.go L4590+) kubesched's checks
    read. The defaults are those of a v1.37 (and v1.34) API server with default gates creating
    a pod; :func:`pod_validation_options` builds them from a :class:`~kubesched.features.FeatureGate`
    and, for an update, the old pod's spec."""

    allow_match_label_keys_in_pod_topology_spread: bool = True
    allow_match_label_keys_in_pod_topology_spread_selector_merge: bool = True
    #: the old pod fails the preferred rule (merge on): keep judging by the legacy one
    old_pod_violates_match_label_keys_validation: bool = False
    #: the old pod fails the legacy rule (merge off): keep judging by the preferred one
    old_pod_violates_legacy_match_label_keys_validation: bool = False
    allow_taint_toleration_comparison_operators: bool = False


def pod_validation_options(features: FeatureGate | None, old_spec: Any = None) -> PodValidationOptions:
    """``GetValidationOptionsFromPodSpecAndMeta`` (``pkg/api/pod/util.go`` L409-470) for the
    options above: gates of ``features`` (None: the default v1.37 gates), relaxed by what the old
    spec (an update; None on create) already uses."""
    if features is None:
        from kubesched.features import default_feature_gate

        features = default_feature_gate()
    mlk = features.enabled("MatchLabelKeysInPodTopologySpread")
    merge = features.enabled("MatchLabelKeysInPodTopologySpreadSelectorMerge")
    old = _map(old_spec) if old_spec is not None else None
    violates = violates_legacy = False
    if old is not None and mlk:
        for c in _list(old.get("topologySpreadConstraints")):
            cm = _map(c)
            keys = [_str(k) for k in _list(cm.get("matchLabelKeys"))]
            if merge:  # hasInvalidTopologySpreadConstrainMatchLabelKeys
                violates = violates or bool(validate_match_label_keys_and_mismatch_label_keys(
                    "", keys, [], cm.get("labelSelector")))
            else:  # hasLegacyInvalidTopologySpreadConstrainMatchLabelKeys
                violates_legacy = violates_legacy or bool(validate_match_label_keys_in_topology_spread(
                    "", keys, cm.get("labelSelector")))
    cmp_in_use = old is not None and any(_str(_map(t).get("operator")) in ("Lt", "Gt")
                                         for t in _list(old.get("tolerations")))
    return PodValidationOptions(
        allow_match_label_keys_in_pod_topology_spread=mlk,
        allow_match_label_keys_in_pod_topology_spread_selector_merge=merge,
        old_pod_violates_match_label_keys_validation=violates,
        old_pod_violates_legacy_match_label_keys_validation=violates_legacy,
        allow_taint_toleration_comparison_operators=features.enabled("TaintTolerationComparisonOperators")
        or cmp_in_use,
    )


def _validate_label_keys(path: str, keys: list[str], sel: Any) -> list[FieldError]:
    """``validateLabelKeys`` (validation.go L9373)."""
    if not keys:
        return []
    if not isinstance(sel, dict):
        return [FieldError(path, FORBIDDEN, "", "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(keys):
        errs.extend(validate_label_name(k, _index(path, i)))
    return errs


def validate_match_label_keys_and_mismatch_label_keys(path: str, match_label_keys: list[str],
                                                      mismatch_label_keys: list[str],
                                                      label_selector: Any) -> list[FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` (validation.go L9293-9339), the rule once
    the API server merges ``matchLabelKeys`` into the selector: keys must be label names and
    need a selector; walking ``matchLabels`` then ``matchExpressions`` in order, an expression
    on a ``matchLabelKeys`` key is an error only when that key was already seen (``exists in
    both matchLabelKeys and labelSelector``, at ``path[i]`` — ``path`` is the constraint or
    term, not its ``matchLabelKeys``); a key in both key lists is an error at
    ``path.matchLabelKeys[i]``."""
    errs = _validate_label_keys(_child(path, "matchLabelKeys"), match_label_keys, label_selector)
    errs.extend(_validate_label_keys(_child(path, "mismatchLabelKeys"), mismatch_label_keys, label_selector))
    if isinstance(label_selector, dict):
        index = {k: i for i, k in enumerate(match_label_keys)}
        seen = {str(k) for k in _map(label_selector.get("matchLabels"))}
        for e in _list(label_selector.get("matchExpressions")):
            key = _str(_map(e).get("key"))
            i = index.get(key)
            if i is not None and key in seen:
                errs.append(FieldError(_index(path, i), INVALID, key,
                                       "exists in both matchLabelKeys and labelSelector"))
            seen.add(key)
    mismatch = set(mismatch_label_keys)
    for i, k in enumerate(match_label_keys):
        if k in mismatch:
            errs.append(FieldError(_index(_child(path, "matchLabelKeys"), i), INVALID, k,
                                   "exists in both matchLabelKeys and mismatchLabelKeys"))
    return errs


def validate_match_label_keys_in_topology_spread(path: str, match_label_keys: list[str],
                                                 label_selector: Any) -> list[FieldError]:
    """``ValidateMatchLabelKeysInTopologySpread`` (validation.go L9342-9370), the legacy rule:
    ``path`` is the ``matchLabelKeys`` field; any key also present anywhere in the selector is
    ``exists in both matchLabelKeys and labelSelector``."""
    if not match_label_keys:
        return []
    errs: list[FieldError] = []
    selector_keys: set[str] = set()
    if isinstance(label_selector, dict):
        selector_keys.update(str(k) for k in _map(label_selector.get("matchLabels")))
        selector_keys.update(_str(_map(e).get("key")) for e in _list(label_selector.get("matchExpressions")))
    else:
        errs.append(FieldError(path, FORBIDDEN, "", "must not be specified when labelSelector is not set"))
    for i, k in enumerate(match_label_keys):
        errs.extend(validate_label_name(k, _index(path, i)))
        if k in selector_keys:
            errs.append(FieldError(_index(path, i), INVALID, k, "exists in both matchLabelKeys and labelSelector"))
    return errs


def _validate_topology_spread(constraints: Any, path: str, opts: PodValidationOptions) -> list[FieldError]:
    """``validateTopologySpreadConstraints`` (validation.go L9171-9230)."""
    items = _list(constraints)
    errs: list[FieldError] = []
    for i, raw in enumerate(items):
        p = _index(path, i)
        c = _map(raw)
        max_skew = c.get("maxSkew", 0)
        if not isinstance(max_skew, int) or isinstance(max_skew, bool) or max_skew <= 0:
            errs.append(FieldError(_child(p, "maxSkew"), INVALID, max_skew, "must be greater than zero"))
        tk = _str(c.get("topologyKey"))
        if not tk:
            errs.append(FieldError(_child(p, "topologyKey"), REQUIRED, "", "can not be empty"))
        wu = _str(c.get("whenUnsatisfiable"))
        if wu not in _WHEN_UNSATISFIABLE:
            errs.append(FieldError(_child(p, "whenUnsatisfiable"), NOT_SUPPORTED, wu, _supported(_WHEN_UNSATISFIABLE)))
        for rest in items[i + 1 :]:
            r = _map(rest)
            if _str(r.get("topologyKey")) == tk and _str(r.get("whenUnsatisfiable")) == wu:
                errs.append(FieldError(_child(p, "{topologyKey, whenUnsatisfiable}"), DUPLICATE, f"{{{tk}, {wu}}}"))
                break
        md = c.get("minDomains")
        if md is not None:
            if not isinstance(md, int) or isinstance(md, bool) or md <= 0:
                errs.append(FieldError(_child(p, "minDomains"), INVALID, md, "must be greater than zero"))
            if wu != "DoNotSchedule":
                errs.append(FieldError(_child(p, "minDomains"), INVALID, md,
                                       f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {wu}"))
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in _NODE_INCLUSION:
                errs.append(FieldError(_child(p, pol), NOT_SUPPORTED, v, _supported(_NODE_INCLUSION)))
        sel = c.get("labelSelector")
        keys = [_str(k) for k in _list(c.get("matchLabelKeys"))]
        merge = opts.allow_match_label_keys_in_pod_topology_spread_selector_merge
        preferred = opts.allow_match_label_keys_in_pod_topology_spread and (
            (merge and not opts.old_pod_violates_match_label_keys_validation)
            or (not merge and opts.old_pod_violates_legacy_match_label_keys_validation))
        if preferred:
            errs.extend(validate_match_label_keys_and_mismatch_label_keys(p, keys, [], sel))
        else:
            errs.extend(validate_match_label_keys_in_topology_spread(_child(p, "matchLabelKeys"), keys, sel))
        errs.extend(validate_label_selector(sel, _child(p, "labelSelector")))
    return errs


# ---- pod --------------------------------------------------------------------------------------------

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def validate_pod_spec(spec: Any, path: str = "spec", opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodSpec`` for the fields listed in the module docstring, in upstream's order.
    ``opts``: see :class:`PodValidationOptions` (None: a default v1.37 API server's)."""
    opts = opts or _DEFAULT_POD_OPTIONS
    s = _map(spec)
    errs: list[FieldError] = []
    errs.extend(_validate_containers(s.get("containers"), _child(path, "containers")))
    errs.extend(_validate_init_containers(s.get("initContainers"), s.get("containers"), _child(path, "initContainers")))
    rp = _str(s.get("restartPolicy"))
    if rp and rp not in _RESTART_POLICIES:
        errs.append(FieldError(_child(path, "restartPolicy"), NOT_SUPPORTED, rp, _supported(_RESTART_POLICIES)))
    dp = _str(s.get("dnsPolicy"))
    if dp and dp not in _DNS_POLICIES:
        errs.append(FieldError(_child(path, "dnsPolicy"), NOT_SUPPORTED, dp, _supported(_DNS_POLICIES)))
    errs.extend(validate_labels(s.get("nodeSelector"), _child(path, "nodeSelector")))
    errs.extend(_validate_affinity(s.get("affinity"), _child(path, "affinity")))
    gates_path = _child(path, "schedulingGates")
    seen_gates: set[str] = set()
    for i, g in enumerate(_list(s.get("schedulingGates"))):
        name = _str(_map(g).get("name"))
        errs.extend(FieldError(_index(gates_path, i), INVALID, name, m) for m in is_qualified_name(name))
        if name in seen_gates:
            errs.append(FieldError(_index(gates_path, i), DUPLICATE, name))
        seen_gates.add(name)
    errs.extend(_validate_topology_spread(s.get("topologySpreadConstraints"),
                                          _child(path, "topologySpreadConstraints"), opts))
    sa = _str(s.get("serviceAccountName"))
    if sa:
        errs.extend(FieldError(_child(path, "serviceAccountName"), INVALID, sa, m) for m in _name_subdomain(sa))
    node_name = _str(s.get("nodeName"))
    if node_name:
        errs.extend(FieldError(_child(path, "nodeName"), INVALID, node_name, m) for m in _name_subdomain(node_name))
    for fname in ("hostname", "subdomain"):
        v = _str(s.get(fname))
        if v:
            errs.extend(FieldError(_child(path, fname), INVALID, v, m) for m in is_dns1123_label(v))
    errs.extend(validate_tolerations(s.get("tolerations"), _child(path, "tolerations"), opts))
    pcn = _str(s.get("priorityClassName"))
    if pcn:
        errs.extend(FieldError(_child(path, "priorityClassName"), INVALID, pcn, m) for m in _name_subdomain(pcn))
    pp = s.get("preemptionPolicy")
    if pp is not None and pp not in _PREEMPTION_POLICIES:
        errs.append(FieldError(_child(path, "preemptionPolicy"), NOT_SUPPORTED, pp, _supported(_PREEMPTION_POLICIES)))
    overhead = s.get("overhead")
    if isinstance(overhead, dict):
        errs.extend(validate_resource_requirements({"limits": overhead}, _child(path, "overhead")))
    if isinstance(s.get("resources"), dict):
        errs.extend(validate_resource_requirements(s["resources"], _child(path, "resources"), pod_level=True))
    sg = s.get("schedulingGroup")
    if sg is not None:  # validateSchedulingGroup (validation.go L10068)
        sgp = _child(path, "schedulingGroup")
        group_name = _map(sg).get("podGroupName")
        if group_name is None:
            errs.append(FieldError(_child(sgp, "podGroupName"), INVALID, None, "must specify one of: `podGroupName`"))
        else:
            errs.extend(FieldError(_child(sgp, "podGroupName"), INVALID, _str(group_name), m)
                        for m in _name_subdomain(_str(group_name)))
    return errs


_DEFAULT_POD_OPTIONS = PodValidationOptions()


def validate_pod(pod: Any, opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodCreate`` (metadata + spec) for a Pod dict."""
    p = _map(pod)
    errs = validate_object_meta(p.get("metadata"), namespaced=True)
    errs.extend(_pod_spec_errors(_map(p.get("spec")), opts or _DEFAULT_POD_OPTIONS))
    return errs


#: :func:`_pod_spec_errors` memo: (spec as JSON, options) → errors. Pods of one template (a
#: Deployment's, a Job's, a benchmark's) share their spec, so the box validates it once.
_SPEC_ERRORS: dict[tuple[bytes, PodValidationOptions], tuple[FieldError, ...]] = {}
_SPEC_ERRORS_MAX = 256
#: larger specs are validated every time (the memo's memory stays under ~4 MiB)
_SPEC_ERRORS_MAX_BYTES = 16 << 10


def _pod_spec_errors(spec: Mapping[str, Any], opts: PodValidationOptions) -> list[FieldError]:
    """``ValidatePodSpec`` + ``validateContainersOnlyForPod`` of a pod's spec: a pure function of
    the spec and the options, remembered by the spec's exact JSON (orjson keeps key order and
    tells ``1``, ``1.0`` and ``true`` apart; a spec JSON cannot encode is not remembered)."""
    try:
        raw = orjson.dumps(spec)
    except TypeError:  # YAML-decoded keys that are not strings, dates, …
        raw = b""
    key = (raw, opts) if 0 < len(raw) <= _SPEC_ERRORS_MAX_BYTES else None
    if key is not None:
        hit = _SPEC_ERRORS.get(key)
        if hit is not None:
            return list(hit)
    errs = validate_pod_spec(spec, "spec", opts)
    for cname in ("containers", "initContainers"):  # validateContainersOnlyForPod
        for i, c in enumerate(_list(spec.get(cname))):
            image = _str(_map(c).get("image"))
            if image != image.strip():
                errs.append(FieldError(f"spec.{cname}[{i}].image", INVALID, image,
                                       "must not have leading or trailing whitespace"))
    if key is not None:
        if len(_SPEC_ERRORS) >= _SPEC_ERRORS_MAX:
            _SPEC_ERRORS.clear()
        _SPEC_ERRORS[key] = tuple(errs)
    return errs


_UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)


def _spec_diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            _spec_diff(old.get(k), new.get(k), _child(path, k), out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _spec_diff(a, b, _index(path, i), out)
    elif old != new:
        if old is not None:
            out.append(f"- {path}: {_render_value(old)}")
        if new is not None:
            out.append(f"+ {path}: {_render_value(new)}")


def validate_pod_update(new: Any, old: Any, opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodUpdate``'s spec rules: besides what :func:`validate_pod` checks, a pod's spec
    may change only in container images, ``activeDeadlineSeconds``, added tolerations (existing
    ones may change only ``tolerationSeconds``), ``terminationGracePeriodSeconds``, removed
    scheduling gates, and — while the pod is still gated — its node selector and affinity.
    Anything else is ``spec: Forbidden: pod updates may not change fields other than ...``
    followed by the changed paths (upstream follows with a ``cmp.Diff`` of the Go structs,
    which this does not reproduce byte for byte)."""
    n, o = _map(new), _map(old)
    nspec, ospec = dict(_map(n.get("spec"))), _map(o.get("spec"))
    errs = validate_pod(n, opts)
    munged = dict(nspec)
    for cname in ("containers", "initContainers"):
        ncs, ocs = _list(nspec.get(cname)), _list(ospec.get(cname))
        if cname in nspec and len(ncs) == len(ocs):
            munged[cname] = [{**_map(nc), "image": _map(oc).get("image")} if "image" in _map(oc) else nc
                             for nc, oc in zip(ncs, ocs, strict=True)]
    for f in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
        if f in ospec:
            munged[f] = ospec[f]
        else:
            munged.pop(f, None)
    old_tols = [_map(t) for t in _list(ospec.get("tolerations"))]
    new_tols = [_map(t) for t in _list(nspec.get("tolerations"))]
    for ot in old_tols:
        bare = {k: v for k, v in ot.items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in nt.items() if k != "tolerationSeconds"} == bare for nt in new_tols):
            errs.append(FieldError("spec.tolerations", FORBIDDEN, "",
                                   "existing toleration can not be modified except its tolerationSeconds"))
            break
    if "tolerations" in ospec:
        munged["tolerations"] = ospec["tolerations"]
    else:
        munged.pop("tolerations", None)
    old_gates = {_str(_map(g).get("name")) for g in _list(ospec.get("schedulingGates"))}
    for i, g in enumerate(_list(nspec.get("schedulingGates"))):
        name = _str(_map(g).get("name"))
        if name not in old_gates:
            errs.append(FieldError(_child(_index("spec.schedulingGates", i), "name"), FORBIDDEN, "",
                                   f"only deletion is allowed, but found new scheduling gate '{name}'"))
    for f in ("schedulingGates",) + (("nodeSelector", "affinity") if old_gates else ()):
        if f in ospec:
            munged[f] = ospec[f]
        else:
            munged.pop(f, None)
    if munged != dict(ospec):
        changes: list[str] = []
        _spec_diff(dict(ospec), munged, "spec", changes)
        errs.append(FieldError("spec", FORBIDDEN, "", "pod updates may not change fields other than "
                               + ",".join(_UPDATABLE_POD_SPEC_FIELDS) + "\n" + "\n".join(changes)))
    return errs


# ---- node, namespace, priority class ----------------------------------------------------------------


def validate_node(node: Any) -> list[FieldError]:
    """``ValidateNode``: metadata, taints (reported under ``metadata.taints``, as upstream),
    capacity and allocatable quantities (non-negative; integers for integer resources)."""
    n = _map(node)
    errs = validate_object_meta(n.get("metadata"), namespaced=False)
    spec = _map(n.get("spec"))
    if _list(spec.get("taints")):
        errs.extend(validate_taints(spec.get("taints"), "metadata.taints"))
    status = _map(n.get("status"))
    for part in ("capacity", "allocatable"):
        for k, v in _map(status.get(part)).items():
            errs.extend(_validate_resource_quantity(k, v, f"status.{part}.{k}"))
    errs.extend(_validate_node_declared_features(_list(status.get("declaredFeatures")), "status.declaredFeatures"))
    return errs


_DECLARED_FEATURE = re.compile(r"^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$")


def _validate_node_declared_features(features: list[Any], path: str) -> list[FieldError]:
    """``validateNodeDeclaredFeatures`` (validation.go L7586): valid names, sorted, no repeats."""
    errs: list[FieldError] = []
    for i, raw in enumerate(features):
        f = _str(raw)
        if len(f) > 253:
            errs.append(FieldError(_index(path, i), INVALID, f,
                                   f"invalid feature name {_go_quote(f)}: must be no more than 253 characters"))
        elif not _DECLARED_FEATURE.match(f):
            errs.append(FieldError(_index(path, i), INVALID, f, f"invalid feature name {_go_quote(f)}: must start "
                                   "with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., "
                                   "MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
                                   "and slashes"))
        if i + 1 < len(features):
            nxt = _str(features[i + 1])
            if f == nxt:
                errs.append(FieldError(_index(path, i + 1), DUPLICATE, nxt))
            elif f > nxt:
                errs.append(FieldError(_index(path, i + 1), INVALID, nxt, "list must be sorted alphabetically"))
    return errs


def validate_namespace(ns: Any) -> list[FieldError]:
    """``ValidateNamespace``: a DNS-1123 label name, cluster-scoped."""
    n = _map(ns)
    errs = validate_object_meta(n.get("metadata"), namespaced=False, name_kind="label")
    for i, f in enumerate(_list(_map(n.get("spec")).get("finalizers"))):
        errs.extend(FieldError(_index("spec.finalizers", i), INVALID, _str(f), m) for m in is_qualified_name(_str(f)))
    return errs


HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


class PriorityAdmissionError(ValueError):
    """A pod the ``Priority`` admission plugin forbids; ``str(err)`` is upstream's reason
    (the API server answers 403 ``pods "x" is forbidden: <reason>``)."""


def resolve_pod_priority(
    spec: Mapping[str, Any],
    get_class: Callable[[str], Mapping[str, Any] | None],
    classes: Iterable[Mapping[str, Any]],
) -> tuple[str, int, str | None]:
    """What the ``Priority`` admission plugin (``plugin/pkg/admission/priority/admission.go``)
    sets on a new pod: ``(priorityClassName, priority, preemptionPolicy)``.

    ``get_class(name)`` returns a stored PriorityClass (``system-node-critical`` and
    ``system-cluster-critical`` are built in when it returns None); ``classes`` are all
    PriorityClasses (for the global default: the ``globalDefault`` one with the lowest value;
    none → priority 0, ``PreemptLowerPriority``). Raises :class:`PriorityAdmissionError` for
    an unknown class, or a ``spec.priority``/``spec.preemptionPolicy`` the pod carries that
    differs from the computed one.
    """
    name = _str(spec.get("priorityClassName"))
    policy: str | None
    if not name:
        default: Mapping[str, Any] | None = None
        for candidate in classes:
            if candidate.get("globalDefault") and (
                    default is None or default.get("value", 0) > candidate.get("value", 0)):
                default = candidate
        if default is not None:
            name = _str(_map(default.get("metadata")).get("name"))
            priority, policy = int(default.get("value", 0)), default.get("preemptionPolicy")
        else:
            priority, policy = 0, "PreemptLowerPriority"
    else:
        pc: Mapping[str, Any] | None = get_class(name)
        if pc is None and name in SYSTEM_PRIORITY_CLASSES:
            pc = {"value": SYSTEM_PRIORITY_CLASSES[name], "preemptionPolicy": "PreemptLowerPriority"}
        if pc is None:
            raise PriorityAdmissionError(f"no PriorityClass with name {name} was found")
        priority, policy = int(pc.get("value", 0)), pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise PriorityAdmissionError(
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name"
        )
    given_policy = spec.get("preemptionPolicy")
    if policy is not None and given_policy is not None and given_policy != policy:
        raise PriorityAdmissionError(
            f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; "
            f"priority admission controller computed {policy} from the given PriorityClass name"
        )
    return name, priority, policy


def validate_priority_class(pc: Any) -> list[FieldError]:
    """``ValidatePriorityClass`` (pkg/apis/scheduling/validation)."""
    p = _map(pc)
    errs = validate_object_meta(p.get("metadata"), namespaced=False)
    name = _str(_map(p.get("metadata")).get("name"))
    value = p.get("value", 0)
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        problem = None
        if known is None:
            problem = f"{name} is not a known system priority class"
        elif known != value:
            problem = f"value of {name} PriorityClass must be {known}"
        elif p.get("globalDefault"):
            problem = f"globalDefault of {name} PriorityClass must be false"
        if problem:
            errs.append(FieldError("metadata.name", FORBIDDEN, "",
                                   "priority class names with 'system-' prefix are reserved for system use only. "
                                   f"error: {problem}"))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(FieldError("value", FORBIDDEN, "",
                               "maximum allowed value of a user defined priority is "
                               f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    pp = p.get("preemptionPolicy")
    if pp is not None and pp not in _PREEMPTION_POLICIES:
        errs.append(FieldError("preemptionPolicy", NOT_SUPPORTED, pp, _supported(_PREEMPTION_POLICIES)))
    return errs


# ---- workloads (pkg/apis/apps/validation, pkg/apis/batch/validation, core RC) ------------------------


def label_selector_matches(sel: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A LabelSelector as a plain dict (``matchLabels`` + ``matchExpressions`` with ``In``,
    ``NotIn``, ``Exists``, ``DoesNotExist``) against a label map; an empty selector matches
    everything (``metav1.LabelSelectorAsSelector``, apimachinery ``pkg/apis/meta/v1/helpers.go``).
    Expects a selector :func:`validate_label_selector` accepts; an unknown operator is ignored."""
    for k, v in _map(sel.get("matchLabels")).items():
        if labels.get(k) != v:
            return False
    for e in _list(sel.get("matchExpressions")):
        em = _map(e)
        key, op, values = _str(em.get("key")), _str(em.get("operator")), [_str(v) for v in _list(em.get("values"))]
        present = key in labels
        if op == "In" and not (present and _str(labels[key]) in values):
            return False
        if op == "NotIn" and present and _str(labels[key]) in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def validate_pod_template(template: Any, path: str, opts: PodValidationOptions | None = None) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: template labels, annotations and pod spec."""
    t = _map(template)
    meta = _map(t.get("metadata"))
    errs = validate_labels(meta.get("labels"), _child(_child(path, "metadata"), "labels"))
    errs.extend(validate_annotations(meta.get("annotations"), _child(_child(path, "metadata"), "annotations")))
    errs.extend(validate_pod_spec(t.get("spec"), _child(path, "spec"), opts))
    return errs


def _nonnegative(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [FieldError(path, INVALID, value, "must be greater than or equal to 0")]
    return []


def validate_workload(obj: Any, opts: PodValidationOptions | None = None) -> list[FieldError]:
    """Deployment, ReplicaSet, StatefulSet, DaemonSet (``apps/v1``), ReplicationController, Job
    and CronJob: metadata, replica counts, selector and template labels, the pod template."""
    o = _map(obj)
    kind = _str(o.get("kind"))
    errs = validate_object_meta(o.get("metadata"), namespaced=True, name_kind=name_kind_for(kind))
    spec = _map(o.get("spec"))
    if kind == "CronJob":
        job_spec = _map(_map(spec.get("jobTemplate")).get("spec"))
        return errs + _validate_job_spec(job_spec, "spec.jobTemplate.spec")
    if kind == "Job":
        return errs + _validate_job_spec(spec, "spec")
    errs.extend(_nonnegative(spec.get("replicas"), "spec.replicas"))
    template = _map(spec.get("template"))
    labels = _map(_map(template.get("metadata")).get("labels"))
    if kind == "ReplicationController":
        selector = _map(spec.get("selector")) or labels
        if not selector:
            errs.append(FieldError("spec.selector", REQUIRED, ""))
        elif not all(labels.get(k) == v for k, v in selector.items()):
            errs.append(FieldError("spec.template.metadata.labels", INVALID, dict(labels),
                                   "`selector` does not match template `labels`"))
    else:
        sel = spec.get("selector")
        if not isinstance(sel, dict):
            errs.append(FieldError("spec.selector", REQUIRED, ""))
        else:
            errs.extend(validate_label_selector(sel, "spec.selector"))
            if not _map(sel.get("matchLabels")) and not _list(sel.get("matchExpressions")):
                errs.append(FieldError("spec.selector", INVALID, dict(sel),
                                       f"empty selector is invalid for {kind.lower()}"))
            elif not label_selector_matches(sel, labels):
                errs.append(FieldError("spec.template.metadata.labels", INVALID, dict(labels),
                                       "`selector` does not match template `labels`"))
    errs.extend(validate_pod_template(template, "spec.template", opts))
    rp = _str(_map(template.get("spec")).get("restartPolicy"))
    if rp and rp != "Always":
        errs.append(FieldError("spec.template.spec.restartPolicy", NOT_SUPPORTED, rp, _supported(["Always"])))
    return errs


def _validate_job_spec(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for f in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit"):
        errs.extend(_nonnegative(spec.get(f), _child(path, f)))
    template = _map(spec.get("template"))
    errs.extend(validate_pod_template(template, _child(path, "template")))
    rp = _str(_map(template.get("spec")).get("restartPolicy"))
    rp_path = _child(_child(_child(path, "template"), "spec"), "restartPolicy")
    if rp in ("Always", ""):
        errs.append(FieldError(rp_path, REQUIRED, "", 'valid values: "OnFailure", "Never"'))
    elif rp not in ("OnFailure", "Never"):
        errs.append(FieldError(rp_path, NOT_SUPPORTED, rp, _supported(["OnFailure", "Never"])))
    return errs


# ---- PodDisruptionBudget (pkg/apis/policy/validation) -----------------------------------------------

_PERCENT = re.compile(r"^[0-9]+%$")


def _validate_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent`` + ``IsNotMoreThan100Percent``."""
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [FieldError(path, INVALID, value, _regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%"))]
        if int(value[:-1]) > 100:
            return [FieldError(path, INVALID, value, "must not be greater than 100%")]
        return []
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [FieldError(path, INVALID, value, "must be greater than or equal to 0")]
    return []


def validate_pod_disruption_budget(pdb: Any) -> list[FieldError]:
    """``ValidatePodDisruptionBudget``: minAvailable/maxUnavailable (not both; non-negative
    integers or percents ≤ 100%), selector."""
    p = _map(pdb)
    errs = validate_object_meta(p.get("metadata"), namespaced=True)
    spec = _map(p.get("spec"))
    min_av, max_un = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_av is not None and max_un is not None:
        shown = {k: spec[k] for k in ("minAvailable", "selector", "maxUnavailable", "unhealthyPodEvictionPolicy")
                 if k in spec}
        errs.append(FieldError("spec", INVALID, shown, "minAvailable and maxUnavailable cannot be both set"))
    if min_av is not None:
        errs.extend(_validate_int_or_percent(min_av, "spec.minAvailable"))
    if max_un is not None:
        errs.extend(_validate_int_or_percent(max_un, "spec.maxUnavailable"))
    errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        errs.append(FieldError("spec.unhealthyPodEvictionPolicy", NOT_SUPPORTED, policy,
                               _supported(["AlwaysAllow", "IfHealthyBudget"])))
    return errs


# ---- Service (the parts the scheduler reads, plus ports) --------------------------------------------

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def validate_service(svc: Any) -> list[FieldError]:
    """``ValidateService`` for: name (DNS-1035 label), ``type``, ports (required unless headless
    or ExternalName; names required and unique when several; port numbers; protocol; target
    port), and the selector's labels."""
    o = _map(svc)
    errs = validate_object_meta(o.get("metadata"), namespaced=True, name_kind="dns1035")
    spec = _map(o.get("spec"))
    stype = _str(spec.get("type"))
    if stype and stype not in _SERVICE_TYPES:
        errs.append(FieldError("spec.type", NOT_SUPPORTED, stype, _supported(_SERVICE_TYPES)))
    ports = _list(spec.get("ports"))
    headless = spec.get("clusterIP") == "None" or _list(spec.get("clusterIPs"))[:1] == ["None"]
    if not ports and not headless and stype != "ExternalName":
        errs.append(FieldError("spec.ports", REQUIRED, ""))
    names: set[str] = set()
    for i, raw in enumerate(ports):
        p = _index("spec.ports", i)
        port = _map(raw)
        name = _str(port.get("name"))
        if len(ports) > 1 and not name:
            errs.append(FieldError(_child(p, "name"), REQUIRED, ""))
        elif name:
            errs.extend(FieldError(_child(p, "name"), INVALID, name, m) for m in is_dns1123_label(name))
            if name in names:
                errs.append(FieldError(_child(p, "name"), DUPLICATE, name))
            names.add(name)
        number = port.get("port", 0)
        errs.extend(FieldError(_child(p, "port"), INVALID, number, m) for m in _is_valid_port_num(number))
        proto = _str(port.get("protocol"))
        if proto and proto not in _PROTOCOLS:
            errs.append(FieldError(_child(p, "protocol"), NOT_SUPPORTED, proto, _supported(_PROTOCOLS)))
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool):
            errs.extend(FieldError(_child(p, "targetPort"), INVALID, target, m) for m in _is_valid_port_num(target))
        elif isinstance(target, str):
            errs.extend(FieldError(_child(p, "targetPort"), INVALID, target, m) for m in _is_valid_port_name(target))
    errs.extend(validate_labels(spec.get("selector"), "spec.selector"))
    return errs


# ---- storage (pkg/apis/core/validation PV/PVC, pkg/apis/storage/validation) --------------------------

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_PV_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
_SC_RECLAIM_POLICIES = ("Delete", "Retain")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
               "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
               "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")


def _validate_access_modes(modes: list[Any], path: str, required_detail: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not modes:
        errs.append(FieldError(path, REQUIRED, "", required_detail))
    rwop = other = False
    for mode in modes:
        m = _str(mode)
        if m not in _ACCESS_MODES:
            errs.append(FieldError(path, NOT_SUPPORTED, m, _supported(_ACCESS_MODES)))
        elif m == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(FieldError(path, FORBIDDEN, "", "may not use ReadWriteOncePod with other access modes"))
    return errs


def _validate_positive_quantity(q: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveQuantityValue`` (a quantity that does not parse: its parse error)."""
    nanos = _nanos(q)
    if nanos is None:
        return [FieldError(path, INVALID, _render_quantity(q), _quantity_error(q))]
    if nanos <= 0:
        return [FieldError(path, INVALID, canonical_quantity(q), "must be greater than zero")]
    return []


def _render_quantity(q: Any) -> Any:
    return q if isinstance(q, str) else str(q)


def _validate_class_name(name: str, path: str) -> list[FieldError]:
    return [FieldError(path, INVALID, name, m) for m in _name_subdomain(name)] if name else []


def _validate_class_and_volume_mode(spec: Mapping[str, Any]) -> list[FieldError]:
    """``spec.storageClassName`` and ``spec.volumeMode``, as a PV's and a PVC's spec both check them."""
    errs = _validate_class_name(_str(spec.get("storageClassName")), "spec.storageClassName")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(FieldError("spec.volumeMode", NOT_SUPPORTED, _str(mode), _supported(_VOLUME_MODES)))
    return errs


def validate_persistent_volume(pv: Any) -> list[FieldError]:
    """``ValidatePersistentVolume`` for what the scheduler's volume plugins read: access modes,
    capacity (required; positive), reclaim policy, node affinity (``required`` terms), exactly
    one volume source (``local`` needs node affinity), storage class name, volume mode. Not
    covered: each volume source's own fields, and capacity keys other than ``storage`` (upstream
    reports the whole map as a Go value)."""
    o = _map(pv)
    errs = validate_object_meta(o.get("metadata"), namespaced=False)
    spec = _map(o.get("spec"))
    errs.extend(_validate_access_modes(_list(spec.get("accessModes")), "spec.accessModes", ""))
    capacity = spec.get("capacity")
    if not _map(capacity):
        errs.append(FieldError("spec.capacity", REQUIRED, ""))
    for k, q in _map(capacity).items():
        errs.extend(_validate_positive_quantity(q, _key("spec.capacity", k)))
    policy = _str(spec.get("persistentVolumeReclaimPolicy"))
    if policy and policy not in _PV_RECLAIM_POLICIES:
        errs.append(FieldError("spec.persistentVolumeReclaimPolicy", NOT_SUPPORTED, policy,
                               _supported(_PV_RECLAIM_POLICIES)))
    affinity = spec.get("nodeAffinity")
    affinity_set = False
    if isinstance(affinity, dict):
        required = affinity.get("required")
        if not isinstance(required, dict):
            errs.append(FieldError("spec.nodeAffinity.required", REQUIRED, "",
                                   "must specify required node constraints"))
        else:
            affinity_set = True
            terms = _list(required.get("nodeSelectorTerms"))
            tpath = "spec.nodeAffinity.required.nodeSelectorTerms"
            if not terms:
                errs.append(FieldError(tpath, REQUIRED, "", "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs.extend(_validate_node_selector_term(term, _index(tpath, i), False))
    sources = 0
    for src in _PV_SOURCES:
        if spec.get(src) is None:
            continue
        if sources and src != "flexVolume":
            errs.append(FieldError(_child("spec", src), FORBIDDEN, "", "may not specify more than 1 volume type"))
            continue
        sources += 1
        if src == "local" and not affinity_set:
            errs.append(FieldError("spec.nodeAffinity", REQUIRED, "", "Local volume requires node affinity"))
    if not sources:
        errs.append(FieldError("spec", REQUIRED, "", "must specify a volume type"))
    errs.extend(_validate_class_and_volume_mode(spec))
    return errs


def validate_persistent_volume_claim(pvc: Any) -> list[FieldError]:
    """``ValidatePersistentVolumeClaim``: access modes (at least one, supported, ReadWriteOncePod
    alone), selector, ``resources[storage]`` (required, positive — upstream's path has no
    ``requests``), storage class name, volume mode."""
    o = _map(pvc)
    errs = validate_object_meta(o.get("metadata"), namespaced=True)
    spec = _map(o.get("spec"))
    modes = _list(spec.get("accessModes"))
    if not modes:
        errs.append(FieldError("spec.accessModes", REQUIRED, "", "at least 1 access mode is required"))
    if isinstance(spec.get("selector"), dict):
        errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
    errs.extend(e for e in _validate_access_modes(modes, "spec.accessModes", "") if e.type != REQUIRED)
    requests = _map(_map(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(FieldError("spec.resources[storage]", REQUIRED, ""))
    else:
        errs.extend(_validate_positive_quantity(requests["storage"], "spec.resources[storage]"))
    errs.extend(_validate_class_and_volume_mode(spec))
    return errs


def validate_storage_class(sc: Any) -> list[FieldError]:
    """``ValidateStorageClass`` (pkg/apis/storage/validation): provisioner (required, a qualified
    name once lower-cased), reclaim policy, volume binding mode (both defaulted when absent)."""
    o = _map(sc)
    errs = validate_object_meta(o.get("metadata"), namespaced=False)
    provisioner = _str(o.get("provisioner"))
    if not provisioner:
        errs.append(FieldError("provisioner", REQUIRED, ""))
    else:
        errs.extend(FieldError("provisioner", INVALID, provisioner, m) for m in is_qualified_name(provisioner.lower()))
    policy = o.get("reclaimPolicy")
    if policy is not None and _str(policy) and policy not in _SC_RECLAIM_POLICIES:
        errs.append(FieldError("reclaimPolicy", NOT_SUPPORTED, _str(policy), _supported(_SC_RECLAIM_POLICIES)))
    mode = o.get("volumeBindingMode")
    if mode is not None and mode not in _BINDING_MODES:
        errs.append(FieldError("volumeBindingMode", NOT_SUPPORTED, _str(mode), _supported(_BINDING_MODES)))
    return errs


def validate_csi_node(node: Any) -> list[FieldError]:
    """``ValidateCSINode``: each driver's name (``ValidateCSIDriverName``: required, at most 63
    bytes, a DNS subdomain once lower-cased), nodeID (required, at most 128 characters), ``allocatable.count``
    non-negative, no duplicate driver names."""
    o = _map(node)
    errs = validate_object_meta(o.get("metadata"), namespaced=False)
    seen: set[str] = set()
    for i, d in enumerate(_list(_map(o.get("spec")).get("drivers"))):
        dpath = _index("spec.drivers", i)
        drv = _map(d)
        name = _str(drv.get("name"))
        npath = _child(dpath, "name")
        if not name:  # ValidateCSIDriverName: each check adds its error
            errs.append(FieldError(npath, REQUIRED, ""))
        if len(name) > 63:
            errs.append(FieldError(npath, TOO_LONG, "", "may not be more than 63 bytes"))
        errs.extend(FieldError(npath, INVALID, name, m) for m in is_dns1123_subdomain(name.lower()))
        node_id = _str(drv.get("nodeID"))
        if not node_id:
            errs.append(FieldError(_child(dpath, "nodeID"), REQUIRED, ""))
        elif len(node_id) > 128:
            errs.append(FieldError(_child(dpath, "nodeID"), INVALID, node_id, "must be 128 characters or less"))
        count = _map(drv.get("allocatable")).get("count")
        errs.extend(_nonnegative(count, _child(_child(dpath, "allocatable"), "count")))
        if name in seen:
            errs.append(FieldError(_child(dpath, "name"), DUPLICATE, name))
        seen.add(name)
    return errs


# ---- dispatch ---------------------------------------------------------------------------------------

_STORAGE_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {
    "PersistentVolume": validate_persistent_volume,
    "PersistentVolumeClaim": validate_persistent_volume_claim,
    "StorageClass": validate_storage_class,
    "CSINode": validate_csi_node,
}

_WORKLOADS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Job", "CronJob"}

_CLUSTER_SCOPED = {
    "Node", "Namespace", "PersistentVolume", "PriorityClass", "StorageClass", "CSINode", "CSIDriver",
    "VolumeAttachment", "ClusterRole", "ClusterRoleBinding", "DeviceClass", "ResourceSlice", "CustomResourceDefinition",
}


#: ``core.MaxSecretSize``: the data of a ConfigMap or Secret, in bytes (1 MiB).
MAX_SECRET_SIZE = 1024 * 1024
_CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def is_config_map_key(key: str) -> list[str]:
    """``validation.IsConfigMapKey`` (apimachinery ``util/validation``)."""
    msgs: list[str] = []
    if len(key) > 253:
        msgs.append("must be no more than 253 characters")
    if not _CONFIG_MAP_KEY.match(key):
        msgs.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
                    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
    if key == ".":
        msgs.append("must not be '.'")
    elif key == "..":
        msgs.append("must not be '..'")
    elif key.startswith(".."):
        msgs.append("must not start with '..'")
    return msgs


def _data_size(value: Any, base64_encoded: bool) -> int:
    s = _str(value)
    if not base64_encoded:
        return len(s.encode())
    return len(s) * 3 // 4 - s.endswith("=") - s.endswith("==")  # decoded length


def validate_config_map(cm: Any) -> list[FieldError]:
    """``ValidateConfigMap`` (v1.37.2 ``pkg/apis/core/validation/validation.go`` L8190-8218): keys
    are config keys, a key is not in both ``data`` and ``binaryData``, and the values add up to at
    most 1 MiB (``: Too long: may not be more than 1048576 bytes``)."""
    o = _map(cm)
    errs = validate_object_meta(o.get("metadata"), namespaced=True)
    data, binary = _map(o.get("data")), _map(o.get("binaryData"))
    total = 0
    for k, v in data.items():
        errs.extend(FieldError(f"data[{k}]", INVALID, k, m) for m in is_config_map_key(k))
        if k in binary:
            errs.append(FieldError(f"data[{k}]", INVALID, k, "duplicate of key present in binaryData"))
        total += _data_size(v, False)
    for k, v in binary.items():
        errs.extend(FieldError(f"binaryData[{k}]", INVALID, k, m) for m in is_config_map_key(k))
        total += _data_size(v, True)
    if total > MAX_SECRET_SIZE:
        errs.append(FieldError("", TOO_LONG, "<value omitted>", f"may not be more than {MAX_SECRET_SIZE} bytes"))
    return errs


def validate_secret(secret: Any) -> list[FieldError]:
    """The size and key rules of ``ValidateSecret`` (v1.37.2 validation.go L8087-8101): keys are
    config keys, the decoded values add up to at most 1 MiB (``data: Too long: …``)."""
    o = _map(secret)
    errs = validate_object_meta(o.get("metadata"), namespaced=True)
    sizes = {k: _data_size(v, True) for k, v in _map(o.get("data")).items()}
    # v1 stringData is merged into data (it wins on a shared key) before validation (conversion)
    sizes.update({k: _data_size(v, False) for k, v in _map(o.get("stringData")).items()})
    for k in sizes:
        errs.extend(FieldError(f"data[{k}]", INVALID, k, m) for m in is_config_map_key(k))
    total = sum(sizes.values())
    if total > MAX_SECRET_SIZE:
        errs.append(FieldError("data", TOO_LONG, "<value omitted>", f"may not be more than {MAX_SECRET_SIZE} bytes"))
    return errs


KIND_VALIDATORS: dict[str, Callable[[Any], list[FieldError]]] = {}
"""kind → validator, for kinds whose validation lives in a module built on this one (it registers
itself when imported: :mod:`kubesched.api.rbacvalidation` for the RBAC kinds; the package's
``__init__`` imports it), so that this module need not import it back."""


def validate_object(obj: Any, *, namespaced: bool | None = None,
                    pod_options: PodValidationOptions | None = None) -> list[FieldError]:
    """Validate any object by its ``kind``: Pod, Node, Namespace, PriorityClass fully; other
    kinds' metadata (name rule per kind: DNS-1035 label for Services, DNS subdomain otherwise).
    ``namespaced`` overrides the built-in cluster-scoped kind list; ``pod_options`` applies to
    pods and pod templates."""
    o = _map(obj)
    kind = _str(o.get("kind"))
    if kind == "Pod":
        return validate_pod(o, pod_options)
    if kind == "Node":
        return validate_node(o)
    if kind == "Namespace":
        return validate_namespace(o)
    if kind == "PriorityClass":
        return validate_priority_class(o)
    if kind in _WORKLOADS:
        return validate_workload(o, pod_options)
    if kind == "PodDisruptionBudget":
        return validate_pod_disruption_budget(o)
    if kind == "Service":
        return validate_service(o)
    if kind == "ConfigMap":
        return validate_config_map(o)
    if kind == "Secret":
        return validate_secret(o)
    storage = _STORAGE_VALIDATORS.get(kind)
    if storage is not None:
        return storage(o)
    registered = KIND_VALIDATORS.get(kind)
    if registered is not None:
        return registered(o)
    scoped = namespaced if namespaced is not None else kind not in _CLUSTER_SCOPED
    return validate_object_meta(o.get("metadata"), namespaced=scoped, name_kind=name_kind_for(kind))
