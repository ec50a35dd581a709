"""Quantity parsing, checked against upstream's grammar and documented behaviour."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.quantity import (
    FORMAT_REGEX,
    INT64_MAX,
    milli_value,
    nano_value,
    parse_quantity,
    to_int,
    value,
)
from kubesched.errors import InputError, QuantityError

DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("1", 1),
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("1.5Gi", 3 * 2**29),
        ("1Ki", 1024),
        ("2Mi", 2 * 2**20),
        ("1k", 1000),
        ("1M", 10**6),
        ("1E", 10**18),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1e+3", 1000),
        ("1.5E-2", Fraction(3, 200)),
        ("-1", -1),
        ("+1", 1),
        ("1.", 1),
        (".5", Fraction(1, 2)),
        ("007", 7),
        ("5n", Fraction(5, 10**9)),
        ("3u", Fraction(3, 10**6)),
        ("-", 0),  # upstream quirk: a bare sign parses as zero
        (".", 0),
    ],
)
def test_parse_examples(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "1.2.3", "12x", " 1", "1 ", "1\n", "abc", "1.5.Gi", "1KiB", "1Gi5x"])
def test_wrong_format(text):
    with pytest.raises(QuantityError) as ei:
        parse_quantity(text)
    assert "quantities must match the regular expression" in str(ei.value)
    assert FORMAT_REGEX in str(ei.value)


@pytest.mark.parametrize("text", ["1Kii", "1K", "1e", "1m-", "+-1", "1Mi3", "1e-", "1ee3", "--1"])
def test_bad_suffix(text):
    with pytest.raises(QuantityError, match="unable to parse quantity's suffix"):
        parse_quantity(text)


def test_error_hierarchy():
    with pytest.raises(InputError):
        parse_quantity("12x")
    with pytest.raises(ValueError):  # InputError is a ValueError too, but never a bare one
        parse_quantity("12x")


def test_numbers_accepted():
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(1e20) == 10**20
    assert parse_quantity(0.1) == Fraction(1, 10)  # decimal text, not binary float value
    for bad in (True, float("nan"), float("inf"), None, [1]):
        with pytest.raises(QuantityError):
            parse_quantity(bad)  # type: ignore[arg-type]


def test_rounds_up_to_nano():
    assert parse_quantity("0.1n") == Fraction(1, 10**9)
    assert parse_quantity("1e-20") == Fraction(1, 10**9)
    assert parse_quantity("-0.1n") == Fraction(-1, 10**9)
    assert parse_quantity("1.0000000001") == Fraction(1_000_000_001, 10**9)
    assert parse_quantity("0.0") == 0


def test_binary_cap_and_numeric_error():
    assert parse_quantity("8Ei") == INT64_MAX
    assert parse_quantity("-8Ei") == -INT64_MAX
    assert parse_quantity("7Ei") == 7 * 2**60
    # decimal values are not capped
    assert parse_quantity("99999999999999999999") == 99999999999999999999
    # upstream int64 fast path: 19 significant digits that overflow int64 are rejected
    with pytest.raises(QuantityError, match="unable to parse numeric part"):
        parse_quantity("9999999999999999999")
    assert parse_quantity("9223372036854775807") == INT64_MAX


def test_value_and_milli_value_round_away_from_zero():
    assert milli_value(parse_quantity("0.1m")) == 1
    assert milli_value(parse_quantity("1.5")) == 1500
    assert value(parse_quantity("1.1")) == 2
    assert value(parse_quantity("-1.1")) == -2
    assert milli_value(parse_quantity("-0.1m")) == -1
    assert value(Fraction(3, 2)) == 2
    assert value(5) == 5
    assert milli_value(parse_quantity("1E")) == INT64_MAX  # saturates
    assert value(parse_quantity("1e30")) == INT64_MAX


@pytest.mark.parametrize(
    "resource, q, expected",
    [
        ("cpu", "100m", 100),
        ("cpu", "1", 1000),
        ("cpu", 2, 2000),
        ("cpu", 0.5, 500),
        ("cpu", "0.1m", 1),
        ("memory", "1Gi", 2**30),
        ("memory", "1G", 10**9),
        ("memory", "1.5", 2),
        ("memory", "100m", 1),
        ("ephemeral-storage", "10Mi", 10 * 2**20),
        ("nvidia.com/gpu", "2", 2),
        ("pods", 110, 110),
        ("cpu", " 250m ", 250),  # JSON decoding trims whitespace
    ],
)
def test_to_int(resource, q, expected):
    assert to_int(resource, q) == expected


def test_to_int_errors_and_cache():
    with pytest.raises(QuantityError):
        to_int("cpu", "12x")
    with pytest.raises(QuantityError):
        to_int("cpu", True)
    with pytest.raises(QuantityError):
        to_int("cpu", [1])  # type: ignore[arg-type]
    assert to_int("cpu", 1) == 1000 and to_int("cpu", 1.0) == 1000


# --- properties against the grammar's definition ------------------------------------------

digits = st.text(alphabet="0123456789", min_size=0, max_size=8)


def _expected(sign: str, ip: str, fp: str, suffix: str) -> Fraction:
    mant = Fraction(int(ip or "0")) + (Fraction(int(fp), 10 ** len(fp)) if fp else 0)
    if suffix in DEC:
        mult = Fraction(10) ** DEC[suffix]
    elif suffix in BIN:
        mult = Fraction(2) ** BIN[suffix]
    else:
        mult = Fraction(10) ** int(suffix[1:])
    x = mant * mult
    nanos = math.ceil(x * 10**9)  # magnitude rounded up to nano
    if suffix in BIN:
        nanos = min(nanos, INT64_MAX * 10**9)
    x = Fraction(nanos, 10**9)
    return -x if sign == "-" else x


@given(
    sign=st.sampled_from(["", "+", "-"]),
    ip=digits,
    dot=st.booleans(),
    fp=digits,
    suffix=st.one_of(
        st.sampled_from(sorted(DEC) + sorted(BIN)),
        st.builds(lambda e, s, n: e + s + str(n), st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), st.integers(0, 30)),
    ),
)
def test_property_grammar(sign, ip, dot, fp, suffix):
    if not dot:
        fp = ""
    text = f"{sign}{ip}{'.' if dot else ''}{fp}{suffix}"
    if not text:
        return
    got = parse_quantity(text)
    assert got == _expected(sign, ip, fp, suffix)
    assert nano_value(text) == got * 10**9


@given(st.integers(min_value=-(10**15), max_value=10**15), st.sampled_from(sorted(DEC) + sorted(BIN)))
def test_property_integer_with_suffix(n, suffix):
    mult = Fraction(10) ** DEC[suffix] if suffix in DEC else Fraction(2) ** BIN[suffix]
    got = parse_quantity(f"{n}{suffix}")
    exact = n * mult
    if suffix in BIN:
        exact = max(-INT64_MAX, min(INT64_MAX, exact))
    assert got == exact
    away = math.ceil(abs(exact) * 1000) * (1 if exact >= 0 else -1)  # rounds away from zero
    assert milli_value(got) == max(-(2**63), min(INT64_MAX, away))


_LANGUAGE = re.compile(r"[+-]?[0-9]*(?:\.[0-9]*)?([eEinumkKMGTP]*[+-]?[0-9]*)")


@given(st.text(alphabet="0123456789.+-eEinumkKMGTPx ", max_size=8))
def test_property_only_quantity_errors(text):
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    m = _LANGUAGE.fullmatch(text)
    assert m is not None and text != ""
    suffix = m.group(1)
    assert suffix in DEC or suffix in BIN or re.fullmatch(r"[eE][+-]?[0-9]+", suffix)
    assert isinstance(q, Fraction)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_property_floats_read_as_decimal_text(f):
    expected = Fraction(repr(f))
    nanos = math.ceil(abs(expected) * 10**9)
    assert parse_quantity(f) == (Fraction(nanos, 10**9) if f >= 0 else -Fraction(nanos, 10**9))
