"""``kubesched`` command line: ``simulate``, ``replay``, ``bench``, ``version``.

Bad input (manifests, config, plugin names) prints one ``error: …`` line on stderr and exits
with code 2 — never a traceback. Unschedulable pods are results, not errors (exit 0).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from kubesched import __version__
from kubesched.cli.apiserver_cmd import apiserver as _apiserver_cmd
from kubesched.cli.run_cmd import run_command
from kubesched.cli.up_cmd import up as _up_cmd
from kubesched.errors import InputError, KubeschedError

__all__ = ["main"]


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn kubesched's input errors into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except KubeschedError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except BrokenPipeError:  # e.g. piped into head
            sys.exit(0)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched")
def main() -> None:
    """kubesched — the Kubernetes scheduler, written in Python (upstream v1.34 behaviour)."""


def _load_config(path: str | None):  # noqa: ANN202
    from kubesched.config import load_config

    return load_config(path)


def _registry(plugins: tuple[str, ...]) -> dict[str, Any] | None:
    if not plugins:
        return None
    from kubesched.framework.registry import load_out_of_tree
    from kubesched.plugins.registry import in_tree_registry

    reg = in_tree_registry()
    for spec in plugins:
        name, factory = load_out_of_tree(spec)
        reg.register(name, factory)
    return dict(reg)


def _rss_mib() -> float:
    """Current resident set size (Linux /proc; 0 elsewhere), for KUBESCHED_PHASE_TIMES."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


@main.command()
@click.option("-f", "--filename", "paths", multiple=True, required=True,
              help="Manifest file or directory (recursive: .yaml, .yml, .json). Repeatable.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking.")
@click.option("-o", "--output", type=click.Choice(["table", "yaml", "json"]), default=None,
              help="table (default on a terminal), or every input object after the run as a v1 List.")
@click.option("--record-results", is_flag=True, help="Annotate attempted pods with kubesched.io/* results.")
@click.option("--results-file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write one JSON DecisionRecord per scheduling attempt (JSON Lines).")
@click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
              help="Load an out-of-tree Python plugin (or an entry point name in 'kubesched.plugins').")
@_friendly
def simulate(paths: tuple[str, ...], config_path: str | None, seed: int, output: str | None,
             record_results: bool, results_file: str | None, plugins: tuple[str, ...]) -> None:
    """Schedule the pending pods of a set of manifests and show where they went and why."""
    from kubesched.sim.manifests import load_manifests, write_list
    from kubesched.sim.simulate import simulate as run

    timings: dict[str, float] | None = {} if os.environ.get("KUBESCHED_PHASE_TIMES") else None
    config = _load_config(config_path)
    t0, c0 = time.perf_counter(), time.process_time()
    gc.disable()  # reading creates no cycles: no collection needs to walk the growing input
    try:
        raws = load_manifests(list(paths))
    finally:
        gc.freeze()  # a one-shot process: the input's objects are never scanned by the collector again
        gc.enable()
    rss: dict[str, float] = {}
    if timings is not None:
        timings["load"] = time.perf_counter() - t0
        timings["load_cpu"] = time.process_time() - c0
        rss["rss_after_load"] = _rss_mib()
    sink = None
    fh = None
    if results_file:
        fh = open(results_file, "w", encoding="utf-8")  # noqa: SIM115

        def sink(rec: Any) -> None:
            fh.write(json.dumps(rec.to_dict(), separators=(",", ":")) + "\n")

    try:
        result = run(raws, config, seed=seed, record=record_results, registry=_registry(plugins), on_record=sink,
                     timings=timings, freeze_gc=True)
    finally:
        if fh is not None:
            fh.close()
    fmt = output or ("table" if sys.stdout.isatty() else "yaml")
    if timings is not None:
        rss["rss_after_schedule"] = _rss_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    if fmt == "table":
        from kubesched.cli.report import print_simulation

        print_simulation(result)
    else:
        write_list(result.output_objects(), "json" if fmt == "json" else "yaml", sys.stdout)
        if result.other_scheduler_pods:
            click.echo(f"notice: {len(result.other_scheduler_pods)} pending pod(s) name a scheduler with no "
                       f"profile here and were left alone: {', '.join(result.other_scheduler_pods)}", err=True)
    if timings is not None:  # benchmarks/simulate_large.py reads this line
        sys.stdout.flush()
        timings["output"] = time.perf_counter() - t0
        timings["output_cpu"] = time.process_time() - c0
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        click.echo("phase-times: " + " ".join(f"{k}={v:.2f}s" for k, v in timings.items())
                   + " " + " ".join(f"{k}={v:.0f}MiB" for k, v in rss.items()) + f" peak={peak:.0f}MiB", err=True)


@main.command()
@click.argument("trace", type=click.Choice(["alibaba-openb"]))
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--pods", "pods_csv", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a PNG of allocation and pending pods over virtual time.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@_friendly
def replay(trace: str, nodes_csv: str, pods_csv: str, config_path: str | None, seed: int,
           plot: str | None, as_json: bool) -> None:
    """Replay a production trace through the scheduler on a virtual clock."""
    from kubesched.sim.replay import replay_openb

    config = _load_config(config_path)
    summary = replay_openb(nodes_csv, pods_csv, config, seed=seed, progress=sys.stderr.isatty(), plot=plot)
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        from kubesched.cli.report import print_replay

        print_replay(summary)


@main.command()
@click.option("--workload", "workloads", multiple=True, default=("SchedulingBasic/5000Nodes_10000Pods",),
              show_default=True, help="scheduler_perf workload (Case/Workload), or 'all'. Repeatable.")
@click.option("--list", "list_only", is_flag=True, help="List the workloads.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print scheduler_perf DataItems as JSON.")
@_friendly
def bench(workloads: tuple[str, ...], list_only: bool, seed: int, as_json: bool) -> None:
    """Run upstream scheduler_perf workloads in-process; report SchedulingThroughput and peak RSS."""
    from kubesched.sim.bench import WORKLOADS, run_workload

    if list_only:
        for name, w in WORKLOADS.items():
            click.echo(f"{name:60s} upstream floor {w.threshold} pods/s")
        return
    names = list(WORKLOADS) if "all" in workloads else list(workloads)
    for name in names:
        if name not in WORKLOADS:
            raise InputError(f"unknown workload {name!r}; see 'kubesched bench --list'", "--workload")
    for name in names:
        res = run_workload(name, seed=seed, progress=sys.stderr.isatty())
        click.echo(json.dumps(res.to_dict()) if as_json else res.summary())


@main.command()
def version() -> None:
    """Print the version and the upstream behaviour it follows."""
    click.echo(f"kubesched {__version__} (kube-scheduler v1.34 behaviour)")


main.add_command(_apiserver_cmd)
main.add_command(run_command)
main.add_command(_up_cmd)

if __name__ == "__main__":  # pragma: no cover
    main()
