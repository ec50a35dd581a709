"""Human-readable output of ``simulate`` and ``replay`` (rich tables on a terminal, plain text otherwise)."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["print_replay", "print_simulation"]


def _console() -> Console:
    return Console(highlight=False, soft_wrap=not sys.stdout.isatty())


def print_simulation(result: Any) -> None:
    """One line per pending pod: the node it went to, or why it is still pending."""
    console = _console()
    outcomes = result.outcomes
    scheduled = [o for o in outcomes if o.node]
    pending = [o for o in outcomes if not o.node]
    owned = any(getattr(o, "owner", "") for o in outcomes)  # a CONTROLLER column when any pod has one
    if sys.stdout.isatty():
        table = Table(title=f"{len(outcomes)} pending pods: {len(scheduled)} scheduled, {len(pending)} unschedulable",
                      show_lines=False)
        table.add_column("POD", no_wrap=True)
        if owned:
            table.add_column("CONTROLLER", no_wrap=True)
        table.add_column("NODE", no_wrap=True)
        table.add_column("MESSAGE")
        for o in outcomes:
            row = [o.key, o.owner or "-"] if owned else [o.key]
            table.add_row(*row, o.node or "[red]<pending>[/red]", "" if o.node else o.message)
        console.print(table)
    else:
        print(f"# {len(outcomes)} pending pods: {len(scheduled)} scheduled, {len(pending)} unschedulable")
        width = max((len(o.key) for o in outcomes), default=3)
        owidth = max((len(o.owner) for o in outcomes), default=10)
        ctl = f"{'CONTROLLER':{owidth}}  " if owned else ""
        print(f"{'POD':{width}}  {ctl}{'NODE':20}  MESSAGE")
        for o in outcomes:
            ctl = f"{(o.owner or '-'):{owidth}}  " if owned else ""
            print(f"{o.key:{width}}  {ctl}{(o.node or '<pending>'):20}  {'' if o.node else o.message}")
    for notice in getattr(result, "notices", []):
        print(f"# notice: {notice}")
    if result.other_scheduler_pods:
        print(f"# notice: {len(result.other_scheduler_pods)} pending pod(s) name a scheduler with no profile here "
              f"and were left alone: {', '.join(result.other_scheduler_pods)}")
    print(f"# {result.attempts} scheduling attempts")


#: Never-scheduled pods named after the replay table (all of them are in ``--json``).
_NEVER_SHOWN = 20


def print_replay(summary: Any) -> None:
    d = summary.to_dict()
    console = _console()
    table = Table(title="replay summary", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    never = d.pop("never_scheduled_pods", [])
    for k, v in d.items():
        if k.startswith("alloc_") and isinstance(v, float):
            v = f"{100 * v:.3f} %"
        elif isinstance(v, float):
            v = f"{v:,.3f}"
        elif isinstance(v, int):
            v = f"{v:,}"
        table.add_row(k.replace("_", " "), str(v))
    console.print(table)
    if never:
        shown = ", ".join(never[:_NEVER_SHOWN])
        extra = len(never) - _NEVER_SHOWN
        more = f", … and {extra:,} more (--json lists them all)" if extra > 0 else ""
        console.print(f"never scheduled: {shown}{more}", highlight=False, soft_wrap=True)
