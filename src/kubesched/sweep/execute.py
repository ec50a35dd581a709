"""Run a sweep's runs: one Ray task per run (or serially in this process), results streamed back.

* Inputs: read once here (:mod:`kubesched.sweep.inputs`), put in Ray's object store once
  (``ray.put``); every task gets the reference, so each node fetches an input once.
* Tasks: ``num_cpus=1`` each, retried by Ray when their worker or node dies (``max_retries``);
  a run that fails on its own (an exception in the run) is not retried and comes back as a
  failed result — reported, and the other runs go on.
* Results: taken as they finish (``ray.wait``), each written at once to
  ``OUT/runs/<run hash>.json``; a sweep started again over the same folder skips the runs whose
  result is there with ``status: ok`` (failed runs are tried again).
* Cluster: ``address`` None starts a local Ray instance on loopback (``ray.init``), else joins
  the cluster at ``address`` (``host:port`` of its GCS, or ``auto``). Every node of a cluster must
  have the same kubesched installed (the tasks import ``kubesched.sweep.runner``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import InputError
from kubesched.sweep.inputs import Payload, load_payload
from kubesched.sweep.runner import execute
from kubesched.sweep.spec import Plan, Run, run_key

__all__ = ["SweepResult", "job", "load_done", "run_plan"]


@dataclass
class SweepResult:
    """Every run's result dict (``key``, ``status``, ``metrics`` or ``error``, ``host``, ``pid``)
    by run hash, and what this invocation did."""

    results: dict[str, dict[str, Any]]
    skipped: int
    ran: int
    failed: list[tuple[Run, str]] = field(default_factory=list)
    wall_s: float = 0.0
    warnings: list[str] = field(default_factory=list)


def job(run: Run, plan: Plan, payload: Payload) -> dict[str, Any]:
    """What a task needs besides the input: the configuration as written, the seed, the gates."""
    return {"key": run.key, "input": run.input, "kind": payload.kind, "loadFactor": run.load_factor,
            "config": plan.variant(run.config).config, "configLabel": run.config, "seed": run.seed,
            "emulatedVersion": plan.spec.emulated_version, "featureGates": list(plan.spec.feature_gates)}


def load_done(out_dir: str) -> dict[str, dict[str, Any]]:
    """The results already in ``OUT/runs`` (unreadable files are ignored: that run runs again)."""
    runs = os.path.join(out_dir, "runs")
    done: dict[str, dict[str, Any]] = {}
    if not os.path.isdir(runs):
        return done
    for name in os.listdir(runs):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(runs, name), encoding="utf-8") as fh:
                res = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(res, dict) and res.get("key") == name[:-5]:
            done[name[:-5]] = res
    return done


def _save(out_dir: str, res: dict[str, Any]) -> None:
    path = os.path.join(out_dir, "runs", f"{res['key']}.json")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(res, fh, indent=1)
    os.replace(tmp, path)  # a reader (or a resumed sweep) never sees half a result


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                   TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=False)
    return bar


def run_plan(plan: Plan, out_dir: str, *, address: str | None = None, serial: bool = False,
             num_cpus: int | None = None, max_retries: int = 3, progress: bool = False,
             on_result: Callable[[Run, dict[str, Any]], None] | None = None) -> SweepResult:
    """Run every run of ``plan`` not yet done in ``out_dir`` (see the module docstring).

    ``serial``: in this process, one after the other (no Ray). ``num_cpus``: the CPUs of a local
    Ray instance (default: all). ``on_result(run, result)`` is called as each result arrives.

    Raises:
        InputError: an input cannot be read, or Ray is not installed / cannot be reached.
    """
    t0 = time.perf_counter()
    os.makedirs(os.path.join(out_dir, "runs"), exist_ok=True)
    features = plan.features()
    payloads: dict[str, Payload] = {}
    warnings: list[str] = []
    for inp in plan.inputs:
        payloads[inp.name] = p = load_payload(inp, features)
        warnings += [f"{inp.name}: {w}" for w in p.warnings]
    for r in plan.runs:
        r.key = run_key(payloads[r.input].digest, r, plan.variant(r.config).config, plan.spec)
    done = load_done(out_dir)
    results = {k: v for k, v in done.items() if v.get("status") == "ok"}
    todo = [r for r in plan.runs if r.key not in results]
    out = SweepResult(results, len(plan.runs) - len(todo), 0, warnings=warnings)
    bar = _progress(len(plan.runs), progress)
    task = None
    if bar is not None:
        bar.start()
        task = bar.add_task("runs", total=len(plan.runs), completed=out.skipped, failed=0)

    def finish(run: Run, res: dict[str, Any]) -> None:
        _save(out_dir, res)
        out.results[run.key] = res
        out.ran += 1
        if res.get("status") != "ok":
            out.failed.append((run, str(res.get("error", "failed"))))
        if bar is not None:
            bar.update(task, advance=1, failed=len(out.failed))
            if res.get("status") != "ok":
                bar.console.print(f"[red]failed[/red] {run.input_label} {run.config} seed {run.seed}: "
                                  f"{res.get('error')}", highlight=False, markup=True)
        if on_result is not None:
            on_result(run, res)

    try:
        if serial:
            for r in todo:
                finish(r, execute(payloads[r.input].data, job(r, plan, payloads[r.input])))
        elif todo:
            _run_ray(plan, todo, payloads, finish, address=address, num_cpus=num_cpus, max_retries=max_retries)
    finally:
        if bar is not None:
            bar.stop()
    out.wall_s = time.perf_counter() - t0
    return out


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("needs Ray: pip install 'kubesched[sweep]' (or run with --serial)", "--address") from None
    return ray


def _init(ray: Any, address: str | None, num_cpus: int | None) -> None:
    """Join ``address``, or start a local instance on loopback with this process's kubesched."""
    kw: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR, "include_dashboard": False}
    if address is None:
        # the local instance's workers import the kubesched this process runs
        src = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["kubesched"].__file__ or "")))
        pp = os.environ.get("PYTHONPATH", "")
        if src not in pp.split(os.pathsep):
            os.environ["PYTHONPATH"] = os.pathsep.join([src, pp]) if pp else src
        kw.update(num_cpus=num_cpus, _node_ip_address=_loopback())
    else:
        host = address.rsplit(":", 1)[0]
        if host.startswith("127.") or host == "localhost":
            kw["_node_ip_address"] = host if host.startswith("127.") else "127.0.0.1"
    try:
        ray.init(address=address, **kw)
    except Exception as e:  # noqa: BLE001 - Ray raises a bare Exception when a local node does not start
        hint = "" if address else " (start one with `ray start --head` and pass --address, or run --serial)"
        raise InputError(f"cannot start or reach Ray: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                         f"{hint}", "--address") from None


def _loopback() -> str:
    """The address of a local instance: 127.0.0.1 where Ray keeps it (macOS, Windows); on Linux
    Ray replaces 127.0.0.1 by the machine's routable address, so another loopback address
    (127.0.0.2) keeps the instance's traffic on this machine."""
    return "127.0.0.1" if sys.platform in ("darwin", "win32") else "127.0.0.2"


def _run_ray(plan: Plan, todo: list[Run], payloads: dict[str, Payload],
             finish: Callable[[Run, dict[str, Any]], None], *, address: str | None, num_cpus: int | None,
             max_retries: int) -> None:
    ray = _import_ray()
    from ray.exceptions import RayError

    started = not ray.is_initialized()
    if started:
        _init(ray, address, num_cpus)
    try:
        refs = {name: ray.put(p.data) for name, p in payloads.items()}  # shipped once per node
        task = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(execute)
        pending = {task.remote(refs[r.input], job(r, plan, payloads[r.input])): r for r in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                r = pending.pop(ref)
                try:
                    res = ray.get(ref)
                except RayError as e:  # the worker or node died more often than max_retries
                    res = {"key": r.key, "status": "failed", "error": f"{type(e).__name__}: {str(e)[:300]}"}
                finish(r, res)
    finally:
        if started:
            ray.shutdown()
