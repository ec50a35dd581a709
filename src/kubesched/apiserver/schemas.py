"""Upstream's v1.34 API schemas, loaded lazily from the ``kubernetes-validate`` package.

``kubernetes-validate`` ships the OpenAPI definitions of every built-in kind converted to JSON
Schema (draft 2020-12): ``kubernetes-json-schema/v1.34.0-local/_definitions.json`` holds
``{"$defs": {<definition name>: <schema>}}`` with ``$ref: "#/$defs/<name>"`` references and
upstream's OpenAPI extensions kept verbatim (``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-group-version-kind``, ``x-kubernetes-list-type``,
...). Nullable types are spelled ``"type": ["string", "null"]``.

The file is 1.5 MB; it is located through :mod:`importlib.resources` (never a hard-coded path),
parsed once on first use and cached for the life of the process.

Public API::

    definitions() -> dict[str, dict]            # definition name -> schema (do not mutate)
    definition_for_gvk(group, version, kind) -> str | None
    resolve(schema) -> dict | None              # follow a "$ref" (one level; refs do not chain)
    gvks() -> dict[tuple[str, str, str], str]   # (group, version, kind) -> definition name

Upstream source of the data: ``api/openapi-spec/v3`` of kubernetes/kubernetes v1.34.
"""

from __future__ import annotations

import importlib.resources
from functools import lru_cache
from typing import Any

import orjson

__all__ = ["SCHEMA_VERSION", "definition_for_gvk", "definitions", "gvks", "ref_name", "resolve"]

#: The directory of ``kubernetes-validate``'s schemas this module reads.
SCHEMA_VERSION = "v1.34.0-local"
_REF_PREFIX = "#/$defs/"


@lru_cache(maxsize=1)
def definitions() -> dict[str, dict[str, Any]]:
    """All v1.34 definitions by name (``io.k8s.api.core.v1.Pod`` ...). Cached; never mutate."""
    root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema" / SCHEMA_VERSION
    data = orjson.loads((root / "_definitions.json").read_bytes())
    defs: dict[str, dict[str, Any]] = data["$defs"]
    return defs


@lru_cache(maxsize=1)
def gvks() -> dict[tuple[str, str, str], str]:
    """``(group, version, kind)`` → definition name, from ``x-kubernetes-group-version-kind``.

    Several definitions list the same GVK only for meta types (``DeleteOptions``,
    ``WatchEvent``); a definition whose name ends with ``.<version>.<kind>`` wins, so
    ``("", "v1", "Pod")`` maps to ``io.k8s.api.core.v1.Pod``.
    """
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            if key not in out or name.endswith(f".{key[1]}.{key[2]}"):
                out[key] = name
    return out


def definition_for_gvk(group: str, version: str, kind: str) -> str | None:
    """The definition name of a kind, or None when upstream v1.34 has no such kind."""
    return gvks().get((group, version, kind))


def ref_name(schema: dict[str, Any]) -> str | None:
    """The definition a ``{"$ref": "#/$defs/X"}`` schema points to, else None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        return ref[len(_REF_PREFIX) :]
    return None


def resolve(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """Follow a ``$ref`` (also one wrapped in ``allOf: [ {$ref} ]``); other schemas pass through."""
    if schema is None:
        return None
    all_of = schema.get("allOf")
    if all_of and isinstance(all_of, list):
        schema = all_of[0]
    name = ref_name(schema)
    if name is not None:
        return definitions().get(name)
    return schema
