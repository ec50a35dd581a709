"""The live wiring: informers → ``Scheduler.on_*``, the live ``ClusterClient``, the scheduling
loop (upstream ``pkg/scheduler/scheduler.go`` ``Run``/``ScheduleOne``, ``eventhandlers.go``,
``schedule_one.go`` ``updatePod``, ``pkg/scheduler/util/utils.go`` ``PatchPodStatus``,
``framework/preemption/executor.go``, ``framework/plugins/defaultbinder``).

- :class:`LiveClusterClient` implements :class:`~kubesched.framework.handle.ClusterClient`:
  ``bind`` is awaited (``POST pods/{name}/binding``; any failure raises
  :class:`~kubesched.errors.BindError` with the HTTP code, 0 when the server was unreachable);
  status patches (``PodScheduled`` + ``nominatedNodeName``, ``DisruptionTarget``, clearing the
  nomination) and preemption deletes are fire-and-forget: queued per pod (one pod's writes stay
  in order, different pods' run concurrently; at most ``max_pending`` queued, beyond that the
  write is dropped and logged), each retried as client-go ``retry.OnError(retry.DefaultBackoff)``
  (4 tries, 10 ms × 5, jitter 0.1) on 500 / 503 / connection failures, and 409 since v1.36;
  NotFound = done. Since v1.37 ``bind`` is retried too (``util.BindPod``: 500 / 503 / refused).
  Events go to the liveops ``EventRecorder`` (``emit`` never blocks).
- :func:`pod_status_patch` builds the two-way strategic merge patch upstream sends:
  ``{"status": {"$setElementOrder/conditions": [...], "conditions": [<changed element>],
  "nominatedNodeName": ...}}`` — or None when nothing changes (``podutil.UpdatePodCondition``).
- :class:`EventHandlers` feeds the engine from the informers as upstream ``addAllEventHandlers``:
  tombstones unwrapped (a stale pod is removed from the cache by key whatever its node, and
  from the queue), a pod recreated under the same name (UID change) = delete + add, an assumed
  pod that starts terminating is forgotten (``handleAssumedPodDeletion``); other kinds only move
  pods (``MoveAllToActiveOrBackoffQueue`` with their cluster event).
- :class:`SchedulingLoop`: one task runs scheduling cycles one at a time (never awaiting inside
  one; it yields to the event loop between cycles), each binding cycle is its own task. It
  sleeps when no pod is ready until an informer event, a binding end or the next backoff
  expiry wakes it; ``flush_unschedulable_leftover`` runs every 30 s. ``stop()`` stops taking
  pods, lets bindings finish within a bound, then cancels what is left.
- With scheduler extenders (``threaded``, the default when the scheduler has any), a cycle can
  block for up to ``httpTimeout`` per extender call, so each cycle runs on a one-thread executor
  while the event loop goes on (watches, lease renewals, endpoints). The cache must not change
  under a cycle, so during one the :class:`EngineGate` is closed: informer events
  (:class:`EventHandlers` with ``gate``), timer callbacks (``AsyncioClock.defer``) and the steps of
  binding cycles (:func:`gated`) wait and run, in order, when the cycle ends. Writes the cycle
  makes (status patches, deletes, events) are handed to the loop thread-safely
  (``LiveClusterClient.loop``); an extender's bind runs in the default executor
  (``Scheduler.offload``). Decided over the alternatives: making the cycle resumable around
  extender calls would thread ``await`` through the synchronous engine; a whole engine thread
  fed by a queue would change every live path, with or without extenders.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.api import podgroups
from kubesched.api.objects import Node, Pod, pod_key
from kubesched.errors import BindError
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.kube.client import APIClient, APIConnectionError, APIError
from kubesched.kube.klog import kv_log
from kubesched.kube.reflector import DeletedFinalStateUnknown

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.scheduler import Scheduler

__all__ = [
    "EngineGate",
    "EventHandlers",
    "LiveClusterClient",
    "SchedulingLoop",
    "plugin_kinds",
    "pod_status_patch",
]

log = logging.getLogger("kubesched.kube.adapter")

RETRY_STEPS = 4  # client-go retry.DefaultBackoff
RETRY_DURATION_S = 0.010
RETRY_FACTOR = 5.0
RETRY_JITTER = 0.1


def _now_rfc3339() -> str:
    """``metav1.Time``: RFC 3339, whole seconds, UTC."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ───────────────────────────── status patches ─────────────────────────────


