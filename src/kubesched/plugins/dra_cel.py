"""CEL device selectors for DRA (upstream ``staging/src/k8s.io/dynamic-resource-allocation/cel``).

A ``DeviceSelector.cel.expression`` is evaluated against one device with the variable
``device``: ``device.driver`` (string), ``device.attributes[domain][id]`` and
``device.capacity[domain][id]``. Attribute and capacity names without a domain belong to the
driver's domain (``gpu`` of driver ``dra.example.com`` is ``device.attributes["dra.example.com"].gpu``).
Attribute values are ints, bools, strings or semantic versions; capacities are quantities.
Kubernetes' CEL library functions the selectors use are provided: ``quantity("10Gi")``,
``semver("1.2.3")`` and on both ``compareTo``, ``isGreaterThan``, ``isLessThan``; on quantities
also ``asInteger``, ``asApproximateFloat``, ``sign``, ``isInteger``, ``add``, ``sub``; on versions
``major``, ``minor``, ``patch``.

The CEL runtime is the ``common-expression-language`` package (Rust ``cel`` bindings; measured
against ``cel-python`` in ``benchmarks/cel_libraries.py``: both evaluate every selector form
correctly, ~4 µs vs ~200 µs per evaluation). Quantities and versions are carried as tagged maps
(``{"__quantity__": "<nanos as decimal text>"}``, ``{"__semver__": [major, minor, patch, pre…]}``) because the
bindings have no custom types; the tags are an implementation detail selectors never see.

Errors: :class:`CELError` with ``compile`` True for a compile error; its text is upstream's
(``no such key: x`` for a missing attribute).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from kubesched.api.quantity import nano_value

__all__ = ["CELError", "CompiledSelector", "compile_selector", "device_context", "evaluate_derived_attribute",
           "semver_key"]

_Q = "__quantity__"
_V = "__semver__"
_NANO = 10**9
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class CELError(Exception):
    """A selector that does not compile (``compile`` True) or fails at run time."""

    def __init__(self, message: str, *, compile: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.compile = compile


def semver_key(text: str) -> tuple[Any, ...]:
    """Ordering key of a semantic version (semver 2.0.0 precedence; build metadata ignored).
    Raises ValueError for an invalid version."""
    m = _SEMVER.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a valid semantic version")
    pre: tuple[Any, ...]
    if m.group(4) is None:
        pre = ((2,),)  # a release sorts after every pre-release
    else:
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in m.group(4).split("."))
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


def _quantity(s: Any) -> dict[str, str]:
    try:
        return {_Q: str(nano_value(str(s)))}
    except Exception as e:  # noqa: BLE001 - reported as CEL runtime error
        raise ValueError(f"quantities must match the regular expression: {e}") from None


def _semver(s: Any) -> dict[str, Any]:
    text = str(s)
    semver_key(text)
    return {_V: text}


def _key(v: Any) -> Any:
    if isinstance(v, dict):
        if _Q in v:
            return int(v[_Q])
        if _V in v:
            return semver_key(v[_V])
    raise TypeError("no such overload")


def _compare(a: Any, b: Any) -> int:
    ka, kb = _key(a), _key(b)
    if type(ka) is not type(kb):
        raise TypeError("no such overload")
    return (ka > kb) - (ka < kb)


def _as_integer(q: Any) -> int:
    n = _key(q)
    if n % _NANO:
        raise ValueError("cannot convert value to integer")
    return n // _NANO


def _version_part(i: int) -> Any:
    def f(v: Any) -> int:
        k = _key(v)
        return int(k[i])
    return f


_FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "semver": _semver,
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: float(Fraction(_key(q), _NANO)),
    "sign": lambda q: (_key(q) > 0) - (_key(q) < 0),
    "isInteger": lambda q: _key(q) % _NANO == 0,
    "add": lambda a, b: {_Q: str(_key(a) + (_key(b) if isinstance(b, dict) else int(b) * _NANO))},
    "sub": lambda a, b: {_Q: str(_key(a) - (_key(b) if isinstance(b, dict) else int(b) * _NANO))},
    "major": _version_part(0),
    "minor": _version_part(1),
    "patch": _version_part(2),
}


def _split(name: str, driver: str) -> tuple[str, str]:
    """A qualified attribute/capacity name → (domain, id); no domain → the driver's."""
    i = name.find("/")
    if i < 0:
        return driver, name
    return name[:i], name[i + 1:]


def _attr_value(v: Any) -> Any:
    """Upstream ``getAttributeValue`` (v0.37.2 cel/compile.go L288-325): a list value
    (DRAListTypeAttributes: ``ints``/``bools``/``strings``/``versions``) first, else the scalar."""
    if not isinstance(v, dict):
        return v
    if v.get("ints") is not None:
        return [int(x) for x in v["ints"]]
    if v.get("bools") is not None:
        return [bool(x) for x in v["bools"]]
    if v.get("strings") is not None:
        return [str(x) for x in v["strings"]]
    if v.get("versions") is not None:
        return [{_V: str(x)} for x in v["versions"]]
    if "int" in v:
        return int(v["int"])
    if "bool" in v:
        return bool(v["bool"])
    if "string" in v:
        return str(v["string"])
    if "version" in v:
        return {_V: str(v["version"])}
    return None


def _cel() -> Any:
    """The ``cel`` module, imported on first use: its package ``__init__`` also imports its CLI
    (prompt_toolkit, typer, httpx), ~0.7 s of CPU that every ``kubesched`` start paid whether or
    not a DeviceClass or claim has a CEL selector."""
    import cel

    return cel


