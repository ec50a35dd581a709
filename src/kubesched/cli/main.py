"""``kubesched`` command line: ``simulate``, ``replay``, ``bench``, ``version``.

Bad input (manifests, config, plugin names) prints one ``error: …`` line on stderr and exits
with code 2 — never a traceback. Unschedulable pods are results, not errors (exit 0).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import click

from kubesched import __version__
from kubesched.cli._features import build_features, feature_gate_options
from kubesched.errors import ConfigError, InputError, KubeschedError
from kubesched.features import BINARY_VERSION, MIN_EMULATED_VERSION

__all__ = ["main"]


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush does not
    print "Exception ignored ... BrokenPipeError" (Python docs, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn kubesched's input errors into one line on stderr and exit code 2; never a traceback:
    a broken pipe (``| head``) ends quietly (0), an output that cannot be written is one
    ``error:`` line (1), Ctrl-C is one ``interrupted`` line (130, as a shell reports SIGINT)."""

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
            _quiet_stdout()
            sys.exit(0)
        except KeyboardInterrupt:
            _quiet_stdout()
            click.echo("interrupted", err=True)
            sys.exit(130)
        except OSError as e:  # stdout on a full disk, a closed descriptor, ...
            _quiet_stdout()
            click.echo(f"error: cannot write output: {e.strerror or e}", err=True)
            sys.exit(1)

    return wrapper


LAZY_COMMANDS: dict[str, str] = {
    "apiserver": "kubesched.cli.apiserver_cmd:apiserver",
    "capacity": "kubesched.cli.whatif_cmd:capacity_command",
    "compare": "kubesched.cli.whatif_cmd:compare_command",
    "run": "kubesched.cli.run_cmd:run_command",
    "snapshot": "kubesched.cli.snapshot_cmd:snapshot",
    "sweep": "kubesched.cli.sweep_cmd:sweep_command",
    "up": "kubesched.cli.up_cmd:up",
}
"""The subcommands that live in their own module: name → ``module:attribute`` of the click command,
imported when the command is looked up (click's "lazily loading subcommands" pattern), so that
``kubesched run`` does not import ``up``, ``apiserver``, ``sweep``, … (``secrets``, the what-if
reports). ``kubesched --help`` imports them all for their one-line help."""


