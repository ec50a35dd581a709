"""Kubernetes' CEL extension libraries for CRD ``x-kubernetes-validations`` rules, as functions
for the ``common-expression-language`` package (``cel.Context(functions=FUNCTIONS)``).

Follows the libraries k8s.io/apiserver@v0.37.2 ``pkg/cel/environment/base.go`` puts in the
1.37 environment: ``pkg/cel/library/lists.go`` (``isSorted``, ``sum``, ``min``, ``max``,
``indexOf``, ``lastIndexOf``, ``includes``), ``regex.go`` (``find``, ``findAll``),
``urls.go`` (``url``, ``isURL``, ``getScheme``/``getHost``/``getHostname``/``getPort``/
``getEscapedPath``/``getQuery``), ``quantity.go`` (``quantity``, ``isQuantity``, ``sign``,
``isInteger``, ``asInteger``, ``asApproximateFloat``, ``add``, ``sub``, ``isLessThan``,
``isGreaterThan``, ``compareTo``), ``ip.go``/``cidr.go`` (``ip``, ``isIP``, ``ip.isCanonical``,
``family``, ``is*`` predicates, ``cidr``, ``isCIDR``, ``containsIP``, ``containsCIDR``,
``prefixLength``, ``masked``), and cel-go's ``ext.Strings(2)`` (``charAt``, ``indexOf``,
``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``,
``trim``, ``join``, ``strings.quote``, ``format``), ``ext.Sets`` and ``ext.Lists(3)`` (taken
from ``cel.stdlib``), with upstream's error messages (``min called on empty list``,
``index out of range: 9``, ``Illegal regex: ...``, ``URL parse error during conversion from
string: ...``, the quantity format error).

Opaque values (Quantity, URL, IP, CIDR) are single-key maps ``{"@k8s.<kind>": <text>}``; the
functions dispatch overloaded names (``indexOf`` on strings and lists, ``ip`` on strings and
CIDRs) on their first argument. Errors are :class:`CELLibraryError`; the binding wraps them, and
:func:`library_error_text` recovers upstream's text from the wrapped message.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from kubesched.api.quantity import QuantityError, parse_quantity

__all__ = ["FUNCTIONS", "CELLibraryError", "library_error_text"]


class CELLibraryError(ValueError):
    """An evaluation error with upstream's message (``types.NewErr``)."""


_WRAPPED = re.compile(r"CELLibraryError: (.*)\. Check function arguments and their types\.\s*$", re.S)


def library_error_text(message: str) -> str | None:
    """Upstream's error text inside the binding's ``Function 'f' error: ...`` message, or None."""
    m = _WRAPPED.search(message)
    return m.group(1) if m else None


def _no_overload(*_: Any) -> CELLibraryError:
    return CELLibraryError("no such overload")


def _opaque(kind: str, text: str) -> dict[str, str]:
    return {f"@k8s.{kind}": text}


def _unwrap(v: Any, kind: str) -> str | None:
    if isinstance(v, dict) and len(v) == 1:
        got = v.get(f"@k8s.{kind}")
        return got if isinstance(got, str) else None
    return None


# ----------------------------------------------------------------------------- strings (ext v2)


def _index(s: str, i: int) -> None:
    if i < 0 or i > len(s):
        raise CELLibraryError(f"index out of range: {i}")


def _char_at(s: str, i: int) -> str:
    _index(s, i)
    return s[i:i + 1]


def _index_of(target: Any, item: Any, offset: int = 0) -> int:
    if isinstance(target, list):  # lists.go indexOf
        return next((i for i, v in enumerate(target) if _equal(v, item)), -1)
    if not isinstance(target, str) or not isinstance(item, str):
        raise _no_overload()
    _index(target, offset)
    return target.find(item, offset)


def _last_index_of(target: Any, item: Any, offset: int | None = None) -> int:
    if isinstance(target, list):
        return next((i for i in range(len(target) - 1, -1, -1) if _equal(target[i], item)), -1)
    if not isinstance(target, str) or not isinstance(item, str):
        raise _no_overload()
    if offset is None:
        return target.rfind(item)
    _index(target, offset)
    return target.rfind(item, 0, offset + len(item))


