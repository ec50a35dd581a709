"""Per-cycle scratch space shared by the plugins of one scheduling attempt.

Follows ``staging/src/k8s.io/kube-scheduler/framework/cycle_state.go``: plugins write data in
PreFilter/PreScore under a key (by convention ``"PreFilter" + plugin name``) and read it back
in Filter/Score. Values may implement ``clone()``; ``CycleState.clone()`` calls it (preemption
dry-runs clone the state), and immutable values may return ``self``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from kubesched.errors import MissingStateError

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_info import PodInfo

__all__ = ["CycleState", "read_state"]

T = TypeVar("T")


class CycleState:
    """Key → value store for one cycle, plus the framework's own per-cycle flags.

    Attributes:
        pod_info: the :class:`PodInfo` of the pod being scheduled (derived data such as its
            requests is cached there across attempts).
        skip_filter_plugins / skip_score_plugins: names of plugins whose PreFilter/PreScore
            returned Skip in this cycle.
        record_plugin_metrics: upstream samples plugin metrics in 10 % of cycles.
        skip_pre_bind_plugins / parallel_pre_bind_plugins: PreBind plugins whose
            PreBindPreFlight returned Skip / ``AllowParallel`` (upstream
            ``Set{Skip,Parallel}PreBindPlugins``, set by ``RunPreBindPreFlights``).
        pod_in_pre_bind: see below.
        pod_group_cycle_state / placement_cycle_state: set while the pod is simulated inside a
            pod-group cycle (upstream ``SetPodGroupSchedulingCycle`` / ``SetPlacementCycleState``,
            kube-scheduler v0.37.2 cycle_state.go); None in a plain cycle.
    """

    __slots__ = ("_data", "parallel_pre_bind_plugins", "placement_cycle_state", "pod_group_cycle_state",
                 "pod_in_pre_bind", "pod_info", "record_plugin_metrics", "skip_filter_plugins",
                 "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self, pod_info: PodInfo | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.pod_info = pod_info
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.parallel_pre_bind_plugins: set[str] = set()
        self.pod_in_pre_bind: Any = None
        """The binding cycle's :class:`~kubesched.framework.waiting_pods.PodInPreBind` while
        PreBind runs (v1.36+; upstream's cancellable PreBind context), else None."""
        self.record_plugin_metrics = False
        self.pod_group_cycle_state: Any = None
        self.placement_cycle_state: Any = None

    def is_pod_group_scheduling_cycle(self) -> bool:
        """Upstream ``IsPodGroupSchedulingCycle``: the pod is being simulated in a pod-group cycle."""
        return self.pod_group_cycle_state is not None

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """Return the value under ``key``; raises :class:`MissingStateError` when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise MissingStateError(f"error reading {key!r} from cycleState: not found") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy whose values are cloned with their own ``clone()`` where they have one."""
        c = CycleState(self.pod_info)
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.parallel_pre_bind_plugins = set(self.parallel_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        c.pod_group_cycle_state = self.pod_group_cycle_state
        c.placement_cycle_state = self.placement_cycle_state
        return c


def read_state(state: CycleState, key: str, cls: type[T]) -> T:
    """Typed getter: read ``key`` and check it is a ``cls``.

    Raises :class:`MissingStateError` when absent or of another type (upstream
    ``getPreFilterState``: "invalid PreFilter state, got type %T").
    """
    value = state.read(key)
    if not isinstance(value, cls):
        raise MissingStateError(f"{value!r} convert to {cls.__name__} error")
    return value