class _LazyGroup(click.Group):
    """A click group whose :data:`LAZY_COMMANDS` are imported on first lookup."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in LAZY_COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, _, attr = LAZY_COMMANDS[cmd_name].partition(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command) and cmd.name == cmd_name, LAZY_COMMANDS[cmd_name]
        self.add_command(cmd)
        return cmd


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched")
def main() -> None:
    """kubesched — the Kubernetes scheduler, written in Python (upstream v1.37 behaviour; 1.34–1.36 with
    --emulated-version)."""


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
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1); else one found among -f.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking.")
@click.option("-o", "--output", type=click.Choice(["table", "wide", "yaml", "json"]), default=None,
              help="table (the default, piped or not, as kubectl), wide (table + scores, runner-up, feasible "
                   "nodes, preemptions), "
                   "or every input object after the run as a v1 List.")
@click.option("--record-results", is_flag=True,
              help="Annotate attempted pods with kubesched.io/* results (-o yaml/json only).")
@click.option("--results-file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write one JSON DecisionRecord per scheduling attempt (JSON Lines).")
@click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
              help="Load an out-of-tree Python plugin (or an entry point name in 'kubesched.plugins').")
@click.option("--add-nodes", "add_nodes", type=click.Path(dir_okay=False), default=None, metavar="NODE.yaml",
              help="Node template: add the fewest such nodes that take the pending pods (cluster-autoscaler's "
                   "binpacking estimate) and show where each pod would go.")
@click.option("--validate", "validate", default="strict", show_default=True, metavar="strict|warn|ignore",
              help="Unknown fields: an error (strict, true), a warning (warn) or ignored (ignore, false), "
                   "as kubectl's --validate. Objects are always checked as the API server would.")
@click.option("--explain", "explain", multiple=True, metavar="NS/POD",
              help="Explain one pod's last attempt node by node (Filter reasons, Score plugins, chosen node, "
                   "runner-up, preemption) instead of listing the run; -o json/yaml gives it as data. Repeatable.")
@click.option("--explain-nodes", type=click.IntRange(min=0), default=30, show_default=True,
              help="Rows per --explain table (0 = every node).")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None, metavar="OUT.html",
              help="Also write a self-contained HTML report (utilisation heatmap, pending reasons, zones, "
                   "the decision record of every pod).")
@feature_gate_options
@_friendly
def simulate(paths: tuple[str, ...], config_path: str | None, seed: int, output: str | None,
             record_results: bool, results_file: str | None, plugins: tuple[str, ...],
             add_nodes: str | None = None, validate: str = "strict",
             explain: tuple[str, ...] = (), explain_nodes: int = 30, report: str | None = None,
             emulated_version: str | None = None, feature_gates: tuple[str, ...] = (),
             min_compatibility_version: str | None = None) -> None:
    """Schedule the pending pods of a set of manifests and show where they went and why."""
    from kubesched.cli._inputs import load_inputs, plugin_registry
    from kubesched.sim.manifests import write_list
    from kubesched.sim.simulate import simulate as run
    from kubesched.sim.validate import field_validation_mode, validate_inputs

    try:
        mode = field_validation_mode(validate)
    except ValueError as e:
        raise InputError(str(e), "--validate") from None
    features = build_features(emulated_version, feature_gates, min_compatibility_version)
    registry = plugin_registry(plugins)
    timings: dict[str, float] | None = {} if os.environ.get("KUBESCHED_PHASE_TIMES") else None
    t0, c0 = time.perf_counter(), time.process_time()
    gc.disable()  # reading and checking create no cycles: no collection needs to walk the growing input
    try:
        with _config_source(config_path):
            config, raws, _ = load_inputs(list(paths), config_path, features)
        validate_inputs(raws, field_validation=mode, warn=lambda line: click.echo(line, err=True),
                        features=features)
    finally:
        gc.freeze()  # a one-shot process: the input's objects are never scanned by the collector again
        gc.enable()
    rss: dict[str, float] = {}
    if timings is not None:
        timings["load"] = time.perf_counter() - t0
        timings["load_cpu"] = time.process_time() - c0
        rss["rss_after_load"] = _rss_mib()
    node_template = None
    if add_nodes:
        from kubesched.sim.autoscale import load_node_template
        from kubesched.sim.manifests import load_manifests

        node_template = load_node_template(load_manifests([add_nodes], allow_duplicates=True), add_nodes)
    fmt = output or "table"  # as kubectl, the format never depends on the terminal
    explain_keys = [_pod_key(k) for k in explain]
    per_pod: dict[str, list[Any]] = {k: [] for k in explain_keys}
    digests: dict[str, dict[str, Any]] = {}
    collector = None
    if report is not None:
        from kubesched.cli.report_html import check_writable
        from kubesched.sim.explain_compact import CompactCollector

        check_writable(report)

        collector = CompactCollector()
    wide = fmt == "wide" and not explain_keys
    fh = None
    if results_file:
        try:
            fh = open(results_file, "w", encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot write {results_file}: {e.strerror or e}", "--results-file") from None

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
    from kubesched.cli.progress import DelayedProgress

    try:
        with _config_source(config_path), DelayedProgress("simulate", "pods") as tick:
            result = run(raws, config, seed=seed, record=record_results, registry=registry,
                         on_record=sink if (every or explain_keys) else None, keep_records=record_results,
                         record_pods=None if every else per_pod.__contains__, timings=timings, freeze_gc=True,
                         features=features, progress=tick if tick.enabled else None)
    finally:
        if fh is not None:
            fh.close()
    if timings is not None:
        rss["rss_after_schedule"] = _rss_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    estimate = None
    if node_template is not None:
        from kubesched.sim.autoscale import add_nodes as estimate_nodes

        estimate = estimate_nodes(result, node_template)
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
        if estimate is not None:
            from kubesched.cli.whatif_report import print_add_nodes

            print_add_nodes(estimate)
    else:
        if estimate is not None:
            from kubesched.cli.whatif_report import add_nodes_summary

            click.echo(add_nodes_summary(estimate), err=True)
        if record_results:
            from kubesched.sim.explain import annotate_preemptions

            annotate_preemptions(result)
        write_list(result.output_objects(), "json" if fmt == "json" else "yaml", sys.stdout)
        for notice in result.notices:
            click.echo(f"notice: {notice}", err=True)
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
    if timings is not None:  # benchmarks/simulate_large.py reads this line
        sys.stdout.flush()
        timings["output"] = time.perf_counter() - t0
        timings["output_cpu"] = time.process_time() - c0
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        click.echo("phase-times: " + " ".join(f"{k}={v:.2f}s" for k, v in timings.items())
                   + " " + " ".join(f"{k}={v:.0f}MiB" for k, v in rss.items()) + f" peak={peak:.0f}MiB", err=True)


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
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(exists=True, dir_okay=False),
              metavar="NODES.csv", help="The trace's node list (alibaba-openb: openb_node_list_*.csv: sn, cpu_milli, "
                                        "memory_mib, gpu, model).")
@click.option("--pods", "pods_csv", required=True, type=click.Path(exists=True, dir_okay=False),
              metavar="PODS.csv", help="The trace's pods (alibaba-openb: openb_pod_list_*.csv: name, cpu_milli, "
                                       "memory_mib, num_gpu, gpu_milli, creation/deletion/scheduled times, ...).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking.")
@click.option("--load-factor", "load_factor", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True, metavar="F",
              help="Arrivals F times faster (creation times ÷ F), each pod's lifetime kept: F > 1 loads the "
                   "cluster more, so that pods pend.")
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a PNG of allocation and pending pods over virtual time.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None, metavar="OUT.html",
              help="Also write a self-contained HTML page: allocation and pending pods over virtual time, the figures.")
@feature_gate_options
@_friendly
def replay(trace: str, nodes_csv: str, pods_csv: str, config_path: str | None, seed: int,
           plot: str | None, as_json: bool, report: str | None = None, load_factor: float = 1.0,
           emulated_version: str | None = None,
           feature_gates: tuple[str, ...] = (), min_compatibility_version: str | None = None) -> None:
    """Replay a production trace through the scheduler on a virtual clock."""
    from kubesched.cli._inputs import load_config_file
    from kubesched.sim.replay import replay_openb

    features = build_features(emulated_version, feature_gates, min_compatibility_version)
    with _config_source(config_path):
        config = load_config_file(config_path, features)
    if report:
        from kubesched.cli.report_html import check_writable

        check_writable(report)
    summary = replay_openb(nodes_csv, pods_csv, config, seed=seed, progress=sys.stderr.isatty(), plot=plot,
                           features=features, load_factor=load_factor)
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
@feature_gate_options
@_friendly
def bench(workloads: tuple[str, ...], list_only: bool, seed: int, as_json: bool, emulated_version: str | None = None,
          feature_gates: tuple[str, ...] = (), min_compatibility_version: str | None = None) -> None:
    """Run upstream scheduler_perf workloads in-process; report SchedulingThroughput and peak RSS."""
    from kubesched.sim.bench import WORKLOADS, run_workload, upstream_threshold

    features = build_features(emulated_version, feature_gates, min_compatibility_version)
    if list_only:
        v = features.emulated_version
        for name, w in WORKLOADS.items():
            click.echo(f"{name:60s} upstream floor (v{v[0]}.{v[1]}) {upstream_threshold(w, features)} pods/s")
        return
    names = list(WORKLOADS) if "all" in workloads else list(workloads)
    for name in names:
        if name not in WORKLOADS:
            raise InputError(f"unknown workload {name!r}; see 'kubesched bench --list'", "--workload")
    for name in names:
        res = run_workload(name, seed=seed, progress=sys.stderr.isatty(), features=features)
        click.echo(json.dumps(res.to_dict()) if as_json else res.summary())


@main.command()
def version() -> None:
    """Print the version and the upstream behaviour it follows."""
    click.echo(f"kubesched {__version__} (kube-scheduler v{BINARY_VERSION[0]}.{BINARY_VERSION[1]} behaviour; "
               f"--emulated-version {MIN_EMULATED_VERSION[0]}.{MIN_EMULATED_VERSION[1]}–"
               f"{BINARY_VERSION[0]}.{BINARY_VERSION[1]})")


if __name__ == "__main__":  # pragma: no cover
    main()
