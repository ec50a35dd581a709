"""``kubesched up``: the cluster in a box with the scheduler running live against it.

Output: the kubeconfig path and a ``kubectl`` hint, then pods going pending → bound — a rich
Live table on a terminal, else one line per change (``pod ns/name bound to node-x``,
``pod ns/name pending: <FailedScheduling message>``) — and with ``--until-idle`` a summary.
The scheduler's and the server's logs go to ``<work dir>/kubesched.log`` (errors also to
stderr). Bad manifests or flags: one ``error: …`` line, exit 2. SIGINT/SIGTERM: clean
shutdown, exit 0; a scheduler that fails to start or loses its lease: exit 1.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any, TextIO

import click

from kubesched.cli._exit import command_exit_code
from kubesched.cli._features import build_features, feature_gate_options
from kubesched.cli._loop import run as run_loop
from kubesched.errors import ConfigError, InputError
from kubesched.features import FeatureGate

__all__ = ["up"]


def _summary_lines(up: Any) -> list[str]:
    b = up.board
    scheduled, pending, others = b.scheduled(), b.pending(), b.others()
    total = len(scheduled) + len(pending)
    lines = [f"{total} pod(s) to schedule: {len(scheduled)} bound, {len(pending)} pending"
             + (f"; {b.preexisting()} already bound at start" if b.preexisting() else "")]
    for r in sorted(pending, key=lambda r: r.key):
        lines.append(f"  pending {r.key}: {r.message or r.reason or 'not attempted yet'}")
    if others:
        lines.append(f"{len(others)} pending pod(s) name a scheduler with no profile here and were left alone: "
                     + ", ".join(sorted(f"{r.key} ({r.scheduler_name})" for r in others)))
    return lines


def _header_lines(up: Any) -> list[str]:
    a = up.applied
    lines = [f"kubesched up: API server {up.server.url} (store: {up.opts.data_dir or 'memory'})"]
    if a is not None:
        lines.append(f"created {a.created} object(s) ({a.pods_pending} pending pod(s), {a.pods_bound} bound)"
                     + (f"; {a.existing} already existed and were left as they are" if a.existing else ""))
        lines.extend(f"notice: {n}" for n in a.notices)
    lines.append(f"kubeconfig: {up.kubeconfig}")
    lines.append(f"try: export KUBECONFIG={up.kubeconfig}; kubectl get pods -o wide")
    return lines


class PlainView:
    """One line per change, flushed at once (pipes, tests, CI logs)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _print(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def started(self, up: Any) -> None:
        for line in _header_lines(up):
            self._print(line)

    def pod_event(self, event: str, row: Any) -> None:
        if event == "bound":
            self._print(f"pod {row.key} bound to {row.node}")
        else:
            self._print(f"pod {row.key} pending: {row.message or row.reason}")

    def tick(self, board: Any) -> None:
        pass

    def finished(self, up: Any, reason: str) -> None:
        if reason == "idle":
            self._print("idle: nothing left to schedule")
        if reason in ("idle", "stopped"):
            for line in _summary_lines(up):
                self._print(line)


class LiveView:
    """A rich Live table (one line per pod, cropped to the terminal): counts, the pending pods
    with their reasons, the latest bindings. It goes away at the end, replaced by the summary."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console()
        self.live: Any = None
        self._version = -1

    def started(self, up: Any) -> None:
        from rich.live import Live

        for line in _header_lines(up):
            self.console.print(line, highlight=False, markup=False)
        self.live = Live(self._render(up.board), console=self.console, auto_refresh=False, transient=True)
        self.live.start()

    def pod_event(self, event: str, row: Any) -> None:
        pass

    def _render(self, board: Any) -> Any:
        from rich.table import Table

        scheduled, pending, others = board.scheduled(), board.pending(), board.others()
        t = Table(title=f"{len(scheduled)} bound · {len(pending)} pending"
                        + (f" · {len(others)} for another scheduler" if others else ""),
                  title_justify="left", expand=True)
        keys = [r.key for r in board.rows.values() if r.ours]
        nodes = [r.node for r in board.rows.values() if r.node]
        t.add_column("POD", no_wrap=True, width=min(60, max(map(len, keys), default=3)))
        t.add_column("NODE", no_wrap=True, width=min(40, max(9, *map(len, nodes))) if nodes else 9)
        t.add_column("REASON", no_wrap=True, overflow="ellipsis", ratio=1)
        room = max(5, self.console.size.height - 8)
        rows = sorted(pending, key=lambda r: r.key)
        recent = sorted(scheduled, key=lambda r: -r.changed_at)
        for r in rows[:room]:
            t.add_row(r.key, "[yellow]<pending>[/]", r.message or r.reason or "waiting for the scheduler")
        if len(rows) > room:
            t.add_row(f"… {len(rows) - room} more pending", "", "")
        for r in recent[:max(0, room - len(rows))]:
            t.add_row(r.key, f"[green]{r.node}[/]", "")
        return t

    def tick(self, board: Any) -> None:
        if self.live is not None and board.version != self._version:
            self._version = board.version
            self.live.update(self._render(board), refresh=True)

    def finished(self, up: Any, reason: str) -> None:
        if self.live is not None:
            self.live.update(self._render(up.board), refresh=True)
            self.live.stop()
        if reason == "idle":
            self.console.print("idle: nothing left to schedule")
        if reason in ("idle", "stopped"):
            for line in _summary_lines(up):
                self.console.print(line, highlight=False, markup=False)


def _configure_logging(path: str, v: int) -> logging.Handler:
    from kubesched.kube.klog import KlogFormatter, configure_logging

    configure_logging("text", v, stream=open(path, "a", encoding="utf-8"))
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(logging.ERROR)
    err.setFormatter(KlogFormatter())
    logging.getLogger().addHandler(err)
    return err


@click.command("up")
@click.option("-f", "--filename", "paths", multiple=True,
              help="Manifest file or directory (recursive: .yaml, .yml, .json). Repeatable.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (its clientConnection.kubeconfig is replaced by the box's); "
                   "else one found among -f.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Keep the store, kubeconfig, certificates and log in DIR (default: in memory, a temporary "
                   "directory removed at exit).")
@click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
              help="Load an out-of-tree Python plugin (enable it in a profile of --config). Repeatable.")
@click.option("--until-idle", is_flag=True,
              help="Exit 0 once nothing is left to schedule (all bound, or the rest unschedulable), with a summary.")
@click.option("--port", type=int, default=0, show_default=True,
              help="API server port on 127.0.0.1 (0 = any free port).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking.")
@click.option("-v", "--v", "verbosity", type=int, default=0, metavar="LEVEL",
              help="Log verbosity (klog -v) of the log file.")
@click.option("--pod-termination-seconds", type=float, default=0.0, show_default=True, metavar="SECONDS",
              help="Seconds a simulated kubelet takes to stop a deleted pod (0: at once, as KWOK; never more "
                   "than the pod's grace period); -1: wait out each pod's grace period. As `apiserver`'s flag.")
@feature_gate_options
def up(paths: tuple[str, ...], config_file: str | None, data_dir: str | None, plugins: tuple[str, ...],
       until_idle: bool, port: int, seed: int, verbosity: int, emulated_version: str | None = None,
       feature_gates: tuple[str, ...] = (), min_compatibility_version: str | None = None,
       pod_termination_seconds: float = 0.0) -> None:
    """Start an API server in a box, apply manifests and run the scheduler live against it."""
    try:
        code = command_exit_code(lambda: _up(paths, config_file, data_dir, plugins, until_idle, port, seed,
                                             verbosity, build_features(emulated_version, feature_gates,
                                                                       min_compatibility_version),
                                             None if pod_termination_seconds < 0 else pod_termination_seconds))
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(code)


def _up(paths: tuple[str, ...], config_file: str | None, data_dir: str | None, plugins: tuple[str, ...],
        until_idle: bool, port: int, seed: int, verbosity: int, features: FeatureGate | None = None,
        pod_termination_seconds: float | None = 0.0) -> int:
    from pathlib import Path

    from kubesched.box.up import Up, UpOptions
    from kubesched.config import load_config
    from kubesched.config.validation import validate_config

    if not 0 <= port <= 65535:
        raise InputError(f"port must be in 0..65535, got {port}", "--port")
    from kubesched.cli._inputs import load_inputs

    if paths:  # a KubeSchedulerConfiguration among the -f inputs serves as --config
        cfg, objects, config_given = load_inputs(list(paths), config_file, features)
    else:
        cfg, objects, config_given = load_config(config_file, features), [], config_file is not None
    try:
        validate_config(cfg, features)
    except ConfigError as e:
        raise InputError(str(e)) from None
    registry = None
    if plugins:
        from kubesched.cli._inputs import plugin_registry

        registry = plugin_registry(plugins)
    opts = UpOptions(objects=objects, config=cfg, config_given=config_given, data_dir=data_dir,
                     registry=registry, until_idle=until_idle, port=port, seed=seed, features=features,
                     extra_server_kw={"pod_termination_seconds": pod_termination_seconds})
    view: Any = LiveView() if sys.stdout.isatty() else PlainView(sys.stdout)

    async def main() -> int:
        runner = Up(opts, view)
        loop = asyncio.get_running_loop()

        def interrupted() -> None:
            if not runner._stop.is_set():
                click.echo("interrupted: shutting down (scheduler releases its lease, server stops)", err=True)
            runner.request_stop()

        loop.add_signal_handler(signal.SIGINT, interrupted)
        loop.add_signal_handler(signal.SIGTERM, runner.request_stop)
        return await runner.run()

    import shutil
    import tempfile

    work = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="kubesched-up-"))
    work.mkdir(parents=True, exist_ok=True)
    opts.work_dir = str(work)
    handler = _configure_logging(str(work / "kubesched.log"), verbosity)
    keep = True
    try:
        code = run_loop(main())
        keep = code != 0
        return code
    except InputError:
        keep = False
        raise
    finally:
        logging.getLogger().removeHandler(handler)
        if not data_dir:
            if keep:
                click.echo(f"log kept in {work / 'kubesched.log'}", err=True)
            else:
                shutil.rmtree(work, ignore_errors=True)
