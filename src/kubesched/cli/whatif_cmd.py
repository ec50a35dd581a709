"""``kubesched capacity`` and ``kubesched compare``: what-if questions on a set of manifests.

Both load the cluster exactly as ``simulate`` does (``-f`` files or directories, ``--config``,
``--plugin``, ``--seed``) and print a table, or the report as JSON / YAML with ``-o``.
Bad input prints one ``error: …`` line and exits 2; results (even "0 replicas fit") exit 0.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from kubesched.cli._features import build_features, feature_gate_options
from kubesched.cli._inputs import plugin_registry
from kubesched.cli.whatif_report import print_rows
from kubesched.errors import InputError, KubeschedError

__all__ = ["capacity_command", "compare_command", "friendly"]


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Input and kubesched errors → one ``error: …`` line on stderr, exit 2; a closed pipe → exit 0."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (InputError, KubeschedError) as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except BrokenPipeError:
            sys.exit(0)

    return wrapper


def _config(path: str | None, features: Any = None) -> Any:
    from kubesched.config import load_config

    return load_config(path, features)


def emit(doc: Any, fmt: str) -> None:
    """Write a report as JSON or YAML on stdout."""
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


_common = [
    click.option("-f", "--filename", "paths", multiple=True, required=True,
                 help="Cluster manifests: file or directory (as simulate). Repeatable."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed for score tie-breaking."),
    click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
                 help="Load an out-of-tree Python plugin (as simulate)."),
]


def _with_common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = feature_gate_options(fn)
    for opt in reversed(_common):
        fn = opt(fn)
    return fn


@click.command("capacity")
@_with_common
@click.option("--pod", "pod_path", required=True, type=click.Path(dir_okay=False),
              help="The Pod whose replicas to place (one Pod manifest).")
@click.option("--max", "max_replicas", type=click.IntRange(min=1), default=None,
              help="Stop after this many replicas (default: until one does not fit).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")
@click.option("-o", "--output", type=click.Choice(["table", "yaml", "json"]), default="table", show_default=True)
@friendly
def capacity_command(paths: tuple[str, ...], seed: int, plugins: tuple[str, ...], pod_path: str,
                     max_replicas: int | None, config_path: str | None, output: str,
                     emulated_version: str | None = None, feature_gates: tuple[str, ...] = (),
                     min_compatibility_version: str | None = None) -> None:
    """How many more replicas of a pod fit, on which nodes, and what stopped them (cluster-capacity)."""
    from kubesched.sim.capacity import capacity, format_quantity, load_template_pod
    from kubesched.sim.manifests import load_manifests

    features = build_features(emulated_version, feature_gates, min_compatibility_version)
    config = _config(config_path, features)
    raws = load_manifests(list(paths))
    template = load_template_pod(load_manifests([pod_path], allow_duplicates=True), pod_path)
    res = capacity(raws, template, config, seed=seed, registry=plugin_registry(plugins), max_replicas=max_replicas,
                   features=features)
    if output != "table":
        emit(res.to_dict(), output)
        return
    reqs = ", ".join(f"{k} {format_quantity(k, v)}" for k, v in res.requests.items() if v) or "nothing"
    click.echo(f"{res.pod_name} pod requests: {reqs}")
    click.echo(f"The cluster can schedule {res.replicas} instance(s) of the pod {res.pod_name}.")
    click.echo(f"Termination reason: {res.fail_type}: {res.fail_message}")
    if res.nominated_node:
        click.echo(f"(the next replica preempted pods and was nominated to node {res.nominated_node}; "
                   "the table does not count that preemption)")
    if res.pending_scheduled or res.pending_unschedulable:
        click.echo(f"(the input's own pending pods went first: {res.pending_scheduled} scheduled, "
                   f"{res.pending_unschedulable} unschedulable)")
    click.echo("")
    header = ["NODE", "REPLICAS"] + [f"{r.upper()} LEFT" for r in res.resources]
    rows = [[n.name, str(n.replicas)] + [format_quantity(r, n.remaining[r]) for r in res.resources]
            for n in res.nodes]
    print_rows(header, rows)


@click.command("compare")
@_with_common
@click.option("--config", "config_paths", multiple=True, type=click.Path(dir_okay=False),
              help="A KubeSchedulerConfiguration; give two (or, with --versions, at most one).")
@click.option("--versions", default=None, metavar="A,B",
              help="Compare two releases instead of two configurations: the same input (and --config, "
                   "defaulted per release) decided as kube-scheduler A and B, e.g. 1.34,1.37.")
@click.option("-o", "--output", type=click.Choice(["table", "yaml", "json"]), default="table", show_default=True)
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="Table output: list at most this many differently placed pods (0 = all).")
@friendly
def compare_command(paths: tuple[str, ...], seed: int, plugins: tuple[str, ...], config_paths: tuple[str, ...],
                    output: str, limit: int, versions: str | None = None, emulated_version: str | None = None,
                    feature_gates: tuple[str, ...] = (), min_compatibility_version: str | None = None) -> None:
    """Run the same cluster through two scheduler configurations (or two releases) and show where
    they differ."""
    from kubesched.sim.compare import compare
    from kubesched.sim.manifests import load_manifests

    if versions is not None:
        parts = [v.strip() for v in versions.split(",")]
        if len(parts) != 2 or not all(parts):
            raise InputError(f"expected two releases, e.g. 1.34,1.37, got {versions!r}", "--versions")
        if emulated_version is not None:
            raise InputError("--versions names both releases: drop --emulated-version", "--emulated-version")
        if len(config_paths) > 1:
            raise InputError(f"with --versions give at most one --config, got {len(config_paths)}", "--config")
        fa, fb = (build_features(v, feature_gates, min_compatibility_version) for v in parts)
        path = config_paths[0] if config_paths else None
        configs = [_config(path, fa), _config(path, fb)]
        labels = (f"v{parts[0]}", f"v{parts[1]}")
    else:
        if len(config_paths) != 2:
            raise InputError(f"give exactly two --config files, got {len(config_paths)}", "--config")
        fa = fb = build_features(emulated_version, feature_gates, min_compatibility_version)
        configs = [_config(p, fa) for p in config_paths]
        labels = _labels(config_paths)
    raws = load_manifests(list(paths))
    res = compare(raws, configs[0], configs[1], labels=labels, seed=seed, registry=plugin_registry(plugins),
                  features=fa, features_b=fb)
    if output != "table":
        emit(res.to_dict(), output)
        return
    from kubesched.cli.whatif_report import print_compare

    print_compare(res, limit)


def _labels(paths: tuple[str, ...]) -> tuple[str, str]:
    from pathlib import Path

    a, b = Path(paths[0]).stem, Path(paths[1]).stem
    if a == b:
        return "A", "B"
    return a, b
