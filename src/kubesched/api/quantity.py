"""Kubernetes resource quantities, parsed exactly.

Follows ``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`` (``ParseQuantity``,
``Value``, ``MilliValue``) and ``math.go``.

Grammar (upstream)::

    <quantity>     ::= <signedNumber><suffix>
    <signedNumber> ::= [+-]? ( <digits> | <digits>. | <digits>.<digits> | .<digits> )
    <suffix>       ::= Ki | Mi | Gi | Ti | Pi | Ei            (binary, powers of 2**10)
                     | n | u | m | "" | k | M | G | T | P | E  (decimal SI)
                     | (e|E) [+-]? <digits>                     (decimal exponent)

Upstream quirks kept on purpose: a bare sign or a bare ``.`` parses as 0; ``"1."`` is
valid; a non-zero magnitude is rounded *up* (away from zero) to a multiple of 10**-9
("if you want some resources you get some"); binary-suffixed values are capped at
2**63-1 in magnitude; a decimal quantity of exactly 19 significant digits that overflows
int64 is rejected ("unable to parse numeric part of quantity"). Every parsed quantity is
therefore an exact integer number of nano-units, which :func:`nano_value` returns.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from kubesched.errors import QuantityError

__all__ = [
    "FORMAT_REGEX",
    "INT64_MAX",
    "INT64_MIN",
    "milli_value",
    "nano_value",
    "nano_value_trimmed",
    "nanos_to_int",
    "parse_quantity",
    "to_int",
    "value",
]

#: The regular expression upstream quotes in its "wrong format" error message.
FORMAT_REGEX = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)

_ERR_FORMAT = f"quantities must match the regular expression '{FORMAT_REGEX}'"
_ERR_SUFFIX = "unable to parse quantity's suffix"
_ERR_NUMERIC = "unable to parse numeric part of quantity"

# sign, integer digits, optional "." + fraction digits, suffix (letters, optional sign, digits).
# Equivalent to upstream's hand-written scanner in parseQuantityString.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_GO_INT = re.compile(r"[+-]?[0-9]+")

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

_NANO = 10**9
# Decimal exponents beyond this are clamped: 10**4000 already saturates every int64 conversion.
_MAX_DECIMAL_EXPONENT = 4000


def _ceil_div_pos(a: int, b: int) -> int:
    return -(-a // b)


def _wrap_int32(v: int) -> int:
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def _interpret_suffix(suffix: str, text: str) -> tuple[int, int, bool]:
    """Return (base, exponent, is_binary) for a suffix, as upstream suffixHandler.interpret."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], False
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        if _GO_INT.fullmatch(digits):
            parsed = int(digits)
            if INT64_MIN <= parsed <= INT64_MAX:
                # upstream converts the int64 exponent with int32(...), wrapping.
                return 10, _wrap_int32(parsed), False
    raise QuantityError(f"invalid quantity {text!r}: {_ERR_SUFFIX}")


def _nanos_from_string(text: str) -> int:
    if not text:
        raise QuantityError(f"invalid quantity {text!r}: {_ERR_FORMAT}")
    m = _SCAN.fullmatch(text)
    if m is None:
        raise QuantityError(f"invalid quantity {text!r}: {_ERR_FORMAT}")
    sign_s, num, denom, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    negative = sign_s == "-"
    base, exponent, is_binary = _interpret_suffix(suffix, text)
    num = num.lstrip("0") or "0"
    mantissa = int(num + denom) if (num != "0" or denom) else 0

    if not is_binary:
        # upstream int64 fast path: <= 19 significant digits, scale >= nano, must fit int64.
        if len(num) + len(denom) <= 19 and exponent - len(denom) >= -9 and mantissa > INT64_MAX:
            raise QuantityError(f"invalid quantity {text!r}: {_ERR_NUMERIC}")
    if mantissa == 0:
        return 0

    if is_binary:
        # mantissa * 2**exponent / 10**len(denom), magnitude rounded up to nano.
        nanos = _ceil_div_pos(mantissa * (1 << exponent) * _NANO, 10 ** len(denom))
        nanos = min(nanos, INT64_MAX * _NANO)  # upstream caps BinarySI at max int64
    else:
        e10 = exponent - len(denom) + 9  # value in nanos = mantissa * 10**e10
        if e10 >= 0:
            nanos = mantissa * 10 ** min(e10, _MAX_DECIMAL_EXPONENT)
        elif -e10 > len(str(mantissa)):
            nanos = 1  # below one nano: rounded up to the smallest representable amount
        else:
            nanos = _ceil_div_pos(mantissa, 10 ** (-e10))
    return -nanos if negative else nanos


