"""``kubesched replay``: a production trace through the real scheduler on a virtual clock.

:func:`replay_openb` replays Alibaba's openb GPU trace (``kubesched.sim.alibaba``). The
cluster is a :class:`~kubesched.sim.store.ClusterStore` (the in-memory API server) attached
to an ordinary :class:`~kubesched.scheduler.Scheduler`; time is a
:class:`~kubesched.sim.event_heap.Environment` driving the scheduler's
:class:`~kubesched.framework.clock.ManualClock`. Scheduling itself takes no virtual time.

Events (heap key ``(time, priority, seq)``; at one instant, lower priority first):

* ``t = 0``: every node is added (``Node/Add``).
* ``DEPART`` (0) at ``deletion_time``: a bound pod is deleted (``AssignedPodDelete`` requeues
  the pending pods whose rejecting plugins say it may help, e.g. NodeResourcesFit); a pod still
  pending is removed from the queue and counted as never scheduled. Departures come before
  arrivals at the same instant, so freed room is visible to the pods arriving then.
* ``ARRIVE`` (1) at ``creation_time``: the pod (decoded with ``kubesched.api.objects.decode``)
  is added to the store, hence to activeQ. Its departure is scheduled on arrival, so a pod
  with ``deletion_time == creation_time`` arrives and leaves before the scheduler runs (never
  scheduled).
* ``TIMER`` (2): the queue's clocks — upstream's ``flushUnschedulablePodsLeftover`` runs every
  30 s from scheduler start and retries pods unschedulable for more than 5 min; only the tick
  that will actually move a pod is scheduled (first multiple of 30 s strictly after the
  earliest ``timestamp + 5 min``), and a backoff-expiry timer when backoffQ is not empty
  (with ``SchedulerPopFromBackoffQ`` the scheduler drains backoffQ when activeQ is empty, so
  in practice it never is).
* ``SCHEDULE`` (3): after anything changed at this instant, the scheduler runs until activeQ
  and backoffQ are empty.

Timers are not scheduled past the trace's own end (its last creation or deletion time):
pods still pending then are "never scheduled, pending at end".

Cluster writes go through the store like API calls: a bind or a status patch becomes an informer
event the store delivers after the attempt (:meth:`~kubesched.sim.store.ClusterStore.flush`, or
an Environment event when a binding cycle finishes later, e.g. after a Permit wait), so the
scheduler confirms its assumed pods from the watch, as live.

Measured on the published openb files: with their real creation/deletion times the
1,523-node cluster never holds more than 56 pods at once, so retries are rare (0 unschedulable
attempts on ``default``, 19 on ``gpuspec10``) and the cost is the ~1 ms of one scheduling
cycle per pod; ``multigpu20`` has no times (all pods at t=0, never deleted), so it is a single
burst with no timers.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod, decode, pod_key
from kubesched.config import KubeSchedulerConfiguration
from kubesched.errors import InputError, ManifestError
from kubesched.features import FeatureGate
from kubesched.scheduler import Attempt, Scheduler
from kubesched.sim.alibaba import GPU_RESOURCE, TracePod, load_nodes, load_pods
from kubesched.sim.event_heap import Environment, Event
from kubesched.sim.store import ClusterStore

__all__ = [
    "ARRIVE",
    "DEPART",
    "FLUSH_INTERVAL_S",
    "SCHEDULE",
    "TIMER",
    "ReplaySample",
    "ReplaySummary",
    "TraceReplay",
    "replay_openb",
    "scale_arrivals",
]

DEPART, ARRIVE, TIMER, SCHEDULE = 0, 1, 2, 3
"""Event priorities at one instant (lower first)."""

FLUSH_INTERVAL_S = 30.0
"""Upstream runs ``flushUnschedulablePodsLeftover`` every 30 s."""

_MIB = 1 << 20


@dataclass(slots=True)
class ReplaySample:
    """The cluster after the scheduler ran at ``time``: allocated ÷ allocatable, pending pods."""

    time: float
    cpu: float
    memory: float
    gpu: float
    pending: int


@dataclass
class ReplaySummary:
    """What a replay did. Times in seconds; allocations are fractions (0..1)."""

    trace: str
    nodes: int
    pods_arrived: int
    pods_scheduled: int
    pods_never_scheduled: int
    never_scheduled_pending_at_end: int
    attempts: int
    attempts_scheduled: int
    attempts_unschedulable: int
    attempts_error: int
    time_to_schedule_mean_s: float
    time_to_schedule_p99_s: float
    alloc_cpu: float
    alloc_memory: float
    alloc_gpu: float
    virtual_span_s: float
    events: int
    wall_s: float
    cpu_s: float
    """Process CPU time of the run (wall time is noisy on a shared machine)."""
    attempts_per_s: float
    pods_per_s: float
    never_scheduled_pods: list[str] = field(default_factory=list)
    """``namespace/name`` of the pods never scheduled, in arrival order, each followed by
    ``(pending at end)`` or ``(deleted while pending)``."""
    samples: list[ReplaySample] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The figures (without the time series), in a stable order."""
        d = asdict(self)
        d.pop("samples")
        return d


