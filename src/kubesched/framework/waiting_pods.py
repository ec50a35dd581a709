"""Pods waiting on Permit (upstream ``pkg/scheduler/framework/runtime/waiting_pods_map.go``).

A Permit plugin that returns ``Wait`` (with a timeout) parks the assumed pod here at the end of
its scheduling cycle; the binding cycle awaits :attr:`WaitingPod.future` (upstream
``WaitOnPermit`` reading the pod's channel). The first signal wins, as with upstream's
one-slot channel and non-blocking send:

* :meth:`WaitingPod.allow` by each waiting plugin (its timer cancelled); Success once no
  plugin is pending;
* :meth:`WaitingPod.reject` by anyone (another plugin, preemption, the pod's deletion):
  ``Unschedulable`` with the message and the plugin;
* :meth:`WaitingPod.preempt` by preemption (v1.36+, upstream ``waitingPod.Preempt``): an
  ``Error`` status with the message and the plugin, so the pod goes to the error backoff
  instead of being marked unschedulable;
* a plugin's timer: ``reject(plugin, "rejected due to timeout after waiting <d> at plugin
  <plugin>")``, ``<d>`` in Go's ``time.Duration`` format.

``reject`` and ``preempt`` return whether theirs was the pod's first signal (upstream
``stopWithStatus`` reports ``!done``; ``allow`` of the last plugin also counts as done).

Timers and the future come from the injected :class:`~kubesched.framework.clock.Clock`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import pod_key
from kubesched.framework.interface import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.clock import Clock, ClockFuture, TimerHandle

__all__ = ["MAX_PERMIT_TIMEOUT_S", "PodInPreBind", "PodsInPreBindMap", "WaitingPod", "WaitingPodsMap", "go_duration",
           "waiting_pod_key"]

MAX_PERMIT_TIMEOUT_S = 15 * 60.0
"""Upstream ``maxTimeout``: a Permit plugin's wait is capped at 15 minutes."""


def waiting_pod_key(pod: Pod) -> str:
    """The map key: the pod's UID (upstream), ``namespace/name`` when it has none."""
    return pod.metadata.uid or pod_key(pod)


