"""The hashes controllers put in names and labels: ``pod-template-hash``, ``controller-revision-hash``.

Follows ``pkg/controller/controller_utils.go`` ``ComputeHash`` and apimachinery ``util/rand``
(v1.37.2). Used by :mod:`kubesched.controllers.workloads` (which names pods) and
:mod:`kubesched.controllers.workloadstatus` (which compares revisions); it sits in ``api`` because
the API server's ``generateName`` (the box's and the simulator's store) draws from the same
``rand.String`` alphabet (:data:`ALPHANUMS`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["ALPHANUMS", "compute_hash", "fnv32", "fnv32a", "safe_encode_string", "statefulset_revision_hash"]

#: apimachinery ``util/rand`` alphabet (no vowels, no 0/1/3: no bad words, no look-alikes).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def fnv32a(data: bytes) -> int:
    """FNV-1a 32-bit (Go ``hash/fnv.New32a``)."""
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def fnv32(data: bytes) -> int:
    """FNV-1 32-bit (Go ``hash/fnv.New32``: multiply, then xor)."""
    h = 0x811C9DC5
    for b in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ b
    return h


def _go_json(v: Any) -> bytes:
    """Go ``json.Marshal`` of a decoded JSON value: sorted keys, compact, ``<``/``>``/``&`` and
    U+2028/U+2029 escaped as ``\\u003c``…"""
    s = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        s = s.replace(ch, esc)
    return s.encode()


def statefulset_revision_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """A StatefulSet's ControllerRevision hash (its name is ``<set>-<hash>``, its pods'
    ``controller-revision-hash`` label that name): ``history.HashControllerRevision``
    (``pkg/controller/history/controller_history.go``) over the revision's data, the patch
    ``{"spec":{"template":{...,"$patch":"replace"}}}`` (``statefulset/stateful_set_utils.go``
    ``getPatch``, Go-JSON encoded), FNV-1 32 then the decimal ``collisionCount`` (0 when unset,
    as ``getStatefulSetRevisions`` passes), through :func:`safe_encode_string`. ``template`` is
    the stored (defaulted) PodTemplateSpec; equal to the real kube-controller-manager's for it."""
    data = {"spec": {"template": {**template, "$patch": "replace"}}}
    return safe_encode_string(str(fnv32(_go_json(data) + str(collision_count or 0).encode())))


def safe_encode_string(s: str) -> str:
    """apimachinery ``rand.SafeEncodeString``: each byte ``b`` → ``ALPHANUMS[b % 27]``."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in s.encode())


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """``controller.ComputeHash`` (``pkg/controller/controller_utils.go``) over canonical JSON.

    ``template`` is a PodTemplateSpec mapping. Same construction as upstream (FNV-1a 32 of the
    template, then ``collisionCount`` as a ``uint32`` in an 8-byte little-endian buffer, the
    decimal sum through :func:`safe_encode_string`); the template bytes differ (see
    :mod:`kubesched.controllers.workloads`).
    """
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\0\0\0\0"
    return safe_encode_string(str(fnv32a(data)))