def _substring(s: str, start: int, end: int | None = None) -> str:
    _index(s, start)
    if end is None:
        return s[start:]
    if end < start:
        raise CELLibraryError(f"invalid substring range. start: {start}, end: {end}")
    _index(s, end)
    return s[start:end]


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    if old == "":  # Go strings.Replace inserts around every rune
        parts = list(s)
        limit = len(parts) + 1 if n < 0 else n
        out, used = [], 0
        for ch in [*parts, None]:
            if used < limit:
                out.append(new)
                used += 1
            if ch is not None:
                out.append(ch)
        return "".join(out)
    return s.replace(old, new, n)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":  # Go strings.SplitN(s, "", n): runes, the last holding the rest
        runes = list(s)
        if 0 < n < len(runes):
            return [*runes[:n - 1], "".join(runes[n - 1:])]
        return runes
    return s.split(sep, n - 1 if n > 0 else -1)


def _join(items: list[Any], sep: str = "") -> str:
    if not all(isinstance(x, str) for x in items):
        raise _no_overload()
    return sep.join(items)


def _lower_ascii(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def _upper_ascii(s: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


_VERB = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])")


def _format(fmt: str, args: list[Any]) -> str:
    """cel-go ext ``<string>.format(<list>)``: ``%s %d %f %.Nf %e %x %X %o %b %%``."""
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        prec, verb = m.group(1), m.group(2)
        if verb == "%":
            return "%"
        try:
            v = next(it)
        except StopIteration:
            raise CELLibraryError(f"index {len(args)} out of range") from None
        if verb == "s":
            return _to_string(v)
        if verb == "d" and isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if verb in "fe" and isinstance(v, int | float) and not isinstance(v, bool):
            return f"{float(v):.{int(prec) if prec else 6}{verb}}"
        if verb in "xXob" and isinstance(v, int | str) and not isinstance(v, bool):
            if isinstance(v, str):
                h = v.encode().hex()
                return h.upper() if verb == "X" else h
            return format(v, verb)
        raise CELLibraryError(f"could not parse formatting clause: unrecognized formatting clause \"{verb}\"")

    return _VERB.sub(one, fmt)


def _to_string(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "[" + ", ".join(_to_string(x) for x in v) + "]"
    if isinstance(v, float) and v == int(v):
        return str(int(v))
    return str(v)


# ---------------------------------------------------------------------------------- lists


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def _is_sorted(items: list[Any]) -> bool:
    return all(not (items[i] > items[i + 1]) for i in range(len(items) - 1))


def _sum(items: list[Any]) -> Any:
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in items):
        raise _no_overload()
    total: Any = 0
    for x in items:
        total += x
    return total


def _extreme(name: str, pick_if: Callable[[Any, Any], bool]) -> Callable[..., Any]:
    def run(items: Any, *rest: Any) -> Any:
        if not isinstance(items, list) or rest:
            raise _no_overload()
        if not items:
            raise CELLibraryError(f"{name} called on empty list")
        best = items[0]
        for x in items[1:]:
            if pick_if(best, x):
                best = x
        return best
    return run


def _includes(target: Any, item: Any) -> bool:
    if isinstance(target, list):
        return any(_equal(v, item) for v in target)
    return _equal(target, item)


# ---------------------------------------------------------------------------------- regex


def _go_regex_error(regex: str, e: re.error) -> str:
    """Go regexp/syntax's wording for the common errors Python's ``re`` reports differently."""
    pos = e.pos or 0
    if e.msg.startswith("unterminated character set"):
        return f"missing closing ]: `{regex[pos:]}`"
    if e.msg.startswith("missing ), unterminated subpattern"):
        return f"missing closing ): `{regex}`"
    if e.msg.startswith("unbalanced parenthesis"):
        return f"unexpected ): `{regex}`"
    if e.msg.startswith("nothing to repeat"):
        return f"missing argument to repetition operator: `{regex[pos:pos + 1]}`"
    if e.msg.startswith("multiple repeat"):
        return f"invalid nested repetition operator: `{regex[max(pos - 1, 0):pos + 1]}`"
    return e.msg


def _compile(regex: str) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except re.error as e:
        raise CELLibraryError(f"Illegal regex: error parsing regexp: {_go_regex_error(regex, e)}") from None


def _find(s: str, regex: str) -> str:
    m = _compile(regex).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, regex: str, n: int = -1) -> list[str]:
    out = [m.group(0) for m in _compile(regex).finditer(s)]
    return out if n < 0 else out[:n]


