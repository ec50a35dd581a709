"""``kubesched up``: the box API server, the manifests applied through it, the live scheduler.

One process, one asyncio loop:

1. the box API server (:func:`kubesched.apiserver.launcher.start_server`: loopback, TLS,
   bearer token, simulated kubelets; in memory unless ``data_dir``), its kubeconfig written to
   ``<work dir>/kubeconfig`` (work dir = ``data_dir`` or a temporary directory removed at exit);
2. the manifests created through the API (:mod:`kubesched.box.apply`) with a client built from
   that kubeconfig — as ``kubectl create -f`` would;
3. a pod informer on ``/api/v1/pods`` feeding a :class:`~kubesched.box.board.PodBoard` (what
   the user sees: the same objects ``kubectl get pods`` shows);
4. ``kubesched run``'s :class:`~kubesched.kube.runner.Runner` against the same kubeconfig, with
   leader election on (Lease ``kube-system/kube-scheduler``), its HTTPS endpoints on
   127.0.0.1 and an ephemeral port, and no client-side rate limit unless ``--config`` sets
   ``clientConnection`` (the server is local and ours).

The scheduler starts after every object was created, so its queue holds every pending pod
when it begins (the order ``kubesched simulate`` uses: priority, then arrival; the informer's
initial list arrives in namespace/name order, where ``simulate`` uses input order).

``until_idle``: stop once nothing is left to schedule — the board is settled (every pending
pod of ours has ``PodScheduled=False`` or is gated; none nominated; none terminating), nothing
changed on the watch for ``quiet_s`` seconds, and the scheduler leads, has no pod in its
active or backoff queues and no binding in flight. Then the scheduler stops (releasing its Lease) and
the server stops.

Exit codes (:meth:`Up.run`): 0 (idle, or stopped by :meth:`Up.request_stop`), 1 (the scheduler
failed to start or lost its lease). Bad manifests raise :class:`~kubesched.errors.ManifestError`
(the caller exits 2).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kubesched.box.apply import ApplyResult, apply_objects
from kubesched.box.board import PodBoard, PodRow
from kubesched.config import KubeSchedulerConfiguration
from kubesched.errors import InputError, KubeschedError
from kubesched.features import FeatureGate
from kubesched.sim.manifests import RawObject

__all__ = ["Up", "UpOptions", "UpView"]

log = logging.getLogger("kubesched.box")


@dataclass
class UpOptions:
    """``objects``: manifests already read (:func:`kubesched.sim.manifests.load_manifests`);
    ``config``: a defaulted, validated configuration; ``config_given``: it came from ``--config``
    (then its ``clientConnection`` qps/burst are kept); ``data_dir``: persist the store (None =
    memory); ``work_dir``: where the kubeconfig goes (default ``data_dir``, else a temporary
    directory removed at the end); ``port``: API server port (0 = ephemeral); ``quiet_s``: seconds without change
    before ``until_idle`` stops; ``stop_timeout_s``: bound on the scheduler's shutdown."""

    objects: Sequence[RawObject]
    config: KubeSchedulerConfiguration
    config_given: bool = False
    data_dir: str | None = None
    work_dir: str | None = None
    registry: dict[str, Any] | None = None
    until_idle: bool = False
    port: int = 0
    seed: int | None = 0
    quiet_s: float = 2.0
    stop_timeout_s: float = 40.0
    features: FeatureGate | None = None
    """Feature gates at the emulated version (``--emulated-version``/``--feature-gates``; None: v1.37's)."""
    extra_server_kw: dict[str, Any] = field(default_factory=dict)


class UpView(Protocol):
    """Where ``kubesched up`` reports (the CLI: plain lines or a rich Live table)."""

    def started(self, up: Up) -> None:
        """Server up and manifests applied (the scheduler starts next): ``up.kubeconfig``,
        ``up.server.url``, ``up.applied``."""

    def pod_event(self, event: str, row: PodRow) -> None:
        """``bound`` / ``pending`` (see :class:`PodBoard`)."""

    def tick(self, board: PodBoard) -> None:
        """Called a few times a second while running."""

    def finished(self, up: Up, reason: str) -> None:
        """``reason``: ``idle``, ``stopped`` or ``failed``; the board holds the final state."""


