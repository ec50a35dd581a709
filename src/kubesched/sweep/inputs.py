"""Inputs read once by the driver and shipped to the runs as one msgpack payload each.

A payload is what a run needs and nothing else: the validated raw objects of a ``-f`` set (as
``simulate`` reads them), or a trace's node dicts and pod rows (as ``replay`` reads them, the
first ``limit`` pods on the first ``nodeLimit`` nodes). Bytes travel through Ray's object store
once per node; every run decodes its own fresh copy (a run writes into its objects). The
payload's digest is part of each run's hash: a changed input file is a new run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Any

import msgspec

from kubesched.errors import InputError
from kubesched.features import FeatureGate
from kubesched.sim.alibaba import TracePod, load_nodes, load_pods
from kubesched.sim.manifests import RawObject, load_manifests
from kubesched.sim.validate import validate_inputs
from kubesched.sweep.spec import Input

__all__ = ["Payload", "decode_files", "decode_trace", "load_payload"]

_TRACE_FIELDS = [f.name for f in dataclasses.fields(TracePod)]


@dataclasses.dataclass
class Payload:
    name: str
    kind: str
    data: bytes
    digest: str
    warnings: list[str] = dataclasses.field(default_factory=list)


def load_payload(inp: Input, features: FeatureGate) -> Payload:
    """Read and check one input. Raises :class:`InputError` (``ManifestError`` with
    ``file:line`` for bad manifests or CSV rows; the spec's ``inputs[i]`` for the rest)."""
    warnings: list[str] = []
    for p in inp.paths:
        if not os.path.exists(p):
            raise InputError(f"no such file or directory: {p}", inp.where)
    if inp.kind == "files":
        found: list[RawObject] = []
        raws = load_manifests(inp.paths, configs=found)
        if found:
            raise InputError("a KubeSchedulerConfiguration among an input's files: put it in configs.base",
                             found[0].source)
        validate_inputs(raws, warn=warnings.append, features=features)
        body: dict[str, Any] = {"kind": "files", "objects": [
            [r.kind, r.api_version, r.data, r.source, r.index, r.file, r.doc, list(r.items)] for r in raws]}
    else:
        nodes = load_nodes(inp.paths[0])
        if inp.node_limit is not None:
            nodes = nodes[:inp.node_limit]
        pods = load_pods(inp.paths[1])
        if inp.limit is not None:
            pods = pods[:inp.limit]
        body = {"kind": "trace", "trace": os.path.basename(inp.paths[1]), "nodes": nodes,
                "pods": [[getattr(p, f) for f in _TRACE_FIELDS] for p in pods]}
    data = msgspec.msgpack.encode(body)
    return Payload(inp.name, inp.kind, data, hashlib.sha256(data).hexdigest()[:20], warnings)


def decode(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.msgpack.decode(data)
    return out


def decode_files(body: dict[str, Any]) -> list[RawObject]:
    """Fresh :class:`RawObject` s of a ``files`` payload."""
    return [RawObject(k, av, d, src, idx, f, doc, tuple(items)) for k, av, d, src, idx, f, doc, items
            in body["objects"]]


def decode_trace(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[TracePod]]:
    """The node dicts and trace pods of a ``trace`` payload."""
    return body["nodes"], [TracePod(**dict(zip(_TRACE_FIELDS, row))) for row in body["pods"]]
