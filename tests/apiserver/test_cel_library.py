"""Kubernetes' CEL libraries (apiserver/cel_library.py) without a server: cases ported from
k8s.io/apiserver@v0.37.2 ``pkg/cel/library/{quantity,cidr,ip}_test.go`` and the examples in
``lists.go``/``regex.go``/``urls.go`` doc comments, and cel-go ``ext/strings.go``'s documented
examples; errors as upstream's runtime error text."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from kubesched.apiserver.cel_library import FUNCTIONS
from kubesched.apiserver.crd_cel import _eval_error_text


def _eval(expr: str) -> Any:
    return cel.compile(expr).execute(cel.Context(functions=FUNCTIONS))


def _err(expr: str) -> str:
    with pytest.raises(Exception) as e:  # noqa: PT011 - the binding raises several types
        _eval(expr)
    return _eval_error_text(e.value)


TRUE = [
    # quantity_test.go
    'isQuantity("20")', 'isQuantity("20M")', 'isQuantity("20Mi")', '!isQuantity("20Mo")', '!isQuantity("10Mm")',
    'quantity("200M") == quantity("200M")',
    'quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")',
    'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M")',
    'quantity("200M") != quantity("0.3G")',
    'quantity("50M").isLessThan(quantity("50Mi"))', '!quantity("100M").isLessThan(quantity("50M"))',
    'quantity("50Mi").isGreaterThan(quantity("50M"))', '!quantity("50M").isGreaterThan(quantity("100M"))',
    'quantity("200M").compareTo(quantity("0.2G")) == 0', 'quantity("50M").compareTo(quantity("50Mi")) == -1',
    'quantity("50Mi").compareTo(quantity("50M")) == 1',
    'quantity("50k").add(quantity("20")) == quantity("50.02k")',
    'quantity("50k").add(20).isLessThan(quantity("50021"))',
    'quantity("50k").sub(quantity("20")) == quantity("49.98k")', 'quantity("50k").sub(20) == quantity("49980")',
    'quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980',
    'quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20',
    'quantity("50k").asInteger() == 50000', 'quantity("50").isInteger()',
    '!quantity("9999999999999999999999999999999999999G").isInteger()',
    'quantity("50.703k").asApproximateFloat() == 50703.0', 'quantity("-1").sign() == -1', 'quantity("0").sign() == 0',
    # cidr_test.go / ip_test.go
    'cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', '!cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))',
    'cidr("192.168.0.0/24").containsIP("192.168.0.1")', 'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))',
    'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))',
    '!cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))',
    '!cidr("192.168.0.0/24").containsCIDR("192.169.0.1/32")', 'cidr("192.168.0.0/24").ip() == ip("192.168.0.0")',
    'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', 'cidr("192.168.0.0/24").prefixLength() == 24',
    'cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', '!cidr("2001:db8::/32").containsIP("2001:dc8::1")',
    'cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', 'cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")',
    'isIP("192.168.0.1")', '!isIP("192.168.0.1.0")', 'ip.isCanonical("127.0.0.1")', '!ip.isCanonical("2001:DB8::68")',
    'ip("192.168.0.1").family() == 4', 'ip("2001:db8::68").family() == 6', 'ip("0.0.0.0").isUnspecified()',
    '!ip("127.0.0.1").isUnspecified()', 'ip("127.0.0.1").isLoopback()', '!ip("1.2.3.4").isLoopback()',
    'ip("224.0.0.1").isLinkLocalMulticast()', '!ip("224.0.1.1").isLinkLocalMulticast()',
    'ip("169.254.169.254").isLinkLocalUnicast()', '!ip("192.168.0.1").isLinkLocalUnicast()',
    'ip("192.168.0.1").isGlobalUnicast()', '!ip("255.255.255.255").isGlobalUnicast()',
    # lists.go
    '[1, 2, 3].isSorted()', "['a', 'b', 'b', 'c'].isSorted()", '![2.0, 1.0].isSorted()', '[].isSorted()',
    '[1, 3].sum() == 4', '[1.0, 3.0].sum() == 4.0', '[].sum() == 0', '[1, 3].min() == 1', '[1, 3].max() == 3',
    '[1, 2, 2, 3].indexOf(2) == 1', "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2", '[1.0].indexOf(1.1) == -1',
    "[].indexOf('string') == -1", '[1, 2, 3].includes(2)', '![1, 2, 3].includes(4)', "'model-a'.includes('model-a')",
    # regex.go
    "'abc 123'.find('[0-9]+') == '123'", "'abc 123'.find('xyz') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']", "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('xyz') == []",
    # urls.go
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://[::1]:80/').getHost() == '[::1]:80'", "url('https://[::1]:80/').getHostname() == '::1'",
    "url('https://example.com:80/').getPort() == '80'", "url('https://example.com/').getPort() == ''",
    "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
    "url('/absolute-path').getScheme() == ''", "isURL('https://example.com/')", "!isURL('example.com')",
    "!isURL('')",
    # cel-go ext/strings.go (version 2)
    "'hello'.charAt(4) == 'o'", "'hello'.charAt(5) == ''", "'hello mellow'.indexOf('ello', 2) == 7",
    "'hello mellow'.lastIndexOf('ello', 6) == 1", "'TacoCat'.lowerAscii() == 'tacocat'",
    "'TacoCÆt Xii'.upperAscii() == 'TACOCÆT XII'", "'hello hello'.replace('he', 'we', 1) == 'wello hello'",
    "'hello hello'.split(' ', 0) == []", "'hello hello hello'.split(' ', 2) == ['hello', 'hello hello']",
    "'tacocat'.substring(4) == 'cat'", "'tacocat'.substring(0, 4) == 'taco'", "'  \\ttrim\\n    '.trim() == 'trim'",
    "['hello', 'mellow'].join(' ') == 'hello mellow'", "[].join() == ''",
    "strings.quote('single-quote with \"double quote\"') == "
    "'\"single-quote with \\\\\"double quote\\\\\"\"'",
    "'this is a string: %s\\nand an integer: %d'.format(['str', 42]) == 'this is a string: str\\nand an integer: 42'",
    "'%.3f'.format([2.0]) == '2.000'",
    # ext.Sets, ext.Lists(3)
    'sets.contains([1, 2, 3, 4], [2, 3])', 'sets.equivalent([1, 2, 3], [3, 2, 1])', 'sets.intersects([1], [1, 2])',
    '[1, 2, 2].distinct() == [1, 2]', '[[1], [2, 3]].flatten() == [1, 2, 3]', '[3, 1, 2].sort() == [1, 2, 3]',
    '[1, 2, 3, 4].slice(1, 3) == [2, 3]', 'lists.range(3) == [0, 1, 2]',
]


@pytest.mark.parametrize("expr", TRUE)
def test_library_cases(expr: str) -> None:
    assert _eval(expr) is True


@pytest.mark.parametrize(("expr", "error"), [
    ('quantity("10Mo")', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ('quantity("10Mm")', "unable to parse quantity's suffix"),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', "cannot convert value to integer"),
    ("[].min()", "min called on empty list"),
    ("[].max()", "max called on empty list"),
    ("'abc'.find('[')", "Illegal regex: error parsing regexp: missing closing ]: `[`"),
    ("'abc'.findAll('a(')", "Illegal regex: error parsing regexp: missing closing ): `a(`"),
    ("url('example.com')",
     'URL parse error during conversion from string: parse "example.com": invalid URI for request'),
    ("'tacocat'.substring(40)", "index out of range: 40"),
    ("'tacocat'.substring(4, 2)", "invalid substring range. start: 4, end: 2"),
    ("'tacocat'.charAt(30)", "index out of range: 30"),
    ('ip("::ffff:1.2.3.4")', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('ip("fe80::1%eth0")', 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('cidr("192.168.0.0/")', "network address parse error during conversion from string: network address parse "
                             'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after '
                             'slash: ""'),
])
def test_library_errors(expr: str, error: str) -> None:
    assert _err(expr) == error
