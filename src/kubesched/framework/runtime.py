"""The per-profile framework: builds plugins from a profile and runs each extension point.

Follows ``pkg/scheduler/framework/runtime/framework.go`` (v1.34; the binding-cycle points as
v1.37.2 — RunPreBindPreFlights, PreBind groups, the Permit Wait text — by ``handle.features``):

* ``NewFramework``: instantiate every plugin the profile needs, fill each extension point from
  its own ``enabled`` list (a plugin there must implement the point), then expand
  ``multiPoint`` (``expandMultiPointPlugins``: explicit per-point entries override, ``disabled``
  drops, the order is overrides, multiPoint, then the rest), check exactly one QueueSort and at
  least one Bind, and compute Score weights (0 → 1, overflow-checked).
* ``Run*`` methods with upstream's semantics: PreFilter results intersected, Skip recorded in
  the CycleState, Filter stopping at the first rejecting plugin per node, Score normalised and
  range-checked, Reserve/Unreserve, Permit, PreBind/Bind/PostBind.

Misconfiguration raises :class:`~kubesched.errors.PluginConfigError` with the config field path.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, PluginConfigError
from kubesched.framework.batch import OpportunisticBatch, normalize_entries
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import FilterChunk, PluginReasons
from kubesched.framework.equivalence import EquivalenceCache
from kubesched.framework.interface import (
    CALLED_SIGNATURES,
    EXTENSION_POINTS,
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    POD_INDEPENDENT_FILTERS,
    SKIP_STATUS,
    Code,
    ExtensionPoint,
    FilterResult,
    PreFilterResult,
    ReasonEntry,
    Status,
    as_status,
    implements,
    reason_entry,
    signature_mismatch,
)
from kubesched.framework.npfast import count_nonzero
from kubesched.framework.plugin_args import decode_plugin_args
from kubesched.framework.signers import batchable_plugins, sign_pod
from kubesched.framework.waiting_pods import (
    MAX_PERMIT_TIMEOUT_S,
    PodsInPreBindMap,
    WaitingPod,
    WaitingPodsMap,
    waiting_pod_key,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import Handle
    from kubesched.framework.metrics import MetricsRecorder
    from kubesched.framework.node_info import QueuedPodInfo
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.podgroup import (
        Placement,
        PlacementCycleState,
        PlacementPluginScores,
        PlacementProgress,
        PodGroupAssignments,
        PodGroupCycleState,
        PodGroupInfo,
        PodGroupPostFilterResult,
        PodGroupSchedulingFunc,
    )

__all__ = ["PLUGIN_LISTS", "TIMED_EXTENSION_POINTS", "Framework", "ScoreResult"]

_POINTS = {p.config_name: p for p in EXTENSION_POINTS}


@dataclass(slots=True)
class ScoreResult:
    """Scores of the feasible ``rows`` (``int64[K]``).

    ``plugins`` are the Score plugins that ran; ``raw[p]`` the Score() values of plugin ``p``,
    ``normalized[p]`` after NormalizeScore, ``weighted[p]`` = normalized × weight; ``total`` the
    sum over plugins (upstream ``NodePluginScores.TotalScore``).
    """

    rows: np.ndarray
    plugins: list[str]
    raw: list[np.ndarray]
    normalized: list[np.ndarray]
    weighted: list[np.ndarray]
    total: np.ndarray


class Framework:
    """The plugins of one profile, in order per extension point. See the module docstring.

    Args:
        profile: a defaulted ``KubeSchedulerProfile`` (:mod:`kubesched.config`).
        registry: plugin name → factory.
        handle: shared services passed to every factory.
        path: the profile's field path for error messages, e.g. ``"profiles[0]"``.
        percentage_of_nodes_to_score: the global setting (profile's wins when set).
    """

    def __init__(self, profile: Any, registry: dict[str, Any], handle: Handle, *,
                 path: str = "profiles[0]", percentage_of_nodes_to_score: int | None = None,
                 waiting_pods: WaitingPodsMap | None = None,
                 pods_in_pre_bind: PodsInPreBindMap | None = None) -> None:
        self.profile_name: str = profile.scheduler_name
        self.handle = handle
        handle.framework = self
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
        """Pods waiting on Permit (upstream ``waitingPods``, shared by the scheduler's profiles)."""
        self.pods_in_pre_bind = pods_in_pre_bind if pods_in_pre_bind is not None else PodsInPreBindMap()
        """Pods in PreBind that preemption may cancel (upstream ``podsInPreBind``, v1.36+; shared)."""
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score = pct if pct is not None else (percentage_of_nodes_to_score or 0)
        plugins_cfg = profile.plugins
        args_by_name: dict[str, Any] = {}
        args_index: dict[str, int] = {}
        for i, pc in enumerate(profile.plugin_config):
            args_by_name[pc.name] = pc.args
            args_index[pc.name] = i

        # 1. every plugin the profile mentions, with the path where it is first named
        # (a plugin the file names is located where the file names it, not in the merged list)
        written: dict[tuple[str, str], str] = getattr(profile, "plugin_paths", None) or {}
        self._written = written
        needed: dict[str, str] = {}
        for point in EXTENSION_POINTS:
            pset = getattr(plugins_cfg, point.config_name)
            for j, p in enumerate(pset.enabled if pset else ()):
                needed.setdefault(p.name, written.get((point.config_name, p.name),
                                                      f"{path}.plugins.{point.json_name}.enabled[{j}].name"))
        for j, p in enumerate(plugins_cfg.multi_point.enabled if plugins_cfg.multi_point else ()):
            needed.setdefault(p.name, written.get(("multi_point", p.name),
                                                  f"{path}.plugins.multiPoint.enabled[{j}].name"))

        self.plugins: dict[str, Any] = {}
        for name, where in needed.items():
            factory = registry.get(name)
            if factory is None:
                known = ", ".join(sorted(registry))
                raise PluginConfigError(f'plugin "{name}" does not exist (known plugins: {known})', where)
            args = args_by_name.get(name)
            args_type = getattr(factory, "args_type", None)
            if args_type is not None:  # an out-of-tree plugin's typed args (framework.plugin_args)
                idx = args_index.get(name)
                args = decode_plugin_args(name, args_type, args, f"{path}.pluginConfig[{idx}].args"
                                          if idx is not None else f"{path}.pluginConfig")
            try:
                plugin = factory(args, handle)
            except InputError as e:
                raise PluginConfigError(e.message, f"{path}.pluginConfig[{args_index.get(name, 0)}].args"
                                        + (f".{e.path}" if e.path else "")) from None
            for method in CALLED_SIGNATURES:
                why = signature_mismatch(plugin, method)
                if why is not None:
                    raise PluginConfigError(f'plugin "{name}": {why}', where)
            self.plugins[name] = plugin

        # 2. explicit per-point lists, 3. multiPoint expansion
        self._lists: dict[str, list[Any]] = {}
        for point in EXTENSION_POINTS:
            self._lists[point.config_name] = self._expand(point, plugins_cfg, path)

        self.pre_enqueue_plugins = self._lists["pre_enqueue"]
        self.queue_sort_plugins = self._lists["queue_sort"]
        self.pre_filter_plugins = self._lists["pre_filter"]
        self.filter_plugins = self._lists["filter"]
        self.post_filter_plugins = self._lists["post_filter"]
        self.pre_score_plugins = self._lists["pre_score"]
        self.score_plugins = self._lists["score"]
        self.reserve_plugins = self._lists["reserve"]
        self.permit_plugins = self._lists["permit"]
        self.pre_bind_plugins = self._lists["pre_bind"]
        self.bind_plugins = self._lists["bind"]
        self.post_bind_plugins = self._lists["post_bind"]
        self.placement_generate_plugins = self._lists["placement_generate"]
        self.placement_score_plugins = self._lists["placement_score"]
        self.pod_group_post_filter_plugins = self._lists["pod_group_post_filter"]

        if len(self.queue_sort_plugins) != 1:
            raise PluginConfigError(
                f'only one queue sort plugin required for profile with scheduler name "{self.profile_name}", '
                f"but got {len(self.queue_sort_plugins)}", f"{path}.plugins.queueSort")
        if not self.bind_plugins:
            raise PluginConfigError(
                f'at least one bind plugin is needed for profile with scheduler name "{self.profile_name}"',
                f"{path}.plugins.bind")

        if len(self.placement_generate_plugins) > 1:  # framework.go L453-455 (v1.37.2)
            raise PluginConfigError(
                "at most one placement generate plugin is allowed for profile with scheduler name "
                f'"{self.profile_name}"', f"{path}.plugins.placementGenerate")

        # 4. score weights: explicit Score entries first, then multiPoint; 0 → 1
        self.score_weights = self._weights_for(plugins_cfg, "score", path)
        self.placement_score_weights = self._weights_for(plugins_cfg, "placement_score", path)
        """PlacementScore weights (``getValidScoreWeights`` over placementScore + multiPoint)."""
        for pl in self.placement_score_plugins:  # framework.go L478-484: Name() may differ from the config's
            if pl.name not in self.placement_score_weights:
                raise PluginConfigError(f'placement score plugin "{pl.name}" is not configured with weight',
                                        f"{path}.plugins.placementScore")
        # PlacementFeasible (framework.go L488-499): with GenericWorkload, GangScheduling only
        self.placement_feasible_plugins: list[Any] = []
        gang = self.plugins.get("GangScheduling")
        if handle.features.enabled("GenericWorkload") and gang is not None:
            if not callable(getattr(gang, "placement_feasible", None)):
                raise PluginConfigError("GenericWorkload is enabled, but GangScheduling plugin does not fulfill "
                                        "PlacementFeasiblePlugin interface", f"{path}.plugins")
            self.placement_feasible_plugins.append(gang)
        self._weights = np.asarray([self.score_weights.get(p.name, 1) for p in self.score_plugins], np.int64)
        qs = self.queue_sort_plugins[0]
        if callable(getattr(qs, "sort_key", None)):
            self.queue_sort_key = qs.sort_key
        else:
            self.queue_sort_key = functools.cmp_to_key(
                lambda a, b: -1 if qs.less(a, b) else (1 if qs.less(b, a) else 0))
        self._filter_names = [p.name for p in self.filter_plugins]
        self._batch_filter = [callable(getattr(p, "filter_nodes", None)) for p in self.filter_plugins]
        self._pure_filter = [bool(getattr(p, "pure_filter_nodes", False)) for p in self.filter_plugins]
        """Per Filter plugin: its ``filter_nodes`` is a pure function of the pod, the cycle state
        and each node on its own (no effect, no answer that depends on which other rows are
        passed): ``run_filter_plugins`` may then pass it nodes an earlier plugin rejected."""
        self._batch_score = [callable(getattr(p, "score_nodes", None)) for p in self.score_plugins]
        self._normalize = [getattr(p, "normalize_score", None) for p in self.score_plugins]
        self._scores_zero = [getattr(p, "scores_zero", None) for p in self.score_plugins]
        """Per Score plugin, its optional ``scores_zero(state, pod) -> bool``: True promises that
        Score returns 0 on every node without error and NormalizeScore keeps them 0."""
        self._metrics: MetricsRecorder | None = None

        self.equivalence: EquivalenceCache | None = None
        """Filter passes reused between equal pods (:mod:`kubesched.framework.equivalence`; kubesched's
        own, decisions unchanged); off unless :meth:`enable_equivalence_cache` is called."""

        # opportunistic batching (framework.go L370-372, L485-487): the signing plugins and the cache
        fg = handle.features
        self.batch: OpportunisticBatch | None = None
        self.batchable_plugins: list[Any] = []
        self.enable_signatures = False
        if fg.enabled("OpportunisticBatching"):
            self.batchable_plugins, self.enable_signatures = batchable_plugins(
                (self.pre_filter_plugins, self.filter_plugins, self.pre_score_plugins, self.score_plugins),
                bool(handle.extenders))
            self.batch = OpportunisticBatch(self, generic_workload=fg.at_least(1, 37) and fg.enabled("GenericWorkload"),
                                            rescore=fg.at_least(1, 37), check_nominated=fg.at_least(1, 37))
        # a plugin that refuses every pod (PodTopologySpread with default constraints): no pod is signable
        self._signs_no_pod = any(getattr(pl, "signs_no_pod", False) for pl in self.batchable_plugins)

    def enable_equivalence_cache(self) -> EquivalenceCache:
        """Turn on the Filter equivalence cache (:mod:`kubesched.framework.equivalence`) and return
        it. Off by default: on this machine it saved no CPU (benchmarks/README, "perfsim")."""
        if self.equivalence is None:
            self.equivalence = EquivalenceCache(self.handle.nodes, self.filter_plugins)
        return self.equivalence

    # ───────────────────────────── metrics ─────────────────────────────

    @property
    def metrics(self) -> MetricsRecorder | None:
        """The :class:`~kubesched.framework.metrics.MetricsRecorder` fed by this profile, or None.

        Setting a recorder installs, on this instance, a timed wrapper of each ``run_*`` method
        of :data:`TIMED_EXTENSION_POINTS` that reports ``observe_extension_point(point, code name,
        profile, seconds)`` (``time.perf_counter`` wall time, as upstream's ``time.Now()``);
        setting None removes them, so without a recorder the plain methods run at no cost."""
        return self._metrics

    @metrics.setter
    def metrics(self, recorder: MetricsRecorder | None) -> None:
        self._metrics = recorder
        for method in PLUGIN_LISTS:
            self.__dict__.pop(method, None)
        if recorder is None:
            return
        instrumented = {attr: [_InstrumentedPlugin(pl, recorder) for pl in getattr(self, attr)]
                        for attr in set(PLUGIN_LISTS.values())}
        for method, attr in PLUGIN_LISTS.items():
            run = getattr(type(self), method).__get__(self)
            timed = TIMED_EXTENSION_POINTS.get(method)
            setattr(self, method, _timed(run, timed[0] if timed else None, timed[1] if timed else _none,
                                         recorder, self.profile_name, instrumented[attr]))

    def _weights_for(self, cfg: Any, point_name: str, path: str) -> dict[str, int]:
        """Upstream ``getValidScoreWeights`` (framework.go L588-618): weights of the plugins that
        implement ``point_name``, the point's own entries first, then multiPoint; 0 → 1; raises
        :class:`PluginConfigError` if the total could overflow."""
        weights: dict[str, int] = {}
        total = 0
        point = _POINTS[point_name]
        own = getattr(cfg, point_name)
        for p in list(own.enabled if own else ()) + list(cfg.multi_point.enabled if cfg.multi_point else ()):
            if p.name in weights or not implements(self.plugins[p.name], point):
                continue
            w = p.weight or 1
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise PluginConfigError("total score of Score plugins could overflow",
                                        f"{path}.plugins.{point.json_name}")
            weights[p.name] = w
            total += w * MAX_NODE_SCORE
        return weights

    def _expand(self, point: ExtensionPoint, cfg: Any, path: str) -> list[Any]:
        pset = getattr(cfg, point.config_name)
        enabled = list(pset.enabled) if pset else []
        disabled = {p.name for p in pset.disabled} if pset else set()
        explicit: list[str] = []
        for j, p in enumerate(enabled):
            if not implements(self.plugins[p.name], point):
                raise PluginConfigError(f'plugin "{p.name}" does not extend {point.json_name} plugin',
                                        self._written.get((point.config_name, p.name),
                                                          f"{path}.plugins.{point.json_name}.enabled[{j}].name"))
            if p.name not in explicit:
                explicit.append(p.name)
        if "*" in disabled or cfg.multi_point is None:
            return [self.plugins[n] for n in explicit]
        overrides: list[str] = []
        multi: list[str] = []
        for j, p in enumerate(cfg.multi_point.enabled):
            if not implements(self.plugins[p.name], point) or p.name in disabled:
                continue
            if p.name in explicit:
                if p.name not in overrides:
                    overrides.append(p.name)
                continue
            if p.name in multi:
                raise PluginConfigError(f'plugin "{p.name}" already registered as {point.json_name} plugin',
                                        self._written.get(("multi_point", p.name),
                                                          f"{path}.plugins.multiPoint.enabled[{j}].name"))
            multi.append(p.name)
        order: list[str] = []
        for n in overrides + multi + explicit:
            if n not in order:
                order.append(n)
        return [self.plugins[n] for n in order]

    # ───────────────────────────── queue ─────────────────────────────

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        """First rejection wins (upstream ``RunPreEnqueuePlugins``); ``None`` = may enqueue."""
        for pl in self.pre_enqueue_plugins:
            try:
                st: Status | None = pl.pre_enqueue(pod)
            except Exception as e:  # noqa: BLE001 - a plugin error is a status, not a crash
                return as_status(e).with_plugin(pl.name)
            if st is not None and not st.is_success():
                return st.with_plugin(pl.name)
        return None

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return bool(self.queue_sort_plugins[0].less(a, b))

    # ───────────────────────────── batching ─────────────────────────────

    def sign_pod(self, pod: Pod) -> bytes | None:
        """Upstream ``SignPod`` (framework.go L884-927): the pod's signature (JSON bytes), or
        None when signatures are off for the profile or a plugin cannot sign the pod."""
        if not self.enable_signatures or self._signs_no_pod:
            return None
        return sign_pod(pod, self.batchable_plugins)

    def run_raw_score_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray,
                              ) -> tuple[list[tuple[str, np.ndarray]], Status | None]:
        """Upstream ``RunRawScorePlugins`` (framework.go L1472-1495): Score() of every
        non-skipped Score plugin over ``rows``, without normalising: ``[(plugin, int64[K])]``,
        or an Error status."""
        table = self.handle.nodes
        out: list[tuple[str, np.ndarray]] = []
        for pi, pl in enumerate(self.score_plugins):
            if pl.name in state.skip_score_plugins:
                continue
            raw, st = self._plugin_raw_scores(pi, pl, state, pod, table, rows)
            if raw is None:
                return [], st
            out.append((pl.name, raw))
        return out, None

    def _plugin_raw_scores(self, pi: int, pl: Any, state: CycleState, pod: Pod, table: NodeTable,
                           rows: np.ndarray) -> tuple[np.ndarray | None, Status | None]:
        """Score() of one Score plugin (index ``pi``) over ``rows``: ``(int64[K], None)``, or
        ``(None, Error status)`` with upstream's "running Score plugins" text."""
        st = None
        try:
            if self._batch_score[pi]:
                raw = np.asarray(pl.score_nodes(state, pod, table, rows), np.int64)
            else:
                raw = np.zeros(len(rows), np.int64)
                for i, row in enumerate(rows.tolist()):
                    s, st = pl.score(state, pod, table.node_info(row))
                    if st is not None and not st.is_success():
                        break
                    raw[i] = s
        except Exception as e:  # noqa: BLE001
            return None, _score_error("running Score plugins", pl.name, as_status(e))
        if st is not None and not st.is_success():
            return None, _score_error("running Score plugins", pl.name, st)
        return raw, None

    def normalize_scores(self, state: CycleState, pod: Pod, rows: np.ndarray, entries: list[Any]) -> bool:
        """Upstream ``NormalizeScores`` (framework.go L1497-1524) over batching entries
        (:func:`kubesched.framework.batch.normalize_entries`); False on a failure."""
        return normalize_entries(self.score_plugins, self._weights, state, pod, rows, entries)

    # ───────────────────────────── scheduling cycle ─────────────────────────────

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod, plugins: Sequence[Any] | None = None) -> tuple[
            PreFilterResult | None, Status | None, set[str]]:
        """Returns ``(result, status, plugins)``; ``plugins`` are those that narrowed the nodes
        or rejected (upstream's ``unscheduledPlugins``)."""
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        rejected: Status | None = None
        table = self.handle.nodes
        for pl in self.pre_filter_plugins if plugins is None else plugins:
            try:
                r, st = pl.pre_filter(state, pod, table)
            except Exception as e:  # noqa: BLE001
                r, st = None, as_status(e)
            if st is not None and st.code == _SKIP:
                state.skip_filter_plugins.add(pl.name)
                continue
            if st is not None and not st.is_success():
                st = st.with_plugin(pl.name)
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, st, set()  # no preemption can help: stop here
                if st.code == Code.UNSCHEDULABLE:
                    rejected = st  # preemption may help: run the remaining PreFilters (#119770)
                    continue
                # Error, and any other code (Pending included): an Error, as upstream
                return None, Status(Code.ERROR, (f'running PreFilter plugin "{pl.name}": {st.message()}',),
                                    st.error, pl.name), set()
            if r is not None and not r.all_nodes():
                with_nodes.append(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(set(with_nodes))  # upstream: sets.List(pluginsWithNodes), sorted
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)), set(with_nodes)
        return result, rejected, set(with_nodes)

    def run_filter_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray,
                           plugins: Sequence[Any] | None = None) -> FilterChunk | Status:
        """Run the Filter plugins over ``rows`` (``int64[M]``); each node stops at its first
        rejecting plugin. A plugin's Error (a raised exception, or a status that is neither
        Success nor a rejection) ends the run: the result is then that Error status, worded as
        upstream ``RunFilterPlugins`` (``running "<plugin>" filter plugin: <message>``), which
        the caller returns (``findNodesThatPassFilters``).

        Each rejected node keeps its plugin's key (reason bit set or interned status id) and
        each plugin that rejected some node its reason table; statuses are built only on demand
        (:class:`FilterChunk`)."""
        table = self.handle.nodes
        n = len(rows)
        fail_plugin = np.empty(n, np.int16)
        fail_plugin.fill(-1)
        fail_key = np.zeros(n, np.int64)
        tables: list[PluginReasons | None] = [None] * len(self.filter_plugins)
        skipped = set()
        # the next plugin runs over ``cur``: rows[alive] (alive None: all of rows). Nodes a plugin
        # rejects are only marked (``open_``: bool over cur, None = all open) while few of them are
        # rejected and the next plugins are pure per-node functions (``pure_filter_nodes``); cur is
        # compacted when a quarter of it is rejected or before any other plugin, so a plugin with
        # per-node effects, and a rejection's evaluation order, are exactly as with compaction
        alive: np.ndarray | None = None
        open_: np.ndarray | None = None
        n_open = n
        cur = rows
        skip = state.skip_filter_plugins
        pure = self._pure_filter
        for pi, pl in enumerate(self.filter_plugins if plugins is None else plugins):
            if pl.name in skip:
                skipped.add(pi)
                continue
            batch = self._batch_filter[pi]
            if open_ is not None and not (batch and pure[pi]):
                cur, alive, open_ = _compact(rows, cur, alive, open_)
            if batch:
                try:
                    res = pl.filter_nodes(state, pod, table, cur)
                except Exception as e:  # noqa: BLE001 - a plugin error is a status
                    if open_ is None:
                        return _filter_error(pl.name, as_status(e))
                    # an error may come from a node an earlier plugin rejected: run as compacted
                    cur, alive, open_ = _compact(rows, cur, alive, open_)
                    try:
                        res = pl.filter_nodes(state, pod, table, cur)
                    except Exception as e2:  # noqa: BLE001
                        return _filter_error(pl.name, as_status(e2))
                if res is None:
                    continue
            else:
                res = self._filter_per_node(state, pod, pl, cur)
                if isinstance(res, Status):
                    return res
            failed = res.failed
            if not count_nonzero(failed):  # cheaper than .any() on small arrays
                continue
            bad = failed != 0
            if open_ is not None:
                bad &= open_
            n_bad = int(count_nonzero(bad))
            if not n_bad:
                continue
            tables[pi] = PluginReasons.of(res)
            if alive is None:
                fail_plugin[bad] = pi
                fail_key[bad] = failed[bad]
            else:
                pos = alive[bad]
                fail_plugin[pos] = pi
                fail_key[pos] = failed[bad]
            n_open -= n_bad
            if n_open == 0:
                break
            if open_ is None:
                open_ = ~bad
            else:
                open_ &= ~bad
            if n_open * 4 < len(cur) * 3:
                cur, alive, open_ = _compact(rows, cur, alive, open_)
        return FilterChunk(rows, fail_plugin, fail_key, self._filter_names, tables, frozenset(skipped))

    def _run_pre_filter_extension(self, op: str, state: CycleState, pod: Pod, pod_info: Any,
                                  node_info: Any) -> Status | None:
        for pl in self.pre_filter_plugins:
            getter = getattr(pl, "pre_filter_extensions", None)
            ext = getter() if callable(getter) else None
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            try:
                st = getattr(ext, op)(state, pod, pod_info, node_info)
            except Exception as e:  # noqa: BLE001 - a plugin error is a status
                st = as_status(e)
            if st is not None and not st.is_success():
                name = "AddPod" if op == "add_pod" else "RemovePod"
                return Status(Code.ERROR, (f'running {name} on PreFilter plugin "{pl.name}": {st.message()}',),
                              st.error, pl.name)
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_info: Any,
                                         node_info: Any) -> Status | None:
        """Upstream ``RunPreFilterExtensionAddPod``: tell every PreFilter plugin (not skipped in
        this cycle) that ``pod_info`` now runs on ``node_info``. None or an Error status."""
        return self._run_pre_filter_extension("add_pod", state, pod, pod_info, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_info: Any,
                                            node_info: Any) -> Status | None:
        """Upstream ``RunPreFilterExtensionRemovePod``. None or an Error status."""
        return self._run_pre_filter_extension("remove_pod", state, pod, pod_info, node_info)

    def filter_with_nominated_pods(self, state: CycleState, pod: Pod, row: int,
                                   nominated: Sequence[Any]) -> FilterChunk | Status | None:
        """The first pass of upstream ``RunFilterPluginsWithNominatedPods`` for one node: run the
        filters with ``nominated`` (pods of priority ≥ the pod's nominated to this node) added
        to the node and to a cloned state. Returns that 1-row chunk when it rejects the node,
        None when it passes (then the plain result stands), or the Error status of an AddPod
        extension or a Filter plugin. The table is restored exactly."""
        from kubesched.framework.node_table import RowEdit

        table = self.handle.nodes
        state_n = state.clone()
        with RowEdit(table, row) as edit:
            ni = table.node_info(row)
            for pi in nominated:
                edit.add(pi)
                st = self.run_pre_filter_extension_add_pod(state_n, pod, pi, ni)
                if st is not None:
                    return st
            chunk = self.run_filter_plugins(state_n, pod, np.asarray([row], np.int64))
        if isinstance(chunk, Status) or chunk.fail_plugin[0] >= 0:
            return chunk
        return None

    def _nominated_arithmetic(self, state: CycleState) -> tuple[int, Any] | None:
        """When the pass with nominated pods can be decided without editing rows: ``(index, plugin)``
        of the one Filter plugin (not skipped in this cycle) whose verdict depends on a node's
        pods, which must offer ``filter_nodes_with_added`` (NodeResourcesFit), or ``(-1, None)``
        when there is none. Every other Filter plugin not skipped must be an in-tree pod-independent
        one (:data:`~kubesched.framework.interface.POD_INDEPENDENT_FILTERS`) and no PreFilter
        plugin's AddPod extension may be active. None otherwise (or when a subclass overrides
        the plain path)."""
        cls = type(self)
        if (cls.filter_with_nominated_pods is not Framework.filter_with_nominated_pods
                or cls.run_filter_plugins is not Framework.run_filter_plugins
                or cls.run_pre_filter_extension_add_pod is not Framework.run_pre_filter_extension_add_pod):
            return None
        skip = state.skip_filter_plugins
        for pl in self.pre_filter_plugins:
            getter = getattr(pl, "pre_filter_extensions", None)
            if pl.name not in skip and callable(getter) and getter() is not None:
                return None
        dep, dep_pl = -1, None
        for pi, pl in enumerate(self.filter_plugins):
            if pl.name in skip:
                continue
            if pl.name in POD_INDEPENDENT_FILTERS and type(pl).__module__.startswith("kubesched.plugins."):
                continue
            if dep >= 0 or not callable(getattr(pl, "filter_nodes_with_added", None)):
                return None
            dep, dep_pl = pi, pl
        return dep, dep_pl

    def apply_nominated_pods(self, state: CycleState, pod: Pod, chunk: FilterChunk,
                             items: Sequence[tuple[int, Sequence[Any]]]) -> Status | None:
        """Upstream ``RunFilterPluginsWithNominatedPods`` (v1.37.2 framework/runtime/framework.go)
        for the nodes ``chunk.rows[i]`` of ``items`` (``(i, pods nominated to that node of
        priority ≥ the pod's)``, ``i`` increasing): a node the first pass (those pods added)
        rejects takes that pass's status.

        When :meth:`_nominated_arithmetic` allows it the first pass is decided without row edits:
        a node that failed the plain pass before the pod-dependent plugin fails the same way (its
        plain status stands); else that plugin's ``filter_nodes_with_added`` over the nodes'
        requested vectors plus the nominated pods' requests decides, and the plain result stands
        after it. Those rejections are written into the chunk's arrays when the plugin's reason
        table there means the same keys (:meth:`FilterChunk.reject`), else kept as 1-row
        overrides (:meth:`FilterChunk.override`). Anything not exact (a nominated pod requesting
        a resource no node has, an unknown answer) runs :meth:`filter_with_nominated_pods`. Same
        per-node statuses as running that on every node. Returns the first Error status that
        returns (the chunk is then left as it was), else None."""
        if not items:
            return None
        plan = self._nominated_arithmetic(state)
        subs: dict[int, FilterChunk | None] = {}
        rows = chunk.rows
        if plan is None:
            for i, nominated in items:
                sub = self.filter_with_nominated_pods(state, pod, int(rows[i]), nominated)
                if isinstance(sub, Status):
                    return sub
                subs[i] = sub
            rejected = None
        else:
            got = self._nominated_by_arithmetic(state, pod, chunk, items, plan, subs)
            if isinstance(got, Status):
                return got
            rejected = got
        if rejected is not None:
            idx, keys, reasons = rejected
            if not chunk.reject(idx, plan[0], keys, reasons):  # type: ignore[index]
                for i, k in zip(idx.tolist(), keys.tolist(), strict=True):
                    subs[i] = self._one_row_chunk(chunk, int(rows[i]), plan[0], k, reasons)  # type: ignore[index]
        for i in sorted(subs):
            sub = subs[i]
            if sub is not None:
                chunk.override(i, sub)
        return None

    def _nominated_by_arithmetic(self, state: CycleState, pod: Pod, chunk: FilterChunk,
                                 items: Sequence[tuple[int, Sequence[Any]]], plan: tuple[int, Any],
                                 subs: dict[int, FilterChunk | None]
                                 ) -> tuple[np.ndarray, np.ndarray, PluginReasons] | Status | None:
        """The arithmetic part of :meth:`apply_nominated_pods`: ``(positions in the chunk, keys,
        reason table)`` of the nodes the pod-dependent plugin rejects once the nominated pods are
        counted (None: none), the nodes it cannot decide run through
        :meth:`filter_with_nominated_pods` into ``subs``; or that pass's Error status."""
        dep, dep_pl = plan
        if dep < 0:  # no Filter reads the node's pods: the first pass is the plain one everywhere
            return None
        table = self.handle.nodes
        index = table.resource_index
        fp = chunk.fail_plugin
        rows = chunk.rows
        todo: list[int] = []
        todo_pods: list[Sequence[Any]] = []
        slow: dict[int, Sequence[Any]] = {}
        fp_l = fp.tolist()
        for i, nominated in items:
            if 0 <= fp_l[i] < dep:  # the first pass fails exactly as the plain one
                continue
            todo.append(i)
            todo_pods.append(nominated)
        rejected = None
        if todo:
            width = table.requested.shape[1]
            pods_col = table.PODS
            added: list[list[int]] = []
            keep: list[int] = []
            for j, nominated in enumerate(todo_pods):
                vec = [0] * width
                exact = True
                for pi in nominated:
                    for name, v in pi.requests.items():
                        if name == "pods":
                            continue
                        col = index.get(name)
                        if col is None:  # adding it would create a column: left to the real pass
                            exact = False
                            break
                        vec[col] += v
                    if not exact:
                        break
                if not exact:
                    slow[todo[j]] = nominated
                    continue
                vec[pods_col] = len(nominated)
                added.append(vec)
                keep.append(j)
            if len(keep) < len(todo):
                todo = [todo[j] for j in keep]
                todo_pods = [todo_pods[j] for j in keep]
        if todo:
            idx = np.asarray(todo, np.int64)
            vecs = np.asarray(added, np.int64).reshape(len(todo), table.requested.shape[1])
            exact, res = dep_pl.filter_nodes_with_added(state, pod, table, rows[idx], vecs)
            if not exact:
                slow.update(zip(todo, todo_pods, strict=True))
            elif res is not None:
                failed = res.failed
                bad = failed != 0
                if count_nonzero(bad):
                    rejected = (idx[bad], failed[bad], PluginReasons.of(res))
                # passes with more pods where it failed with fewer: let the real pass say
                for j in np.flatnonzero(~bad & (fp[idx] == dep)).tolist():
                    slow[todo[j]] = todo_pods[j]
            else:
                for j in np.flatnonzero(fp[idx] == dep).tolist():
                    slow[todo[j]] = todo_pods[j]
        for i, nominated in slow.items():
            sub = self.filter_with_nominated_pods(state, pod, int(rows[i]), nominated)
            if isinstance(sub, Status):
                return sub
            subs[i] = sub
        return rejected

    @staticmethod
    def _one_row_chunk(chunk: FilterChunk, row: int, plugin: int, key: int,
                       reasons: PluginReasons | None) -> FilterChunk:
        """The 1-row chunk of ``row`` rejected by plugin index ``plugin`` with ``key``."""
        tables: list[PluginReasons | None] = [None] * len(chunk.tables)
        tables[plugin] = reasons
        return FilterChunk(np.asarray([row], np.int64), np.asarray([plugin], np.int16),
                           np.asarray([key], np.int64), chunk.plugins, tables, chunk.skipped)

    def _filter_per_node(self, state: CycleState, pod: Pod, pl: Any, rows: np.ndarray) -> FilterResult | Status:
        """Run a per-node Filter plugin over ``rows``: each rejection's ``(reasons, code)`` is
        interned, so every node keeps its own status exactly (no limit on distinct ones). The
        plugin's first Error ends it: that Error status (as :meth:`run_filter_plugins`) is the
        result."""
        table = self.handle.nodes
        failed = np.zeros(len(rows), np.int64)
        index: dict[ReasonEntry, int] = {}
        for i, row in enumerate(rows.tolist()):
            try:
                st = pl.filter(state, pod, table.node_info(row))
            except Exception as e:  # noqa: BLE001 - a plugin error is a status
                return _filter_error(pl.name, as_status(e))
            if st is None or st.is_success():
                continue
            if not st.is_rejected():  # Error, or a code a Filter may not return: Error (upstream)
                return _filter_error(pl.name, st)
            entry = reason_entry(st)
            k = index.get(entry)
            if k is None:
                k = index[entry] = len(index) + 1
            failed[i] = k
        return FilterResult.interned(failed, list(index))

    def run_post_filter_plugins(self, state: CycleState, pod: Pod,
                                filtered_node_status_map: Any, plugins: Sequence[Any] | None = None,
                                ) -> tuple[Any, Status]:
        """Upstream ``RunPostFilterPlugins``: Success returns at once; UnschedulableAndUnresolvable
        stops; Unschedulable tries the next plugin, its reasons appended; anything else is Error."""
        reasons: list[str] = []
        result = None
        rejector = ""
        for pl in self.post_filter_plugins if plugins is None else plugins:
            try:
                r, st = pl.post_filter(state, pod, filtered_node_status_map)
            except Exception as e:  # noqa: BLE001
                return None, as_status(e).with_plugin(pl.name)
            if st is None or st.is_success():
                # the plugin's own status: its message (v1.37 preemption's "found a potential
                # placement …") becomes the FitError's PostFilterMsg
                return r, st if st is not None else Status(Code.SUCCESS)
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st.with_plugin(pl.name)
            if not st.is_rejected():
                return None, Status(Code.ERROR, st.reasons, st.error, pl.name)
            if r is not None and r.nominating_info is not None and r.nominating_info.mode != 0:
                result = r
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), None, rejector)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray,
                              plugins: Sequence[Any] | None = None) -> Status | None:
        table = self.handle.nodes
        for pl in self.pre_score_plugins if plugins is None else plugins:
            try:
                st = pl.pre_score(state, pod, table, rows)
            except Exception as e:  # noqa: BLE001
                return as_status(e).with_plugin(pl.name)
            if st is not None and st.code == _SKIP:
                state.skip_score_plugins.add(pl.name)
                continue
            if st is not None and not st.is_success():
                return Status(Code.ERROR, (f'running PreScore plugin "{pl.name}": {st.message()}',), st.error, pl.name)
        return None

    def run_score_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray, *,
                          keep: bool = True, plugins: Sequence[Any] | None = None,
                          ) -> tuple[ScoreResult | None, Status | None]:
        """Score, NormalizeScore and weight every Score plugin over ``rows``.

        With ``keep`` the raw, normalized and weighted arrays of every plugin are returned (for
        decision records); otherwise only the total. Returns ``(result, None)``, or
        ``(None, Error status)`` on a plugin error or a normalised score out of [0, 100]
        (upstream ``RunScorePlugins`` checks every plugin), in upstream's order (v1.37.2
        framework.go L1405-1582): every Score, then every NormalizeScore, then the range check.
        """
        table = self.handle.nodes
        k = len(rows)
        skip = state.skip_score_plugins
        # upstream's three phases: every plugin's Score, then every NormalizeScore, then the
        # range check and weights (so a Score error wins over an earlier plugin's bad range)
        ran: list[tuple[int, Any, np.ndarray]] = []
        # nothing kept and no instrumented plugins (metrics): a plugin that scores 0 everywhere
        # adds nothing to the total and cannot fail the range check, so it is not run
        # (kept for a record: its zeros, without running Score or NormalizeScore)
        zeros = self._scores_zero if plugins is None else None
        promised: set[int] = set()
        for pi, pl in enumerate(self.score_plugins if plugins is None else plugins):
            if pl.name in skip:
                continue
            if zeros is not None:
                zero = zeros[pi]
                if zero is not None and zero(state, pod):
                    if keep:
                        promised.add(pi)
                        ran.append((pi, pl, np.zeros(k, np.int64)))
                    continue
            raw_or_none, st = self._plugin_raw_scores(pi, pl, state, pod, table, rows)
            if raw_or_none is None:
                return None, st
            ran.append((pi, pl, raw_or_none))
        norms: list[np.ndarray] = []
        for pi, pl, raw in ran:
            normalize = self._normalize[pi]
            if normalize is None:
                norms.append(raw)
                continue
            if pi in promised:
                norms.append(np.zeros(k, np.int64))
                continue
            norm = raw.copy() if keep else raw
            try:
                st = normalize(state, pod, norm)
            except Exception as e:  # noqa: BLE001
                return None, _score_error("running Normalize on Score plugins", pl.name, as_status(e))
            if st is not None and not st.is_success():
                return None, _score_error("running Normalize on Score plugins", pl.name, st)
            norms.append(norm)
        # one reduction over every plugin's scores (as uint64 a negative score is > 100); the
        # first plugin in order with a bad score is named, as when checking one by one
        if k and norms and _out_of_range(norms[0] if len(norms) == 1 else np.concatenate(norms)):
            for (_, pl, _), norm in zip(ran, norms, strict=True):
                if _out_of_range(norm):
                    bad = int(norm[(norm < MIN_NODE_SCORE) | (norm > MAX_NODE_SCORE)][0])
                    msg = (f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an '
                           f"invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                           "after normalizing")
                    return None, Status(Code.ERROR, (msg,), None, pl.name)
        total = np.zeros(k, np.int64)
        weights = self._weights
        names: list[str] = []
        raws: list[np.ndarray] = []
        weighted: list[np.ndarray] = []
        for (pi, pl, raw), norm in zip(ran, norms, strict=True):
            w = int(weights[pi])
            if keep:
                wv = norm * w
                names.append(pl.name)
                raws.append(raw)
                weighted.append(wv)
                total += wv
            elif w == 1:
                total += norm
            else:
                total += norm * w
        if not keep:
            norms = []
        return ScoreResult(rows, names, raws, norms, weighted, total), None

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str,
                                    plugins: Sequence[Any] | None = None) -> Status | None:
        for pl in self.reserve_plugins if plugins is None else plugins:
            try:
                st = pl.reserve(state, pod, node_name)
            except Exception as e:  # noqa: BLE001
                st = as_status(e)
            if st is not None and not st.is_success():
                code = st.code if st.is_rejected() else Code.ERROR
                return Status(code, (f'running Reserve plugin "{pl.name}": {st.message()}',)
                              if code == Code.ERROR else st.reasons, st.error, pl.name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str,
                                      plugins: Sequence[Any] | None = None) -> None:
        for pl in reversed(self.reserve_plugins if plugins is None else plugins):
            pl.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str,
                           plugins: Sequence[Any] | None = None) -> Status | None:
        """Upstream ``RunPermitPlugins``: the first rejection (with its plugin) or Error
        (``running Permit plugin "X": …``) stops; ``Wait`` from any plugin (timeout capped at
        15 min) parks the pod in :attr:`waiting_pods` — one timer per waiting plugin on the
        handle's clock — and returns ``Wait``; otherwise None (Success)."""
        wait: dict[str, float] | None = None
        wait_status: Status | None = None
        for pl in self.permit_plugins if plugins is None else plugins:
            try:
                st: Status | None
                st, timeout = pl.permit(state, pod, node_name)
            except Exception as e:  # noqa: BLE001 - a plugin error is an Error status
                st, timeout = as_status(e), 0.0
            if st is None or st.is_success():
                continue
            if st.is_rejected():
                return st.with_plugin(pl.name)
            if st.is_wait():
                if wait is None:
                    wait = {}
                wait[pl.name] = min(float(timeout), MAX_PERMIT_TIMEOUT_S)
                wait_status = st
                continue
            return Status(Code.ERROR, (f'running Permit plugin "{pl.name}": {st.message()}',), st.error,
                          pl.name)
        if wait is not None:
            self.waiting_pods.add(WaitingPod(pod, wait, self.clock()))
            if wait_status is not None and self.handle.features.at_least(1, 36):
                # v1.36+ (framework.go L2136-2139): the last waiting plugin's status, with
                # AppendReason — its own reasons, then the fixed text without the pod's name
                return Status(Code.WAIT, (*wait_status.reasons,
                                          "one or more plugins asked to wait and no plugin rejected pod"),
                              wait_status.error, wait_status.plugin)
            return Status(Code.WAIT, (
                f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"',))
        return None

    def clock(self) -> Any:
        """The Handle's clock (a :class:`~kubesched.framework.clock.ManualClock` at 0 when the
        Handle was built without one: unit tests)."""
        clock = self.handle.clock
        if clock is None:  # a Handle built without a clock (unit tests): time stands still
            from kubesched.framework.clock import ManualClock

            clock = self.handle.clock = ManualClock()
        return clock

    def will_wait_on_permit(self, pod: Pod) -> bool:
        """Upstream ``WillWaitOnPermit``."""
        return self.waiting_pods.get(waiting_pod_key(pod)) is not None

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        """Upstream ``WaitOnPermit``: None unless the pod waits; then await its signal and remove
        it from the map. A rejection is returned as is; any other failure becomes
        ``waiting on permit for pod: …`` (Error)."""
        uid = waiting_pod_key(pod)
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return None
        recorder = self._metrics
        t0 = time.perf_counter()
        try:
            st: Status | None = await wp.future
        finally:
            self.waiting_pods.remove(uid)
        if recorder is not None:  # upstream PermitWaitDuration{result = the signal's code}
            recorder.observe_permit_wait(str(st.code) if st is not None else "Success",
                                         time.perf_counter() - t0)
        if st is None or st.is_success():
            return None
        if st.is_rejected():
            return st
        return Status(Code.ERROR, (f"waiting on permit for pod: {st.message()}",), st.error, st.plugin)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Upstream ``RejectWaitingPod``: reject with message ``removed``; False if not waiting."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    # ───────────────────────────── binding cycle ─────────────────────────────
    # PreBind and Bind plugins may be coroutines (``async def``): their result is awaited.

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str,
                                 plugins: Sequence[Any] | None = None) -> Status | None:
        """Upstream ``RunPreBindPreFlights`` (``framework/runtime/framework.go`` L1875-1917):
        each PreBind plugin's ``pre_bind_pre_flight``. None (Success) when some plugin will do
        PreBind work; ``Skip`` when all skip (also with no PreBind plugin); an Error status
        ``running PreBindPreFlight "X": …`` on a plugin error, or ``PreBindPreFlight X returned
        "<code>", which is unsupported. …`` for any other code. Records the skipping plugins in
        ``state.skip_pre_bind_plugins`` and (v1.36+) the ``AllowParallel`` ones in
        ``state.parallel_pre_bind_plugins``."""
        skip: set[str] = set()
        parallel: set[str] = set()
        returning: Status | None = SKIP_STATUS
        with_result = self.handle.features.at_least(1, 36)
        for pl in self.pre_bind_plugins if plugins is None else plugins:
            fn = getattr(pl, "pre_bind_pre_flight", None)
            result: Any = None
            if fn is None:
                st: Status | None = None  # no pre-flight: assume PreBind has work
            else:
                try:
                    out = fn(state, pod, node_name)
                    if isinstance(out, tuple):
                        result, st = out
                    else:
                        st = out
                except Exception as e:  # noqa: BLE001 - a plugin error is an Error status
                    st = as_status(e)
            if with_result and result is not None and getattr(result, "allow_parallel", False):
                parallel.add(pl.name)
            if st is not None and st.code == Code.ERROR:
                return Status(Code.ERROR, (f'running PreBindPreFlight "{pl.name}": {st.message()}',), st.error,
                              pl.name)
            if st is None or st.is_success():
                returning = None
            elif st.is_skip():
                skip.add(pl.name)
            else:
                return Status(Code.ERROR, (f'PreBindPreFlight {pl.name} returned "{st.code}", which is unsupported. '
                                           "It is supposed to return Success, Skip, or Error status",), None, pl.name)
        state.skip_pre_bind_plugins = skip
        state.parallel_pre_bind_plugins = parallel
        return returning

    def pre_bind_plugin_groups(self, state: CycleState, plugins: Sequence[Any] | None = None) -> list[list[Any]]:
        """Upstream ``getPreBindPluginGroups`` (L1836-1858): the PreBind plugins not skipped, in
        order, consecutive ``AllowParallel`` ones grouped; any non-parallel plugin (even a
        skipped one) ends the current group."""
        groups: list[list[Any]] = []
        group: list[Any] = []
        skipped = state.skip_pre_bind_plugins
        parallel = state.parallel_pre_bind_plugins
        for pl in self.pre_bind_plugins if plugins is None else plugins:
            if pl.name in parallel:
                if pl.name not in skipped:
                    group.append(pl)
                continue
            if group:
                groups.append(group)
                group = []
            if pl.name not in skipped:
                groups.append([pl])
        if group:
            groups.append(group)
        return groups

    async def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str,
                                   plugins: Sequence[Any] | None = None) -> Status | None:
        """Upstream ``RunPreBindPlugins``: a rejection passes through with its plugin, anything
        else not Success becomes ``running PreBind plugin "X": …`` (Error). Plugins whose
        PreBindPreFlight skipped (``state.skip_pre_bind_plugins``) do not run. The groups of
        :meth:`pre_bind_plugin_groups` run one after the other; upstream runs the plugins of a
        parallel group concurrently (first failure cancels the rest) — here they run in order
        within the group and the first failure stops it, which gives the same status whenever
        at most one plugin of a group fails (the PreBinds of VolumeBinding and DynamicResources
        write different objects)."""
        for group in self.pre_bind_plugin_groups(state, plugins):
            st = await self._run_pre_bind_group(state, pod, node_name, group)
            if st is not None:
                return st
        return None

    async def _run_pre_bind_group(self, state: CycleState, pod: Pod, node_name: str,
                                  plugins: Sequence[Any]) -> Status | None:
        for pl in plugins:
            try:
                res: Any = pl.pre_bind(state, pod, node_name)
                if res is not None and res.__class__ is not Status:  # a coroutine (async plugin)
                    res = await res
                st: Status | None = res
            except Exception as e:  # noqa: BLE001
                st = as_status(e)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    return st.with_plugin(pl.name)
                msg = st.message()
                bp = state.pod_in_pre_bind
                if bp is not None and bp.canceled:
                    msg = bp.cause  # upstream: context.Canceled → context.Cause(ctx)
                return Status(Code.ERROR, (f'running PreBind plugin "{pl.name}": {msg}',), st.error, pl.name)
        return None

    async def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str,
                               plugins: Sequence[Any] | None = None) -> Status | None:
        """The first plugin that does not Skip binds (upstream ``RunBindPlugins``); its failure is
        ``running Bind plugin "X": …`` (Error). Every plugin skipping returns the Skip status."""
        st: Status | None = SKIP_STATUS
        for pl in self.bind_plugins if plugins is None else plugins:
            try:
                res: Any = pl.bind(state, pod, node_name)
                if res is not None and res.__class__ is not Status:  # a coroutine (async plugin)
                    res = await res
                st = res
            except Exception as e:  # noqa: BLE001
                st = as_status(e)
            if st is not None and st.code == _SKIP:
                continue
            if st is not None and not st.is_success():
                return Status(Code.ERROR, (f'running Bind plugin "{pl.name}": {st.message()}',), st.error, pl.name)
            return None
        return st

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str,
                              plugins: Sequence[Any] | None = None) -> None:
        for pl in self.post_bind_plugins if plugins is None else plugins:
            pl.post_bind(state, pod, node_name)

    def list_plugins(self) -> dict[str, list[dict[str, Any]]]:
        """Plugins per extension point (upstream ``ListPlugins``), for ``/configz``-like output."""
        out: dict[str, list[dict[str, Any]]] = {}
        for point in EXTENSION_POINTS:
            lst = self._lists[point.config_name]
            if lst:
                weights = {"score": self.score_weights, "placement_score": self.placement_score_weights}.get(
                    point.config_name)
                out[point.json_name] = [
                    {"name": p.name, **({"weight": weights.get(p.name, 1)} if weights is not None else {})}
                    for p in lst]
        return out

    # ───── pod groups: gang ─────

    def run_placement_feasible_plugins(self, state: PlacementCycleState, pg_info: PodGroupInfo,
                                       progress: PlacementProgress) -> Status | None:
        """Upstream ``RunPlacementFeasiblePlugins`` (framework.go L2160-2185, v1.37.2): Success
        (None) if every plugin succeeds; the last ``Wait`` (with its plugin) if some wait;
        the first ``Unschedulable`` stops; an error becomes ``running PlacementFeasible plugin:
        <err>``; any other code ``unexpected status from PlacementFeasible plugin: <code>``."""
        status: Status | None = None
        for pl in self.placement_feasible_plugins:
            try:
                st: Status | None = pl.placement_feasible(state, pg_info, progress)
            except Exception as e:  # noqa: BLE001 - a plugin error is an Error status
                st = as_status(e)
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                status = st.with_plugin(pl.name)
                continue
            if st.code == Code.UNSCHEDULABLE:
                return st.with_plugin(pl.name)
            if st.code == Code.ERROR:
                err = st.as_error()
                return Status(Code.ERROR, (f"running PlacementFeasible plugin: {err}",), err, pl.name)
            return Status(Code.ERROR, (f"unexpected status from PlacementFeasible plugin: {st.code}",),
                          None, pl.name)
        return status

    # ───── pod groups: wlpreempt ─────

    def run_pod_group_post_filter_plugins(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                                          scheduling_func: PodGroupSchedulingFunc,
                                          plugins: Sequence[Any] | None = None,
                                          ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Upstream ``RunPodGroupPostFilterPlugins`` (v1.37.2 framework.go L1211-1255), after a
        failed pod-group cycle: without GenericWorkload Unschedulable ``"generic workload feature
        is disabled, cannot perform PodGroupPostFilter"``; a plugin's Success returns at once (its
        result and status); UnschedulableAndUnresolvable stops (with the plugin); Unschedulable
        tries the next plugin, its reasons collected (the first such plugin is the rejector);
        anything else is Error ``error in "<plugin>" PodGroupPostFilter plugins: <message>``.
        ``scheduling_func`` re-runs the group's algorithm on the (mutated) table. Observes
        ``framework_extension_point_duration_seconds{extension_point="PodGroupPostFilter"}``."""
        if not self.handle.features.enabled("GenericWorkload"):
            return None, Status(Code.UNSCHEDULABLE,
                                ("generic workload feature is disabled, cannot perform PodGroupPostFilter",))
        t0 = time.perf_counter()
        result, status = self._run_pod_group_post_filter(state, pg_info, scheduling_func, plugins)
        if self._metrics is not None:
            self._metrics.observe_extension_point("PodGroupPostFilter", _status_code_name(status), self.profile_name,
                                                  time.perf_counter() - t0)
        return result, status

    def _run_pod_group_post_filter(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                                   scheduling_func: PodGroupSchedulingFunc, plugins: Sequence[Any] | None,
                                   ) -> tuple[PodGroupPostFilterResult | None, Status]:
        reasons: list[str] = []
        rejector = ""
        for pl in self.pod_group_post_filter_plugins if plugins is None else plugins:
            try:
                res, st = pl.pod_group_post_filter(state, pg_info, scheduling_func)
            except Exception as e:  # noqa: BLE001 - a plugin crash is an Error status
                res, st = None, as_status(e)
            if st is None or st.is_success():
                return res, st if st is not None else Status(Code.SUCCESS)
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return res, st.with_plugin(pl.name)
            if st.code == Code.UNSCHEDULABLE:
                reasons.extend(st.reasons)
                rejector = rejector or pl.name
                continue
            return None, Status(Code.ERROR, (f'error in "{pl.name}" PodGroupPostFilter plugins: {st.message()}',),
                                st.error, pl.name)
        return None, Status(Code.UNSCHEDULABLE, tuple(reasons), None, rejector)

    # ───── pod groups: tas ─────

    def run_placement_generate_plugins(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                                       parent: Placement | None, plugins: Sequence[Any] | None = None,
                                       ) -> tuple[list[Placement], Status | None]:
        """Upstream ``RunPlacementGeneratePlugins`` (framework.go L2206-2234, v1.37.2): the candidate
        placements of ``pg_info`` within ``parent`` (None: every node, as a placement named ``""``
        holding the snapshot's nodes in ``NodeTable.order()``). Without a PlacementGenerate plugin
        that one placement; else the (single) plugin's ``generate_placements``. A failing plugin's
        status comes back with its plugin (an exception is an Error); an empty result is
        Unschedulable "no feasible placements found". Returns ``(placements, None)`` or ``([], status)``."""
        from kubesched.framework.podgroup import every_node_placement

        if parent is None:
            parent = every_node_placement(self.handle.nodes)
        pls = self.placement_generate_plugins if plugins is None else plugins
        if not pls:
            return [parent], None
        pl = pls[0]
        try:
            placements, st = pl.generate_placements(state, pg_info, parent)
        except Exception as e:  # noqa: BLE001 - a plugin error is a status
            placements, st = [], as_status(e)
        if st is not None and not st.is_success():
            return [], st.with_plugin(pl.name)
        if not placements:
            return [], Status(Code.UNSCHEDULABLE, ("no feasible placements found",), None, pl.name)
        return list(placements), None

    def run_placement_score_plugins(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                                    assignments: list[PodGroupAssignments],
                                    placement_states: list[PlacementCycleState],
                                    plugins: Sequence[Any] | None = None,
                                    ) -> tuple[list[PlacementPluginScores], Status | None]:
        """Upstream ``RunPlacementScorePlugins`` (framework.go L1615-1733, v1.37.2): every
        PlacementScore plugin's ``score_placement(placement_states[i], pg_info, assignments[i])``,
        then each plugin's optional ``normalize_placement_score(state, pg_info, [PlacementScore])``
        (in place, upstream ``PlacementScoreExtensions``), then a range check ([0, 100]) and the
        ``placementScore`` weights. Returns one :class:`PlacementPluginScores` per assignment, in
        order (``scores`` = ``[(plugin, weighted score)]`` in plugin order, ``randomizer`` 0: see
        :func:`~kubesched.framework.podgroup.select_placement`), or ``([], Error)`` with upstream's
        texts: ``expected one PlacementCycleState per PodGroupAssignments, got M placement states for
        N assignments``, ``running PlacementScore plugins: plugin "X" failed with: …``, ``running
        NormalizePlacementScore on PlacementScore plugins: plugin "X" failed with: …``, ``applying
        score defaultWeights on PlacementScore plugins: plugin "X" returns an invalid score S, it
        should in the range of [0, 100] after normalizing``. Upstream runs placements in parallel
        and reports whichever error comes first; here the first placement, then plugin, in order."""
        from kubesched.framework.podgroup import PlacementPluginScores, PlacementScore

        if len(assignments) != len(placement_states):
            return [], Status(Code.ERROR, (
                f"expected one PlacementCycleState per PodGroupAssignments, got {len(placement_states)} "
                f"placement states for {len(assignments)} assignments",))
        pls = list(self.placement_score_plugins if plugins is None else plugins)
        table: list[list[PlacementScore]] = [[PlacementScore(a.placement, 0) for a in assignments] for _ in pls]
        for i, pga in enumerate(assignments):
            for j, pl in enumerate(pls):
                try:
                    score, st = pl.score_placement(placement_states[i], pg_info, pga)
                except Exception as e:  # noqa: BLE001
                    score, st = 0, as_status(e)
                if st is not None and not st.is_success():
                    return [], Status(Code.ERROR, (
                        f'running PlacementScore plugins: plugin "{pl.name}" failed with: {st.message()}',), st.error)
                table[j][i].score = int(score)
        for j, pl in enumerate(pls):
            normalize = getattr(pl, "normalize_placement_score", None)
            if not callable(normalize):
                continue
            try:
                st = normalize(state, pg_info, table[j])
            except Exception as e:  # noqa: BLE001
                st = as_status(e)
            if st is not None and not st.is_success():
                return [], Status(Code.ERROR, (
                    f'running NormalizePlacementScore on PlacementScore plugins: plugin "{pl.name}" failed with: '
                    f"{st.message()}",), st.error)
        weights = self.placement_score_weights
        out: list[PlacementPluginScores] = []
        for i, pga in enumerate(assignments):
            result = PlacementPluginScores(pga.placement)
            for j, pl in enumerate(pls):
                score = table[j][i].score
                if score > MAX_NODE_SCORE or score < MIN_NODE_SCORE:
                    return [], Status(Code.ERROR, (
                        f'applying score defaultWeights on PlacementScore plugins: plugin "{pl.name}" returns an '
                        f"invalid score {score}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                        "after normalizing",))
                weighted = score * weights.get(pl.name, 0)
                result.scores.append((pl.name, weighted))
                result.total_score += weighted
            out.append(result)
        return out, None


def _status_code_name(st: Status | None) -> str:
    """Upstream ``status.Code().String()``: a nil status is ``Success``."""
    return "Success" if st is None else str(st.code)


def _second(r: Any) -> Status | None:
    st: Status | None = r[1]
    return st


def _itself(r: Any) -> Status | None:
    st: Status | None = r
    return st


def _none(r: Any) -> Status | None:
    return None


TIMED_EXTENSION_POINTS: dict[str, tuple[str, Callable[[Any], Status | None]]] = {
    "run_pre_filter_plugins": ("PreFilter", _second),
    "run_post_filter_plugins": ("PostFilter", _second),
    "run_pre_score_plugins": ("PreScore", _itself),
    "run_score_plugins": ("Score", _second),
    "run_reserve_plugins_reserve": ("Reserve", _itself),
    "run_reserve_plugins_unreserve": ("Unreserve", _none),
    "run_permit_plugins": ("Permit", _itself),
    "run_pre_bind_pre_flights": ("PreBindPreFlight", _itself),
    "run_pre_bind_plugins": ("PreBind", _itself),
    "run_bind_plugins": ("Bind", _itself),
    "run_post_bind_plugins": ("PostBind", _none),
    "run_placement_generate_plugins": ("PlacementGenerate", _second),
    "run_placement_score_plugins": ("PlacementScore", _second),
}
"""``Framework`` method → (upstream extension-point label, how to get the Status from its
result). Filter is absent as upstream: ``RunFilterPlugins`` runs per node and records no
extension-point duration."""


PLUGIN_LISTS: dict[str, str] = {
    "run_pre_filter_plugins": "pre_filter_plugins",
    "run_filter_plugins": "filter_plugins",
    "run_post_filter_plugins": "post_filter_plugins",
    "run_pre_score_plugins": "pre_score_plugins",
    "run_score_plugins": "score_plugins",
    "run_reserve_plugins_reserve": "reserve_plugins",
    "run_reserve_plugins_unreserve": "reserve_plugins",
    "run_permit_plugins": "permit_plugins",
    "run_pre_bind_pre_flights": "pre_bind_plugins",
    "run_pre_bind_plugins": "pre_bind_plugins",
    "run_bind_plugins": "bind_plugins",
    "run_post_bind_plugins": "post_bind_plugins",
    "run_placement_generate_plugins": "placement_generate_plugins",
    "run_placement_score_plugins": "placement_score_plugins",
}
"""``Framework`` method → the plugin list it runs (instrumented in sampled cycles)."""


def _timed(run: Callable[..., Any], point: str | None, status_of: Callable[[Any], Status | None],
           recorder: MetricsRecorder, profile: str, instrumented: list[Any]) -> Callable[..., Any]:
    """Wrap ``run`` (a ``run_*`` method whose first argument is the CycleState) so that each
    call reports its wall time and status to ``recorder`` under ``point`` (None: no
    extension-point series, Filter), and runs the ``instrumented`` plugins when the cycle is
    sampled (``state.record_plugin_metrics``, upstream ``ShouldRecordPluginMetrics``).
    Coroutine functions stay coroutine functions. A raising run reports nothing."""
    observe = recorder.observe_extension_point
    clock = time.perf_counter
    if inspect.iscoroutinefunction(run):
        async def timed_async(state: CycleState, *args: Any, **kwargs: Any) -> Any:
            if state.record_plugin_metrics:
                kwargs["plugins"] = instrumented
            t0 = clock()
            r = await run(state, *args, **kwargs)
            if point is not None:
                observe(point, _status_code_name(status_of(r)), profile, clock() - t0)
            return r
        return timed_async

    def timed(state: CycleState, *args: Any, **kwargs: Any) -> Any:
        if state.record_plugin_metrics:
            kwargs["plugins"] = instrumented
        t0 = clock()
        r = run(state, *args, **kwargs)
        if point is not None:
            observe(point, _status_code_name(status_of(r)), profile, clock() - t0)
        return r
    return timed


def _first(r: Any) -> Status | None:
    st: Status | None = r[0]
    return st


def _pre_flight_status(r: Any) -> Status | None:
    """A PreBindPreFlight's status: the second item of ``(result, status)``, or the status."""
    st: Status | None = r[1] if isinstance(r, tuple) else r
    return st


def _filter_nodes_status(r: Any) -> Status | None:
    """A batch Filter's result: Success when it rejected no node, else Unschedulable."""
    return None if r is None or not r.failed.any() else Status(Code.UNSCHEDULABLE)


_PLUGIN_METHODS: dict[str, tuple[str, Callable[[Any], Status | None]]] = {
    "pre_filter": ("PreFilter", _second),
    "filter": ("Filter", _itself),
    "filter_nodes": ("Filter", _filter_nodes_status),
    "post_filter": ("PostFilter", _second),
    "pre_score": ("PreScore", _itself),
    "score": ("Score", _second),
    "score_nodes": ("Score", _none),
    "reserve": ("Reserve", _itself),
    "unreserve": ("Unreserve", _none),
    "permit": ("Permit", _first),
    "pre_bind_pre_flight": ("PreBindPreFlight", _pre_flight_status),
    "pre_bind": ("PreBind", _itself),
    "bind": ("Bind", _itself),
    "post_bind": ("PostBind", _none),
    "generate_placements": ("PlacementGenerate", _second),
    "score_placement": ("PlacementScore", _second),
    "normalize_placement_score": ("PlacementScoreExtensionNormalize", _itself),
}


class _InstrumentedPlugin:
    """A plugin whose extension-point methods report ``observe_plugin(name, point, code name,
    seconds)`` (upstream ``instrumented*Plugin`` + ``ObservePluginDurationAsync``); everything
    else is the plugin's own. A per-node Filter/Score is observed per node, a batch one
    (``filter_nodes``/``score_nodes``) once per batch of nodes. Async PreBind/Bind are timed
    until awaited."""

    def __init__(self, plugin: Any, recorder: MetricsRecorder) -> None:
        self._plugin = plugin
        self._observe = recorder.observe_plugin
        self.name = plugin.name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._plugin, attr)
        spec = _PLUGIN_METHODS.get(attr)
        if spec is None or not callable(value):
            return value
        point, status_of = spec
        observe = self._observe
        name = self.name

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            r = value(*args, **kwargs)
            if inspect.iscoroutine(r):
                return _await_timed(r, t0, observe, name, point)
            observe(name, point, _status_code_name(status_of(r)), time.perf_counter() - t0)
            return r
        return timed


