"""Request bodies in Kubernetes' protobuf encoding (``application/vnd.kubernetes.protobuf``).

kubectl's typed generators (``kubectl create namespace|deployment|configmap|secret|service…``,
``kubectl run``, ``kubectl expose``) send their object as protobuf, not JSON. This module turns
such a body into the JSON-shaped ``dict`` the rest of the server works with, so the box accepts
them as the real API server does. Responses stay JSON (the clients accept it).

The wire format (``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go``):
the 4-byte magic ``k8s\\x00``, then a ``runtime.Unknown`` message whose ``typeMeta`` names the
``apiVersion``/``kind`` and whose ``raw`` holds the object's own message. The message types come
from the ``generated.proto`` files of ``k8s.io/api`` and ``k8s.io/apimachinery`` v0.37.2, compiled
once into ``data/k8s-api.desc.gz`` (``tools/protobuf/gen_descriptors.sh``) and decoded with the
``protobuf`` library. One set serves every emulated version (1.34 … 1.37): the served ``*/v1``
types only gain fields from one release to the next, and a field the emulated release lacks is
then dropped or rejected by that release's decoding checks (:mod:`kubesched.api.schemas`), so a
v1.34 box stores what a v1.34 API server would.

Turning a message into JSON follows the Go types' JSON encoding:

- field names are the proto names (k8s ``generated.proto`` uses the JSON names); an embedded
  struct Go inlines in JSON (``Probe.ProbeHandler``, ``Volume.VolumeSource``, …) is flattened;
- ``resource.Quantity`` → its string; ``meta.v1.Time`` → RFC 3339 in UTC to the second (the zero
  time, which Go encodes as ``null``, is left out); ``MicroTime`` → RFC 3339 with microseconds;
  ``meta.v1.Duration`` → Go's duration text; ``intstr.IntOrString`` → the int or the string;
  ``runtime.RawExtension`` / ``meta.v1.FieldsV1`` → the embedded JSON; ``bytes`` → base64;
- Go's marshaller writes non-pointer scalars even when empty. A zero value (``""``, 0,
  ``false``) is kept where Go's JSON keeps it — pointer fields (``replicas: 0`` is meaningful)
  and fields without ``omitempty`` — and dropped elsewhere, as ``omitempty`` does. Which fields
  are which comes from the Go struct tags, extracted once into ``data/k8s-api.fields.json.gz``
  (``tools/protobuf/gen_fieldinfo.py``).
"""

from __future__ import annotations