# --------------------------------------------------------------------------- the driver

class TraceReplay:
    """One replay of nodes + trace pods. Build, optionally add observers, then :meth:`run`.

    Args:
        nodes: v1 Node dicts (``alibaba.load_nodes``).
        pods: trace pods (``alibaba.load_pods``), any order.
        config: scheduler configuration (None → upstream defaults).
        seed: seeds the scheduler's tie-break RNG.
        progress: a callable ``(done, total)`` called as trace events are processed.
        trace: a name for the summary.
    """

    def __init__(self, nodes: Sequence[dict[str, Any]], pods: Sequence[TracePod],
                 config: KubeSchedulerConfiguration | None = None, *, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None, trace: str = "",
                 features: FeatureGate | None = None) -> None:
        self.env = Environment(timer_priority=TIMER)
        self.store = ClusterStore()
        self.scheduler = Scheduler(config, client=self.store, lister=self.store, clock=self.env.clock, seed=seed,
                                   features=features)
        self.store.scheduler = self.scheduler
        self.store.deliver_via(self.env, 0.0, SCHEDULE)
        self.store.on_delivered = self._kick
        self.trace = trace
        self.raw_nodes = list(nodes)
        self.pods = sorted(pods, key=lambda p: p.creation_time)
        self.progress = progress
        self.observers: list[Callable[[TraceReplay], None]] = []
        """Called after every scheduler run (tests check invariants here)."""

        self.end = max([p.creation_time for p in self.pods]
                       + [p.deletion_time for p in self.pods if p.deletion_time is not None], default=0.0)
        self.start = 0.0
        self.trace_events = len(self.pods) + sum(p.deletion_time is not None for p in self.pods)
        self.trace_done = 0

        self.by_key: dict[str, TracePod] = {}
        self.requests: dict[str, tuple[int, int, int]] = {}
        self.bound_at: dict[str, float] = {}
        """Pod key → virtual time it was bound."""
        self.node_of: dict[str, str] = {}
        """Pod key → the node it was bound to."""
        self.pending: set[str] = set()
        self.arrived = 0
        self.deleted_pending = 0
        self.alloc = [0, 0, 0]          # cpu milli, memory bytes, gpus currently bound
        self.allocatable = [0, 0, 0]
        self.integral = [0.0, 0.0, 0.0]  # allocated × seconds
        self._last_t = self.start
        self.samples: list[ReplaySample] = []

        self._kick_ev: Event | None = None
        self._timer_ev: Event | None = None
        self._timer_at = math.inf
        self.scheduler.on_attempt = self._on_attempt

    # ───────────────────────────── the run ─────────────────────────────

    def run(self) -> ReplaySummary:
        wall0 = time.perf_counter()
        cpu0 = time.process_time()
        env = self.env
        env.schedule(self.start, self._add_nodes, ARRIVE)
        for p in self.pods:
            env.schedule(p.creation_time, functools.partial(self._arrive, p), ARRIVE)
        env.run()
        self._integrate(self.end)
        wall = time.perf_counter() - wall0
        return self._summary(wall, time.process_time() - cpu0)

    def _add_nodes(self) -> None:
        for raw in self.raw_nodes:
            try:
                node = decode(Node, raw)
            except InputError as e:
                raise ManifestError(f"node {raw.get('metadata', {}).get('name')}: {e.path}: {e.message}") from None
            self.store.add("Node", node, None)
        table = self.scheduler.table
        alive = table.alive
        for i, res in enumerate(("cpu", "memory", GPU_RESOURCE)):
            col = table.resource_column(res)
            self.allocatable[i] = int(table.allocatable[alive, col].sum()) if col is not None else 0
        self._kick()

    def _integrate(self, t: float) -> None:
        dt = t - self._last_t
        if dt > 0:
            for i in range(3):
                self.integral[i] += self.alloc[i] * dt
            self._last_t = t

    def _arrive(self, tp: TracePod) -> None:
        self._integrate(self.env.now)
        try:
            pod = decode(Pod, tp.to_pod())
        except InputError as e:
            raise ManifestError(f"pod {tp.name}: {e.path}: {e.message}") from None
        key = pod_key(pod)
        self.by_key[key] = tp
        self.requests[key] = (tp.cpu_milli, tp.memory_mib * _MIB, tp.num_gpu)
        self.pending.add(key)
        self.arrived += 1
        self.store.add("Pod", pod, None)
        if tp.deletion_time is not None:
            self.env.schedule(tp.deletion_time, lambda: self._depart(key), DEPART)
        self._trace_event()
        self._kick()

    def _depart(self, key: str) -> None:
        self._integrate(self.env.now)
        pod = self.store.pods.get(key)
        if pod is not None:
            if pod.spec.node_name:
                cpu, mem, gpu = self.requests[key]
                self.alloc[0] -= cpu
                self.alloc[1] -= mem
                self.alloc[2] -= gpu
            else:
                self.pending.discard(key)
                self.deleted_pending += 1
            self.store.remove_pod(key)
        self._trace_event()
        self._kick()

    def _trace_event(self) -> None:
        self.trace_done += 1
        if self.progress is not None:
            self.progress(self.trace_done, self.trace_events)

    def _kick(self) -> None:
        if self._kick_ev is None:
            self._kick_ev = self.env.schedule(self.env.now, self._schedule, SCHEDULE)

    def _on_timer(self) -> None:
        self._timer_ev = None
        self._timer_at = math.inf
        q = self.scheduler.queue
        q.flush_backoff_completed()
        q.flush_unschedulable_leftover()
        self._kick()

    def _schedule(self) -> None:
        self._kick_ev = None
        sched = self.scheduler
        q = sched.queue
        flush = self.store.flush
        with self.store.driving():
            flush()
            while q.has_schedulable():
                if sched.schedule_one() is None:
                    break
                flush()  # the attempt's writes reach the informers before the next cycle
        t = self.env.now
        tot = self.allocatable
        self.samples.append(ReplaySample(
            t, self.alloc[0] / tot[0] if tot[0] else 0.0, self.alloc[1] / tot[1] if tot[1] else 0.0,
            self.alloc[2] / tot[2] if tot[2] else 0.0, len(self.pending)))
        for obs in self.observers:
            obs(self)
        self._arm_timer()

    def _arm_timer(self) -> None:
        """Schedule the one timer event the queue needs next (if any, and not past the trace end)."""
        q = self.scheduler.queue
        now = self.env.now
        want = math.inf
        b = q.next_backoff_expiry()
        if b is not None:
            want = max(b, now)
        u = q.next_unschedulable_timeout()
        if u is not None:
            k = math.floor((u - self.start) / FLUSH_INTERVAL_S) + 1
            tick = self.start + k * FLUSH_INTERVAL_S
            if tick <= now:
                tick = self.start + (math.floor((now - self.start) / FLUSH_INTERVAL_S) + 1) * FLUSH_INTERVAL_S
            want = min(want, tick)
        if want > self.end:
            want = math.inf
        if want == self._timer_at:
            return
        if self._timer_ev is not None:
            self._timer_ev.cancel()
            self._timer_ev = None
        self._timer_at = want
        if want != math.inf:
            self._timer_ev = self.env.schedule(want, self._on_timer, TIMER)

    # ───────────────────────────── attempts ─────────────────────────────

    def _on_attempt(self, a: Attempt) -> None:
        key = a.pod_key
        if a.result == "scheduled":
            self.pending.discard(key)
            self.bound_at[key] = self.env.now
            self.node_of[key] = a.node or ""
            cpu, mem, gpu = self.requests[key]
            self.alloc[0] += cpu
            self.alloc[1] += mem
            self.alloc[2] += gpu

    # ───────────────────────────── the summary ─────────────────────────────

    def _summary(self, wall: float, cpu: float) -> ReplaySummary:
        waits = np.asarray([self.bound_at[k] - self.by_key[k].creation_time for k in self.bound_at], float)
        span = self.end - self.start
        if span > 0:
            alloc = [self.integral[i] / span / self.allocatable[i] if self.allocatable[i] else 0.0 for i in range(3)]
        else:  # a trace with a single instant: the state after it
            alloc = [self.alloc[i] / self.allocatable[i] if self.allocatable[i] else 0.0 for i in range(3)]
        st = self.scheduler.stats.attempts
        attempts = st["scheduled"] + st["unschedulable"] + st["error"]
        scheduled = len(self.bound_at)
        pending_end = len(self.pending)
        return ReplaySummary(
            trace=self.trace,
            nodes=len(self.raw_nodes),
            pods_arrived=self.arrived,
            pods_scheduled=scheduled,
            pods_never_scheduled=self.arrived - scheduled,
            never_scheduled_pods=[f"{k} ({'pending at end' if k in self.pending else 'deleted while pending'})"
                                  for k in self.by_key if k not in self.bound_at],
            never_scheduled_pending_at_end=pending_end,
            attempts=attempts,
            attempts_scheduled=st["scheduled"],
            attempts_unschedulable=st["unschedulable"],
            attempts_error=st["error"],
            time_to_schedule_mean_s=float(waits.mean()) if len(waits) else 0.0,
            time_to_schedule_p99_s=float(np.percentile(waits, 99)) if len(waits) else 0.0,
            alloc_cpu=alloc[0],
            alloc_memory=alloc[1],
            alloc_gpu=alloc[2],
            virtual_span_s=span,
            events=self.env.processed,
            wall_s=wall,
            cpu_s=cpu,
            attempts_per_s=attempts / wall if wall > 0 else 0.0,
            pods_per_s=self.arrived / wall if wall > 0 else 0.0,
            samples=self.samples,
        )