def _to_text(s: str | int | float) -> str:
    if isinstance(s, bool):
        raise QuantityError(f"invalid quantity {s!r}: expected a string or a number")
    if isinstance(s, str):
        return s
    if isinstance(s, int):
        return str(s)
    if isinstance(s, float):
        if not math.isfinite(s):
            raise QuantityError(f"invalid quantity {s!r}: {_ERR_FORMAT}")
        return repr(s)  # the JSON number text, as upstream UnmarshalJSON sees it
    raise QuantityError(f"invalid quantity {s!r}: expected a string or a number")


@lru_cache(maxsize=65536, typed=True)
def _nanos_cached(s: str | int | float, strip: bool) -> int:
    text = _to_text(s)
    return _nanos_from_string(text.strip() if strip else text)


_OK_TYPES = (str, int, float)


def nano_value(s: str | int | float) -> int:
    """The quantity as an exact integer count of nano-units (10**-9), cached.

    Raises :class:`QuantityError` for invalid input. Follows upstream ``ParseQuantity``.
    """
    if type(s) not in _OK_TYPES:
        _to_text(s)  # raises QuantityError for unsupported types
    return _nanos_cached(s, False)


def parse_quantity(s: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity into its exact value.

    ``s`` is a quantity string (``"100m"``, ``"1.5Gi"``, ``"1e3"``) or a plain JSON number
    (``int``/``float``; a float is read through its shortest decimal text, as upstream reads
    JSON numbers). The value is what upstream ``ParseQuantity`` represents: exact, with a
    non-zero magnitude rounded up to a multiple of 10**-9 and binary-suffixed values capped
    at 2**63-1. Whitespace is not accepted (``" 1"`` is invalid).

    Raises :class:`QuantityError` with upstream's messages (``quantities must match the
    regular expression '...'``, ``unable to parse quantity's suffix``, ``unable to parse
    numeric part of quantity``). Upstream: ``apimachinery/pkg/api/resource/quantity.go``.
    """
    return Fraction(nano_value(s), _NANO)


def _scaled(nanos: int, per_unit: int) -> int:
    """nanos / per_unit rounded away from zero, saturated to int64 (upstream ScaledValue)."""
    if nanos >= 0:
        out = _ceil_div_pos(nanos, per_unit)
    else:
        out = -_ceil_div_pos(-nanos, per_unit)
    return max(INT64_MIN, min(INT64_MAX, out))


def _as_nanos(q: Fraction | int) -> int:
    if isinstance(q, int):
        return q * _NANO
    n = q * _NANO
    if n.denominator == 1:
        return n.numerator
    # not a parsed quantity (finer than nano): round magnitude up, as upstream would have.
    return math.ceil(n) if n > 0 else math.floor(n)


def milli_value(q: Fraction | int) -> int:
    """``ceil(q * 1000)`` rounding away from zero, saturated to int64 (upstream ``MilliValue``)."""
    return _scaled(_as_nanos(q), 10**6)


def value(q: Fraction | int) -> int:
    """``q`` rounded up away from zero to an integer, saturated to int64 (upstream ``Value``)."""
    return _scaled(_as_nanos(q), _NANO)


@lru_cache(maxsize=65536, typed=True)
def _to_int_cached(resource: str, s: str | int | float) -> int:
    return _scaled(_nanos_cached(s, True), 10**6 if resource == "cpu" else _NANO)


def to_int(resource: str, s: str | int | float) -> int:
    """Canonical integer amount of ``resource`` given as quantity ``s`` (lru-cached on ``(resource, s)``).

    ``cpu`` → millicores (upstream ``MilliValue``); every other resource → ``Value`` (bytes
    for memory / ephemeral-storage / hugepages, counts for pods and extended resources).
    Leading/trailing whitespace is trimmed, as upstream ``Quantity.UnmarshalJSON`` does.
    Raises :class:`QuantityError` for invalid input.
    """
    if type(s) not in _OK_TYPES:
        _to_text(s)  # raises QuantityError for unsupported types
    return _to_int_cached(resource, s)


def nanos_to_int(resource: str, nanos: int) -> int:
    """Convert an exact nano-unit amount of ``resource`` to its canonical integer (see :func:`to_int`)."""
    return _scaled(nanos, 10**6 if resource == "cpu" else _NANO)


def nano_value_trimmed(s: str | int | float) -> int:
    """Like :func:`nano_value`, trimming whitespace as upstream JSON decoding does (cached)."""
    if type(s) not in _OK_TYPES:
        _to_text(s)  # raises QuantityError for unsupported types
    return _nanos_cached(s, True)
