"""The workload controllers as ``simulate`` uses them.

The implementation is :mod:`kubesched.api.workloads` (pure: objects in, objects out), at the
``api`` layer so that the box's controllers (:mod:`kubesched.apiserver.controllers`) run the
same code; this module is where the simulator imports it from.
"""

from __future__ import annotations

from kubesched.api.workloads import (
    ALPHANUMS,
    WORKLOAD_KINDS,
    Controllers,
    SyncResult,
    WorkloadError,
    compute_hash,
    daemon_pod_tolerations,
    fnv32a,
    generate_name,
    owner_of,
    safe_encode_string,
)

__all__ = [
    "ALPHANUMS",
    "WORKLOAD_KINDS",
    "Controllers",
    "SyncResult",
    "WorkloadError",
    "compute_hash",
    "daemon_pod_tolerations",
    "fnv32a",
    "generate_name",
    "owner_of",
    "safe_encode_string",
]