# --------------------------------------------------------------------------- entry point

def scale_arrivals(pods: list[TracePod], factor: float) -> list[TracePod]:
    """Arrivals ``factor`` × faster: creation ÷ factor, each lifetime kept (a pod that is never
    deleted stays so)."""
    if factor == 1.0:
        return pods
    out = []
    for p in pods:
        c = p.creation_time / factor
        d = None if p.deletion_time is None else c + (p.deletion_time - p.creation_time)
        out.append(replace(p, creation_time=c, deletion_time=d))
    return out


def replay_openb(nodes_csv: str | os.PathLike[str], pods_csv: str | os.PathLike[str],
                 config: KubeSchedulerConfiguration | None = None, *, seed: int = 0, progress: bool = False,
                 plot: str | os.PathLike[str] | None = None, limit: int | None = None,
                 features: FeatureGate | None = None, load_factor: float = 1.0) -> ReplaySummary:
    """Replay an openb node list + pod list (see the module docstring). ``limit``: only the
    first ``limit`` pods by creation time. ``plot``: write a PNG of allocation and pending pods
    over virtual time. ``features``: gates at the emulated version (default v1.37's).
    ``load_factor``: arrivals that many times faster, lifetimes kept (:func:`scale_arrivals`).
    Raises :class:`ManifestError` for bad CSV input."""
    nodes = load_nodes(nodes_csv)
    pods = load_pods(pods_csv)
    if limit is not None:
        pods = pods[:limit]
    pods = scale_arrivals(pods, load_factor)
    name = os.path.basename(os.fspath(pods_csv))
    if progress:
        summary = _run_with_progress(nodes, pods, config, seed, name, features)
    else:
        summary = TraceReplay(nodes, pods, config, seed=seed, trace=name, features=features).run()
    if plot is not None:
        plot_replay(summary, plot)
    return summary


