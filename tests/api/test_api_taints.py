"""Toleration.ToleratesTaint and FindMatchingUntoleratedTaint."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Taint, Toleration
from kubesched.api.taints import find_matching_untolerated_taint, tolerates, tolerations_tolerate_taint

T = Taint(key="k", value="v", effect="NoSchedule")


@pytest.mark.parametrize(
    "tol, expected",
    [
        (Toleration(key="k", operator="Equal", value="v", effect="NoSchedule"), True),
        (Toleration(key="k", value="v", effect="NoSchedule"), True),  # "" operator means Equal
        (Toleration(key="k", value="v"), True),  # empty effect matches all effects
        (Toleration(key="k", value="other"), False),
        (Toleration(key="k", operator="Exists"), True),
        (Toleration(key="k", operator="Exists", value="ignored"), True),
        (Toleration(operator="Exists"), True),  # empty key + Exists tolerates everything
        (Toleration(operator="Exists", effect="NoExecute"), False),
        (Toleration(key="other", operator="Exists"), False),
        (Toleration(key="k", operator="Exists", effect="PreferNoSchedule"), False),
        (Toleration(value="v"), True),  # empty key + Equal compares the value only
        (Toleration(key="k", operator="Lt", value="v"), False),  # unknown operators tolerate nothing
    ],
)
def test_tolerates(tol, expected):
    assert tolerates(tol, T) is expected


def test_find_matching_untolerated_taint():
    taints = [Taint(key="a", effect="PreferNoSchedule"), Taint(key="b", effect="NoSchedule"), Taint(key="c", effect="NoExecute")]
    hard = lambda t: t.effect in ("NoSchedule", "NoExecute")  # noqa: E731
    assert find_matching_untolerated_taint(taints, [], hard) is taints[1]
    assert find_matching_untolerated_taint(taints, [], None) is taints[0]
    tols = [Toleration(key="b", operator="Exists")]
    assert find_matching_untolerated_taint(taints, tols, hard) is taints[2]
    tols.append(Toleration(key="c", operator="Exists", effect="NoExecute"))
    assert find_matching_untolerated_taint(taints, tols, hard) is None
    assert not tolerations_tolerate_taint([], taints[0])
    assert tolerations_tolerate_taint([Toleration(operator="Exists")], taints[2])