# ------------------------------------------------------------------------------------ URL

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _url_error(s: str) -> str | None:
    """net/url ``ParseRequestURI``'s error for ``s`` (None: it parses)."""
    if s == "":
        return 'parse "": empty url'
    if _SCHEME.match(s) or s.startswith("/"):
        if any(ord(c) < 0x20 or ord(c) == 0x7f for c in s):
            return f'parse "{s}": net/url: invalid control character in URL'
        return None
    if s.startswith(":"):
        return f'parse "{s}": missing protocol scheme'
    return f'parse "{s}": invalid URI for request'


def _url(s: str) -> dict[str, str]:
    err = _url_error(s)
    if err:
        raise CELLibraryError(f"URL parse error during conversion from string: {err}")
    return _opaque("url", s)


def _parts(u: Any) -> Any:
    raw = _unwrap(u, "url")
    if raw is None:
        raise _no_overload()
    return urlsplit(raw.split("#", 1)[0])


def _host(u: Any) -> str:
    p = _parts(u)
    return str(p.netloc.rsplit("@", 1)[-1])


def _hostname(u: Any) -> str:
    h = _host(u)
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h[1:]
    return h.rsplit(":", 1)[0] if ":" in h else h


def _port(u: Any) -> str:
    h = _host(u)
    tail = h[h.find("]") + 1:] if h.startswith("[") else h
    return tail.rsplit(":", 1)[1] if ":" in tail else ""


def _escaped_path(u: Any) -> str:
    return quote(_parts(u).path, safe="/!$&'()*+,;=:@~-._%")


def _query(u: Any) -> dict[str, list[str]]:
    return {k: v for k, v in parse_qs(_parts(u).query, keep_blank_values=True).items()}


# ------------------------------------------------------------------------------- quantity


def _q(v: Any) -> Fraction:
    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(v)
    raw = _unwrap(v, "quantity")
    if raw is None:
        raise _no_overload()
    return Fraction(raw)


def _qv(f: Fraction) -> dict[str, str]:
    return _opaque("quantity", str(f))


def _quantity(s: str) -> dict[str, str]:
    try:
        return _qv(parse_quantity(s))
    except QuantityError as e:
        raise CELLibraryError(str(e).split(": ", 1)[-1]) from None


def _is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True


_INT64 = (-(2**63), 2**63 - 1)


def _as_integer(v: Any) -> int:
    f = _q(v)
    if f.denominator != 1 or not _INT64[0] <= f.numerator <= _INT64[1]:
        raise CELLibraryError("cannot convert value to integer")
    return f.numerator


def _is_integer(v: Any) -> bool:
    f = _q(v)
    return f.denominator == 1 and _INT64[0] <= f.numerator <= _INT64[1]


def _sign(v: Any) -> int:
    f = _q(v)
    return (f > 0) - (f < 0)


def _compare(a: Any, b: Any) -> int:
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


# ------------------------------------------------------------------------------- IP / CIDR


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in s:
        raise CELLibraryError(f'IP address "{s}" with zone value is not allowed')
    try:
        a = ipaddress.ip_address(s)
    except ValueError as e:
        raise CELLibraryError(f'IP Address "{s}" parse error during conversion from string: '
                              f'ParseAddr("{s}"): {e}') from None
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
        raise CELLibraryError(f'IPv4-mapped IPv6 address "{s}" is not allowed')
    return a


def _ip(v: Any) -> dict[str, str]:
    if isinstance(v, str):
        return _opaque("ip", str(_parse_ip(v)))
    _cidr_of(v)
    return _opaque("ip", str(ipaddress.ip_interface(str(_unwrap(v, "cidr"))).ip))


def _is_ip(s: str) -> bool:
    try:
        _parse_ip(s)
    except CELLibraryError:
        return False
    return True