def pod_status_patch(pod: Pod, condition: dict[str, Any] | None, nominated_node_name: str | None,
                     now: str | None = None) -> dict[str, Any] | None:
    """The strategic merge patch from ``pod.status`` to the status with ``condition`` set and
    ``nominatedNodeName`` overridden (when not None), as upstream ``updatePod`` +
    ``PatchPodStatus``; None when it would change nothing.

    ``condition``: ``{"type", "status", "reason"?, "message"?, "observedGeneration"?}`` (a zero
    ``observedGeneration`` is omitted, as Go's ``omitempty``). Its ``lastTransitionTime`` is
    ``now`` when the condition is new or its status flips, else the old one is kept
    (``podutil.UpdatePodCondition``). Conditions are a list merged by ``type``: the patch carries
    ``$setElementOrder/conditions`` and only the changed element (with only its changed fields).
    """
    status: dict[str, Any] = {}
    if condition is not None:
        ctype = condition["type"]
        conds = pod.status.conditions
        old = next((c for c in conds if c.type == ctype), None)
        new_status = condition.get("status", "")
        new_reason = condition.get("reason", "") or ""
        new_message = condition.get("message", "") or ""
        new_generation = int(condition.get("observedGeneration") or 0)
        element: dict[str, Any] | None = None
        if old is None:
            element = {"type": ctype, "status": new_status, "lastProbeTime": None,
                       "lastTransitionTime": now or _now_rfc3339()}
            if new_reason:
                element["reason"] = new_reason
            if new_message:
                element["message"] = new_message
            if new_generation:
                element["observedGeneration"] = new_generation
            order = [c.type for c in conds] + [ctype]
        else:
            diff: dict[str, Any] = {}
            if old.status != new_status:
                diff["status"] = new_status
                diff["lastTransitionTime"] = now or _now_rfc3339()
            if (old.reason or "") != new_reason:
                diff["reason"] = new_reason or None
            if (old.message or "") != new_message:
                diff["message"] = new_message or None
            if diff and old.observed_generation != new_generation:
                # upstream patches only when UpdatePodCondition saw a change (status, reason,
                # message, times); the whole condition is then replaced, generation included
                diff["observedGeneration"] = new_generation or None
            if diff:
                element = {"type": ctype, **diff}
            order = [c.type for c in conds]
        if element is not None:
            status["$setElementOrder/conditions"] = [{"type": t} for t in order]
            status["conditions"] = [element]
    if nominated_node_name is not None and nominated_node_name != (pod.status.nominated_node_name or ""):
        status["nominatedNodeName"] = nominated_node_name or None
    if not status:
        return None
    return {"status": status}


def _pod_path(pod: Pod) -> str:
    return f"/api/v1/namespaces/{pod.metadata.namespace}/pods/{pod.metadata.name}"


def _retriable(e: BaseException) -> bool:
    """client-go ``PatchPodStatus`` retry predicate (``util.RetriableWithConflict``, v1.36+):
    InternalError, ServiceUnavailable, Conflict, connection refused (any connection failure here)."""
    if isinstance(e, APIConnectionError):
        return True
    return isinstance(e, APIError) and (e.status in (409, 500, 503) or e.reason in ("InternalError",
                                                                                    "ServiceUnavailable"))


def _retriable_no_conflict(e: BaseException) -> bool:
    """``util.Retriable`` of v1.34/v1.35 ``PatchPodStatus``: as :func:`_retriable` without Conflict."""
    if isinstance(e, APIError) and (e.status == 409 or e.reason == "Conflict"):
        return False
    return _retriable(e)


def _retriable_bind(e: BaseException) -> bool:
    """``util.Retriable`` for ``util.BindPod`` (v1.37+, ``pkg/scheduler/util/utils.go`` L100-117):
    InternalError (500), ServiceUnavailable (503), connection refused — only a connection that
    was never made (a binding POST that may have reached the server is not repeated)."""
    if isinstance(e, APIConnectionError):
        text = str(e).lower()
        return "refused" in text or "cannot connect to host" in text
    return isinstance(e, APIError) and e.status != 409 and (
        e.status in (500, 503) or e.reason in ("InternalError", "ServiceUnavailable"))


async def retry_on_error(fn: Callable[[], Awaitable[Any]], retriable: Callable[[BaseException], bool] = _retriable,
                         *, steps: int = RETRY_STEPS, duration: float = RETRY_DURATION_S,
                         factor: float = RETRY_FACTOR, jitter: float = RETRY_JITTER) -> Any:
    """client-go ``retry.OnError``: up to ``steps`` tries, sleeping ``duration`` (×``factor``
    each time, + up to ``jitter`` of it) between them while ``retriable(err)``."""
    delay = duration
    for attempt in range(steps):
        try:
            return await fn()
        except Exception as e:
            if attempt == steps - 1 or not retriable(e):
                raise
            await asyncio.sleep(delay + random.random() * jitter * delay)
            delay *= factor
    raise AssertionError("unreachable")  # pragma: no cover


# ───────────────────────────── the live ClusterClient ─────────────────────────────


