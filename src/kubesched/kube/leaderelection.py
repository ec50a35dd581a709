"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go does it.

Follows ``k8s.io/client-go/tools/leaderelection/leaderelection.go`` (``acquire``, ``renew``,
``tryAcquireOrRenew``, ``release``, ``Check``) and ``resourcelock/leaselock.go`` (the Lease
record, ``RecordEvent``):

- identity ``<hostname>_<uuid4>`` (``cmd/kube-scheduler/app/options/options.go``);
- acquire: one try at once, then every ``retry_period × [1, 2.2)`` (``JitterUntil``, factor 1.2);
- renew: every ``retry_period`` once a renewal succeeded; a renewal round retries every
  ``retry_period`` and gives up after ``renew_deadline`` → leadership lost → the leading task is
  cancelled and ``on_stopped_leading`` runs (kube-scheduler then exits 1);
- the leader first PUTs its cached Lease (optimistic concurrency on ``resourceVersion``: a 409
  means another writer won the race) and falls back to GET + PUT;
- expiry is judged only from the *local monotonic* time at which the record was last seen to
  change plus its ``leaseDurationSeconds`` — never from the remote ``renewTime`` (clock skew);
- ``leaseTransitions`` + 1 on a change of holder; ``acquireTime``/``renewTime`` are MicroTime;
- release on cancel: GET, then PUT an empty holder with ``leaseDurationSeconds: 1``.

Two deliberate differences, both safer than client-go as read:

- :meth:`LeaderElector.check` is a real watchdog (kube-scheduler's ``HealthzAdaptor`` is never
  wired to its elector and always passes: client-go sets the adaptor's elector only in
  ``leaderelection.RunOrDie``, which ``cmd/kube-scheduler/app/server.go`` does not call);
