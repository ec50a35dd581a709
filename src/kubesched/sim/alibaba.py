"""The Alibaba "openb" GPU cluster trace (cluster-trace-gpu-v2023) as Kubernetes objects.

The trace is two kinds of CSV file (schema: the trace's own ``README.md``, published in
https://github.com/alibaba/clusterdata under ``cluster-trace-gpu-v2023``):

* node lists, columns ``sn,cpu_milli,memory_mib,gpu,model`` → :func:`load_nodes`
  returns v1 Node dicts;
* pod lists, columns ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
  pod_phase,creation_time,deletion_time,scheduled_time`` → :func:`load_pods` returns
  :class:`TracePod` records (times kept apart from the object), whose
  :meth:`TracePod.to_pod` builds the v1 Pod dict.

Mapping choices
---------------

* Whole GPUs are the extended resource ``nvidia.com/gpu`` (:data:`GPU_RESOURCE`), the name
  the NVIDIA device plugin advertises, so manifests written for real GPU clusters and the
  trace share one resource name.
* The GPU model goes in the node label ``alibaba.com/gpu-model`` (:data:`GPU_MODEL_LABEL`).
  The trace's models (``G1``/``G2``/``G3`` are undisclosed internal codes, ``T4``,
  ``V100M16``, …) are not NVIDIA GPU-feature-discovery product names, so we do not
  pretend they are and use a label in Alibaba's own domain instead.
* Node ``pods`` capacity is :data:`NODE_MAX_PODS` (512), not the kubelet default 110: the
  trace has no pod-count limit, and the smallest CPU request in the published pod lists
  is 1000m, so a 128-core trace node (the largest) could legitimately hold 128 pods.
  512 keeps ``pods`` from ever being the binding constraint (also once GPU sharing packs
  many pods per GPU) while staying a plausible kubelet ``maxPods``.
* GPU-sharing pods (``num_gpu == 1`` and ``gpu_milli < 1000``) have no upstream resource:
  until a sharing plugin exists they request one whole ``nvidia.com/gpu`` and carry the
  share in the annotation ``alibaba.com/gpu-milli`` (:data:`GPU_MILLI_ANNOTATION`).
* ``gpu_spec`` ``A|B`` becomes a required node affinity ``alibaba.com/gpu-model In [A, B]``
  (applied whatever the pod's GPU count; in the published files it only appears on GPU pods).
* ``qos`` (Alibaba classes LS/BE, or Kubernetes' Burstable/Guaranteed) is kept in the
  annotation ``alibaba.com/qos``; it does not change requests or limits. Extended resources
  must have limits equal to requests in Kubernetes, so ``nvidia.com/gpu`` is set in both.

Edge cases in the data (checked against the four published pod lists)
-----------------------------------------------------------------------

* ``openb_pod_list_multigpu20.csv`` has only the five resource columns (no times, qos,
  phase, gpu_spec). Only ``name,cpu_milli,memory_mib,num_gpu,gpu_milli`` are required:
  missing time columns mean every pod is created at time 0 (file order is kept, since
  sorting is stable), never deleted and never scheduled in production; missing
  ``qos``/``pod_phase`` give ``None``; missing ``gpu_spec`` means any model.
* ``openb_pod_list_cpu050.csv`` is not sorted by ``creation_time``; :func:`load_pods`
  sorts by ``(creation_time, file order)``.
* An empty ``scheduled_time`` (the production-Pending pods) → ``None``; an empty
  ``deletion_time`` (none in the published files) → ``None`` = lives until the end.
* ``deletion_time < creation_time`` or ``scheduled_time < creation_time`` (none in the
  published files) is rejected with a ManifestError rather than silently repaired:
  such a row means the file is not what we think it is. Equal times are allowed.
* ``memory_mib == 0`` occurs (one pod): accepted, the pod requests ``0Mi``.
* ``gpu_milli`` is meaningful only when ``num_gpu == 1``. With ``num_gpu == 0`` a non-zero
  ``gpu_milli`` (none published) is ignored and stored as 0; with ``num_gpu > 1`` (all
  published rows say 1000) it is stored as 1000 — whole GPUs. With ``num_gpu == 1`` it
  must be 1..1000 (0 would be a GPU pod using no GPU: rejected).
* Node rows with ``gpu > 0`` and no model get no model label; a model on a node without
  GPUs is still labelled (neither occurs).
* Negative or non-integer resource values, empty names and duplicate names are rejected
  with ``ManifestError("file:line: ...")`` (line = the CSV line, header = line 1).
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import ManifestError

__all__ = [
    "GPU_MILLI_ANNOTATION",
    "GPU_MODEL_LABEL",
    "GPU_RESOURCE",
    "NODE_MAX_PODS",
    "QOS_ANNOTATION",
    "TracePod",
    "load_nodes",
    "load_pods",
]

GPU_RESOURCE = "nvidia.com/gpu"
GPU_MODEL_LABEL = "alibaba.com/gpu-model"
GPU_MILLI_ANNOTATION = "alibaba.com/gpu-milli"
QOS_ANNOTATION = "alibaba.com/qos"
NODE_MAX_PODS = 512

_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
_POD_REQUIRED = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")


@dataclass(slots=True)
class TracePod:
    """One row of a pod list. Times are seconds from the trace's origin.

    ``deletion_time`` ``None``: never deleted within the trace; ``scheduled_time``
    ``None``: never scheduled in production. ``phase``/``qos`` are ``None`` when the
    file has no such column. ``gpu_spec`` lists the allowed GPU models (empty = any).
    """

    name: str
    creation_time: float
    deletion_time: float | None
    scheduled_time: float | None
    phase: str | None
    qos: str | None
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: list[str] = field(default_factory=list)

    @property
    def gpu_sharing(self) -> bool:
        """A pod using a fraction of one GPU."""
        return self.num_gpu == 1 and self.gpu_milli < 1000

    def to_pod(self, namespace: str = "default") -> dict[str, Any]:
        """The v1 Pod this row describes (pending: no ``nodeName``, no status)."""
        requests: dict[str, str] = {"cpu": f"{self.cpu_milli}m", "memory": f"{self.memory_mib}Mi"}
        resources: dict[str, Any] = {"requests": requests}
        if self.num_gpu > 0:
            gpus = str(self.num_gpu)
            requests[GPU_RESOURCE] = gpus
            resources["limits"] = {GPU_RESOURCE: gpus}
        annotations: dict[str, str] = {}
        if self.qos:
            annotations[QOS_ANNOTATION] = self.qos
        if self.gpu_sharing:
            annotations[GPU_MILLI_ANNOTATION] = str(self.gpu_milli)
        metadata: dict[str, Any] = {"name": self.name, "namespace": namespace,
                                    "labels": {"app": self.name}}
        if annotations:
            metadata["annotations"] = annotations
        spec: dict[str, Any] = {
            "containers": [{"name": "main", "image": "pause", "resources": resources}],
        }
        if self.gpu_spec:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": GPU_MODEL_LABEL, "operator": "In", "values": list(self.gpu_spec)},
                ]}],
            }}}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


# --------------------------------------------------------------------------- CSV helpers

class _Rows:
    """Iterate a CSV file's rows as dicts with their line number; check the header."""

    def __init__(self, path: str | os.PathLike[str], required: tuple[str, ...]) -> None:
        self.path = os.fspath(path)
        self.required = required

    def __iter__(self):
        try:
            fh = open(self.path, newline="", encoding="utf-8-sig")
        except OSError as err:
            raise ManifestError(f"cannot read file: {err.strerror or err}", self.path) from None
        with fh:
            reader = csv.reader(fh)
            try:
                header = next(reader, None)
                if header is None:
                    raise ManifestError("empty file: expected a CSV header", f"{self.path}:1")
                header = [h.strip() for h in header]
                missing = [c for c in self.required if c not in header]
                if missing:
                    raise ManifestError(
                        f"CSV header lacks column(s) {', '.join(missing)}; got {','.join(header)}",
                        f"{self.path}:1")
                self.header = header
                for row in reader:
                    line = reader.line_num
                    if not row or all(not c.strip() for c in row):
                        continue  # blank line
                    if len(row) != len(header):
                        raise ManifestError(
                            f"expected {len(header)} fields ({','.join(header)}), got {len(row)}",
                            f"{self.path}:{line}")
                    yield line, dict(zip(header, (c.strip() for c in row)))
            except csv.Error as err:
                raise ManifestError(f"invalid CSV: {err}", f"{self.path}:{reader.line_num}") from None
            except UnicodeDecodeError:
                raise ManifestError("file is not valid UTF-8", f"{self.path}:{reader.line_num + 1}") from None