import base64
import gzip
import json
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["MAGIC", "MEDIA_TYPE", "ProtobufError", "decode_object"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"


class ProtobufError(ValueError):
    """A body that is not a decodable Kubernetes protobuf object (message for a 400/415)."""


@lru_cache(maxsize=1)
def _pool() -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool

    data = gzip.decompress(resources.files("kubesched.apiserver").joinpath("data/k8s-api.desc.gz").read_bytes())
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return pool


@lru_cache(maxsize=1)
def _keep_zero() -> dict[str, dict[str, str]]:
    """Message full name → {field: "p" (Go pointer scalar) | "k" (no omitempty) | "i" (inlined
    embedded struct)}."""
    data = resources.files("kubesched.apiserver").joinpath("data/k8s-api.fields.json.gz").read_bytes()
    out: dict[str, dict[str, str]] = json.loads(gzip.decompress(data))
    return out


@lru_cache(maxsize=256)
def _message_class(full_name: str) -> Any:
    from google.protobuf import message_factory

    try:
        desc = _pool().FindMessageTypeByName(full_name)
    except KeyError:
        return None
    return message_factory.GetMessageClass(desc)


def _package(api_version: str) -> str:
    """``apps/v1`` → ``k8s.io.api.apps.v1``; ``v1`` → ``k8s.io.api.core.v1``;
    ``rbac.authorization.k8s.io/v1`` → ``k8s.io.api.rbac.v1`` (the group's first label)."""
    group, _, version = api_version.rpartition("/")
    if group == "meta.k8s.io":
        return _META
    return f"k8s.io.api.{group.split('.')[0] if group else 'core'}.{version}"


def _rfc3339(seconds: int, nanos: int, micro: bool) -> str:
    t = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_duration(ns: int) -> str:
    """Go's ``time.Duration.String`` (e.g. ``1h2m3s``, ``1.5s``, ``300ms``, ``0s``)."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + f"{ns / size:.9f}".rstrip("0").rstrip(".") + unit
    h, rem = divmod(ns, 3_600_000_000_000)
    m, rem = divmod(rem, 60_000_000_000)
    s = f"{rem / 1e9:.9f}".rstrip("0").rstrip(".") + "s"
    return sign + (f"{h}h{m}m{s}" if h else f"{m}m{s}" if m else s)


def _special(name: str, msg: Any) -> tuple[bool, Any]:
    if name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        return True, msg.string
    if name == f"{_META}.Time":
        return True, (_rfc3339(msg.seconds, msg.nanos, False) if msg.seconds or msg.nanos else None)
    if name == f"{_META}.MicroTime":
        return True, (_rfc3339(msg.seconds, msg.nanos, True) if msg.seconds or msg.nanos else None)
    if name == f"{_META}.Duration":
        return True, _go_duration(msg.duration)
    if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        return True, (msg.strVal if msg.type == 1 else msg.intVal)
    if name == "k8s.io.apimachinery.pkg.runtime.RawExtension":
        return True, (json.loads(msg.raw) if msg.raw else None)
    if name == f"{_META}.FieldsV1":
        return True, (json.loads(msg.Raw) if msg.Raw else None)
    return False, None


def _scalar(fd: Any, v: Any) -> Any:
    if fd.type == fd.TYPE_BYTES:
        return base64.b64encode(v).decode()
    return v


def _value(fd: Any, v: Any) -> Any:
    if fd.message_type is not None:
        return _to_dict(v)
    return _scalar(fd, v)


def _to_dict(msg: Any) -> Any:
    """One message as its Go type's JSON value (dict, or a scalar for the special types)."""
    desc = msg.DESCRIPTOR
    special, value = _special(desc.full_name, msg)
    if special:
        return value
    out: dict[str, Any] = {}
    keep = _keep_zero().get(desc.full_name, {})
    for fd, v in msg.ListFields():
        mt = fd.message_type
        if mt is not None and mt.GetOptions().map_entry:
            vfd = mt.fields_by_name["value"]
            out[fd.name] = {k: _value(vfd, x) for k, x in v.items()}
        elif keep.get(fd.name) == "i":
            inner = _to_dict(v)  # an embedded Go struct inlined in JSON (Probe.ProbeHandler, …)
            if isinstance(inner, dict):
                out.update(inner)
        elif fd.is_repeated:
            out[fd.name] = [_value(fd, x) for x in v]
        else:
            x = _value(fd, v)
            if x is None or (mt is None and not v and fd.name not in keep):
                continue  # Go's JSON: a null Time, or a zero scalar under omitempty
            out[fd.name] = x
    return out


def decode_object(body: bytes) -> dict[str, Any]:
    """A protobuf request body → the object as JSON-shaped data, ``apiVersion`` and ``kind``
    first. Raises :class:`ProtobufError` for a body without the ``k8s\\x00`` envelope, an
    undecodable message, or a kind without a known message type."""
    if not body.startswith(MAGIC):
        raise ProtobufError("provided object is not a protobuf message (missing the k8s magic prefix)")
    from google.protobuf.message import DecodeError

    unknown_cls = _message_class(_UNKNOWN)
    try:
        unknown = unknown_cls.FromString(body[len(MAGIC):])
    except DecodeError as e:
        raise ProtobufError(f"unable to decode the protobuf envelope: {e}") from None
    api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
    if not kind:
        raise ProtobufError("Object 'Kind' is missing in the protobuf envelope")
    cls = _message_class(f"{_package(api_version)}.{kind}") or _message_class(f"{_META}.{kind}")
    if cls is None:
        raise ProtobufError(f'no kind "{kind}" is registered for version "{api_version}"')
    try:
        obj = cls.FromString(unknown.raw)
    except DecodeError as e:
        raise ProtobufError(f"unable to decode {api_version}, Kind={kind}: {e}") from None
    data = _to_dict(obj)
    return {"apiVersion": api_version, "kind": kind, **data}