class _KeyedWriter:
    """Fire-and-forget writes, in order per key, concurrently across keys, bounded in total."""

    def __init__(self, max_pending: int) -> None:
        self.max_pending = max_pending
        self._queues: dict[str, deque[tuple[str, Callable[[], Awaitable[Any]]]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.pending = 0
        self.dropped = 0
        self.failed = 0
        self.done = 0

    def busy(self, key: str) -> bool:
        """Whether writes for ``key`` are queued or in flight."""
        return key in self._queues

    def submit(self, key: str, what: str, fn: Callable[[], Awaitable[Any]]) -> bool:
        """Queue ``fn`` after ``key``'s earlier writes; False when it was dropped."""
        if self.pending >= self.max_pending:
            self.dropped += 1
            log.error("dropping API write %s for %s: %d writes pending", what, key, self.pending)
            return False
        self.pending += 1
        q = self._queues.get(key)
        if q is not None:
            q.append((what, fn))
            return True
        q = self._queues[key] = deque([(what, fn)])
        try:
            task = asyncio.get_running_loop().create_task(self._drain(key, q))
        except RuntimeError:  # no running loop (engine driven synchronously): nothing can be sent
            self._queues.pop(key, None)
            self.pending -= 1
            self.dropped += 1
            log.error("dropping API write %s for %s: no running event loop", what, key)
            return False
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _drain(self, key: str, q: deque[tuple[str, Callable[[], Awaitable[Any]]]]) -> None:
        try:
            while q:
                what, fn = q[0]
                try:
                    await fn()
                    self.done += 1
                except asyncio.CancelledError:
                    raise
                except APIError as e:
                    if e.status != 404:
                        self.failed += 1
                        log.error("%s for %s failed: %s", what, key, e)
                except Exception as e:  # noqa: BLE001 - a failed write is logged, the next one runs
                    self.failed += 1
                    log.error("%s for %s failed: %s", what, key, e)
                finally:
                    q.popleft()
                    self.pending -= 1
        finally:
            self.pending -= len(q)
            self._queues.pop(key, None)

    async def flush(self, timeout_s: float | None = None) -> bool:
        """Wait for the queued writes (True) or the timeout (False)."""
        if not self._tasks:
            return True
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout_s)
        return not pending

    async def cancel(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


class LiveClusterClient:
    """The engine's :class:`~kubesched.framework.handle.ClusterClient` against the API server.

    ``client``: the main :class:`APIClient`; ``recorder``: liveops' ``EventRecorder`` (anything
    with ``emit(regarding, related, type, reason, action, note)``) or None (events only logged);
    ``scheduler_name``: used in the ``DisruptionTarget`` message. ``max_pending``: bound of the
    fire-and-forget write queue. Counters: ``binds``, ``bind_errors``.
    """

    def __init__(self, client: APIClient, recorder: Any = None, *, max_pending: int = 100_000,
                 recorders: dict[str, Any] | None = None, features: FeatureGate | None = None) -> None:
        self.client = client
        self.features = features if features is not None else default_feature_gate()
        """The emulated version's behaviour of the writes: bind retried since v1.37, status
        patches retried on Conflict since v1.36 (the runner sets the scheduler's gate here)."""
        self.recorder = recorder
        self.recorders = recorders or {}
        """schedulerName → recorder: an event about a pod goes to its profile's recorder
        (``reportingController`` = the profile's schedulerName, as upstream), else ``recorder``."""
        self.writer = _KeyedWriter(max_pending)
        self.binds = 0
        self.bind_errors = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        """Set by a :class:`SchedulingLoop` that runs cycles on a worker thread: the sync writes
        made there (status patches, deletes, events) are handed to this loop thread-safely."""
        self.pod_group_written: dict[str, dict[str, Any]] = {}
        """``namespace/name`` → the PodGroup the API server answered this client's last status
        patch with, until the informer delivers that resourceVersion or a later one
        (:meth:`pod_group_write_observed`): the base of the next patch of that PodGroup when the
        cycle's copy is older (:meth:`patch_pod_group_condition`)."""

    def _off_loop(self) -> bool:
        if self.loop is None:
            return False
        try:
            return asyncio.get_running_loop() is not self.loop
        except RuntimeError:
            return True

    # ── awaited writes ──

    async def bind(self, pod: Pod, node_name: str) -> None:
        """``POST pods/{name}/binding``; since v1.37 retried as ``util.BindPod``
        (``retry.DefaultBackoff``: 4 tries, 10 ms × 5, jitter 0.1) on 500 / 503 / connection
        refused (DefaultBinder and the async binding call both use it)."""
        meta = pod.metadata

        async def call() -> None:
            await self.client.bind(meta.namespace, meta.name, meta.uid, node_name)

        try:
            if self.features.at_least(1, 37):
                await retry_on_error(call, _retriable_bind)
            else:
                await call()
        except APIError as e:
            self.bind_errors += 1
            raise BindError(e.message or str(e), e.status) from None
        except APIConnectionError as e:
            self.bind_errors += 1
            raise BindError(str(e), 0) from None
        self.binds += 1

    async def update_persistent_volume(self, pv: Any) -> Any:
        """PUT the PV; returns the server's object (its new resourceVersion: VolumeBinding's
        ``checkBindings`` waits until the informer has caught up with it)."""
        name = _field_name(pv)
        return await self._put(f"/api/v1/persistentvolumes/{name}", pv)

    async def update_persistent_volume_claim(self, pvc: Any) -> Any:
        """PUT the PVC; returns the server's object."""
        ns, name = _field_ns(pvc), _field_name(pvc)
        return await self._put(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}", pvc)

    async def update_resource_claim_status(self, claim: Any) -> Any:
        """PUT ``resourceclaims/{name}/status``; returns the stored claim (its new resourceVersion)."""
        ns, name = _field_ns(claim), _field_name(claim)
        return await self._put(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}/status", claim)

    async def update_resource_claim(self, claim: Any) -> Any:
        """PUT ``resourceclaims/{name}`` (finalizers); returns the stored claim."""
        ns, name = _field_ns(claim), _field_name(claim)
        return await self._put(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}", claim)

    async def create_resource_claim(self, claim: Any) -> Any:
        """POST ``resourceclaims`` (DRAExtendedResource's claim, named by ``generateName``);
        returns the created claim."""
        from kubesched.api.objects import encode_builtins

        ns = _field_ns(claim)
        body = claim if isinstance(claim, dict) else encode_builtins(claim)
        try:
            return await self.client.create(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims", body)
        except APIError as e:
            raise BindError(e.message or str(e), e.status) from None
        except APIConnectionError as e:
            raise BindError(str(e), 0) from None

    async def delete_resource_claim(self, claim: Any) -> None:
        """DELETE ``resourceclaims/{name}``; a 404 is no error (upstream ``IsNotFound``)."""
        ns, name = _field_ns(claim), _field_name(claim)
        try:
            await self.client.delete(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}")
        except APIError as e:
            if e.status != 404:
                raise BindError(e.message or str(e), e.status) from None
        except APIConnectionError as e:
            raise BindError(str(e), 0) from None

    async def update_pod_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        """Strategic-merge patch of ``pods/{name}/status`` setting ``extendedResourceClaimStatus``
        (upstream ``schedutil.PatchPodStatus``), awaited by PreBind; failures raise ``BindError``."""
        patch = {"status": {"extendedResourceClaimStatus": status}}
        try:
            await self.client.patch(_pod_path(pod) + "/status", patch)
        except APIError as e:
            raise BindError(e.message or str(e), e.status) from None
        except APIConnectionError as e:
            raise BindError(str(e), 0) from None

    async def _put(self, path: str, obj: Any) -> Any:
        from kubesched.api.objects import encode_builtins

        body = obj if isinstance(obj, dict) else encode_builtins(obj)
        try:
            return await self.client.replace(path, body)
        except APIError as e:
            raise BindError(e.message or str(e), e.status) from None
        except APIConnectionError as e:
            raise BindError(str(e), 0) from None

    # ── fire-and-forget writes ──

    def _patch_status(self, pod: Pod, patch: dict[str, Any], what: str) -> None:
        if self._off_loop():
            assert self.loop is not None
            self.loop.call_soon_threadsafe(self._patch_status, pod, patch, what)
            return
        path = _pod_path(pod) + "/status"
        retriable = _retriable if self.features.at_least(1, 36) else _retriable_no_conflict

        async def send() -> None:
            await retry_on_error(lambda: self.client.patch(path, patch), retriable)

        self.writer.submit(pod_key(pod), what, send)

    def update_pod_condition(self, pod: Pod, status: str, reason: str, message: str,
                             nominated_node_name: str | None = None) -> None:
        # observedGeneration: CalculatePodConditionObservedGeneration with
        # PodObservedGenerationTracking (beta, on by default in v1.34) = the pod's generation
        cond = {"type": "PodScheduled", "status": status, "reason": reason, "message": message,
                "observedGeneration": pod.metadata.generation}
        patch = pod_status_patch(pod, cond, nominated_node_name)
        if patch is not None:
            self._patch_status(pod, patch, "PodScheduled status patch")

    def clear_nominated_node_name(self, pod: Pod) -> None:
        patch = pod_status_patch(pod, None, "")
        if patch is not None:
            self._patch_status(pod, patch, "clearing nominatedNodeName")

    async def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """The binding cycle's nominatedNodeName patch, awaited as upstream's synchronous
        ``updatePod`` (so it reaches the server before the binding POST, which would otherwise
        leave the nomination on the bound pod): queued after the pod's earlier writes, retried as
        any status patch; a failure is only logged."""
        patch = pod_status_patch(pod, None, node_name)
        if patch is None:
            return
        path = _pod_path(pod) + "/status"
        retriable = _retriable if self.features.at_least(1, 36) else _retriable_no_conflict
        done = asyncio.get_running_loop().create_future()

        async def send() -> None:
            try:
                await retry_on_error(lambda: self.client.patch(path, patch), retriable)
            finally:
                if not done.done():
                    done.set_result(None)

        if self.writer.submit(pod_key(pod), "setting nominatedNodeName", send):
            await done

    def add_pod_condition(self, pod: Pod, condition: dict[str, Any]) -> None:
        patch = pod_status_patch(pod, condition, None)
        if patch is not None:
            self._patch_status(pod, patch, f"{condition.get('type')} condition patch")

    def patch_pod_group_condition(self, pod_group: dict[str, Any], condition: dict[str, Any]) -> None:
        """Set ``condition`` (``{"type", "status", "reason", "message"}``) on a PodGroup's status:
        fire-and-forget strategic merge PATCH of ``podgroups/{name}/status``, retried on
        conflicts and server errors (upstream ``updatePodGroupCondition`` + ``PatchPodGroupStatus``:
        ``retry.OnError(DefaultBackoff, RetriableWithConflict)``); nothing is sent when a True
        condition would go back to False or nothing changes
        (:func:`kubesched.api.podgroups.pod_group_condition_patch`).

        The patch is computed when it is sent, after this PodGroup's earlier patches were answered,
        against the newer (by resourceVersion) of ``pod_group`` (the cycle's informer copy) and the
        object the server answered this client's last patch of it with. Upstream
        (schedule_one_podgroup.go L942-964) patches synchronously inside the scheduling loop while
        its informer runs concurrently, so the next cycle for the same group — the retry of a
        partly placed group's leftover members — nearly always reads the status just written for
        the no-regress check; the scheduling decisions never read a PodGroup's status. Here no
        cycle waits for the write: a later patch of the same group starts from the answered
        status instead, the outcome of upstream's informer winning that race."""
        if self._off_loop():
            assert self.loop is not None
            self.loop.call_soon_threadsafe(self.patch_pod_group_condition, pod_group, condition)
            return
        meta = pod_group.get("metadata") or {}
        ns, name = meta.get("namespace") or "", meta.get("name") or ""
        key, now = f"{ns}/{name}", _now_rfc3339()
        if key not in self.pod_group_written and not self.writer.busy(f"podgroup/{key}") \
                and podgroups.pod_group_condition_patch(pod_group, condition, now) is None:
            return  # nothing to write and no write of ours the cycle's copy may be missing
        path = f"/apis/{podgroups.V1BETA1}/namespaces/{ns}/podgroups/{name}/status"

        async def send() -> None:
            base = pod_group
            written = self.pod_group_written.get(key)
            if written is not None and (_resource_version(written) or 0) > (_resource_version(base) or 0):
                base = written
            patch = podgroups.pod_group_condition_patch(base, condition, now)
            if patch is None:
                return
            got = await retry_on_error(lambda: self.client.patch(path, patch), _retriable)
            if isinstance(got, dict) and _resource_version(got) is not None:
                self.pod_group_written[key] = got

        self.writer.submit(f"podgroup/{key}", f"PodGroup {condition.get('type')} condition patch", send)

    def pod_group_write_observed(self, obj: Any) -> None:
        """The PodGroup informer delivered ``obj`` (``None``-safe): this client's answered patch of
        it is forgotten once the informer holds that resourceVersion or a later one."""
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict):
            return
        key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        written = self.pod_group_written.get(key)
        if written is None:
            return
        rv, want = _resource_version(obj), _resource_version(written)
        if rv is not None and want is not None and rv >= want:
            del self.pod_group_written[key]

    def pod_group_deleted(self, obj: Any) -> None:
        """The PodGroup informer delivered the deletion of ``obj``: forget this client's write."""
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(meta, dict):
            self.pod_group_written.pop(f"{meta.get('namespace') or ''}/{meta.get('name') or ''}", None)

    def delete_pod(self, pod: Pod) -> None:
        if self._off_loop():
            assert self.loop is not None
            self.loop.call_soon_threadsafe(self.delete_pod, pod)
            return
        path = _pod_path(pod)

        async def send() -> None:
            await retry_on_error(lambda: self.client.delete(path, {"apiVersion": "v1", "kind": "DeleteOptions"}))

        self.writer.submit(pod_key(pod), "deleting preemption victim", send)

    def record_event(self, regarding: Any, event_type: str, reason: str, action: str, note: str,
                     related: Any = None) -> None:
        if self._off_loop():
            assert self.loop is not None
            self.loop.call_soon_threadsafe(self.record_event, regarding, event_type, reason, action, note, related)
            return
        recorder = self.recorder
        if self.recorders:
            spec = getattr(regarding, "spec", None)
            recorder = self.recorders.get(getattr(spec, "scheduler_name", "") or "default-scheduler", recorder)
        if recorder is not None:
            try:
                recorder.emit(regarding, related, event_type, reason, action, note)
            except Exception:
                log.exception("event recorder failed")
        else:
            log.debug("event %s %s %s: %s", event_type, reason, _obj_key(regarding), note)


def _resource_version(obj: Any) -> int | None:
    """``metadata.resourceVersion`` of a raw object as an int (etcd's revision), or None."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    try:
        return int(rv) if rv is not None else None
    except (TypeError, ValueError):
        return None


def _field_name(obj: Any) -> str:
    return (obj.get("metadata") or {}).get("name", "") if isinstance(obj, dict) else obj.metadata.name


def _field_ns(obj: Any) -> str:
    return (obj.get("metadata") or {}).get("namespace", "") if isinstance(obj, dict) else obj.metadata.namespace


def _obj_key(obj: Any) -> str:
    try:
        ns, name = _field_ns(obj), _field_name(obj)
    except AttributeError:
        return str(obj)
    return f"{ns}/{name}" if ns else name


# ───────────────────────────── informer handlers ─────────────────────────────

_KIND_RESOURCE: dict[str, EventResource] = {
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "CSINode": EventResource.CSI_NODE,
    "StorageClass": EventResource.STORAGE_CLASS,
    "ResourceClaim": EventResource.RESOURCE_CLAIM,
    "ResourceSlice": EventResource.RESOURCE_SLICE,
    "DeviceClass": EventResource.DEVICE_CLASS,
}

#: kinds a plugin reads through the lister or registers events for (upstream: the informers its
#: ``New`` creates; ``addAllEventHandlers`` for registered events).
PLUGIN_KINDS: dict[str, tuple[str, ...]] = {
    "InterPodAffinity": ("Namespace",),
    "PodTopologySpread": ("Service", "ReplicationController", "ReplicaSet", "StatefulSet"),
    "DefaultPreemption": ("PodDisruptionBudget",),
    "VolumeBinding": ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                      "CSIDriver", "CSIStorageCapacity"),
    "VolumeZone": ("PersistentVolumeClaim", "PersistentVolume", "StorageClass"),
    "NodeVolumeLimits": ("CSINode", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSIDriver",
                         "VolumeAttachment"),
    "VolumeRestrictions": ("PersistentVolumeClaim",),
    "DynamicResources": ("ResourceClaim", "ResourceSlice", "DeviceClass"),
}


#: the workload API's kinds, watched when their gates are on (upstream ``addAllEventHandlers``:
#: PodGroup and CompositePodGroup informers with GenericWorkload / CompositePodGroup)
WORKLOAD_KINDS = ("PodGroup", "CompositePodGroup")


def plugin_kinds(sched: Scheduler) -> list[str]:
    """Kinds to watch besides Pods and Nodes: those the enabled plugins of every profile read
    or register cluster events for, in a stable order; then PodGroups (and CompositePodGroups)
    when the scheduler's gates serve them (:func:`kubesched.api.podgroups.served_api`)."""
    kinds: list[str] = [k for k in WORKLOAD_KINDS
                        if podgroups.served_api(k, getattr(sched, "features", None)) is not None]
    resource_kind = {v: k for k, v in _KIND_RESOURCE.items()}
    for fw in sched.profiles.values():
        for name, pl in fw.plugins.items():
            for k in PLUGIN_KINDS.get(name, ()):
                if k not in kinds:
                    kinds.append(k)
            reg = getattr(pl, "events_to_register", None)
            if callable(reg):
                try:
                    events = reg()
                except Exception:  # noqa: BLE001 - a plugin's registration failing must not stop the start
                    events = []
                for ev in events or ():
                    kind = resource_kind.get(getattr(getattr(ev, "event", None), "resource", None))  # type: ignore[arg-type]
                    if kind is not None and kind not in kinds:
                        kinds.append(kind)
    return kinds


class EventHandlers:
    """Informer handlers → the engine (see the module docstring). ``on_change`` is called after
    every delivered event (the scheduling loop's wake-up)."""

    def __init__(self, sched: Scheduler, on_change: Callable[[], None] | None = None,
                 gate: EngineGate | None = None) -> None:
        self.sched = sched
        self.on_change = on_change or (lambda: None)
        self.gate = gate
        """When set (a :class:`SchedulingLoop` running cycles on a worker thread), events that
        arrive during a cycle are applied right after it, in order."""

    def _gated(self, handler: _Handler) -> _Handler:
        gate = self.gate
        if gate is None:
            return handler
        adds = handler.on_adds
        return _Handler(lambda o, i: gate.run_or_defer(handler.on_add, o, i),
                        lambda o, n: gate.run_or_defer(handler.on_update, o, n),
                        lambda o: gate.run_or_defer(handler.on_delete, o),
                        None if adds is None else lambda os, i: gate.run_or_defer(adds, os, i))

    def pod_handler(self) -> Any:
        return self._gated(_Handler(self._pod_add, self._pod_update, self._pod_delete))

    def node_handler(self) -> Any:
        return self._gated(_Handler(self._node_add, self._node_update, self._node_delete, self._nodes_add))

    def kind_handler(self, kind: str) -> Any:
        if kind in WORKLOAD_KINDS:
            return self._gated(_Handler(lambda o, _i: self._object_event(kind, None, o),
                                        self._workload_update(kind),
                                        lambda o: self._object_event(kind, _unwrap(o), None)))
        res = _KIND_RESOURCE.get(kind)

        def move(action: ActionType, old: Any, new: Any) -> None:
            for listener in getattr(self.sched, "object_listeners", ()):
                listener(kind, old, new)  # plugins' shared caches (DynamicResources' allocated devices)
            if res is None:
                return
            event = ClusterEvent(res, action, f"{kind}{(action.name or '').title()}")
            self.sched.queue.move_all_to_active_or_backoff(event, old, new)
            self.on_change()

        return self._gated(_Handler(lambda o, _i: move(ActionType.ADD, None, o),
                                    lambda o, n: move(ActionType.UPDATE, o, n),
                                    lambda o: move(ActionType.DELETE, _unwrap(o), None)))

    def _object_event(self, kind: str, old: Any, new: Any) -> None:
        """The engine's own handler for the kind (``Scheduler.on_object_event``: the PodGroup
        cache, queue and the ``scheduling.k8s.io/PodGroup{Add,Update,Delete}`` move)."""
        self.sched.on_object_event(kind, old, new)
        if kind == "PodGroup":
            live = self.sched.client
            if new is not None:
                observed = getattr(live, "pod_group_write_observed", None)
                if observed is not None:
                    observed(new)
            else:
                deleted = getattr(live, "pod_group_deleted", None)
                if deleted is not None:
                    deleted(old)
        self.on_change()

    def _workload_update(self, kind: str) -> Callable[[Any, Any], None]:
        def update(old: Any, new: Any) -> None:
            # upstream updatePodGroup: an update with the same resourceVersion (a resync) is ignored
            rv_old = ((old or {}).get("metadata") or {}).get("resourceVersion")
            if rv_old and rv_old == ((new or {}).get("metadata") or {}).get("resourceVersion"):
                return
            self._object_event(kind, old, new)
        return update

    # ── pods ──

    def _pod_add(self, pod: Pod, _initial: bool) -> None:
        self.sched.on_pod_add(pod)
        self.on_change()

    def _pod_update(self, old: Pod, new: Pod) -> None:
        s = self.sched
        if old.metadata.uid and new.metadata.uid and old.metadata.uid != new.metadata.uid:
            # deleted and recreated under the same name while we were not watching
            s.on_pod_delete(old)
            s.on_pod_add(new)
            self.on_change()
            return
        if not new.spec.node_name and s.cache.is_assumed(pod_key(new)):
            # Scheduler.on_pod_update ignores an assumed pod's updates except (1.35+) a new
            # deletionTimestamp (handleAssumedPodDeletion); only that wakes the loop
            s.on_pod_update(old, new)
            if new.metadata.deletion_timestamp is not None and old.metadata.deletion_timestamp is None:
                self.on_change()
            return
        s.on_pod_update(old, new)
        self.on_change()

    def _pod_delete(self, obj: Any) -> None:
        s = self.sched
        if isinstance(obj, DeletedFinalStateUnknown):
            pod = obj.obj
            # stale state: whatever it says, remove the pod from the cache by key and from the queue
            if s.cache.remove_pod(pod) is not None:
                from kubesched.framework.events import EVENT_ASSIGNED_POD_DELETE

                s.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
            if not pod.spec.node_name:
                s.on_pod_delete(pod)
            self.on_change()
            return
        s.on_pod_delete(obj)
        self.on_change()

    # ── nodes ──

    def _node_add(self, node: Node, _initial: bool) -> None:
        self.sched.on_node_add(node)
        self.on_change()

    def _nodes_add(self, nodes: list[Node], _initial: bool) -> None:
        """The initial LIST of nodes: ``Scheduler.on_nodes_add`` (the table filled in bulk), one
        wake-up. A node the table rejects (an allocatable quantity it cannot parse; the API server
        validates them, so not expected) makes it deliver them one by one instead, as
        :meth:`_node_add` per node would: that node logged and skipped, the others added (those
        before it a second time, with the same content)."""
        try:
            self.sched.on_nodes_add(nodes)
        except Exception:
            log.warning("the initial node list did not apply as one batch; adding the nodes one by one",
                        exc_info=True)
            for node in nodes:
                try:
                    self.sched.on_node_add(node)
                except Exception:
                    log.exception("informer event handler %s failed", "EventHandlers._node_add")
        self.on_change()

    def _node_update(self, old: Node, new: Node) -> None:
        self.sched.on_node_update(old, new)
        self.on_change()

    def _node_delete(self, obj: Any) -> None:
        self.sched.on_node_delete(_unwrap(obj))
        self.on_change()


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class _Handler:
    __slots__ = ("on_add", "on_adds", "on_delete", "on_update")

    def __init__(self, on_add: Callable[[Any, bool], None], on_update: Callable[[Any, Any], None],
                 on_delete: Callable[[Any], None],
                 on_adds: Callable[[list[Any], bool], None] | None = None) -> None:
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.on_adds = on_adds
        """The initial LIST as one batch (:meth:`~kubesched.kube.informer.Informer.on_adds`), or None."""


# ───────────────────────────── the scheduling loop ─────────────────────────────


class EngineGate:
    """Keeps the engine single-threaded while a scheduling cycle runs on a worker thread: while
    :attr:`busy`, loop-side work that touches the engine (informer events, timer callbacks, the
    steps of binding cycles) waits, and runs, in arrival order, when the cycle ends."""

    def __init__(self) -> None:
        self.busy = False
        self._deferred: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._open: asyncio.Event | None = None
        self.deferred_total = 0
        """How many calls had to wait for a cycle (a figure for tests and debugging)."""

    def run_or_defer(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.busy:
            self._deferred.append((fn, args))
            self.deferred_total += 1
        else:
            fn(*args)

    def close(self) -> None:
        self.busy = True
        if self._open is not None:
            self._open.clear()

    def open(self) -> None:
        self.busy = False
        while self._deferred and not self.busy:
            fn, args = self._deferred.popleft()
            try:
                fn(*args)
            except Exception:
                log.exception("deferred engine event failed")
        if self._open is not None:
            self._open.set()

    async def wait_open(self) -> None:
        while self.busy:
            if self._open is None:
                self._open = asyncio.Event()
            self._open.clear()
            await self._open.wait()


class _Yield:
    """Hands a future the wrapped coroutine yielded to the running Task (``yield`` from ``await``)."""

    __slots__ = ("fut",)

    def __init__(self, fut: Any) -> None:
        self.fut = fut

    def __await__(self) -> Any:
        return (yield self.fut)


async def gated(coro: Coroutine[Any, Any, Any], gate: EngineGate) -> Any:
    """Run ``coro`` so that each of its steps (the code between two awaits) starts only while
    ``gate`` is open: a binding cycle never touches the cache while a cycle runs on the worker
    thread. Cancellation is forwarded into ``coro``."""
    value: Any = None
    exc: BaseException | None = None
    while True:
        if gate.busy:
            try:
                await gate.wait_open()
            except BaseException as e:  # noqa: BLE001 - cancellation goes into coro at its next step
                exc = e
        try:
            fut = coro.throw(exc) if exc is not None else coro.send(value)
        except StopIteration as stop:
            return stop.value
        value, exc = None, None
        try:
            value = await _Yield(fut)
        except BaseException as e:  # noqa: BLE001 - thrown into coro at its next step
            exc = e

UNSCHEDULABLE_FLUSH_PERIOD_S = 30.0  # upstream flushUnschedulablePodsLeftover period


class SchedulingLoop:
    """Runs the engine live (see the module docstring).

    ``run()`` returns after ``stop()``; ``drain(timeout_s)`` waits for the binding tasks (True
    when all ended) and cancels the rest. ``binding_tasks``: the binding cycles in flight.
    Attempts are logged as upstream (``"Successfully bound pod to node"``, ``"Unable to
    schedule pod; no fit; waiting"``, ``"Error scheduling pod; retrying"``).
    """

    def __init__(self, sched: Scheduler, *, idle_max_wait_s: float = 1.0,
                 observe: Callable[..., None] | None = None, threaded: bool | None = None) -> None:
        self.sched = sched
        self.threaded = bool(getattr(sched, "extenders", None)) if threaded is None else threaded
        """Run each scheduling cycle on a worker thread (default: when extenders are configured,
        whose HTTP calls block the cycle for up to ``httpTimeout`` each)."""
        self.gate = EngineGate()
        self.idle_max_wait_s = idle_max_wait_s
        self.observe = observe
        """``observe(attempt, duration_s, profile, pod_attempts=, since_first_attempt_s=)`` per
        finished attempt (the liveops ``SchedulerMetrics.observe_attempt`` signature)."""
        self.binding_tasks: set[asyncio.Task[Any]] = set()
        self._wake = asyncio.Event()
        self._stopping = False
        self.cycles = 0
        prev = sched.on_attempt

        def on_attempt(attempt: Any) -> None:
            _log_attempt(attempt)
            if prev is not None:
                prev(attempt)

        sched.on_attempt = on_attempt

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        sched = self.sched
        loop = asyncio.get_running_loop()
        log.info("Starting the scheduling loop")
        sched.set_offload(lambda fn: loop.run_in_executor(None, fn))  # an extender's bind call
        executor: ThreadPoolExecutor | None = None
        if self.threaded:
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scheduling-cycle")
            self._bind_worker_thread(loop)
        try:
            await self._run(loop, executor)
        finally:
            if executor is not None:
                executor.shutdown(wait=False)

    def _bind_worker_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make the clock and the client usable from the cycle's worker thread, and route timer
        callbacks through the gate."""
        sched = self.sched
        clock: Any = sched.clock  # the live AsyncioClock / LiveClusterClient hooks, duck-typed
        if hasattr(clock, "defer"):
            clock.loop = loop
            clock.defer = lambda cb: self.gate.run_or_defer(cb)
        client: Any = sched.client
        if client is not None and hasattr(client, "_off_loop"):
            client.loop = loop

    async def _cycle(self, loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor | None) -> Any:
        if executor is None:
            return self.sched.scheduling_cycle()
        self.gate.close()
        fut = loop.run_in_executor(executor, self.sched.scheduling_cycle)
        # the gate opens when the cycle has really ended, even if this task is cancelled meanwhile
        # (a worker thread cannot be interrupted)
        fut.add_done_callback(lambda _f: self.gate.open())
        return await asyncio.shield(fut)

    async def _run(self, loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor | None) -> None:
        from kubesched.scheduler import PodGroupCycleResult, ScheduledPod

        sched = self.sched
        last_flush = time.monotonic()
        while not self._stopping:
            self._wake.clear()
            now = time.monotonic()
            if now - last_flush >= UNSCHEDULABLE_FLUSH_PERIOD_S:
                last_flush = now
                sched.queue.flush_unschedulable_leftover()
            t0 = sched.clock.now()
            res = await self._cycle(loop, executor)
            if res is None:
                await self._idle(last_flush)
                continue
            self.cycles += 1
            if isinstance(res, ScheduledPod):
                task = loop.create_task(gated(self._bind(res), self.gate) if executor is not None
                                        else self._bind(res))
                self.binding_tasks.add(task)
                task.add_done_callback(self._binding_done)
            elif isinstance(res, PodGroupCycleResult):  # GenericWorkload: one binding cycle per member
                for sp in res.scheduled:
                    task = loop.create_task(gated(self._bind(sp), self.gate) if executor is not None
                                            else self._bind(sp))
                    self.binding_tasks.add(task)
                    task.add_done_callback(self._binding_done)
                if self.observe is not None:
                    for a in res.attempts:
                        self._observe(a, sched.clock.now() - t0, None)
            elif self.observe is not None:
                self._observe(res, sched.clock.now() - t0, None)
            await asyncio.sleep(0)  # let informer events and bindings progress between cycles

    async def _bind(self, sp: Any) -> Any:
        try:
            attempt = await self.sched.binding_cycle(sp)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            # never leave the pod assumed: a crash inside the binding cycle is an Error status
            log.exception("binding cycle of %s raised", sp.key)
            from kubesched.framework.interface import as_status

            attempt = self.sched.handle_binding_cycle_error(sp, as_status(e))
        if self.observe is not None:
            self._observe(attempt, self.sched.clock.now() - sp.start, sp)
        return attempt

    def _observe(self, attempt: Any, duration_s: float, sp: Any) -> None:
        observe = self.observe
        if observe is None:
            return
        try:
            if sp is not None:
                qpi = sp.qpi
                first = qpi.initial_attempt_timestamp
                observe(attempt, duration_s, sp.framework.profile_name, pod_attempts=qpi.attempts,
                             since_first_attempt_s=None if first is None else self.sched.clock.now() - first)
            else:
                observe(attempt, duration_s, self._profile_of(attempt.pod_key))
        except Exception:
            log.exception("observing an attempt failed")

    def _profile_of(self, key: str) -> str:
        ns, _, name = key.partition("/")
        pod = self.sched.lister.get("Pod", ns, name) if name else None
        if pod is not None and pod.spec.scheduler_name:
            return str(pod.spec.scheduler_name)
        return next(iter(self.sched.profiles), "default-scheduler")

    def _binding_done(self, task: asyncio.Task[Any]) -> None:
        self.binding_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("binding cycle failed unexpectedly", exc_info=task.exception())
        self._wake.set()

    async def _idle(self, last_flush: float) -> None:
        q = self.sched.queue
        wait = self.idle_max_wait_s
        clock_now = self.sched.clock.now()
        nxt = q.next_backoff_expiry()
        if nxt is not None:
            wait = min(wait, max(0.0, nxt - clock_now))
        wait = min(wait, max(0.0, last_flush + UNSCHEDULABLE_FLUSH_PERIOD_S - time.monotonic()))
        if wait <= 0:
            await asyncio.sleep(0)
            return
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can drop a cancellation of the loop
            async with asyncio.timeout(wait):
                await self._wake.wait()
        except TimeoutError:
            pass

    def stop(self) -> None:
        """Stop taking pods (the current cycle finishes; ``run()`` returns)."""
        self._stopping = True
        self._wake.set()

    async def drain(self, timeout_s: float) -> bool:
        """Let in-flight binding cycles finish for up to ``timeout_s``; cancel the rest."""
        if not self.binding_tasks:
            return True
        _, pending = await asyncio.wait(set(self.binding_tasks), timeout=timeout_s)
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            log.warning("%d binding cycles did not finish within %.0fs and were cancelled", len(pending), timeout_s)
        return not pending


def _log_attempt(attempt: Any) -> None:
    result = attempt.result
    pod = _kobj(attempt.pod_key)
    if result == "scheduled":
        kv_log(log, 2, "Successfully bound pod to node", pod=pod, node=attempt.node)
    elif result == "unschedulable":
        kv_log(log, 2, "Unable to schedule pod; no fit; waiting", pod=pod, err=attempt.message)
    elif result == "error":
        kv_log(log, 0, "Error scheduling pod; retrying", pod=pod, err=attempt.message, error=True)


def _kobj(key: str) -> str:
    return key
