"""``--explain``'s tables as plain text without rich's layout engine, for output that is not a terminal.

:func:`kubesched.cli.explain_view.explanation_renderables` builds rich renderables (lines of
:class:`~rich.text.Text` and ``box.SIMPLE_HEAD`` tables); through a pipe they are printed 400
cells wide with no colour and each line right-stripped. Laying such a table out is simple as long
as everything fits — each column as wide as its widest cell, cells padded by one space, the
outer padding dropped (``pad_edge=False``) — but rich spends ~1 ms a table measuring and
rendering segments, which made ``--explain`` over hundreds of pods mostly rich.
:func:`plain_lines` writes the same text directly, and answers None (print through rich) for
anything it does not lay out exactly as rich would: a line or table wider than the console,
a title wider than its table, text that rich would read as markup or emoji codes, tabs, control
or other non-printable characters, any table option other than the ones explanations use.
tests/cli/test_explain_plain.py compares it with rich's own output on tables hypothesis draws.
"""

from __future__ import annotations

import re
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

__all__ = ["grid_lines", "plain_lines", "str_cell", "text_cell"]

#: What rich's markup or emoji replacement might change in a ``str`` cell: a ``[`` (a tag or an
#: escaped one) or ``:name:``.
_MARKUPISH = re.compile(r"\[|:\S*:")


def str_cell(text: str) -> str | None:
    """The text a ``str`` cell (or title, or header) shows — rich reads it as markup — or None
    when rich might show something else."""
    return None if _MARKUPISH.search(text) or not text.isprintable() else text


def text_cell(text: str) -> str | None:
    """The text a :class:`~rich.text.Text` cell of plain text ``text`` shows, or None."""
    return text if text.isprintable() else None


def _cell_text(cell: Any) -> str | None:
    """The text a cell shows; None when rich might show something else (markup, emoji codes,
    control characters, several lines)."""
    if isinstance(cell, Text):
        return text_cell(cell.plain)
    if isinstance(cell, str):
        return str_cell(cell)
    return None


def _text_lines(t: Text, width: int) -> list[str] | None:
    text = t.plain
    if not text.isprintable() or cell_len(text) > width or t.justify not in (None, "default", "left") \
            or t.overflow not in (None, "fold") or t.no_wrap:
        return None
    return [text.rstrip()]


def _table_lines(t: Table, width: int) -> list[str] | None:
    """``t`` as rich prints it without colour (lines right-stripped), if it is a table of the
    one shape explanations use; else None."""
    if (t.box is not box.SIMPLE_HEAD or t.pad_edge or not t.show_header or not t.show_edge or t.show_footer
            or t.show_lines or t.expand or t.width is not None or t.min_width is not None or t.caption
            or t.collapse_padding or t.leading or t.row_styles or t.padding != (0, 1, 0, 1)
            or any(r.style or r.end_section for r in t.rows)):
        return None
    columns = t.columns
    if not columns:
        return None
    grid: list[list[str]] = []
    justify: list[bool] = []  # right-justified
    for col in columns:
        if col.width is not None or col.min_width is not None or col.max_width is not None or col.ratio \
                or col.justify not in ("left", "right") or col.vertical != "top":
            return None
        head = _cell_text(col.header)
        if head is None:
            return None
        cells = [head]
        for c in col.cells:
            txt = _cell_text(c)
            if txt is None:
                return None
            cells.append(txt)
        grid.append(cells)
        justify.append(col.justify == "right")
    title: str | None = None
    if t.title:  # rich prints no title line for an empty one
        title = _cell_text(t.title)
        if title is None or t.title_justify != "left":
            return None
    return grid_lines(title, grid, justify, width)


def _width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)  # (printable ASCII: one cell a character)


def grid_lines(title: str | None, grid: list[list[str]], right: list[bool], width: int) -> list[str] | None:
    """A ``box.SIMPLE_HEAD``, ``pad_edge=False`` table as rich prints it without colour (lines
    right-stripped): ``grid`` per column, the header then the cells as shown (:func:`str_cell`,
    :func:`text_cell`), ``right``: right-justified columns, ``title`` (left-justified; None: no
    title line). None when rich would lay it out otherwise (wider than ``width``, a title wider
    than the table, an empty column)."""
    cell_widths = [list(map(_width, cells)) for cells in grid]
    widths = [max(ws) for ws in cell_widths]
    inner = sum(widths) + 3 * (len(widths) - 1)
    if inner + 2 > width or min(widths) < 1:  # (rich gives a column at least one cell)
        return None
    if title is not None and _width(title) > inner + 2:
        return None
    rows = []
    for i in range(len(grid[0])):
        parts = []
        for texts, ws, w, r in zip(grid, cell_widths, widths, right):
            cell = texts[i]
            if r:
                if cell[-1:].isspace():  # rich strips a right-justified cell first
                    cell = cell.rstrip()
                    parts.append(" " * (w - _width(cell)) + cell)
                else:
                    parts.append(" " * (w - ws[i]) + cell)
            else:
                parts.append(cell + " " * (w - ws[i]))
        rows.append((" " + "   ".join(parts)).rstrip())
    out = [title.rstrip()] if title is not None else []
    out += ["", rows[0], " " + "─" * inner, *rows[1:], ""]
    return out


def plain_lines(renderable: Any, width: int) -> list[str] | None:
    """The lines (right-stripped) rich prints for ``renderable`` — a :class:`~rich.text.Text`,
    a table of explanations' shape or a :class:`~rich.console.Group` of them — on a console
    ``width`` cells wide without colour; None when only rich can tell."""
    if isinstance(renderable, Group):
        out: list[str] = []
        for r in renderable.renderables:
            lines = plain_lines(r, width)
            if lines is None:
                return None
            out += lines
        return out
    if isinstance(renderable, Text):
        return _text_lines(renderable, width)
    if isinstance(renderable, Table):
        return _table_lines(renderable, width)
    return None