def _int(row: dict[str, str], col: str, where: str) -> int:
    v = row[col]
    try:
        n = int(v)
    except ValueError:
        raise ManifestError(f"{col} must be a non-negative integer, got {v!r}", where) from None
    if n < 0:
        raise ManifestError(f"{col} must be a non-negative integer, got {v!r}", where)
    return n


def _time(row: dict[str, str], col: str, where: str) -> float | None:
    v = row.get(col, "")
    if v == "":
        return None
    try:
        t = float(v)
    except ValueError:
        raise ManifestError(f"{col} must be a number of seconds, got {v!r}", where) from None
    if t != t or t in (float("inf"), float("-inf")):
        raise ManifestError(f"{col} must be a finite number of seconds, got {v!r}", where)
    return t


def _check_unique(names: dict[str, int], name: str, line: int, path: str, what: str) -> None:
    first = names.get(name)
    if first is not None:
        raise ManifestError(f"duplicate {what} name {name!r} (first at line {first})", f"{path}:{line}")
    names[name] = line


# --------------------------------------------------------------------------- nodes

def load_nodes(path: str | os.PathLike[str], *, max_pods: int = NODE_MAX_PODS) -> list[dict[str, Any]]:
    """Read a node list CSV into v1 Node dicts, in file order.

    ``status.capacity`` == ``status.allocatable``: ``cpu`` ``<cpu_milli>m``, ``memory``
    ``<memory_mib>Mi``, ``pods`` ``max_pods``, and ``nvidia.com/gpu`` when ``gpu > 0``.
    Labels: ``kubernetes.io/hostname``, ``kubernetes.io/os: linux`` and the GPU model.
    """
    rows = _Rows(path, _NODE_COLUMNS)
    nodes: list[dict[str, Any]] = []
    names: dict[str, int] = {}
    for line, row in rows:
        where = f"{rows.path}:{line}"
        name = row["sn"]
        if not name:
            raise ManifestError("empty node name (sn)", where)
        _check_unique(names, name, line, rows.path, "node")
        cpu = _int(row, "cpu_milli", where)
        mem = _int(row, "memory_mib", where)
        gpu = _int(row, "gpu", where)
        model = row["model"]
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        if model:
            labels[GPU_MODEL_LABEL] = model
        capacity = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(max_pods)}
        if gpu > 0:
            capacity[GPU_RESOURCE] = str(gpu)
        nodes.append({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {
                "capacity": capacity,
                "allocatable": dict(capacity),
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        })
    return nodes


# --------------------------------------------------------------------------- pods

def _pod_from_row(row: dict[str, str], where: str) -> TracePod:
    name = row["name"]
    if not name:
        raise ManifestError("empty pod name", where)
    cpu = _int(row, "cpu_milli", where)
    mem = _int(row, "memory_mib", where)
    num_gpu = _int(row, "num_gpu", where)
    gpu_milli = _int(row, "gpu_milli", where)
    if num_gpu == 0:
        gpu_milli = 0
    elif num_gpu > 1:
        gpu_milli = 1000
    elif not 1 <= gpu_milli <= 1000:
        raise ManifestError(f"gpu_milli must be 1..1000 when num_gpu is 1, got {gpu_milli}", where)

    has_times = "creation_time" in row
    created = _time(row, "creation_time", where) if has_times else 0.0
    if created is None:
        raise ManifestError("creation_time is empty", where)
    deleted = _time(row, "deletion_time", where)
    scheduled = _time(row, "scheduled_time", where)
    if deleted is not None and deleted < created:
        raise ManifestError(
            f"deletion_time {row['deletion_time']} is before creation_time {row['creation_time']}", where)
    if scheduled is not None and scheduled < created:
        raise ManifestError(
            f"scheduled_time {row['scheduled_time']} is before creation_time {row['creation_time']}", where)

    spec_text = row.get("gpu_spec", "")
    gpu_spec = [m.strip() for m in spec_text.split("|")] if spec_text else []
    if any(not m for m in gpu_spec):
        raise ManifestError(f"gpu_spec {spec_text!r} has an empty model name", where)
    return TracePod(
        name=name,
        creation_time=created,
        deletion_time=deleted,
        scheduled_time=scheduled,
        phase=row.get("pod_phase") or None,
        qos=row.get("qos") or None,
        cpu_milli=cpu,
        memory_mib=mem,
        num_gpu=num_gpu,
        gpu_milli=gpu_milli,
        gpu_spec=gpu_spec,
    )


def _creation_time(p: TracePod) -> float:
    return p.creation_time


def load_pods(path: str | os.PathLike[str]) -> list[TracePod]:
    """Read a pod list CSV, sorted by ``(creation_time, file order)``.

    See the module docstring for how each edge case in the data is handled.
    """
    rows = _Rows(path, _POD_REQUIRED)
    pods: list[TracePod] = []
    names: dict[str, int] = {}
    for line, row in rows:
        where = f"{rows.path}:{line}"
        pod = _pod_from_row(row, where)
        _check_unique(names, pod.name, line, rows.path, "pod")
        pods.append(pod)
    pods.sort(key=_creation_time)  # stable: equal times keep file order
    return pods
