"""``plain_lines``: the text of an explanation's tables and lines written without rich is, byte for
byte, what rich prints through a pipe (400 cells wide, no colour, lines right-stripped) — on
tables hypothesis draws (cell texts with wide, combining and non-ASCII characters, markup-like
and emoji-like text, empty cells, right-justified columns, titles longer than the table, tables
wider than the console) and on explanations of a run; where it answers None rich prints."""

from __future__ import annotations

import io
from pathlib import Path

import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich import box
from rich.console import Group
from rich.errors import MarkupError
from rich.table import Table
from rich.text import Text
from tests.sim.test_explain import cluster, node, pod

from kubesched.cli.explain_plain import plain_lines
from kubesched.cli.explain_view import console, explanation_lines, explanation_renderables, print_explanation
from kubesched.sim.explain import Explanation, NodeExplanation, PluginScore, explain_pod
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate


def rich_lines(renderable: object, width: int) -> list[str]:
    """What ``explain_view._print`` writes through rich for a file that is not a terminal."""
    out = io.StringIO()
    con = console(out)
    con.width = width
    with con.capture() as cap:
        con.print(renderable)
    return [line.rstrip() for line in cap.get().splitlines()]


_words = st.one_of(
    st.sampled_from(["node-1", "worker-b-04 (chosen)", "feasible", "rejected", "0 → 100 → 300", "… 38 more",
                     "28 × PodTopologySpread: node(s) didn't match pod topology spread constraints", "",
                     "Insufficient cpu", "[bold]x[/bold]", ":smile:", "a:b:c", "名前", "e\u0301", "tab\there",
                     "x" * 90]),
    st.text(st.sampled_from("abcXYZ019 -_./()':[]→×…名é\u0301"), max_size=14),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12))


@st.composite
def tables(draw: st.DrawFn) -> Table:
    title = draw(st.one_of(st.none(), st.sampled_from(["Filter", "Score (raw → normalized → weighted)"]), _words))
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    n = draw(st.integers(1, 6))
    for i in range(n):
        t.add_column(draw(_words) or f"C{i}", justify=draw(st.sampled_from(["left", "right"])),
                     no_wrap=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 5))):
        cells = [draw(_words) for _ in range(n)]
        t.add_row(*(Text(c, style="green") if draw(st.booleans()) else c for c in cells))
    return t


@settings(max_examples=400, deadline=None)
@given(tables(), st.sampled_from([400, 60, 20]))
def test_a_table_is_what_rich_prints(t: Table, width: int) -> None:
    got = plain_lines(t, width)
    if got is not None:
        assert got == rich_lines(t, width)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_words.map(lambda s: Text("  " + s)), tables()), min_size=1, max_size=4))
def test_a_group_of_lines_and_tables_is_what_rich_prints(parts: list, ) -> None:
    g = Group(*parts)
    got = plain_lines(g, 400)
    if got is not None:
        assert got == rich_lines(g, 400)


def test_the_plain_shapes_are_taken() -> None:
    """The fast path is taken for what explanations print (else it would prove nothing)."""
    t = Table(title="Filter", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("NODE", no_wrap=True)
    t.add_column("TOTAL", justify="right")
    t.add_row(Text("n1 (chosen)", style="bold green"), "0 → 100 → 300")
    assert plain_lines(t, 400) == rich_lines(t, 400)
    assert plain_lines(Text("  " + "x" * 500), 400) is None  # rich wraps it
    zero = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    zero.add_column("\u0301")  # no width at all: rich still gives the column a cell
    assert plain_lines(zero, 400) is None


def test_explanations_of_a_run_are_what_rich_prints(tmp_path: Path) -> None:
    objs = cluster() + [node(f"t{i}", "64", "a", taint=True) for i in range(6)] + [
        pod(f"w{i}", "300m") for i in range(5)]
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    res = simulate(load_manifests([str(p)]), record=True)
    assert res.records
    taken = 0
    for key in res.records:
        for cap in (0, 2, 30):
            ex = explain_pod(res, key, max_nodes=cap)
            g = Group(*explanation_renderables(ex, max_nodes=cap))
            got = plain_lines(g, 400)
            taken += got is not None
            assert explanation_lines(ex, max_nodes=cap) == got
            out = io.StringIO()
            print_explanation(ex, max_nodes=cap, file=out)
            assert out.getvalue() == "\n".join(rich_lines(g, 400)) + "\n"
    assert taken


@st.composite
def explanations(draw: st.DrawFn) -> Explanation:
    plugins = draw(st.lists(st.one_of(st.sampled_from(["NodeResourcesFit", "ImageLocality", "[x]"]), _words),
                            max_size=3, unique=True))
    names = draw(st.lists(_words.filter(bool), min_size=0, max_size=6, unique=True))
    sel = draw(st.sampled_from([None, *names]))
    run = draw(st.sampled_from([None, *[n for n in names if n != sel]]))
    nodes = []
    for rank, n in enumerate(names, 1):
        scored = draw(st.booleans())
        nodes.append(NodeExplanation(
            node=n, feasible=draw(st.booleans()), reasons=draw(st.lists(_words, max_size=2)),
            scores=[PluginScore(p, draw(st.integers(-5, 500)), draw(st.integers(0, 100)), draw(st.integers(0, 900)))
                    for p in plugins if draw(st.booleans())] if scored else [],
            total=draw(st.integers(0, 3000)) if scored else None, rank=rank if scored else None,
            selected=n == sel, runner_up=n == run))
    return Explanation(pod=draw(_words), profile=draw(st.sampled_from(["", "default-scheduler", "名前"])),
                       attempt=draw(st.integers(0, 3)), result=draw(st.sampled_from(["scheduled", "preempted", ""])),
                       message=draw(_words), selected_node=sel, runner_up=run, margin=draw(st.none() | st.integers()),
                       selected_ties=draw(st.integers(0, 2)), total_nodes=draw(st.none() | st.integers(0, 9)),
                       evaluated_nodes=len(names), feasible_nodes=draw(st.integers(0, 9)), plugins=plugins,
                       weights={p: draw(st.integers(1, 3)) for p in plugins if draw(st.booleans())}, nodes=nodes,
                       nodes_omitted=draw(st.integers(0, 3)),
                       omitted_reasons=draw(st.dictionaries(_words, st.integers(1, 4), max_size=3)))


@settings(max_examples=300, deadline=None)
@given(explanations(), st.sampled_from([0, 1, 2, 30]))
def test_explanation_lines_are_what_rich_prints(ex: Explanation, cap: int) -> None:
    """``explanation_lines`` (no rich objects) writes what rich prints for ``explanation_renderables``."""
    g = Group(*explanation_renderables(ex, max_nodes=cap))
    try:
        want = rich_lines(g, 400)
    except MarkupError:  # (rich itself fails on text like "[/]": not a case of the fast path)
        assume(False)
    got = explanation_lines(ex, max_nodes=cap)
    if got is not None:
        assert got == want
    out = io.StringIO()
    print_explanation(ex, max_nodes=cap, file=out)
    assert out.getvalue() == "\n".join(want) + "\n"