async def _await_timed(coro: Any, t0: float, observe: Callable[..., None], name: str, point: str) -> Any:
    r = await coro
    observe(name, point, _status_code_name(r), time.perf_counter() - t0)
    return r



def _compact(rows: np.ndarray, cur: np.ndarray, alive: np.ndarray | None,
             open_: np.ndarray) -> tuple[np.ndarray, np.ndarray, None]:
    """``run_filter_plugins``' compaction: ``(cur[open_], positions in rows of those, None)``."""
    pos = np.flatnonzero(open_) if alive is None else alive[open_]
    return (rows[pos] if alive is None else cur[open_]), pos, None


def _filter_error(plugin: str, st: Status) -> Status:
    """Upstream ``RunFilterPlugins``: a status that is neither Success nor a rejection becomes
    ``AsStatus(fmt.Errorf("running %q filter plugin: %w", name, status.AsError()))``."""
    return Status(Code.ERROR, (f'running "{plugin}" filter plugin: {st.message()}',), st.error, plugin)


def _out_of_range(norm: np.ndarray) -> bool:
    """Whether some score of ``norm`` (``int64[K]``, K ≥ 1) lies outside [MIN_NODE_SCORE,
    MAX_NODE_SCORE] (0..100): a negative one is a huge value seen as uint64."""
    if norm.dtype != np.int64:
        return bool(norm.max() > MAX_NODE_SCORE or norm.min() < MIN_NODE_SCORE)
    return bool(_UMAX(norm.view(np.uint64)) > MAX_NODE_SCORE)


_UMAX = np.maximum.reduce


def _score_error(stage: str, plugin: str, st: Status) -> Status:
    """Upstream ``RunScorePlugins``: ``<stage>: plugin %q failed with: <err>`` (Error)."""
    return Status(Code.ERROR, (f'{stage}: plugin "{plugin}" failed with: {st.message()}',), st.error, plugin)
_SKIP = Code.SKIP  # ``st.code == _SKIP``: Status.is_skip() without the method call (per plugin, per pod)
