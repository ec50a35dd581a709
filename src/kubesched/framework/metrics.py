"""The optional metrics recorder the engine feeds (upstream ``metricsRecorder`` and the
``metrics.*`` call sites of the framework and ``schedule_one.go``).

Follows ``pkg/scheduler/metrics/metrics.go`` / ``metric_recorder.go`` (what is observed),
``pkg/scheduler/framework/runtime/framework.go`` (``FrameworkExtensionPointDuration`` around
each ``Run*Plugins``; ``PermitWaitDuration`` in ``WaitOnPermit``), ``pkg/scheduler/schedule_one.go``
(``SchedulingAlgorithmLatency`` after a successful ``SchedulePod``) and
``pkg/scheduler/framework/preemption/preemption.go`` + ``defaultpreemption`` (``PreemptionAttempts``
on every DefaultPreemption PostFilter, ``PreemptionVictims`` once a candidate's victims are evicted).

Optional methods (looked up with ``getattr``, so older recorders keep working), fed with
GenericWorkload on v1.37 (workload-aware preemption, ``executor.go`` ``observeVictims``):
``observe_workload_preemption_attempt(result)``, ``observe_workload_preemption_victims(n)``,
``observe_preemption_workload_disruptions(preemptor, n)``,
``observe_preemption_pdb_violations(preemptor, n)``,
``observe_preemption_evaluation(preemptor, result, seconds)`` and
``observe_preemption_execution(preemptor, result, seconds)`` (``preemptor``: ``pod``,
``podgroup`` or ``compositepodgroup``).

The engine never imports prometheus: a recorder is any object with these methods
(``kubesched.kube.metrics.SchedulerMetrics`` is one). Without a recorder (the default, and
``simulate``/``bench``) the engine pays nothing: ``Framework.metrics = None`` leaves the class's
``run_*`` methods untouched; a recorder installs timed wrappers on the instance.

Durations are wall time from :func:`time.perf_counter`, not the injected ``Clock``: upstream
measures latency with ``time.Now()``, and in ``simulate`` the engine's clock is virtual (a
cycle takes zero virtual seconds), so only wall time says how long the plugins really ran.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["PLUGIN_METRICS_SAMPLE_PERCENT", "MetricsRecorder"]

PLUGIN_METRICS_SAMPLE_PERCENT = 10
"""Upstream ``pluginMetricsSamplePercent``: the share of scheduling cycles (binding cycle
included) whose plugins are timed one by one (``CycleState.record_plugin_metrics``)."""


@runtime_checkable
class MetricsRecorder(Protocol):
    """What the engine reports. All durations are seconds (float, wall time); ``status`` is the
    upstream ``Code.String()`` name: ``Success``, ``Error``, ``Unschedulable``,
    ``UnschedulableAndUnresolvable``, ``Wait``, ``Skip``, ``Pending``."""

    def observe_extension_point(self, extension_point: str, status: str, profile: str,
                                duration_s: float) -> None:
        """All plugins of one extension point ran (``framework_extension_point_duration_seconds``).
        ``extension_point``: ``PreFilter``, ``PostFilter``, ``PreScore``, ``Score``, ``Reserve``,
        ``Unreserve``, ``Permit``, ``PreBind``, ``Bind``, ``PostBind`` (upstream has no Filter
        series here: Filter runs per node)."""

    def observe_plugin(self, plugin: str, extension_point: str, status: str, duration_s: float) -> None:
        """One plugin ran at one extension point, in a sampled cycle
        (``plugin_execution_duration_seconds``)."""

    def observe_algorithm(self, duration_s: float) -> None:
        """``scheduling_algorithm_duration_seconds``: ``SchedulePod`` succeeded after ``duration_s``."""

    def observe_preemption_attempt(self) -> None:
        """``preemption_attempts_total``: DefaultPreemption's PostFilter ran (whatever its result)."""

    def observe_preemption_victims(self, victims: int) -> None:
        """``preemption_victims``: a candidate was prepared by evicting ``victims`` pods."""

    def observe_permit_wait(self, result: str, duration_s: float) -> None:
        """``permit_wait_duration_seconds{result}``: a pod waited on Permit; ``result`` is the
        code name of the signal that ended the wait (``Success``, ``Unschedulable``, …)."""
