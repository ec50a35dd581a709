"""Human-readable explanations: ``simulate --explain NS/POD``, ``-o wide``, the preemption list.

The data comes from :mod:`kubesched.sim.explain`; this module only lays it out (rich tables,
plain text when stdout is not a terminal). :func:`explanation_renderables` is the reusable
piece: any command holding a :class:`~kubesched.sim.explain.Explanation` can print it.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, NamedTuple

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from kubesched.cli.explain_plain import grid_lines, plain_lines, str_cell, text_cell
from kubesched.sim.explain import Explanation, PodSummary, preemption_lines

__all__ = ["PIPE_WIDTH", "console", "emit_explanations", "explanation_lines", "explanation_renderables",
           "print_explanation", "print_preemptions", "print_wide"]


#: The console width when stdout is not a terminal: wide enough not to wrap rows.
PIPE_WIDTH = 400


def console(file: Any = None) -> Console:
    """A console for tables: terminal width on a tty, otherwise wide enough not to wrap rows."""
    out = file or sys.stdout
    tty = out.isatty()
    return Console(file=out, highlight=False, width=None if tty else PIPE_WIDTH, no_color=not tty,
                   soft_wrap=False)


def _score_cell(s: Any) -> str:
    return f"{s.raw} → {s.normalized} → {s.weighted}"


_Segments = tuple[tuple[str, str | None], ...]
"""A :class:`~rich.text.Text` as ``(text, style)`` pieces: ``Text(first)``, the others appended."""
_Cell = str | _Segments  # a str cell (rich reads markup in it) or a Text


class _TableSpec(NamedTuple):
    """One of an explanation's ``box.SIMPLE_HEAD`` tables, before it is a rich :class:`Table`:
    ``columns``: (header, right-justified, no_wrap)."""

    title: str
    columns: list[tuple[str, bool, bool]]
    rows: list[list[_Cell]]


def _explanation_parts(ex: Explanation, max_nodes: int) -> tuple[_Segments, list[str], list[_TableSpec]]:
    """What :func:`explanation_renderables` shows: the headline, the lines under it (without
    their indent) and the tables."""
    head: list[tuple[str, str | None]] = [("", None), (f"pod {ex.pod}", "bold")]
    if ex.attempt:
        head.append((f" — attempt {ex.attempt}", None))
    if ex.profile:
        head.append((f" (profile {ex.profile})", None))
    head.append((": ", None))
    if ex.result == "scheduled" and ex.selected_node:
        head.append((f"scheduled on {ex.selected_node}", "green"))
    elif ex.result == "preempted":
        head.append(("preempted", "red"))
    else:
        head.append((ex.result or "not scheduled", "red"))
    lines: list[str] = []
    if ex.attempt:
        nodes = f"{ex.total_nodes} nodes, " if ex.total_nodes is not None else ""
        lines.append(f"{nodes}{ex.evaluated_nodes} evaluated, {ex.feasible_nodes} feasible")
    if ex.scoring_skipped:
        lines.append("only one feasible node: scoring skipped (as upstream)")
    elif ex.plugins:
        idle = [p for p in ex.weights if p not in ex.plugins]
        if idle:
            lines.append(f"Score plugins skipped by their PreScore (nothing to score for this pod): {', '.join(idle)}")
    if ex.runner_up:
        sel = next((n for n in ex.nodes if n.selected), None)
        run = next((n for n in ex.nodes if n.runner_up), None)
        if sel is not None and run is not None and ex.margin is not None:
            line = f"chosen {sel.node} (total {sel.total}"
            if ex.selected_ties:
                line += f", tied with {ex.selected_ties} other node(s): picked at random, seeded by --seed"
            line += f"); runner-up {run.node} (total {run.total}, {ex.margin} behind"
            if ex.runner_up_ties:
                line += f", tied with {ex.runner_up_ties} other node(s)"
            lines.append(line + ")")
        elif run is not None:
            lines.append(f"best scored: {run.node} (total {run.total})")
    nominated_before = ex.history[-1].get("nominatedNode") if ex.history else None
    if ex.total_nodes is not None and ex.attempt and ex.evaluated_nodes < ex.total_nodes and not ex.pre_filter:
        skipped = ex.total_nodes - ex.evaluated_nodes
        if nominated_before and ex.evaluated_nodes == 1 and ex.selected_node == nominated_before:
            lines.append(f"the nominated node {nominated_before} was evaluated first and fits, so the other "
                         f"{skipped} node(s) were not evaluated (upstream evaluateNominatedNode)")
        else:
            lines.append(f"{skipped} node(s) not evaluated "
                         "(percentageOfNodesToScore: enough feasible nodes were found)")
    if ex.message:
        lines.append(f"message: {ex.message}")
    for plugin, msg in ex.pre_filter.items():
        lines.append(f"PreFilter {plugin} rejected the pod: {msg}")
    if ex.post_filter:
        pf = ex.post_filter
        txt = f"PostFilter {pf.get('plugin') or ''}: {pf.get('status', '')}".rstrip()
        if pf.get("message"):
            txt += f" — {pf['message']}"
        if pf.get("nominatedNodeName"):
            txt += f" (nominated node {pf['nominatedNodeName']})"
        lines.append(txt)
    lines.extend(group_lines(ex.group))
    for h in ex.history:
        txt = f"earlier attempt {h['attempt']}: {h['result']}"
        if h.get("node"):
            txt += f" on {h['node']}"
        if h.get("nominatedNode"):
            txt += f", nominated to {h['nominatedNode']}"
        if h.get("message"):
            txt += f" — {h['message']}"
        lines.append(txt)
    for line in preemption_lines(ex.preempted):
        lines.append(f"preempted: {line}")
    if ex.preempted_by is not None:
        pb = ex.preempted_by
        lines.append(f"this pod (priority {pb.victim_priority}) was evicted by {pb.preemptor} "
                     f"(priority {pb.preemptor_priority}) on node {pb.node}")
    tables: list[_TableSpec] = []
    if not ex.nodes:
        return tuple(head), lines, tables
    cap = max_nodes if max_nodes > 0 else len(ex.nodes)
    shown = ex.nodes[:cap] + [n for n in ex.nodes[cap:] if n.selected or n.runner_up]
    frows: list[list[_Cell]] = [[_node_label(n), (("feasible", "green"),) if n.feasible else (("rejected", "red"),),
                                 "; ".join(n.reasons)] for n in shown]
    more = ex.nodes_omitted + len(ex.nodes) - len(shown)
    if more:
        counts = Counter(ex.omitted_reasons)
        for n in ex.nodes[cap:]:  # (those not shown: an explanation's nodes are distinct)
            if not (n.selected or n.runner_up):
                counts.update(n.reasons or ["feasible"])
        summary = ", ".join(f"{c} × {r}" for r, c in counts.most_common(5))
        frows.append([f"… {more} more", "", summary])
    tables.append(_TableSpec("Filter", [("NODE", False, True), ("VERDICT", False, True), ("REASONS", False, False)],
                             frows))
    scored = [n for n in shown if n.total is not None]
    if scored:
        columns = [("RANK", True, True), ("NODE", False, True), ("TOTAL", True, True)]
        for p in ex.plugins:
            w = ex.weights.get(p)
            columns.append((f"{p} ×{w}" if w is not None else p, True, True))
        srows: list[list[_Cell]] = []
        for n in scored:
            by_plugin = {s.plugin: s for s in n.scores}
            srows.append([str(n.rank), _node_label(n), str(n.total),
                          *(_score_cell(by_plugin[p]) if p in by_plugin else "" for p in ex.plugins)])
        tables.append(_TableSpec("Score (raw → normalized → weighted)", columns, srows))
    return tuple(head), lines, tables


def _text(segments: _Segments) -> Text:
    (first, style), *rest = segments
    t = Text(first, style=style or "")
    for piece, st in rest:
        t.append(piece, style=st)
    return t


def _rich_table(spec: _TableSpec) -> Table:
    t = Table(title=spec.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for header, right, no_wrap in spec.columns:
        t.add_column(header, justify="right" if right else "left", no_wrap=no_wrap)
    for row in spec.rows:
        t.add_row(*(c if isinstance(c, str) else _text(c) for c in row))
    return t


def explanation_renderables(ex: Explanation, *, max_nodes: int = 30) -> list[RenderableType]:
    """The explanation of one attempt: a headline, then a Filter table (verdict and reasons per
    node) and a Score table (each Score plugin's raw → normalized → weighted score, the total,
    the rank; the chosen node and the runner-up marked). ``max_nodes`` caps the rows of each
    table (0 = no cap); the rest is summarised by reason."""
    head, lines, tables = _explanation_parts(ex, max_nodes)
    out: list[RenderableType] = [_text(head)]
    out.extend(Text("  " + ln) for ln in lines)
    out.extend(_rich_table(t) for t in tables)
    return out


def explanation_lines(ex: Explanation, *, max_nodes: int = 30, width: int = PIPE_WIDTH) -> list[str] | None:
    """The lines (right-stripped) :func:`print_explanation` writes for a file that is not a
    terminal — :func:`explanation_renderables` through rich ``width`` cells wide without colour —
    laid out without building rich objects; None when only rich can tell (see
    :mod:`kubesched.cli.explain_plain`)."""
    head, lines, tables = _explanation_parts(ex, max_nodes)
    out: list[str] = []
    for text in ("".join(piece for piece, _ in head), *("  " + ln for ln in lines)):
        if not text.isprintable() or cell_len(text) > width:
            return None
        out.append(text.rstrip())
    for spec in tables:
        title = str_cell(spec.title)
        grid: list[list[str]] = []
        for j, (header, _, _) in enumerate(spec.columns):
            cells = [str_cell(header)]
            cells += [str_cell(c) if isinstance(c, str) else text_cell("".join(p for p, _ in c))
                      for c in (row[j] for row in spec.rows)]
            if title is None or None in cells:
                return None
            grid.append(cells)  # type: ignore[arg-type]
        tl = grid_lines(title, grid, [right for _, right, _ in spec.columns], width) if grid else None
        if tl is None:
            return None
        out += tl
    return out


def _node_label(n: Any) -> _Segments:
    if n.selected:
        return (n.node, None), (" (chosen)", "bold green")
    if n.runner_up:
        return (n.node, None), (" (runner-up)", "yellow")
    return ((n.node, None),)


def _print(renderable: RenderableType, file: Any = None) -> None:
    """Print through rich, without the padding rich adds up to the console width."""
    out = file or sys.stdout
    con = console(out)
    if out.isatty():
        con.print(renderable)
        return
    lines = plain_lines(renderable, con.width)  # the same text, without rich's layout engine
    if lines is not None:
        out.write("\n".join(lines) + "\n")
        return
    with con.capture() as cap:
        con.print(renderable)
    out.write("\n".join(line.rstrip() for line in cap.get().splitlines()) + "\n")


def print_explanation(ex: Explanation, *, max_nodes: int = 30, file: Any = None) -> None:
    """Print :func:`explanation_renderables` of ``ex`` (through a pipe: :func:`explanation_lines`
    when it can tell)."""
    out = file or sys.stdout
    if not out.isatty():
        lines = explanation_lines(ex, max_nodes=max_nodes)
        if lines is not None:
            out.write("\n".join(lines) + "\n")
            return
    _print(Group(*explanation_renderables(ex, max_nodes=max_nodes)), file)


def print_wide(summaries: list[PodSummary], *, file: Any = None) -> None:
    """``-o wide``: one row per pending pod with its node and score, the runner-up and its score,
    feasible/evaluated nodes, attempts, nominated node, the pods it preempted and the message
    (a rich table on a terminal, aligned plain text otherwise — rich is slow for many rows)."""
    out = file or sys.stdout
    scheduled = sum(1 for s in summaries if s.node)
    title = f"{len(summaries)} pending pods: {scheduled} scheduled, {len(summaries) - scheduled} unschedulable"
    cols = ("POD", "NODE", "SCORE", "RUNNER-UP", "SCORE", "FEASIBLE", "ATTEMPTS", "NOMINATED", "PREEMPTED", "MESSAGE")
    rows = [(s.pod, s.node or "<pending>", _opt(s.score), s.runner_up or "", _opt(s.runner_up_score),
             f"{s.feasible_nodes}/{s.evaluated_nodes}" if s.evaluated_nodes is not None else "", str(s.attempts),
             s.nominated_node or "", ",".join(s.preempted), "" if s.node else s.message) for s in summaries]
    if out.isatty():
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for col in cols:
            t.add_column(col, no_wrap=col != "MESSAGE", justify="right" if col in ("SCORE", "ATTEMPTS") else "left")
        for r in rows:
            t.add_row(*r[:1], Text(r[1], style="red") if r[1] == "<pending>" else r[1], *r[2:])
        console(out).print(t)
        return
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols[:-1])]
    right = {2, 4, 6}

    def line(cells: tuple[str, ...]) -> str:
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return ("  ".join(parts) + "  " + cells[-1]).rstrip()

    out.write(f"# {title}\n{line(cols)}\n")
    out.write("".join(line(r) + "\n" for r in rows))


def _opt(v: int | None) -> str:
    return "" if v is None else str(v)


def print_preemptions(lines: list[str], *, prefix: str = "# ", file: Any = None) -> None:
    """One line per eviction (nothing when there was none)."""
    out = file or sys.stdout
    if not lines:
        return
    print(f"{prefix}{len(lines)} pod(s) preempted (deleted from the output):", file=out)
    for ln in lines:
        print(f"{prefix}  {ln}", file=out)


def emit_explanations(result: Any, keys: list[str], records: dict[str, list[Any]], fmt: str, *,
                      max_nodes: int = 30, file: Any = None) -> None:
    """``simulate --explain``: each pod's explanation, as tables (``table``/``wide``) or as one
    JSON/YAML document (a list when several pods are asked for). Raises
    :class:`~kubesched.errors.InputError` for a pod that is not in the input or was never attempted."""
    from kubesched.sim.explain import explain_pod

    exps = [explain_pod(result, k, records.get(k), max_nodes=max_nodes) for k in keys]
    out = file or sys.stdout
    if fmt in ("json", "yaml"):
        data: Any = [e.to_dict() for e in exps]
        if len(data) == 1:
            data = data[0]
        if fmt == "json":
            import json

            out.write(json.dumps(data, indent=2) + "\n")
        else:
            import yaml

            out.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        return
    for i, e in enumerate(exps):
        if i:
            out.write("\n")
        print_explanation(e, max_nodes=max_nodes, file=out)


def group_lines(group: dict[str, Any] | None) -> list[str]:
    """The pod-group decision of an attempt (:attr:`kubesched.framework.record.DecisionRecord.group`)
    as text lines: the group and its policy, the outcome, each generated placement with its result
    and scores, the chosen one."""
    if not group:
        return []
    policy = group.get("policy", "")
    if group.get("minCount") is not None:
        policy += f" minCount={group['minCount']}"
    out = [f"pod group {group.get('podGroup')} ({policy}; {group.get('members')} member(s) in this cycle): "
           f"{group.get('result')}" + (f" — {group['message']}" if group.get("message") else "")]
    parents = group.get("compositePodGroups")
    if parents:  # CompositePodGroup: the tree above the group, parent first
        out.append("  in composite pod group " + " ← ".join(
            f"{p.get('name')} ({p.get('policy')}"
            + (f" minGroupCount={p['minGroupCount']}" if p.get("minGroupCount") is not None else "") + ")"
            for p in parents))
    placements = group.get("placements")
    if placements is not None:
        out.append(f"  placements generated: {len(placements)}"
                   + (f"; chosen: {group['chosenPlacement']}" if group.get("chosenPlacement") else ""))
        for p in placements:
            txt = f"  - {p.get('name') or '(all nodes)'} ({p.get('nodes')} node(s)): "
            txt += "feasible" if p.get("feasible") else f"infeasible — {p.get('status', '')}"
            if p.get("scores"):
                txt += ", scores " + ", ".join(f"{k} {v}" for k, v in p["scores"].items())
                txt += f", total {p.get('total')}"
            if p.get("chosen"):
                txt += "  ← chosen"
            out.append(txt)
    return out
