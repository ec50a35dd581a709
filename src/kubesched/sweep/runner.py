"""One run: one configuration on one input, in this process, measured.

A ``files`` input goes through :func:`kubesched.sim.simulate.simulate` (as ``kubesched
simulate``), a ``trace`` through :class:`kubesched.sim.replay.TraceReplay` (as ``kubesched
replay``) with its arrivals sped up by the load factor (``creation / factor``; each pod keeps
its lifetime ``deletion − creation``). The metrics (:data:`kubesched.sweep.spec.METRICS`) are
read from the run's result and the scheduler's NodeTable: end state for a ``files`` input, and
for a trace time-weighted over the replay's virtual span (utilisation as ``replay`` reports
it; GPU fragmentation sampled after every scheduler pass).

:func:`execute` is the Ray task body (``kubesched.sweep.execute``): it never raises — a
failing run comes back as ``{"status": "failed", "error": "…"}`` so the sweep goes on.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import traceback
from collections import Counter
from typing import Any

import numpy as np

from kubesched import __version__
from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.node_table import NodeTable
from kubesched.sim.alibaba import GPU_RESOURCE
from kubesched.sim.compare import table_figures
from kubesched.sim.replay import scale_arrivals
from kubesched.sweep.inputs import decode, decode_files, decode_trace

__all__ = ["execute", "gpu_fragmentation", "pending_reasons"]

ZONE_LABEL = "topology.kubernetes.io/zone"
_COUNT = re.compile(r"^\d+ ")


def gpu_fragmentation(table: NodeTable) -> tuple[int, float]:
    """``(GPU nodes partly used, free GPUs on those ÷ all GPUs)`` (0, 0.0 without GPUs)."""
    col = table.resource_column(GPU_RESOURCE)
    if col is None:
        return 0, 0.0
    alive = table.alive
    alloc = table.allocatable[alive, col]
    req = table.requested[alive, col]
    total = int(alloc.sum())
    if total <= 0:
        return 0, 0.0
    partial = (alloc > 0) & (req > 0) & (req < alloc)
    return int(partial.sum()), float((alloc[partial] - req[partial]).sum()) / total


def pending_reasons(messages: list[str]) -> dict[str, int]:
    """Pending pods per reason of their FailedScheduling message (upstream's ``FitError``,
    ``pkg/scheduler/framework/types.go``: ``0/N nodes are available: 3 Insufficient cpu, 2
    node(s) had untolerated taint …. preemption: …``): each reason once per pod, without its node
    count; a message of another shape counts as one reason."""
    out: Counter[str] = Counter()
    for msg in messages:
        head, sep, rest = msg.partition("nodes are available: ")
        if not sep:
            out[msg or "not attempted"] += 1
            continue
        body = rest.split(". ", 1)[0].rstrip(".")  # then "preemption: …" or a PostFilter error
        out.update({_COUNT.sub("", part.strip()) for part in body.split(", ") if part.strip()})
    return dict(out.most_common())


def _table_metrics(table: NodeTable) -> dict[str, Any]:
    f = table_figures(table)
    zones = list(f.zone_pods.values())
    return {"nodes_used": f.nodes_used, "node_skew": f.node_skew,
            "zone_skew": (max(zones) - min(zones)) if zones else 0,
            **{f"util_{k}": f.utilisation.get(r, 0.0) for k, r in
               (("cpu", "cpu"), ("memory", "memory"), ("gpu", GPU_RESOURCE))}}


def _run_files(body: dict[str, Any], config: Any, seed: int, features: FeatureGate) -> dict[str, Any]:
    from kubesched.sim.simulate import simulate

    res = simulate(decode_files(body), config, seed=seed, features=features)
    m = _table_metrics(res.scheduler.table)
    partial, stranded = gpu_fragmentation(res.scheduler.table)
    pending = [o for o in res.outcomes if not o.node]
    return {**m, "scheduled": len(res.outcomes) - len(pending), "pending": len(pending),
            "preemptions": len(res.store.preemptions), "attempts": res.attempts,
            "gpu_nodes_partial": partial, "gpu_stranded": stranded,
            "wait_mean_s": None, "wait_p99_s": None,
            "pending_reasons": pending_reasons([o.message for o in pending])}


class _TimeWeighted:
    """The time-weighted mean of a pair of values that hold from one sample to the next."""

    def __init__(self, start: float) -> None:
        self.start = self.t = start
        self.v: tuple[float, float] = (0.0, 0.0)
        self.sums = [0.0, 0.0]

    def sample(self, t: float, v: tuple[float, float]) -> None:
        dt = max(t - self.t, 0.0)
        self.sums[0] += self.v[0] * dt
        self.sums[1] += self.v[1] * dt
        self.t, self.v = t, v

    def mean(self, end: float) -> tuple[float, float]:
        """Over ``start``..``end``; the last value when the span is empty (one instant)."""
        self.sample(max(end, self.t), self.v)
        span = end - self.start
        if span <= 0:
            return self.v
        return self.sums[0] / span, self.sums[1] / span


def _run_trace(body: dict[str, Any], config: Any, seed: int, factor: float, features: FeatureGate) -> dict[str, Any]:
    from kubesched.sim.replay import TraceReplay

    nodes, pods = decode_trace(body)
    rp = TraceReplay(nodes, scale_arrivals(pods, factor), config, seed=seed, trace=body["trace"], features=features)
    frag = _TimeWeighted(rp.start)
    messages: dict[str, str] = {}
    rp.observers.append(lambda r: frag.sample(r.env.now, gpu_fragmentation(r.scheduler.table)))
    inner = rp.scheduler.on_attempt

    def on_attempt(a: Any) -> None:
        if a.result == "unschedulable":
            messages[a.pod_key] = a.message
        if inner is not None:
            inner(a)

    rp.scheduler.on_attempt = on_attempt
    s = rp.run()
    partial, stranded = frag.mean(rp.end)
    m = _table_metrics(rp.scheduler.table)
    m.update(util_cpu=s.alloc_cpu, util_memory=s.alloc_memory, util_gpu=s.alloc_gpu)
    return {**m, "scheduled": s.pods_scheduled, "pending": s.pods_never_scheduled,
            "preemptions": len(rp.store.preemptions), "attempts": s.attempts,
            "gpu_nodes_partial": float(partial), "gpu_stranded": float(stranded),
            "wait_mean_s": s.time_to_schedule_mean_s, "wait_p99_s": s.time_to_schedule_p99_s,
            "pending_reasons": pending_reasons([messages.get(k, "") for k in sorted(rp.pending)])}


def run(payload: bytes, job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job`` (a :func:`kubesched.sweep.execute.job` dict) on ``payload``; raises on failure."""
    features = FeatureGate.from_flags(job.get("emulatedVersion"), list(job.get("featureGates") or []))
    config = decode_config(job["config"], source=job["configLabel"], features=features)
    body = decode(payload)
    t0, c0 = time.perf_counter(), time.process_time()
    if body["kind"] == "files":
        metrics = _run_files(body, config, job["seed"], features)
    else:
        metrics = _run_trace(body, config, job["seed"], float(job["loadFactor"]), features)
    metrics["run_wall_s"] = time.perf_counter() - t0
    metrics["run_cpu_s"] = time.process_time() - c0
    metrics["pending_reasons"] = json.dumps(metrics["pending_reasons"], sort_keys=False)
    for k, v in metrics.items():
        if isinstance(v, np.generic):
            metrics[k] = v.item()
    return metrics


def execute(payload: bytes, job: dict[str, Any]) -> dict[str, Any]:
    """The task body: :func:`run` with where it ran; a failure is a result, not an exception
    (``KUBESCHED_SWEEP_FAIL=<config label>`` makes runs of that configuration fail, for tests)."""
    where = {"host": socket.gethostname(), "pid": os.getpid(), "kubesched": __version__}
    try:
        if os.environ.get("KUBESCHED_SWEEP_FAIL") == job["configLabel"]:
            raise RuntimeError("failure injected by KUBESCHED_SWEEP_FAIL")
        return {"key": job["key"], "status": "ok", "metrics": run(payload, job), **where}
    except Exception as e:  # noqa: BLE001 - one run's failure is reported and the sweep goes on
        tb = traceback.extract_tb(e.__traceback__)
        at = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        return {"key": job["key"], "status": "failed", "error": f"{type(e).__name__}: {e}{at}", **where}
