"""``kubesched run``: the process, as upstream ``cmd/kube-scheduler/app/server.go`` (``Setup``,
``Run``) and ``options/options.go``.

Start-up order: configuration → configz → event broadcaster (one ``EventRecorder`` per profile,
``reportingController`` = its schedulerName) → informers started and synced (pods, nodes and the
kinds the enabled plugins need) → HTTPS endpoints → leader election → the scheduling loop, only
while leading. Without leader election the loop starts right after the sync.

Exit codes: 0 after SIGTERM/SIGINT (stop taking pods, let in-flight bindings finish within
``shutdown_grace_s``, release the lease, flush events); 1 when the lease is lost
(``"Leaderelection lost"``, as upstream's ``klog.FlushAndExit``); 1 when start-up fails (one
``E…`` log line: bad kubeconfig, endpoints port in use, …).

Configuration precedence (upstream): with ``--config`` the file's ``clientConnection`` wins over
``--kubeconfig``/``--kube-api-qps``/``--kube-api-burst`` (deprecated flags, ignored then), while
explicitly given ``--leader-elect*`` flags override the file's ``leaderElection``; ``--master``
always overrides the kubeconfig's server. Only JSON is spoken: ``clientConnection.contentType``
(protobuf by default upstream) is ignored.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched import __version__
from kubesched.config import KubeSchedulerConfiguration, encode_config
from kubesched.config.types import parse_duration
from kubesched.features import FeatureGate
from kubesched.kube.klog import kv_log

__all__ = ["SERVING_GC_THRESHOLD", "RunOptions", "Runner", "run"]

log = logging.getLogger("kubesched.kube.runner")

SERVING_GC_THRESHOLD = (50_000, 20, 100)
"""``gc.set_threshold`` from the informer sync on (Python's default is ``(700, 10, 10)``), restored
when :meth:`Runner.run` returns. On the basic shape (5,000 nodes, 5,000 pods through a real
kube-apiserver, ``benchmarks/e2e_upstream.py``) the default thresholds ran 767 collections after the
sync that freed nothing and took 1.4 of ~11 CPU-s — five full collections alone 1.0 s, each walking
every object decoded since the start-up heap was frozen; with these, 10 young collections, 0.3 s.
Cyclic garbage is still collected: a young cycle within ~50,000 allocations, older ones at the
rarer middle and full collections."""


@dataclass
class RunOptions:
    """Command-line options of ``kubesched run`` (None = not given)."""

    config: KubeSchedulerConfiguration
    config_file: str | None = None
    kubeconfig: str | None = None
    master: str | None = None
    kube_api_qps: float | None = None
    kube_api_burst: int | None = None
    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None
    secure_port: int = 10259
    bind_address: str = "0.0.0.0"
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    cert_dir: str | None = None
    authorization_always_allow_paths: tuple[str, ...] = ("/healthz", "/readyz", "/livez")
    registry: dict[str, Any] | None = None
    shutdown_grace_s: float = 30.0
    request_timeout_s: float = 60.0
    sync_timeout_s: float | None = None
    seed: int | None = None  # score tie-breaking RNG (None: random, as upstream)
    features: FeatureGate | None = None  # --emulated-version / --feature-gates (None: v1.37 defaults)
    extra: dict[str, Any] = field(default_factory=dict)


def effective_config(opts: RunOptions) -> KubeSchedulerConfiguration:
    """Apply the flags to ``opts.config`` (in place) with upstream's precedence; returns it."""
    cfg = opts.config
    cc = cfg.client_connection
    le = cfg.leader_election
    assert cc is not None and le is not None, "the configuration must be defaulted"
    if opts.config_file is None:
        if opts.kubeconfig is not None:
            cc.kubeconfig = opts.kubeconfig
        if opts.kube_api_qps is not None:
            cc.qps = opts.kube_api_qps
        if opts.kube_api_burst is not None:
            cc.burst = opts.kube_api_burst
    if opts.leader_elect is not None:
        le.leader_elect = opts.leader_elect
    if opts.lease_duration is not None:
        le.lease_duration = opts.lease_duration
    if opts.renew_deadline is not None:
        le.renew_deadline = opts.renew_deadline
    if opts.retry_period is not None:
        le.retry_period = opts.retry_period
    if opts.resource_name is not None:
        le.resource_name = opts.resource_name
    if opts.resource_namespace is not None:
        le.resource_namespace = opts.resource_namespace
    return cfg


class Runner:
    """Everything ``kubesched run`` builds; ``await run()`` returns the exit code.

    Tests drive it in-process: ``runner.request_stop()`` is what SIGTERM does.
    """

    def __init__(self, opts: RunOptions) -> None:
        self.opts = opts
        self.cfg = effective_config(opts)
        self._stop = asyncio.Event()
        self.exit_code: int | None = None
        self.synced = False
        # built in run()
        self.client: Any = None
        self.scheduler: Any = None
        self.factory: Any = None
        self.loop: Any = None
        self.elector: Any = None
        self.endpoints: Any = None
        self.recorders: dict[str, Any] = {}
        self.metrics: Any = None
        self.cluster_client: Any = None

    def request_stop(self) -> None:
        """Graceful shutdown (SIGTERM)."""
        self._stop.set()

    async def run(self) -> int:
        threshold = gc.get_threshold()
        try:
            return await self._run()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            kv_log(log, 0, "Error running the scheduler", err=str(e) or type(e).__name__, error=True)
            log.debug("start-up failure", exc_info=True)
            await self._cleanup()
            return 1
        finally:
            gc.set_threshold(*threshold)

    async def _run(self) -> int:
        from kubesched.framework.clock import AsyncioClock
        from kubesched.kube.adapter import (
            EventHandlers,
            LiveClusterClient,
            SchedulingLoop,
            plugin_kinds,
        )
        from kubesched.kube.client import APIClient, load_config
        from kubesched.kube.endpoints import EndpointsServer
        from kubesched.kube.events import EventRecorder
        from kubesched.kube.informer import InformerFactory, InformerLister
        from kubesched.kube.metrics import SchedulerMetrics
        from kubesched.scheduler import Scheduler

        cfg = self.cfg
        opts = self.opts
        cc = cfg.client_connection
        le = cfg.leader_election
        assert cc is not None and le is not None
        kv_log(log, 0, "Starting Kubernetes Scheduler", version=f"v{__version__}")

        # clients (createClients: main client with /scheduler, events client without suffix)
        client_cfg = load_config(cc.kubeconfig or None, opts.master, qps=cc.qps, burst=cc.burst)
        client_cfg.timeout = opts.request_timeout_s
        self.client = APIClient(client_cfg, user_agent_suffix="/scheduler")
        events_client = self.client.derive()
        # delegated authn and authz of /metrics and /configz talk through their own clients (apiserver
        # options/authentication.go and authorization.go getClient: QPS 200, burst 400 each), so a flood
        # of unknown tokens cannot eat the scheduler's own rate limit
        self._auth_client = self.client.derive(user_agent_suffix="/auth", qps=200.0, burst=400)
        self._authz_client = self.client.derive(user_agent_suffix="/authz", qps=200.0, burst=400)

        # configz + event broadcaster
        configz = encode_config(cfg)
        for prof in cfg.profiles:
            name = prof.scheduler_name or "default-scheduler"
            self.recorders[name] = EventRecorder(events_client, reporting_controller=name)
        self._recorder_tasks = [asyncio.create_task(r.run(), name=f"events-{n}") for n, r in self.recorders.items()]

        # the engine
        self.factory = InformerFactory(self.client)
        lister = InformerLister(self.factory)
        self.cluster_client = LiveClusterClient(self.client, recorders=self.recorders,
                                                recorder=next(iter(self.recorders.values()), None))
        self.scheduler = Scheduler(cfg, client=self.cluster_client, lister=lister, clock=AsyncioClock(),
                                   seed=opts.seed, registry=opts.registry, features=opts.features)
        self.cluster_client.features = self.scheduler.features  # version-dependent retries of the writes
        self.metrics = SchedulerMetrics(features=self.scheduler.features)
        self.scheduler.metrics = self.metrics  # the engine feeds extension points, preemption, Permit wait
        self.loop = SchedulingLoop(self.scheduler, observe=self.metrics.observe_attempt)
        # with extenders, cycles run on a worker thread (their HTTP calls block); informer events
        # arriving meanwhile wait at the loop's gate and are applied right after the cycle
        handlers = EventHandlers(self.scheduler, on_change=self.loop.wake,
                                 gate=self.loop.gate if self.loop.threaded else None)
        self.factory.informer("Pod").add_event_handler(handlers.pod_handler())
        self.factory.informer("Node").add_event_handler(handlers.node_handler())
        for kind in plugin_kinds(self.scheduler):
            self.factory.informer(kind).add_event_handler(handlers.kind_handler(kind))

        # leader election (built before the endpoints: /healthz carries its watchdog)
        if le.leader_elect:
            from kubesched.kube.leaderelection import LeaderElector

            renew = parse_duration(le.renew_deadline or "10s")
            le_client = self.client.derive(user_agent_suffix="/leader-election", timeout=max(1.0, renew / 2))
            le_recorder = EventRecorder(le_client, reporting_controller=cfg.profiles[0].scheduler_name
                                        or "default-scheduler", api="v1")
            self.recorders["__leader-election__"] = le_recorder
            self._recorder_tasks.append(asyncio.create_task(le_recorder.run(), name="events-leader-election"))
            self.elector = LeaderElector(le_client, le.resource_namespace, le.resource_name,
                                         lease_duration=parse_duration(le.lease_duration or "15s"),
                                         renew_deadline=renew,
                                         retry_period=parse_duration(le.retry_period or "2s"),
                                         release_on_cancel=True, recorder=le_recorder, metrics=self.metrics)

        self.endpoints = EndpointsServer(
            bind_address=opts.bind_address, secure_port=opts.secure_port, cert_file=opts.tls_cert_file,
            key_file=opts.tls_private_key_file, cert_dir=opts.cert_dir,
            leader_election_check=self.elector.check if self.elector is not None else None,
            handlers_synced=lambda: self.synced, metrics=self.metrics,
            before_scrape=lambda: self.metrics.update_from(self.scheduler), configz=configz,
            always_allow_paths=opts.authorization_always_allow_paths, delegate=self._auth_client,
            authz_delegate=self._authz_client)
        await self.endpoints.start()

        # informers started and synced (DelayCacheUntilActive=false: standbys keep warm caches)
        skipped = await self.factory.probe_served()
        if skipped:
            kv_log(log, 0, "Resources not served by the API server; their informers are not started",
                   kinds=",".join(skipped))
        self.factory.start()
        sync = asyncio.create_task(self.factory.wait_for_cache_sync(opts.sync_timeout_s))
        stop_wait = asyncio.create_task(self._stop.wait())
        done, _ = await asyncio.wait({sync, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if stop_wait in done:
            sync.cancel()
            await self._cleanup()
            return 0
        stop_wait.cancel()
        if not sync.result():
            raise RuntimeError("timed out waiting for the informer caches to sync")
        self.synced = True
        # the cached objects are long-lived: keep them out of every GC pass. No gc.collect() first: with
        # the collector off since the start (cli/run_cmd.py) every object is young, so even a gen-0 pass
        # walks all of them — ~135,000 on 5,000 nodes, 0.05-0.13 CPU-s — to free ~1,900 objects of
        # import-time garbage, which the freeze now keeps (a few hundred KiB, once)
        gc.freeze()
        gc.set_threshold(*SERVING_GC_THRESHOLD)
        gc.enable()  # `kubesched run` starts with it off (cli/run_cmd.py)
        kv_log(log, 0, "Caches are synced", pods=len(self.factory.informer("Pod").store),
               nodes=len(self.factory.informer("Node").store))

        if self.elector is None:
            code = await self._run_loop_until_stopped()
        else:
            code = await self._run_with_leader_election()
        await self._cleanup()
        self.exit_code = code
        return code

    async def _run_loop_until_stopped(self) -> int:
        loop_task = asyncio.create_task(self.loop.run(), name="scheduling-loop")
        stop_wait = asyncio.create_task(self._stop.wait())
        await asyncio.wait({loop_task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if loop_task.done():  # the loop only ends by itself on a bug: exit 1 as upstream's crash
            stop_wait.cancel()
            exc = None if loop_task.cancelled() else loop_task.exception()
            kv_log(log, 0, "Scheduling loop failed", err=repr(exc), error=True)
            return 1
        await self._graceful_stop(loop_task)
        return 0

    async def _graceful_stop(self, loop_task: asyncio.Task[Any]) -> None:
        kv_log(log, 0, "Shutting down: no new pods are taken; waiting for in-flight bindings",
               bindings=len(self.loop.binding_tasks))
        if self.endpoints is not None:
            self.endpoints.begin_shutdown()
        self.loop.stop()
        try:
            await asyncio.wait_for(loop_task, 5.0)
        except (TimeoutError, asyncio.CancelledError):
            loop_task.cancel()
        await self.loop.drain(self.opts.shutdown_grace_s)
        await self.cluster_client.writer.flush(5.0)

    async def _run_with_leader_election(self) -> int:
        elector = self.elector
        started = asyncio.Event()

        loop_error: list[BaseException] = []

        async def on_started_leading() -> None:
            started.set()
            kv_log(log, 0, "Started leading", identity=elector.identity)
            try:
                await self.loop.run()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                loop_error.append(e)
                raise

        def on_stopped_leading() -> None:
            pass

        le_task = asyncio.create_task(elector.run(on_started_leading, on_stopped_leading), name="leader-election")
        stop_wait = asyncio.create_task(self._stop.wait())
        done, _ = await asyncio.wait({le_task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if le_task in done:
            # leadership ended by itself: lost (or the loop died)
            stop_wait.cancel()
            self.loop.stop()
            if loop_error:
                kv_log(log, 0, "Scheduling loop failed", err=repr(loop_error[0]), error=True)
            else:
                kv_log(log, 0, "Leaderelection lost", error=True)
            for t in list(self.loop.binding_tasks):
                t.cancel()
            return 1
        # SIGTERM: stop taking pods, let bindings finish, then give the lease back
        if started.is_set():
            if self.endpoints is not None:
                self.endpoints.begin_shutdown()
            self.loop.stop()
            await self.loop.drain(self.opts.shutdown_grace_s)
            await self.cluster_client.writer.flush(5.0)
        le_task.cancel()
        try:
            await le_task
        except asyncio.CancelledError:
            pass
        return 0

    async def _cleanup(self) -> None:
        for r in self.recorders.values():
            try:
                await r.stop(2.0)
            except Exception:
                log.debug("event recorder stop failed", exc_info=True)
        for t in getattr(self, "_recorder_tasks", []):
            t.cancel()
        if self.cluster_client is not None:
            await self.cluster_client.writer.cancel()
        if self.factory is not None:
            await self.factory.stop()
        if self.endpoints is not None:
            await self.endpoints.stop()
        if self.client is not None:
            await self.client.close()
        for c in (getattr(self, "_auth_client", None), getattr(self, "_authz_client", None)):
            if c is not None:
                await c.close()
        for r in self.recorders.values():
            c = getattr(r, "client", None)
            if c is not None and c is not self.client:
                await c.close()
        if self.elector is not None:
            await self.elector.client.close()
        if self.scheduler is not None:
            self.scheduler.close()  # the extenders' kept-alive HTTP connections


def run(opts: RunOptions, loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> int:
    """Run until SIGTERM/SIGINT or a lost lease; returns the exit code. ``loop_factory``: the
    event loop to run on (None: asyncio's; ``kubesched run`` passes uvloop's with ``KUBESCHED_EVENT_LOOP=uvloop``)."""

    async def main() -> int:
        runner = Runner(opts)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, runner.request_stop)
        return await runner.run()

    with asyncio.Runner(loop_factory=loop_factory) as r:
        return r.run(main())