def _frac(v: int, unit: int) -> str:
    whole, rest = divmod(v, unit)
    if not rest:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{rest:0{digits}d}".rstrip("0")


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` of ``seconds``: ``"0s"``, ``"500ms"``, ``"10s"``,
    ``"1m0s"``, ``"1h0m0s"``, ``"1.5s"``."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_frac(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{_frac(ns, 1_000_000)}ms"
    h, rem = divmod(ns, 3600 * 1_000_000_000)
    m, rem = divmod(rem, 60 * 1_000_000_000)
    out = sign
    if h:
        out += f"{h}h"
    if h or m:
        out += f"{m}m"
    return out + _frac(rem, 1_000_000_000) + "s"


class WaitingPod:
    """One pod waiting on Permit (upstream ``waitingPod``).

    Args:
        pod: the assumed pod.
        plugins_max_wait: plugin name → its timeout in seconds (already capped).
        clock: gives the timers and the future.
    """

    def __init__(self, pod: Pod, plugins_max_wait: dict[str, float], clock: Clock) -> None:
        self.pod = pod
        self.future: ClockFuture = clock.create_future()
        self._pending: dict[str, TimerHandle] = {}
        self.done = False
        """A signal was sent (upstream ``waitingPod.done``)."""
        for plugin, wait_s in plugins_max_wait.items():
            self._pending[plugin] = clock.call_later(wait_s, self._on_timeout(plugin, wait_s))

    def _on_timeout(self, plugin: str, wait_s: float) -> Callable[[], None]:
        def fire() -> None:
            self.reject(plugin, f"rejected due to timeout after waiting {go_duration(wait_s)} at plugin {plugin}")
        return fire

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet."""
        return list(self._pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; Success is signalled once no plugin is pending."""
        timer = self._pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if self._pending:
            return
        self._signal(Status(Code.SUCCESS))
        self.done = True

    def reject(self, plugin: str, msg: str) -> bool:
        """Reject the pod: every timer stops; ``Unschedulable`` with ``msg`` from ``plugin``.
        True unless the pod had already been signalled."""
        return self._stop_with_status(Code.UNSCHEDULABLE, plugin, msg)

    def preempt(self, plugin: str, msg: str) -> bool:
        """Upstream ``waitingPod.Preempt`` (v1.36+): as :meth:`reject` but ``Error``-coded, so
        the binding cycle fails with ``waiting on permit for pod: <msg>`` and the pod is retried
        after the error backoff. True unless the pod had already been signalled."""
        return self._stop_with_status(Code.ERROR, plugin, msg)

    def _stop_with_status(self, code: Code, plugin: str, msg: str) -> bool:
        """Upstream ``stopWithStatus``."""
        for timer in self._pending.values():
            timer.cancel()
        self._signal(Status(code, (msg,), None, plugin))
        if self.done:
            return False
        self.done = True
        return True

    def _signal(self, st: Status) -> None:
        if not self.future.done():  # upstream: non-blocking send on a one-slot channel
            self.future.set_result(st)


class WaitingPodsMap:
    """Waiting pods by :func:`waiting_pod_key` (upstream ``waitingPodsMap``); shared by every
    profile of a scheduler."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[waiting_pod_key(wp.pod)] = wp

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], Any]) -> None:
        """Call ``callback`` on every waiting pod (upstream ``iterate``); safe if it rejects."""
        for wp in list(self._pods.values()):
            callback(wp)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)


class PodInPreBind:
    """A pod whose binding cycle is in PreBind (upstream ``podInPreBind``,
    ``framework/runtime/pods_in_prebind_map.go`` L64-99, v1.36+).

    Preemption may :meth:`cancel_pod` it instead of deleting it through the API; the binding
    cycle calls :meth:`mark_prebound` once PreBind returns and fails with :attr:`cause` when the
    pod was cancelled. Upstream cancels the PreBind context; here the binding cycle puts this
    object in ``CycleState.pod_in_pre_bind`` and a PreBind plugin that waits registers
    :meth:`on_cancel` to stop waiting (its failure then reads ``running PreBind plugin "X":
    <cause>``, as upstream's ``context.Cause``); a plugin that does not finishes its PreBind
    first.
    """

    __slots__ = ("_callbacks", "canceled", "cause", "finished")

    def __init__(self) -> None:
        self.finished = False
        self.canceled = False
        self.cause = ""
        """The cancellation message (upstream ``context.Cause``)."""
        self._callbacks: list[Callable[[str], Any]] = []

    def on_cancel(self, fn: Callable[[str], Any]) -> None:
        """Call ``fn(cause)`` when the pod is cancelled (at once if it already is)."""
        if self.canceled:
            fn(self.cause)
        else:
            self._callbacks.append(fn)

    def cancel_pod(self, message: str) -> bool:
        """Upstream ``CancelPod``: False once PreBind has finished; else cancel (the first
        message is kept, the :meth:`on_cancel` callbacks run) and return True."""
        if self.finished:
            return False
        if not self.canceled:
            self.cause = message
            self.canceled = True
            callbacks, self._callbacks = self._callbacks, []
            for fn in callbacks:
                fn(message)
        return True

    def mark_prebound(self) -> bool:
        """Upstream ``MarkPrebound``: False if cancelled; else no cancellation is possible any more."""
        if self.canceled:
            return False
        self.finished = True
        return True


class PodsInPreBindMap:
    """Pods in PreBind by :func:`waiting_pod_key` (upstream ``podsInPreBindMap``); shared by
    every profile of a scheduler, as the waiting pods."""

    def __init__(self) -> None:
        self._pods: dict[str, PodInPreBind] = {}

    def add(self, uid: str) -> PodInPreBind:
        bp = self._pods[uid] = PodInPreBind()
        return bp

    def get(self, uid: str) -> PodInPreBind | None:
        return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def __len__(self) -> int:
        return len(self._pods)
