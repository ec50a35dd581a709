"""A scheduler's parts, wired once: upstream ``pkg/scheduler/scheduler.go`` (the ``Scheduler``
struct and ``New``) v1.37.2.

:class:`SchedulerCore` holds the profiles (one :class:`~kubesched.framework.runtime.Framework`
each, with its :class:`~kubesched.framework.handle.Handle`), the cache over the NodeTable, the
queue, the clock, the client, the extenders, the seeded RNG and the counters. The cycles
(:mod:`kubesched.scheduler.schedule_one`, :mod:`kubesched.scheduler.schedule_one_podgroup`) take
it; :class:`~kubesched.scheduler.scheduler.Scheduler` adds the informer handlers
(``eventhandlers.go``) and the loop on top. Split that way so that the cycles never import the
module that drives them (docs/architecture.md, contract ``acyclic``).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache import Cache, PodGroupManagerImpl
from kubesched.config import KubeSchedulerConfiguration, default_config
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.clock import Clock, ManualClock
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.extender import EXTENDER_NAME, Extender
from kubesched.framework.handle import ClusterClient, ClusterLister, EmptyLister, Handle
from kubesched.framework.metrics import MetricsRecorder
from kubesched.framework.node_table import NodeTable
from kubesched.framework.record import DecisionRecord
from kubesched.framework.runtime import Framework
from kubesched.framework.waiting_pods import PodsInPreBindMap, WaitingPodsMap
from kubesched.plugins.dynamicresources import DRAManager, DynamicResources
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue import SchedulingQueue
from kubesched.scheduler.extender import build_extenders
from kubesched.scheduler.schedule_pod import Sampler

__all__ = ["Attempt", "Offload", "SchedulerCore", "SchedulerStats"]

Offload = Callable[[Callable[[], Any]], Awaitable[Any]]
"""Runs a blocking callable off the event loop and returns its awaitable result
(``loop.run_in_executor(None, fn)`` live)."""


@dataclass(slots=True)
class Attempt:
    """What one :meth:`Scheduler.schedule_one` call did.

    ``result``: ``scheduled``, ``unschedulable``, ``error`` or ``skipped`` (upstream
    ``schedule_attempts_total{result}``; skipped = deleting or already-assumed pod), or
    ``waiting`` from :meth:`Scheduler.schedule_one` when the binding cycle is still waiting on
    Permit (the final attempt then reaches ``on_attempt`` when it ends).
    """

    pod_key: str
    result: str
    node: str | None = None
    message: str = ""
    record: DecisionRecord | None = None


@dataclass
class SchedulerStats:
    """Counters in the spirit of upstream's metrics."""

    attempts: dict[str, int] = field(default_factory=lambda: {"scheduled": 0, "unschedulable": 0, "error": 0})
    bound: int = 0