class Up:
    """One ``kubesched up`` run. ``await run()`` → exit code; ``request_stop()`` = SIGTERM."""

    def __init__(self, opts: UpOptions, view: UpView) -> None:
        self.opts = opts
        self.view = view
        self.work_dir: Path | None = None
        self.kubeconfig: Path | None = None
        self.server: Any = None
        self.runner: Any = None
        self.applied: ApplyResult | None = None
        names = [p.scheduler_name or "default-scheduler" for p in opts.config.profiles]
        self.board = PodBoard(names, listener=self._on_pod_event)
        self._stop = asyncio.Event()
        self._tmp: str | None = None

    def request_stop(self) -> None:
        self._stop.set()

    def _on_pod_event(self, event: str, row: PodRow) -> None:
        self.view.pod_event(event, row)

    async def run(self) -> int:
        from kubesched.apiserver.launcher import start_server
        from kubesched.apiserver.storage import CorruptStore, DataDirLocked

        opts = self.opts
        chosen = opts.work_dir or opts.data_dir
        if chosen is not None:
            self.work_dir = Path(chosen)
            self.work_dir.mkdir(parents=True, exist_ok=True)
        else:
            self._tmp = tempfile.mkdtemp(prefix="kubesched-up-")
            self.work_dir = Path(self._tmp)
        self.kubeconfig = self.work_dir / "kubeconfig"
        try:
            server_kw = {"features": opts.features, **opts.extra_server_kw}  # the box serves the emulated API
            async with start_server(self.kubeconfig, data_dir=opts.data_dir, port=opts.port,
                                    simulate_kubelets=True, **server_kw) as server:
                self.server = server
                return await self._with_server()
        except DataDirLocked as e:
            raise InputError(str(e), "--data-dir") from None
        except CorruptStore as e:
            raise KubeschedError(str(e)) from None
        finally:
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)

    async def _with_server(self) -> int:
        from kubesched.api.objects import Pod
        from kubesched.kube.client import APIClient, load_config
        from kubesched.kube.informer import Informer
        from kubesched.kube.reflector import ResourceSpec

        assert self.kubeconfig is not None
        client = APIClient(load_config(str(self.kubeconfig), qps=-1, burst=0), user_agent_suffix="/up")
        informer: Informer | None = None
        try:
            applying = asyncio.create_task(apply_objects(client, self.opts.objects))
            stop_wait = asyncio.create_task(self._stop.wait())
            await asyncio.wait({applying, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            stop_wait.cancel()
            if not applying.done():  # stopped while applying: nothing was scheduled
                applying.cancel()
                await asyncio.gather(applying, return_exceptions=True)
                self.view.finished(self, "stopped")
                return 0
            self.applied = applying.result()
            self.view.started(self)
            informer = Informer(client, ResourceSpec("Pod", "v1", "pods", Pod))
            informer.add_event_handler(self.board)
            informer.start()
            await informer.wait_synced()
            return await self._schedule()
        finally:
            if informer is not None:
                await informer.stop()
            await client.close()

    def _run_options(self) -> Any:
        from kubesched.kube.runner import RunOptions

        opts = self.opts
        unlimited = not opts.config_given
        return RunOptions(config=opts.config, config_file=None, kubeconfig=str(self.kubeconfig),
                          kube_api_qps=-1 if unlimited else None, kube_api_burst=0 if unlimited else None,
                          leader_elect=True, secure_port=0, bind_address="127.0.0.1",
                          registry=opts.registry, seed=opts.seed, shutdown_grace_s=10.0, features=opts.features)

    async def _schedule(self) -> int:
        from kubesched.kube.runner import Runner

        self.runner = Runner(self._run_options())
        task = asyncio.create_task(self.runner.run(), name="kubesched-run")
        reason = "stopped"
        stop_wait = asyncio.create_task(self._stop.wait())
        try:
            while True:
                done, _ = await asyncio.wait({task, stop_wait}, timeout=0.25,
                                             return_when=asyncio.FIRST_COMPLETED)
                self.view.tick(self.board)
                if task in done:
                    reason = "failed"
                    break
                if stop_wait in done:
                    break
                if self.opts.until_idle and self.idle():
                    reason = "idle"
                    break
        finally:
            stop_wait.cancel()
        code = 1
        if not task.done():
            self.runner.request_stop()
            await asyncio.wait({task}, timeout=self.opts.stop_timeout_s)
            if task.done():
                code = task.result()
            else:
                log.error("the scheduler did not stop within %.0fs; cancelled (it was at: %s)",
                          self.opts.stop_timeout_s, _where(task))
                task.cancel()
                await asyncio.wait({task}, timeout=5.0)
                code = 1
        else:
            code = task.result()
            if code == 0:
                code = 1  # it ended by itself: only a failure does that
        self.view.finished(self, reason if code == 0 or reason == "failed" else "failed")
        return 0 if reason in ("idle", "stopped") and code == 0 else (code or 1)

    def idle(self) -> bool:
        """See the module docstring (``until_idle``)."""
        r = self.runner
        if r is None or not r.synced or r.scheduler is None or r.loop is None:
            return False
        if r.elector is not None and not r.elector.is_leader():
            return False  # the scheduling loop has not started
        b = self.board
        if not b.settled() or b.quiet_for() < self.opts.quiet_s:
            return False
        counts = r.scheduler.queue.counts()
        return not counts.get("active") and not counts.get("backoff") and not r.loop.binding_tasks


def _where(task: asyncio.Task[Any]) -> str:
    """The chain of coroutines the task is suspended in (outermost first)."""
    out: list[str] = []
    coro: Any = task.get_coro()
    while coro is not None and len(out) < 30:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None)
        if frame is not None:
            out.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno} {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)
    return " -> ".join(out) or "?"
