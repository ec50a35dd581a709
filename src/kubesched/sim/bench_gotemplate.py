"""Go ``text/template`` for scheduler_perf's templates: the subset upstream's v1.37.2
``test/integration/scheduler_perf`` templates use, executed as Go's ``text/template`` does, and
``operations.go`` ``getTemplateFuncs``.

No maintained Python package renders Go templates, so this is a small interpreter for exactly:

* text and actions ``{{ … }}``, with the trim markers ``{{-`` / ``-}}`` and comments ``{{/* … */}}``;
* ``{{if P}} … {{else if P}} … {{else}} … {{end}}``;
* ``{{range P}}``, ``{{range $v := P}}``, ``{{range $i, $v := P}}`` (over an integer — Go 1.22's
  ``0 … n-1`` —, a list or a map in key order) with ``{{else}}`` for no iteration; the dot is the element;
* variables ``$x := P`` / ``$x = P`` (scoped to the enclosing block, as Go's), ``$`` (the data);
* pipelines ``a | f | g`` (the value goes last into the next call), parenthesised pipelines;
* operands: ``.``, ``.Key`` (a missing map key is Go's missing value: printed ``<no value>``, false),
  ``$var``, ``"string"``, ``` `raw` ```, integers, floats, ``true``, ``false``, ``nil``;
* functions: text/template's ``and``, ``or`` (first truthy argument, else the last), ``not``, ``len``,
  ``eq`` (any of the others), ``ne``, ``lt``, ``le``, ``gt``, ``ge``; upstream's ``AddInt``,
  ``SubtractInt``, ``MultiplyInt``, ``DivideInt`` (truncating), ``Mod`` (Go's ``%``), ``Int``,
  ``JSON`` (compact, no HTML escaping, sorted keys), and the ``…Float`` variants.

Anything else (``with``, ``define``/``template``/``block``, method calls, ``index``/``printf``…) raises
ValueError starting with ``template:``, as do unbalanced blocks and type errors in the functions.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["MISSING", "render_template"]


class _Missing:
    """Go's missing value (a map key that is not there): prints ``<no value>``, is false."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()

# ───────────────────────────── functions ─────────────────────────────


def _num(v: Any) -> float:
    """``toFloat64``: numbers and numeric strings."""
    if isinstance(v, bool):
        raise ValueError(f"template: cannot cast {v!r} to float64")
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise ValueError(f"template: cannot cast {_fmt(v)} to float64")


def _int(v: Any) -> int:
    """``toInt``: numbers (truncated) and decimal strings."""
    if isinstance(v, bool):
        raise ValueError(f"template: cannot cast {v!r} to int")
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    raise ValueError(f"template: cannot cast {_fmt(v)} to int")


def _divf(a: Any, b: Any) -> float:
    d = _num(b)
    if d == 0:
        raise ValueError("template: division by zero")
    return _num(a) / d


def _mod(a: Any, b: Any) -> int:
    x, y = int(_num(a)), int(_num(b))
    if y == 0:
        raise ValueError("template: integer divide by zero")
    return int(math.fmod(x, y))  # Go's % truncates toward zero