class SchedulerCore:
    """One scheduler's parts: a Framework per profile over one cache and one queue (the
    informer handlers and the loop are :class:`~kubesched.scheduler.scheduler.Scheduler`'s).

    Args:
        config: a defaulted :class:`KubeSchedulerConfiguration` (None → all defaults).
        client: where bindings, status patches and events go.
        lister: read access to Namespaces, Services, … for the plugins.
        clock: time source (seconds); a :class:`ManualClock` at 0 by default.
        seed: seeds the RNG that breaks score ties (and preemption's random offset).
        registry: plugin name → factory (default: the in-tree registry); out-of-tree plugins
            are merged in by the caller.
        record: build a :class:`DecisionRecord` for every attempt.
        metrics: an optional :class:`~kubesched.framework.metrics.MetricsRecorder` (also
            settable later through :attr:`metrics`); None costs nothing.
        extenders: the scheduler extenders; None builds them from ``config.extenders``
            (:func:`~kubesched.scheduler.extender.build_extenders`, which also makes
            NodeResourcesFit ignore their ``ignoredByScheduler`` resources).

    Raises:
        ConfigError: a profile without ``schedulerName`` (``config`` was not defaulted).
    """

    def __init__(self, config: KubeSchedulerConfiguration | None = None, *, client: ClusterClient | None = None,
                 lister: ClusterLister | None = None, clock: Clock | None = None, seed: int | None = 0,
                 registry: Mapping[str, Any] | None = None, record: bool = False,
                 pod_max_in_unschedulable_pods_s: float = 300.0, metrics: MetricsRecorder | None = None,
                 extenders: Sequence[Extender] | None = None, features: FeatureGate | None = None) -> None:
        self.features = features if features is not None else default_feature_gate()
        """Feature gates at the emulated version (``--emulated-version``, ``--feature-gates``)."""
        self.config = config if config is not None else default_config(self.features)
        if extenders is None:
            built, self.config = build_extenders(self.config)
            extenders = built
        self.extenders: list[Extender] = list(extenders)
        """Upstream ``sched.Extenders`` (from ``config.extenders``: one
        :class:`~kubesched.scheduler.extender.HTTPExtender` each, ignorable ones last)."""
        self.clock = clock if clock is not None else ManualClock()
        self.client = client
        self.lister = lister if lister is not None else EmptyLister()
        self.rng = np.random.default_rng(seed)
        self.sample_rng = random.Random(seed)
        """Draws which scheduling cycles time their plugins one by one (upstream
        ``rand.Intn(100) < pluginMetricsSamplePercent``); seeded from ``seed`` and apart from
        :attr:`rng`, so metrics never shift tie-breaking."""
        self.table = NodeTable()
        self.cache = Cache(self.table)
        self.registry = dict(registry) if registry is not None else dict(in_tree_registry())
        self.profiles: dict[str, Framework] = {}
        self.waiting_pods = WaitingPodsMap()
        """Pods waiting on Permit, shared by every profile (upstream ``waitingPods``)."""
        self.pods_in_pre_bind = PodsInPreBindMap()
        """Pods in PreBind, shared by every profile (upstream ``podsInPreBind``, v1.36+)."""
        for i, prof in enumerate(self.config.profiles):
            if prof.scheduler_name is None:  # defaulting names a lone profile; validation requires the others' names
                raise ConfigError("Required value", f"profiles[{i}].schedulerName")
            handle = Handle(nodes=self.table, lister=self.lister, client=client, rng=self.rng, clock=self.clock,
                            extenders=self.extenders, features=self.features)
            self.profiles[prof.scheduler_name] = Framework(
                prof, self.registry, handle, path=f"profiles[{i}]",
                percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                waiting_pods=self.waiting_pods, pods_in_pre_bind=self.pods_in_pre_bind)
        self.queue = SchedulingQueue(
            self.profiles, self.clock.now,
            pod_initial_backoff_s=float(self.config.pod_initial_backoff_seconds or 1),
            pod_max_backoff_s=float(self.config.pod_max_backoff_seconds or 10),
            pod_max_in_unschedulable_pods_s=pod_max_in_unschedulable_pods_s, features=self.features)
        for fw in self.profiles.values():
            fw.handle.nominator = self.queue
        self.pod_group_manager: PodGroupManagerImpl | None = None
        """With GenericWorkload: the observed PodGroups and their members' state (upstream
        ``Handle.PodGroupManager()``, the cache's ``podGroupStates``); None otherwise."""
        self.placement_rows: np.ndarray | None = None
        """The candidate node rows while a pod-group cycle simulates a placement (TAS), else None."""
        self.pod_group_attempts: dict[str, int] = {}
        """Pod-group cycles by result (``scheduled``, ``unschedulable``, ``waiting_on_preemption``,
        ``error``): upstream ``podgroup_schedule_attempts_total``."""
        if self.features.enabled("GenericWorkload"):
            self.pod_group_manager = PodGroupManagerImpl(self.features.enabled("CompositePodGroup"))
            self.cache.pod_groups = self.pod_group_manager
            for fw in self.profiles.values():
                fw.handle.pod_group_manager = self.pod_group_manager
                fw.handle.activator = self._activate
        if self.extenders:
            # upstream defaultEnqueueExtension{ExtenderName}: pods rejected by extenders are
            # retried on any cluster event (extenders cannot tell which events help)
            self.queue.register_events(EXTENDER_NAME, [ClusterEventWithHint(
                ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*"))])
        self.sampler = Sampler()
        self.record = record
        self.record_pods: Callable[[str], bool] | None = None
        """With ``record``: only attempts of the pods (``namespace/name``) it accepts are recorded
        (None: every attempt). A record costs O(nodes) per attempt; ``--explain`` needs a few."""
        self.stats = SchedulerStats()
        self.on_attempt: Callable[[Attempt], None] | None = None
        self._offload: Offload | None = None
        self._metrics: MetricsRecorder | None = None
        self.metrics = metrics
        self.object_listeners: list[Callable[[str, Any, Any], None]] = []
        """Called with ``(kind, old, new)`` for every :meth:`on_object_event` before the queue
        moves pods (plugins' shared caches, e.g. DynamicResources' allocated devices)."""
        self.dra_manager: DRAManager | None = None
        """Upstream ``SharedDRAManager``: one per scheduler when some profile runs
        DynamicResources, on every profile's ``Handle.shared_dra_manager`` and fed by the
        informer events (:attr:`object_listeners`); None otherwise."""
        if any(isinstance(pl, DynamicResources) for fw in self.profiles.values() for pl in fw.plugins.values()):
            self.dra_manager = DRAManager(self.lister, self.features.enabled("DRAConsumableCapacity"))
            self.dra_manager.live_events = True
            self.object_listeners.append(self.dra_manager.on_event)
            for fw in self.profiles.values():
                fw.handle.shared_dra_manager = self.dra_manager

    @property
    def metrics(self) -> MetricsRecorder | None:
        """The :class:`~kubesched.framework.metrics.MetricsRecorder` fed by the engine (extension
        points of every profile, algorithm latency, preemption, Permit wait), or None (no cost)."""
        return self._metrics

    @metrics.setter
    def metrics(self, recorder: MetricsRecorder | None) -> None:
        self._metrics = recorder
        for fw in self.profiles.values():
            fw.metrics = recorder

    # ───────────────────────────── informer events ─────────────────────────────

    @property
    def offload(self) -> Offload | None:
        """Runs a blocking call (an extender's bind) from the binding cycle; None = call it
        inline (simulator). Set with :meth:`set_offload`."""
        return self._offload

    def set_offload(self, offload: Offload | None) -> None:
        """Install the runner of blocking calls: the live loop passes
        ``lambda fn: loop.run_in_executor(None, fn)`` once its event loop runs; None restores
        inline calls."""
        self._offload = offload

    def responsible_for(self, pod: Pod) -> bool:
        return (pod.spec.scheduler_name or "default-scheduler") in self.profiles

    def _activate(self, pods: dict[str, Pod]) -> None:
        """Upstream ``Handle.Activate`` → ``SchedulingQueue.Activate`` (``namespace/name`` → pod)."""
        self.queue.activate(list(pods))

    def close(self) -> None:
        """Release the extenders' HTTP connections."""
        for e in self.extenders:
            close = getattr(e, "close", None)
            if callable(close):
                close()