def _addr(v: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = _unwrap(v, "ip")
    if raw is None:
        raise _no_overload()
    return ipaddress.ip_address(raw)


def _is_canonical(s: str) -> bool:
    return str(_parse_ip(s)) == s


def _cidr_of(v: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    raw = _unwrap(v, "cidr")
    if raw is None:
        raise _no_overload()
    return ipaddress.ip_network(raw, strict=False)


def _cidr(s: str) -> dict[str, str]:
    addr, slash, bits = s.partition("/")
    try:
        if not slash:
            raise ValueError(f'netip.ParsePrefix("{s}"): no \'/\'')
        if not bits.isdigit():
            raise ValueError(f'netip.ParsePrefix("{s}"): bad bits after slash: "{bits}"')
        iface = ipaddress.ip_interface(s)
    except ValueError as e:
        # cidr.go wraps the parse error twice (parseCIDR and stringToCIDR both add the prefix)
        prefix = "network address parse error during conversion from string: "
        raise CELLibraryError(f"{prefix}{prefix}{e}") from None
    if isinstance(iface, ipaddress.IPv6Interface) and iface.ip.ipv4_mapped is not None:
        raise CELLibraryError(f'IPv4-mapped IPv6 address "{s}" is not allowed')
    return _opaque("cidr", f"{iface.ip}/{iface.network.prefixlen}")


def _is_cidr(s: str) -> bool:
    try:
        _cidr(s)
    except CELLibraryError:
        return False
    return True


def _contains_ip(c: Any, ip: Any) -> bool:
    a = _parse_ip(ip) if isinstance(ip, str) else _addr(ip)
    return a in _cidr_of(c)


def _contains_cidr(c: Any, other: Any) -> bool:
    o = _cidr_of(_cidr(other) if isinstance(other, str) else other)
    net = _cidr_of(c)
    return o.version == net.version and o.subnet_of(net)  # type: ignore[arg-type]


def _masked(c: Any) -> dict[str, str]:
    return _opaque("cidr", str(_cidr_of(c)))


def _family(v: Any) -> int:
    return _addr(v).version


# ------------------------------------------------------------------------- the registry


def _stdlib() -> dict[str, Callable[..., Any]]:
    from cel import stdlib

    ext = stdlib.EXTENSIONS
    keep = {**ext["sets"], **{k: v for k, v in ext["lists"].items() if k not in ("contains",)}}
    return keep


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_stdlib(),
    # ext.Strings(2)
    "charAt": _char_at, "indexOf": _index_of, "lastIndexOf": _last_index_of, "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii, "replace": _replace, "split": _split, "substring": _substring,
    "trim": lambda s: s.strip(), "join": _join, "strings.quote": _quote, "format": _format,
    # library.Lists(1)
    "isSorted": _is_sorted, "sum": _sum, "min": _extreme("min", lambda b, x: x < b),
    "max": _extreme("max", lambda b, x: x > b), "includes": _includes,
    # regex, URLs
    "find": _find, "findAll": _find_all,
    "url": _url, "isURL": lambda s: _url_error(s) is None, "getScheme": lambda u: _parts(u).scheme,
    "getHost": _host, "getHostname": _hostname, "getPort": _port, "getEscapedPath": _escaped_path,
    "getQuery": _query,
    # quantity
    "quantity": _quantity, "isQuantity": _is_quantity, "isInteger": _is_integer, "asInteger": _as_integer,
    "asApproximateFloat": lambda v: float(_q(v)), "sign": _sign,
    "add": lambda a, b: _qv(_q(a) + _q(b)), "sub": lambda a, b: _qv(_q(a) - _q(b)),
    "isLessThan": lambda a, b: _compare(a, b) < 0, "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "compareTo": _compare,
    # IP / CIDR
    "ip": _ip, "isIP": _is_ip, "ip.isCanonical": _is_canonical, "family": _family,
    "isUnspecified": lambda v: _addr(v).is_unspecified, "isLoopback": lambda v: _addr(v).is_loopback,
    "isLinkLocalMulticast": lambda v: _addr(v).is_multicast and _addr(v).is_link_local
    or str(_addr(v)).startswith("224.0.0.") or str(_addr(v)).lower().startswith("ff02:"),
    "isLinkLocalUnicast": lambda v: _addr(v).is_link_local and not _addr(v).is_multicast,
    "isGlobalUnicast": lambda v: not (_addr(v).is_unspecified or _addr(v).is_loopback or _addr(v).is_multicast
                                      or _addr(v).is_link_local or str(_addr(v)) == "255.255.255.255"),
    "cidr": _cidr, "isCIDR": _is_cidr, "containsIP": _contains_ip, "containsCIDR": _contains_cidr,
    "prefixLength": lambda c: _cidr_of(c).prefixlen, "masked": _masked,
}
