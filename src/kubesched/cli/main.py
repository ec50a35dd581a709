"""``kubesched`` command line: ``simulate``, ``replay``, ``bench``, ``version``.

Bad input (manifests, config, plugin names) prints one ``error: …`` line on stderr and exits
with code 2 — never a traceback. Unschedulable pods are results, not errors (exit 0).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from kubesched import __version__
from kubesched.cli.apiserver_cmd import apiserver as _apiserver_cmd
from kubesched.cli.run_cmd import run_command
from kubesched.cli.up_cmd import up as _up_cmd
from kubesched.errors import ConfigError, InputError, KubeschedError

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
        try:
            name, factory = load_out_of_tree(spec)
        except ConfigError as e:
            hint = "" if "=" in spec else " (give NAME=module:factory, or the name of an entry point)"
            raise type(e)(f"{e.message}{hint}", e.path or "--plugin") from None
        reg.register(name, factory)
    return dict(reg)


@main.command()
@click.option("-f", "--filename", "paths", multiple=True, required=True,
              help="Manifest file or directory (recursive: .yaml, .yml, .json). Repeatable.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking.")
@click.option("-o", "--output", type=click.Choice(["table", "wide", "yaml", "json"]), default=None,
              help="table (default on a terminal), wide (table + scores, runner-up, feasible nodes, preemptions), "
                   "or every input object after the run as a v1 List.")
@click.option("--record-results", is_flag=True,
              help="Annotate attempted pods with kubesched.io/* results (-o yaml/json only).")
@click.option("--results-file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write one JSON DecisionRecord per scheduling attempt (JSON Lines).")
@click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
              help="Load an out-of-tree Python plugin (or an entry point name in 'kubesched.plugins').")
@click.option("--explain", "explain", multiple=True, metavar="NS/POD",
              help="Explain one pod's last attempt node by node (Filter reasons, Score plugins, chosen node, "
                   "runner-up, preemption) instead of listing the run; -o json/yaml gives it as data. Repeatable.")
@click.option("--explain-nodes", type=click.IntRange(min=0), default=30, show_default=True,
              help="Rows per --explain table (0 = every node).")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None, metavar="OUT.html",
              help="Also write a self-contained HTML report (utilisation heatmap, pending reasons, zones, "
                   "the decision record of every pod).")
@_friendly
def simulate(paths: tuple[str, ...], config_path: str | None, seed: int, output: str | None,
             record_results: bool, results_file: str | None, plugins: tuple[str, ...],
             explain: tuple[str, ...] = (), explain_nodes: int = 30, report: str | None = None) -> None:
    """Schedule the pending pods of a set of manifests and show where they went and why."""
    from kubesched.sim.manifests import load_manifests, write_list
    from kubesched.sim.simulate import simulate as run

    registry = _registry(plugins)
    with _config_source(config_path):
        config = _load_config(config_path)
    raws = load_manifests(list(paths))
    fmt = output or ("table" if sys.stdout.isatty() else "yaml")
    explain_keys = [_pod_key(k) for k in explain]
    per_pod: dict[str, list[Any]] = {k: [] for k in explain_keys}
    digests: dict[str, dict[str, Any]] = {}
    collector = None
    if report is not None:
        from kubesched.cli.report_html import check_writable
        from kubesched.sim.explain import ExplanationCollector

        check_writable(report)

        collector = ExplanationCollector()
    wide = fmt == "wide" and not explain_keys
    fh = None
    if results_file:
        fh = open(results_file, "w", encoding="utf-8")  # noqa: SIM115

    def sink(rec: Any) -> None:
        if fh is not None:
            fh.write(json.dumps(rec.to_dict(), separators=(",", ":")) + "\n")
        if rec.pod in per_pod:
            per_pod[rec.pod].append(rec)
        if wide:
            from kubesched.sim.explain import record_digest

            digests[rec.pod] = record_digest(rec)
        if collector is not None:
            collector(rec)

    # records cost O(nodes) each: only the pods --explain names, unless something needs them all
    every = fh is not None or wide or collector is not None or record_results
    try:
        with _config_source(config_path):
            result = run(raws, config, seed=seed, record=record_results, registry=registry,
                         on_record=sink if (every or explain_keys) else None, keep_records=record_results,
                         record_pods=None if every else per_pod.__contains__)
    finally:
        if fh is not None:
            fh.close()
    if record_results and fmt in ("table", "wide"):
        click.echo(f"notice: --record-results has no effect with -o {fmt}: it annotates the pods of -o yaml/json "
                   "output (see --explain NS/POD, -o wide or --results-file)", err=True)
    if explain_keys:
        from kubesched.cli.explain_view import emit_explanations

        emit_explanations(result, explain_keys, per_pod, fmt, max_nodes=explain_nodes)
    elif fmt in ("table", "wide"):
        from kubesched.cli.explain_view import print_preemptions, print_wide
        from kubesched.cli.report import print_simulation
        from kubesched.sim.explain import pod_summaries, preemption_lines

        if fmt == "table":
            print_simulation(result)
        else:
            print_wide(pod_summaries(result, digests))
            click.echo(f"# {result.attempts} scheduling attempts")
        print_preemptions(preemption_lines(result.store.preemptions))
    else:
        if record_results:
            from kubesched.sim.explain import annotate_preemptions

            annotate_preemptions(result)
        write_list(result.output_objects(), "json" if fmt == "json" else "yaml", sys.stdout)
        if result.other_scheduler_pods:
            click.echo(f"notice: {len(result.other_scheduler_pods)} pending pod(s) name a scheduler with no "
                       f"profile here and were left alone: {', '.join(result.other_scheduler_pods)}", err=True)
        from kubesched.cli.explain_view import print_preemptions
        from kubesched.sim.explain import preemption_lines

        print_preemptions(preemption_lines(result.store.preemptions), prefix="notice: ", file=sys.stderr)
    if report:
        from kubesched.cli.report_html import write_report
        from kubesched.sim.explain import report_data

        explanations = collector.finish(result) if collector is not None else None
        write_report(report_data(result, title=f"kubesched simulate {' '.join(paths)}",
                                 explanations=explanations), report)


def _pod_key(s: str) -> str:
    """``NS/POD`` as given, or ``POD`` in the ``default`` namespace (as kubectl)."""
    s = s.strip()
    if not s or s.count("/") > 1 or s.startswith("/") or s.endswith("/"):
        raise InputError(f"invalid pod {s!r}: expected NAMESPACE/NAME or NAME", "--explain")
    return s if "/" in s else f"default/{s}"


@contextlib.contextmanager
def _config_source(path: str | None) -> Iterator[None]:
    """Name the configuration file in configuration errors (``FILE: field.path: message``)."""
    try:
        yield
    except ConfigError as e:
        if path and not str(e).startswith(path):
            raise type(e)(str(e), path) from None
        raise


@main.command()
@click.argument("trace", type=click.Choice(["alibaba-openb"]))
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--pods", "pods_csv", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a PNG of allocation and pending pods over virtual time.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None, metavar="OUT.html",
              help="Also write a self-contained HTML page: allocation and pending pods over virtual time, the figures.")
@_friendly
def replay(trace: str, nodes_csv: str, pods_csv: str, config_path: str | None, seed: int,
           plot: str | None, as_json: bool, report: str | None = None) -> None:
    """Replay a production trace through the scheduler on a virtual clock."""
    from kubesched.sim.replay import replay_openb

    with _config_source(config_path):
        config = _load_config(config_path)
    if report:
        from kubesched.cli.report_html import check_writable

        check_writable(report)
    summary = replay_openb(nodes_csv, pods_csv, config, seed=seed, progress=sys.stderr.isatty(), plot=plot)
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        from kubesched.cli.report import print_replay

        print_replay(summary)
    if report:
        from dataclasses import asdict

        from kubesched.cli.report_html import render_replay_report, write_text

        write_text(render_replay_report(summary.to_dict(), [asdict(x) for x in summary.samples],
                                        f"kubesched replay {trace} {pods_csv}"), report)


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