def _run_with_progress(nodes: list[dict[str, Any]], pods: list[TracePod], config: KubeSchedulerConfiguration | None,
                       seed: int, name: str, features: FeatureGate | None = None) -> ReplaySummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn("replay {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("events"), TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task(name, total=None)
        step = 1
        last = [0]

        def tick(done: int, total: int) -> None:
            if done - last[0] >= step or done == total:
                last[0] = done
                bar.update(task, completed=done, total=total)

        rp = TraceReplay(nodes, pods, config, seed=seed, progress=tick, trace=name, features=features)
        step = max(1, rp.trace_events // 200)
        return rp.run()


def plot_replay(summary: ReplaySummary, path: str | os.PathLike[str]) -> None:
    """Write a PNG: cpu / memory / GPU allocation (%) and pending pods over virtual time (days)."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'kubesched[plot]'", "--plot") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    s = summary.samples
    title = (f"kubesched replay {summary.trace}: {summary.nodes:,} nodes, {summary.pods_arrived:,} pods, "
             f"{summary.pods_scheduled:,} scheduled, {summary.pods_never_scheduled:,} never")
    series = (("cpu", "CPU", "tab:blue", summary.alloc_cpu), ("memory", "memory", "tab:green", summary.alloc_memory),
              ("gpu", "GPU", "tab:red", summary.alloc_gpu))
    t = np.asarray([x.time for x in s], float)
    if len(np.unique(t)) < 2:  # every event at one instant (e.g. multigpu20): no time axis, bars
        fig, ax = plt.subplots(figsize=(9, 3.6), constrained_layout=True)
        last = s[-1] if s else ReplaySample(0.0, 0.0, 0.0, 0.0, 0)
        vals = [getattr(last, attr) * 100 for attr, *_ in series]
        bars = ax.barh([lab for _, lab, _, _ in series], vals, color=[c for _, _, c, _ in series])
        ax.bar_label(bars, labels=[f"{v:.1f}%" for v in vals], padding=4)
        ax.set_xlim(0, 105)
        ax.invert_yaxis()
        ax.set_xlabel("allocated / allocatable (%)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(f"{title}\nall events at t={t[0] if len(t) else 0:g} s; "
                     f"{last.pending:,} pods still pending after the pass", fontsize=10)
        fig.savefig(os.fspath(path), dpi=110)
        plt.close(fig)
        return
    scale, unit = (86400.0, "days") if t.max() > 3 * 86400 else (3600.0, "hours")
    t = t / scale
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 1.4]}, constrained_layout=True)
    top = 0.0
    for attr, label, color, avg in series:
        y = np.asarray([getattr(x, attr) for x in s], float) * 100
        top = max(top, float(y.max()))
        ax1.step(t, y, where="post", color=color, lw=0.9, label=f"{label} (time-weighted avg {avg:.2%})")
    ax1.set_ylabel("allocated / allocatable (%)")
    ax1.set_ylim(0, 100 if top > 40 else max(1.0, top * 1.25))
    ax1.grid(alpha=0.3)
    ax1.legend(loc="upper left", fontsize=9, framealpha=0.9)
    ax1.set_title(title)
    pending = np.asarray([x.pending for x in s], float)
    ax2.step(t, pending, where="post", color="tab:purple", lw=0.9)
    ax2.fill_between(t, pending, step="post", color="tab:purple", alpha=0.2)
    ax2.set_ylabel("pending pods\n(after each pass)")
    ax2.set_xlabel(f"virtual time ({unit})")
    ax2.grid(alpha=0.3)
    ax2.set_ylim(0, max(1.0, float(pending.max()) * 1.15))
    ax2.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    fig.savefig(os.fspath(path), dpi=110)
    plt.close(fig)


if __name__ == "__main__":  # pragma: no cover
    s = replay_openb(sys.argv[1], sys.argv[2], progress=True)
    print(s.to_dict())