def device_context(driver: str, device: dict[str, Any]) -> Any:
    """The CEL evaluation context for one device of a ResourceSlice (``spec.devices[]`` mapping)."""
    attrs: dict[str, dict[str, Any]] = {driver: {}}  # the driver's own domain is always there
    for name, v in (device.get("attributes") or {}).items():
        dom, ident = _split(name, driver)
        val = _attr_value(v)
        if val is not None:
            attrs.setdefault(dom, {})[ident] = val
    caps: dict[str, dict[str, Any]] = {driver: {}}
    for name, v in (device.get("capacity") or {}).items():
        dom, ident = _split(name, driver)
        raw = v.get("value") if isinstance(v, dict) else v
        caps.setdefault(dom, {})[ident] = {_Q: str(nano_value(str(raw)))}
    # ``allowMultipleAllocations`` (DRAConsumableCapacity, on by default since 1.36): false when unset
    # (v1.37.2 dynamic-resource-allocation ``cel/compile.go``; upstream declares it only with the gate on)
    variables = {"device": {"driver": driver, "attributes": attrs, "capacity": caps,
                            "allowMultipleAllocations": device.get("allowMultipleAllocations") is True}}
    return _cel().Context(variables=variables, functions=_FUNCTIONS)


def _runtime_message(e: BaseException) -> str:
    if isinstance(e, KeyError):
        return f"no such key: {e.args[0] if e.args else ''}"
    return str(e) or type(e).__name__


_DRIVER_EQ = re.compile(r'\s*device\.driver\s*==\s*"([A-Za-z0-9._/-]*)"\s*')
"""``device.driver == "<literal>"``, the selector of nearly every DeviceClass (the literal without
escapes): decided by comparing strings, without a CEL context for the device."""


class CompiledSelector:
    """One compiled expression; :meth:`matches` evaluates it for a device context."""

    __slots__ = ("expression", "_program", "_error", "_compiled", "driver_eq")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self._program: Any = None
        self._error: str | None = None
        self._compiled = False
        m = _DRIVER_EQ.fullmatch(expression)
        self.driver_eq: str | None = m.group(1) if m else None
        """The literal of a ``device.driver == "<literal>"`` expression (its result is
        ``driver == literal`` on every device: :meth:`matches_driver`), else None. Such an
        expression (a valid one: the pattern admits no escapes) is compiled only if a context is
        evaluated with it — the ``cel`` import (:func:`_cel`) is not paid for DeviceClasses that
        only name their driver."""
        if self.driver_eq is None:
            self._compile()

    def _compile(self) -> None:
        self._compiled = True
        try:
            self._program = _cel().compile(self.expression)
        except Exception as e:  # noqa: BLE001 - the library raises several types
            self._error = str(e) or type(e).__name__
            self.driver_eq = None

    @property
    def program(self) -> Any:
        """The compiled program (compiled on first use), None if it did not compile (:attr:`error`)."""
        if not self._compiled:
            self._compile()
        return self._program

    @property
    def error(self) -> str | None:
        """The compile error's text, None if the expression compiles."""
        if not self._compiled:
            self._compile()
        return self._error

    def matches_driver(self, driver: str) -> bool | None:
        """The result on any device of ``driver`` when the expression only compares the driver
        with a literal (the same as :meth:`matches` on its context), else None."""
        if self.driver_eq is None:
            return None
        return driver == self.driver_eq

    def matches(self, context: Any) -> bool:
        """True/False, or :class:`CELError` (runtime error, or a non-bool result)."""
        if self.program is None:
            raise CELError(self.error or "", compile=True)
        try:
            out = self.program.execute(context)
        except Exception as e:  # noqa: BLE001
            raise CELError(_runtime_message(e)) from None
        if not isinstance(out, bool):
            raise CELError(f"expression must evaluate to bool, got {type(out).__name__}")
        return out


_CACHE: dict[str, CompiledSelector] = {}


def compile_selector(expression: str) -> CompiledSelector:
    """Compile (cached; upstream ``cel.Cache``)."""
    c = _CACHE.get(expression)
    if c is None:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        c = _CACHE[expression] = CompiledSelector(expression)
    return c


def _to_attribute(value: Any) -> dict[str, Any]:
    """Upstream ``valToDeviceAttribute`` (v0.37.2 cel/compile.go L432-513): a CEL value as a
    DeviceAttribute mapping; an empty list is ``{"strings": []}``."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, dict) and _V in value:
        return {"version": str(value[_V])}
    if isinstance(value, list):
        if not value:
            return {"strings": []}
        first = value[0]
        for i, (plural, ok) in enumerate((
                ("bools", lambda x: isinstance(x, bool)),
                ("ints", lambda x: isinstance(x, int) and not isinstance(x, bool)),
                ("strings", lambda x: isinstance(x, str)),
                ("versions", lambda x: isinstance(x, dict) and _V in x))):
            if ok(first):
                for j, x in enumerate(value):
                    if not ok(x):
                        want = ("bool", "int", "string", "semver")[i]
                        raise CELError(f"expected list element at index {j} to be {want}, got {type(x).__name__}")
                return {plural: [str(x[_V]) for x in value] if plural == "versions" else list(value)}
        raise CELError(f"unsupported list element type: {type(first).__name__}")
    raise CELError(f"unsupported CEL return type: {type(value).__name__}")


def evaluate_derived_attribute(expression: str, driver: str, device: dict[str, Any]) -> dict[str, Any]:
    """Upstream ``EvaluateDerivedAttribute`` (DRADerivedAttributes): the expression's value for one
    device as a DeviceAttribute mapping. Raises :class:`CELError` (``compile`` for a compile error)."""
    c = compile_selector(expression)
    if c.program is None:
        raise CELError(c.error or "", compile=True)
    try:
        out = c.program.execute(device_context(driver, device))
    except Exception as e:  # noqa: BLE001
        raise CELError(_runtime_message(e)) from None
    return _to_attribute(out)