- release only overwrites a Lease whose *fetched* holder is still this identity (client-go checks
  its cached observation, so a deposed leader could clear the new leader's lease).

Every request is bounded by ``max(1 s, renew_deadline / 2)`` as the lock client's timeout in
``resourcelock.NewFromKubeconfig``. Bounds use ``asyncio.timeout``, never ``asyncio.wait_for``:
on Python 3.11 ``wait_for`` returns the inner result and *drops* a cancellation that arrives
as the inner request completes (CPython gh-86296, fixed in 3.12), so a cancelled elector could
go on renewing forever (seen as a hung shutdown / never-released lease under load).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime
from typing import Any, Protocol

from kubesched.kube._time import micro_time, utcnow
from kubesched.kube.client import APIError

__all__ = ["JITTER_FACTOR", "LeaderElector", "LeaderMetrics", "default_identity"]

log = logging.getLogger("kubesched.leaderelection")

JITTER_FACTOR = 1.2
"""client-go ``leaderelection.JitterFactor``."""


def default_identity() -> str:
    """``<hostname>_<uuid4>``, kube-scheduler's lock identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderMetrics(Protocol):
    """Receiver of client-go's leader-election metrics (``leader_election_master_status{name}``,
    ``leader_election_slowpath_total{name}``; component-base's leaderelection provider)."""

    def leader_on(self, name: str) -> None: ...

    def leader_off(self, name: str) -> None: ...

    def slowpath_exercised(self, name: str) -> None: ...


class _EventSink(Protocol):
    def emit(self, regarding: Any, related: Any, type: str, reason: str, action: str, note: str) -> None: ...


_RECORD_FIELDS = ("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
                  "leaseTransitions", "strategy", "preferredHolder")


def _record_of(lease: dict[str, Any]) -> dict[str, Any]:
    """``LeaseSpecToLeaderElectionRecord``: the spec fields with client-go's zero values."""
    spec = lease.get("spec") or {}
    return {
        "holderIdentity": spec.get("holderIdentity") or "",
        "leaseDurationSeconds": int(spec.get("leaseDurationSeconds") or 0),
        "acquireTime": spec.get("acquireTime"),
        "renewTime": spec.get("renewTime"),
        "leaseTransitions": int(spec.get("leaseTransitions") or 0),
        "strategy": spec.get("strategy"),
        "preferredHolder": spec.get("preferredHolder"),
    }


def _spec_of(record: dict[str, Any]) -> dict[str, Any]:
    """``LeaderElectionRecordToLeaseSpec``: unset optional fields are left out."""
    return {k: record[k] for k in _RECORD_FIELDS if record.get(k) is not None}


class LeaderElector:
    """A client-go style leader elector on one Lease.

    Args:
        client: a :class:`kubesched.kube.client.APIClient` (``get``/``create``/``replace``),
            ideally with user agent suffix ``/leader-election``.
        lock_namespace / lock_name: the Lease (kube-scheduler: ``kube-system/kube-scheduler``).
        identity: the holder identity (default :func:`default_identity`).
        lease_duration / renew_deadline / retry_period: seconds (15 / 10 / 2 upstream).
            ``leaseDurationSeconds`` is written as whole seconds (``int(lease_duration)``).
        release_on_cancel: on stop, hand the lease back (empty holder, 1 s duration).
        clock: monotonic seconds — the only time used to judge expiry.
        wall: UTC wall clock for ``acquireTime``/``renewTime``.
        rng: ``() -> float`` in [0, 1) for the acquire jitter.
        recorder: optional sink for the core/v1 ``LeaderElection`` events
            (``<identity> became leader`` / ``<identity> stopped leading``).
        metrics: optional :class:`LeaderMetrics`.
        healthz_timeout: watchdog tolerance beyond ``lease_duration`` (upstream 20 s).
        stop_timeout: how long to wait for the cancelled leading task before releasing.

    Raises:
        ValueError: client-go's ``NewLeaderElector`` checks (``lease_duration > renew_deadline
            > 1.2 × retry_period``, all positive, identity not empty).
    """

    def __init__(self, client: Any, lock_namespace: str = "kube-system", lock_name: str = "kube-scheduler",
                 identity: str | None = None, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, release_on_cancel: bool = True, *,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], datetime] = utcnow,
                 rng: Callable[[], float] = random.random, recorder: _EventSink | None = None,
                 metrics: LeaderMetrics | None = None, healthz_timeout: float = 20.0,
                 stop_timeout: float = 10.0) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError(f"renewDeadline must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR})")
        if lease_duration < 1:
            raise ValueError("leaseDuration must be at least one second (leaseDurationSeconds is whole seconds)")
        if renew_deadline <= 0:
            raise ValueError("renewDeadline must be greater than zero")
        if retry_period <= 0:
            raise ValueError("retryPeriod must be greater than zero")
        identity = default_identity() if identity is None else identity
        if not identity:
            raise ValueError("Lock identity is empty")
        if not lock_name or not lock_namespace:
            raise ValueError("lock namespace and name must not be empty")
        self.client = client
        self.namespace = lock_namespace
        self.name = lock_name
        self.identity = identity
        self.lease_duration = float(lease_duration)
        self.renew_deadline = float(renew_deadline)
        self.retry_period = float(retry_period)
        self.release_on_cancel = release_on_cancel
        self.request_timeout = max(1.0, self.renew_deadline / 2)
        self.healthz_timeout = healthz_timeout
        self.stop_timeout = stop_timeout
        self._clock = clock
        self._wall = wall
        self._rng = rng
        self._recorder = recorder
        self._metrics = metrics
        self._lease: dict[str, Any] | None = None
        """The last Lease object read or written (its resourceVersion guards the next PUT)."""
        self._observed: dict[str, Any] = _record_of({})
        self._observed_raw: str | None = None
        self._observed_time = clock()
        self._leading = False
        self._reported_leader = ""
        self.lost = False
        """True once leadership was lost for a reason other than cancellation."""

    # ───────────────────────────── public state ─────────────────────────────

    @property
    def describe(self) -> str:
        """``<namespace>/<name>`` (``LeaseLock.Describe``)."""
        return f"{self.namespace}/{self.name}"

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    @property
    def transitions(self) -> int:
        """``leaseTransitions`` of the last observed record."""
        return int(self._observed["leaseTransitions"])

    @property
    def leader(self) -> str:
        """The holder of the last observed record ('' when none)."""
        return str(self._observed["holderIdentity"])

    def is_leader(self) -> bool:
        """Whether this process currently leads (acquired and not yet lost or released)."""
        return self._leading

    def _holds_observed(self) -> bool:
        """client-go ``IsLeader``: the last observed record names this identity."""
        return self._observed["holderIdentity"] == self.identity

    def _lease_valid(self, now: float) -> bool:
        return self._observed_time + self._observed["leaseDurationSeconds"] > now

    def check(self) -> str | None:
        """Health watchdog (client-go ``LeaderElector.Check``): an error text when this process
        holds the lease but has not renewed it for ``lease_duration + healthz_timeout`` seconds;
        None otherwise (also when not leading)."""
        if self._holds_observed() and self._clock() - self._observed_time > self.lease_duration + self.healthz_timeout:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    # ───────────────────────────── one try ─────────────────────────────

    def _set_observed(self, record: dict[str, Any], raw: str | None = None) -> None:
        self._observed = dict(record)
        self._observed_raw = raw if raw is not None else json.dumps(_spec_of(record), sort_keys=True)
        self._observed_time = self._clock()

    async def _request(self, coro: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        async with asyncio.timeout(self.request_timeout):
            return await coro

    async def _update(self, record: dict[str, Any]) -> None:
        """``LeaseLock.Update``: PUT the cached Lease with the new spec."""
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = dict(self._lease)
        body["spec"] = _spec_of(record)
        self._lease = await self._request(self.client.replace(self.path, body))

    async def try_acquire_or_renew(self) -> bool:
        """One ``tryAcquireOrRenew``: True when this identity holds a fresh lease afterwards.

        Never raises for API or connection errors (they are logged and give False).
        """
        try:
            return await self._try_acquire_or_renew()
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - any failure of one try is a failed try
            log.error("error retrieving or updating resource lock %s: %s", self.describe, err)
            return False

    async def _try_acquire_or_renew(self) -> bool:
        now_wall = micro_time(self._wall())
        record: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": now_wall,
            "renewTime": now_wall,
            "leaseTransitions": 0,
        }
        # 1. fast path: the leader PUTs the object it last saw
        if self._holds_observed() and self._lease_valid(self._clock()) and self._lease is not None:
            record["acquireTime"] = self._observed["acquireTime"]
            record["leaseTransitions"] = self._observed["leaseTransitions"]
            try:
                await self._update(record)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001
                log.error("Failed to update lock optimistically: %s, falling back to slow path", err)
            else:
                self._set_observed(record)
                return True
        # 2. obtain or create the record
        try:
            lease = await self._request(self.client.get(self.path))
        except APIError as err:
            if err.status != 404:
                log.error("error retrieving resource lock %s: %s", self.describe, err)
                return False
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"namespace": self.namespace, "name": self.name}, "spec": _spec_of(record)}
            try:
                self._lease = await self._request(self.client.create(
                    f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases", body))
            except APIError as cerr:
                log.error("error initially creating leader election record: %s", cerr)
                return False
            self._set_observed(record)
            return True
        self._lease = lease
        old = _record_of(lease)
        # 3. a changed record restarts the local expiry clock
        raw = json.dumps(_spec_of(old), sort_keys=True)
        if raw != self._observed_raw:
            self._set_observed(old, raw)
        if old["holderIdentity"] and self._lease_valid(self._clock()) and not self._holds_observed():
            log.debug("lock is held by %s and has not yet expired", old["holderIdentity"])
            return False
        # 4. take or keep it
        if self._holds_observed():
            record["acquireTime"] = old["acquireTime"]
            record["leaseTransitions"] = old["leaseTransitions"]
            self._metric("slowpath_exercised")
        else:
            record["leaseTransitions"] = old["leaseTransitions"] + 1
        try:
            await self._update(record)
        except APIError as err:
            log.error("Failed to update lock: %s", err)
            return False
        self._set_observed(record)
        return True

    # ───────────────────────────── loops ─────────────────────────────

    def _maybe_report_transition(self, on_new_leader: Callable[[str], None] | None) -> None:
        holder = self.leader
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if on_new_leader is not None and holder:
            on_new_leader(holder)

    def _metric(self, method: str) -> None:
        """Report to the metrics provider; its failures never affect the election."""
        if self._metrics is None:
            return
        try:
            getattr(self._metrics, method)(self.name)
        except Exception:
            log.exception("leader election metrics: %s failed", method)

    def _record_event(self, what: str) -> None:
        if self._recorder is None or self._lease is None:
            return
        meta = self._lease.get("metadata") or {}
        ref = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "namespace": self.namespace,
               "name": self.name, "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
        try:
            self._recorder.emit(ref, None, "Normal", "LeaderElection", "", f"{self.identity} {what}")
        except Exception:
            log.exception("recording the LeaderElection event failed")

    async def _acquire(self, on_new_leader: Callable[[str], None] | None) -> None:
        log.info("attempting to acquire leader lease %s...", self.describe)
        while True:
            ok = await self.try_acquire_or_renew()
            self._maybe_report_transition(on_new_leader)
            if ok:
                break
            log.debug("failed to acquire lease %s", self.describe)
            await asyncio.sleep(self.retry_period * (1.0 + self._rng() * JITTER_FACTOR))
        self._leading = True
        self.lost = False
        self._record_event("became leader")
        self._metric("leader_on")
        log.info("successfully acquired lease %s", self.describe)

    async def _renew_round(self) -> bool:
        """``PollUntilContextTimeout(retry_period, renew_deadline, immediate)``."""
        deadline = self._clock() + self.renew_deadline
        while True:
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False
            try:
                async with asyncio.timeout(remaining):
                    ok = await self.try_acquire_or_renew()
            except TimeoutError:
                return False
            if ok:
                return True
            remaining = deadline - self._clock()
            if remaining < self.retry_period:
                if remaining > 0:
                    await asyncio.sleep(remaining)
                return False
            await asyncio.sleep(self.retry_period)

    async def _renew(self, leading: asyncio.Task[None], on_new_leader: Callable[[str], None] | None) -> None:
        while not leading.done():
            ok = await self._renew_round()
            self._maybe_report_transition(on_new_leader)
            if not ok:
                self._leading = False
                self.lost = True
                self._metric("leader_off")
                log.info("failed to renew lease %s: timed out waiting for the condition", self.describe)
                return
            log.debug("successfully renewed lease %s", self.describe)
            await asyncio.wait({leading}, timeout=self.retry_period)

    async def release(self) -> bool:
        """Hand the lease back: GET, then PUT an empty holder with ``leaseDurationSeconds: 1``
        (times = now), but only if the fetched record still names this identity."""
        try:
            async with asyncio.timeout(self.renew_deadline):
                lease = await self.client.get(self.path)
            self._lease = lease
            old = _record_of(lease)
            if old["holderIdentity"] != self.identity:
                return True
            now_wall = micro_time(self._wall())
            record = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now_wall,
                      "renewTime": now_wall, "leaseTransitions": old["leaseTransitions"]}
            body = dict(lease)
            body["spec"] = _spec_of(record)
            async with asyncio.timeout(self.renew_deadline):
                self._lease = await self.client.replace(self.path, body)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001
            log.error("Failed to release lock: %s", err)
            return False
        self._set_observed(record)
        log.info("released leader lease %s", self.describe)
        return True

    async def run(self, on_started_leading: Callable[[], Coroutine[Any, Any, None]],
                  on_stopped_leading: Callable[[], None],
                  on_new_leader: Callable[[str], None] | None = None) -> None:
        """Acquire, run ``on_started_leading()`` as a task while renewing, stop it when the lease is
        lost (``self.lost`` = True) or this coroutine is cancelled, release (if configured) and
        always call ``on_stopped_leading()`` last (also when the lease was never acquired, as
        client-go's deferred call). Returns when leadership ends; re-raises cancellation.
        If ``on_started_leading`` returns or raises by itself, leadership is given up too.
        """
        try:
            await self._acquire(on_new_leader)
            leading: asyncio.Task[None] = asyncio.create_task(on_started_leading(), name=f"leading:{self.describe}")
            try:
                await self._renew(leading, on_new_leader)
            finally:
                was_leading = self._leading
                self._leading = False
                if was_leading:
                    self._metric("leader_off")
                if not leading.done():
                    leading.cancel()
                    await asyncio.wait({leading}, timeout=self.stop_timeout)
                elif not leading.cancelled() and leading.exception() is not None:
                    log.error("leading task failed: %r", leading.exception())
                self._record_event("stopped leading")
                if self.release_on_cancel:
                    await self.release()
        finally:
            on_stopped_leading()
