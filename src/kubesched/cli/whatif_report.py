"""Plain-text output of the what-if commands (``simulate --add-nodes``, ``compare``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["add_nodes_summary", "print_add_nodes", "print_compare", "print_rows"]


def print_rows(header: list[str], rows: list[list[str]], out: Callable[[str], None] = click.echo) -> None:
    """Plain aligned columns (kubectl style: two spaces between columns)."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    for r in [header, *rows]:
        out("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def add_nodes_summary(est: Any) -> str:
    """One line: how many template nodes the pending pods need."""
    line = (f"add-nodes: {len(est.nodes)} node(s) of template {est.template} take "
            f"{len(est.placements)} of {est.pending} pending pod(s)")
    if est.unplaced:
        line += f"; {len(est.unplaced)} cannot fit the template"
    return line


def print_add_nodes(est: Any) -> None:
    """The estimate after the simulation table: nodes needed, each pod's node, pods the template cannot take."""
    click.echo("")
    click.echo(f"# {add_nodes_summary(est)}")
    if est.daemonsets:
        click.echo(f"# each new node also runs the pod of DaemonSet(s) {', '.join(est.daemonsets)}")
    if est.placements:
        print_rows(["POD", "NEW NODE"], [[k, n] for k, n in est.placements])
    if est.unplaced:
        click.echo("# pods no node of this template can take:")
        print_rows(["POD", "REASON"], [[k, r] for k, r in est.unplaced])


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def print_compare(res: Any, limit: int) -> None:
    """Both runs side by side, then the pods placed differently and why."""
    a, b = res.a, res.b
    rows = [["scheduled", str(a.scheduled), str(b.scheduled)],
            ["unschedulable", str(a.unschedulable), str(b.unschedulable)]]
    for r in sorted(set(a.utilisation) | set(b.utilisation), key=lambda x: (x not in ("cpu", "memory", "pods"), x)):
        rows.append([f"{r} utilisation", _pct(a.utilisation.get(r, 0.0)), _pct(b.utilisation.get(r, 0.0))])
    rows += [["nodes in use", f"{a.nodes_used}/{a.nodes}", f"{b.nodes_used}/{b.nodes}"],
             ["node skew (pods, max-min)", str(a.node_skew), str(b.node_skew)],
             ["cpu utilisation spread", _pct(a.cpu_spread), _pct(b.cpu_spread)]]
    if len(a.zone_pods) > 1 or len(b.zone_pods) > 1:
        rows.append(["zone skew (pods, max-min)", str(a.zone_skew), str(b.zone_skew)])
        for z in sorted(set(a.zone_pods) | set(b.zone_pods)):
            rows.append([f"  pods in zone {z or '<none>'}", str(a.zone_pods.get(z, 0)), str(b.zone_pods.get(z, 0))])
    print_rows(["", a.label.upper(), b.label.upper()], rows)
    click.echo("")
    diffs = res.differences
    click.echo(f"# {len(diffs)} pod(s) placed differently")
    shown = diffs if limit == 0 else diffs[:limit]
    if shown:
        print_rows(["POD", a.label.upper(), b.label.upper(), f"WHY ({a.label})", f"WHY ({b.label})"],
                   [[d.pod, d.nodes[0] or "<pending>", d.nodes[1] or "<pending>", d.why[0], d.why[1]]
                    for d in shown])
    if len(shown) < len(diffs):
        click.echo(f"# … {len(diffs) - len(shown)} more (--limit 0 shows all, -o json lists them)")