def _json(v: Any) -> str:
    return json.dumps(None if v is MISSING else v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _truth(v: Any) -> bool:
    """text/template's ``truth``: false, 0, nil, missing and empty values are false."""
    if v is None or v is MISSING:
        return False
    if isinstance(v, bool | int | float | str | list | tuple | dict):
        return bool(v)
    return True


def _basic(v: Any, fn: str) -> Any:
    if v is None or v is MISSING or isinstance(v, list | tuple | dict):
        raise ValueError(f"template: {fn}: incompatible types for comparison")
    return v


def _cmp(fn: str, op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def f(a: Any, b: Any) -> bool:
        a, b = _basic(a, fn), _basic(b, fn)
        if isinstance(a, str) != isinstance(b, str) or isinstance(a, bool) != isinstance(b, bool):
            raise ValueError(f"template: {fn}: incompatible types for comparison")
        return op(a, b)
    return f


def _eq(a: Any, *others: Any) -> bool:
    if not others:
        raise ValueError("template: eq: missing argument for comparison")
    return any(_cmp("eq", lambda x, y: x == y)(a, b) for b in others)


def _len(v: Any) -> int:
    if isinstance(v, str | list | tuple | dict):
        return len(v)
    raise ValueError(f"template: len of {_fmt(v)}")


_FUNCS: dict[str, Callable[..., Any]] = {
    "not": lambda v: not _truth(v),
    "len": _len,
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "lt": _cmp("lt", lambda a, b: a < b),
    "le": _cmp("le", lambda a, b: a <= b),
    "gt": _cmp("gt", lambda a, b: a > b),
    "ge": _cmp("ge", lambda a, b: a >= b),
    # operations.go getTemplateFuncs
    "AddFloat": lambda *n: sum(_num(x) for x in n),
    "AddInt": lambda *n: int(sum(_num(x) for x in n)),
    "SubtractFloat": lambda a, b: _num(a) - _num(b),
    "SubtractInt": lambda a, b: int(_num(a) - _num(b)),
    "MultiplyFloat": lambda *n: math.prod(_num(x) for x in n),
    "MultiplyInt": lambda *n: int(math.prod(_num(x) for x in n)),
    "DivideFloat": _divf,
    "DivideInt": lambda a, b: int(_divf(a, b)),
    "Mod": _mod,
    "Int": _int,
    "JSON": _json,
}
_SHORT_CIRCUIT = ("and", "or")


def _fmt(v: Any) -> str:
    """``fmt.Sprint`` of a value as text/template prints it."""
    if v is MISSING or v is None:
        return "<no value>" if v is MISSING else "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isfinite(v) and v == int(v) and abs(v) < 1e21:  # %v: no exponent below 1e21
            return str(int(v))
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + " ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{_fmt(k)}:{_fmt(v[k])}" for k in sorted(v)) + "]"
    return str(v)


# ───────────────────────────── parsing ─────────────────────────────

_ACTION_RE = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN_RE = re.compile(r'''\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<raw>`[^`]*`)|(?P<op>:=|\(|\)|\||,|=)|'''
                       r'''(?P<word>[^\s()|,=]+))''')
_NUM_RE = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|[+-]?0[xX][0-9a-fA-F]+")
_VAR_RE = re.compile(r"\$[A-Za-z0-9_]*")
_FIELD_RE = re.compile(r"(?:\.[A-Za-z_][A-Za-z0-9_]*)+|\.")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# A pipeline: (declared variable names, declare (:=) or assign (=), commands); a command: a tuple of
# operands; an operand: ("dot",) ("field", keys) ("var", name, keys) ("lit", value) ("fn", name) ("pipe", pipeline).
Pipe = tuple[tuple[str, ...], bool, tuple[tuple[Any, ...], ...]]


def _tokens(action: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    action = action.strip()
    while pos < len(action):
        m = _TOKEN_RE.match(action, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"template: cannot parse {{{{{action}}}}}")
        pos = m.end()
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
    return out


def _operand(kind: str, tok: str) -> Any:
    if kind == "str":
        return ("lit", json.loads(tok))
    if kind == "raw":
        return ("lit", tok[1:-1])
    if _NUM_RE.fullmatch(tok):
        return ("lit", int(tok, 0) if re.fullmatch(r"[+-]?(?:\d+|0[xX][0-9a-fA-F]+)", tok) else float(tok))
    if tok in ("true", "false"):
        return ("lit", tok == "true")
    if tok == "nil":
        return ("lit", None)
    if _FIELD_RE.fullmatch(tok):
        return ("dot",) if tok == "." else ("field", tuple(tok[1:].split(".")))
    if tok.startswith("$"):
        name, _, rest = tok.partition(".")
        if not _VAR_RE.fullmatch(name):
            raise ValueError(f"template: bad variable {tok!r}")
        return ("var", name, tuple(rest.split(".")) if rest else ())
    if _IDENT_RE.fullmatch(tok):
        if tok in _FUNCS or tok in _SHORT_CIRCUIT:
            return ("fn", tok)
        raise ValueError(f'template: function "{tok}" not defined')
    raise ValueError(f"template: unexpected {tok!r}")


class _Parser:
    def __init__(self, toks: list[tuple[str, str]], action: str) -> None:
        self.toks, self.i, self.action = toks, 0, action

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def pipeline(self, decl_ok: bool = True, range_decl: bool = False) -> tuple[Pipe, tuple[str, ...]]:
        """A pipeline (``$a := …``/``$a = …``/``$i, $v := …`` when allowed) up to ``)`` or the end."""
        names: tuple[str, ...] = ()
        assign = False
        toks, i = self.toks, self.i
        if decl_ok and i + 1 < len(toks) and toks[i][1].startswith("$"):
            if toks[i + 1][1] in (":=", "="):
                names, assign = (toks[i][1],), toks[i + 1][1] == "="
                self.i += 2
            elif (range_decl and toks[i + 1][1] == "," and i + 3 < len(toks) and toks[i + 2][1].startswith("$")
                  and toks[i + 3][1] == ":="):
                names = (toks[i][1], toks[i + 2][1])
                self.i += 4
        cmds: list[tuple[Any, ...]] = []
        while True:
            cmd: list[Any] = []
            while self.peek() not in (None, ")", "|"):
                kind, tok = self.toks[self.i]
                self.i += 1
                if tok == "(":
                    sub, _ = self.pipeline(decl_ok=False)
                    if self.peek() != ")":
                        raise ValueError(f"template: unclosed '(' in {{{{{self.action}}}}}")
                    self.i += 1
                    cmd.append(("pipe", sub))
                elif kind == "op":
                    raise ValueError(f"template: unexpected {tok!r} in {{{{{self.action}}}}}")
                else:
                    cmd.append(_operand(kind, tok))
            if not cmd:
                raise ValueError(f"template: missing value for command in {{{{{self.action}}}}}")
            if len(cmd) > 1 and cmd[0][0] != "fn":
                raise ValueError(f"template: can't give argument to non-function in {{{{{self.action}}}}}")
            cmds.append(tuple(cmd))
            if self.peek() != "|":
                break
            self.i += 1
        return (names, assign, tuple(cmds)), names


def _parse_pipe(action: str, range_decl: bool = False) -> Pipe:
    p = _Parser(_tokens(action), action)
    pipe, _ = p.pipeline(range_decl=range_decl)
    if p.peek() is not None:
        raise ValueError(f"template: unexpected {p.peek()!r} in {{{{{action}}}}}")
    return pipe


@functools.cache
def _compile(text: str) -> tuple[Any, ...]:
    """Parse ``text`` into nodes: ``("text", s)``, ``("out", pipe)``, ``("if", [(pipe, body)…], else)``,
    ``("range", pipe, body, else)``."""
    root: list[Any] = []
    # open blocks: [kind, outer node list, data…]; an "if" holds its branches
    stack: list[list[Any]] = []
    cur = root
    pos = 0
    trim_next = False
    for m in _ACTION_RE.finditer(text):
        chunk = text[pos:m.start()]
        if trim_next:
            chunk = chunk.lstrip()
        if m.group(1):
            chunk = chunk.rstrip()
        if chunk:
            cur.append(("text", chunk))
        pos = m.end()
        trim_next = bool(m.group(3))
        action = m.group(2).strip()
        if action.startswith("/*"):
            if not action.endswith("*/"):
                raise ValueError("template: unclosed comment")
            continue
        word, _, rest = action.partition(" ")
        if word == "if":
            stack.append(["if", cur, [(_parse_pipe(rest), [])], None])
            cur = stack[-1][2][-1][1]
        elif word == "range":
            stack.append(["range", cur, _parse_pipe(rest, range_decl=True), [], None])
            cur = stack[-1][3]
        elif word == "else":
            if not stack or stack[-1][-1] is not None:
                raise ValueError("template: unexpected {{else}}")
            top = stack[-1]
            if rest.startswith("if ") and top[0] == "if":
                top[2].append((_parse_pipe(rest[3:]), []))
                cur = top[2][-1][1]
            elif rest.strip():
                raise ValueError(f"template: unexpected {{{{{action}}}}}")
            else:
                top[-1] = []
                cur = top[-1]
        elif word == "end":
            if rest.strip():
                raise ValueError(f"template: unexpected {{{{{action}}}}}")
            if not stack:
                raise ValueError("template: unexpected {{end}}")
            top = stack.pop()
            els = tuple(top[-1] or ())
            node: tuple[Any, ...]
            if top[0] == "if":
                node = ("if", tuple((p, tuple(b)) for p, b in top[2]), els)
            else:
                node = ("range", top[2], tuple(top[3]), els)
            cur = top[1]
            cur.append(node)
        elif word in ("with", "define", "template", "block", "break", "continue"):
            raise ValueError(f"template: {{{{{word}}}}} is not supported")
        else:
            cur.append(("out", _parse_pipe(action)))
    if stack:
        raise ValueError(f"template: missing {{{{end}}}} for {{{{{stack[-1][0]}}}}}")
    tail = text[pos:]
    if trim_next:
        tail = tail.lstrip()
    if tail:
        cur.append(("text", tail))
    return tuple(root)


# ───────────────────────────── execution ─────────────────────────────


class _State:
    __slots__ = ("root", "vars")

    def __init__(self, root: Any) -> None:
        self.root = root
        self.vars: list[tuple[str, Any]] = [("$", root)]

    def lookup(self, name: str) -> Any:
        for n, v in reversed(self.vars):
            if n == name:
                return v
        raise ValueError(f"template: undefined variable {name!r}")

    def assign(self, name: str, value: Any) -> None:
        for i in range(len(self.vars) - 1, -1, -1):
            if self.vars[i][0] == name:
                self.vars[i] = (name, value)
                return
        raise ValueError(f"template: undefined variable {name!r}")


def _fields(v: Any, keys: Sequence[str]) -> Any:
    for k in keys:
        if v is MISSING or v is None:
            raise ValueError(f"template: nil pointer evaluating .{k}")
        if not isinstance(v, dict):
            raise ValueError(f"template: can't evaluate field {k} in {_fmt(v)}")
        v = v.get(k, MISSING)
    return v


def _arg(op: Any, dot: Any, st: _State) -> Any:
    kind = op[0]
    if kind == "lit":
        return op[1]
    if kind == "field":
        return _fields(dot, op[1])
    if kind == "dot":
        return dot
    if kind == "var":
        return _fields(st.lookup(op[1]), op[2])
    if kind == "pipe":
        return _pipe(op[1], dot, st)
    raise ValueError(f'template: {op[1]} is a function: call it with "( … )"')


def _identity(v: Any) -> Any:
    return v


def _command(cmd: tuple[Any, ...], dot: Any, st: _State, piped: tuple[Any, ...]) -> Any:
    head = cmd[0]
    if head[0] != "fn":
        if piped:
            raise ValueError("template: can't give argument to non-function")
        return _arg(head, dot, st)
    name = head[1]
    if name in _SHORT_CIRCUIT:  # and/or evaluate their arguments lazily
        thunks: list[Callable[[], Any]] = [functools.partial(_arg, a, dot, st) for a in cmd[1:]]
        thunks += [functools.partial(_identity, v) for v in piped]
        if not thunks:
            raise ValueError(f"template: {name}: wrong number of args")
        v: Any = None
        for t in thunks:
            v = t()
            if _truth(v) == (name == "or"):
                return v
        return v
    args = [_arg(a, dot, st) for a in cmd[1:]] + list(piped)
    try:
        return _FUNCS[name](*args)
    except TypeError:
        raise ValueError(f"template: {name}: wrong number of args ({len(args)})") from None


def _pipe(pipe: Pipe, dot: Any, st: _State) -> Any:
    names, assign, cmds = pipe
    value: Any = None
    piped: tuple[Any, ...] = ()
    for cmd in cmds:
        value = _command(cmd, dot, st, piped)
        piped = (value,)
    if names and len(names) == 1:
        if assign:
            st.assign(names[0], value)
        else:
            st.vars.append((names[0], value))
    return value


def _range_items(v: Any) -> list[tuple[Any, Any]]:
    if isinstance(v, bool) or v is None or v is MISSING:
        raise ValueError(f"template: range can't iterate over {_fmt(v)}")
    if isinstance(v, int):
        return [(i, i) for i in range(v)]
    if isinstance(v, list | tuple):
        return list(enumerate(v))
    if isinstance(v, dict):
        return [(k, v[k]) for k in sorted(v)]
    raise ValueError(f"template: range can't iterate over {_fmt(v)}")


def _exec(nodes: Sequence[Any], dot: Any, st: _State, out: list[str]) -> None:
    mark = len(st.vars)
    for n in nodes:
        kind = n[0]
        if kind == "text":
            out.append(n[1])
        elif kind == "out":
            v = _pipe(n[1], dot, st)
            if not n[1][0]:  # a declaration prints nothing
                out.append(_fmt(v))
        elif kind == "if":
            for pipe, body in n[1]:
                m = len(st.vars)
                cond = _truth(_pipe(pipe, dot, st))
                if cond:
                    _exec(body, dot, st, out)
                del st.vars[m:]
                if cond:
                    break
            else:
                _exec(n[2], dot, st, out)
        else:  # range
            pipe = n[1]
            names = pipe[0]
            items = _range_items(_pipe(((), False, pipe[2]), dot, st))
            if not items:
                _exec(n[3], dot, st, out)
            for k, v in items:
                m = len(st.vars)
                if len(names) == 1:
                    st.vars.append((names[0], v))
                elif len(names) == 2:
                    st.vars += [(names[0], k), (names[1], v)]
                _exec(n[2], v, st, out)
                del st.vars[m:]
    del st.vars[mark:]


def render_template(text: str, env: dict[str, Any]) -> str:
    """Execute the Go text/template ``text`` with the data ``env`` (a map: ``.Key`` reads it). Raises
    ValueError (``template: …``) for a construct outside the subset above or a failing function."""
    out: list[str] = []
    _exec(_compile(text), env, _State(env), out)
    return "".join(out)
