"""Upstream's v1.34 API schemas for the box: see :mod:`kubesched.api.schemas` (shared with the
simulator); re-exported here for the apiserver modules."""

from __future__ import annotations

from kubesched.api.schemas import (
    SCHEMA_VERSION,
    decode_error,
    definition_for_gvk,
    definitions,
    gvks,
    known_kind,
    prune_unknown_fields,
    ref_name,
    resolve,
    unknown_field_paths,
    unknown_fields,
)

__all__ = [
    "SCHEMA_VERSION",
    "decode_error",
    "definition_for_gvk",
    "definitions",
    "gvks",
    "known_kind",
    "prune_unknown_fields",
    "ref_name",
    "resolve",
    "unknown_field_paths",
    "unknown_fields",
]
