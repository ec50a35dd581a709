"""PrioritySort: less() as upstream's queuesort test, and sort_key() giving the same order."""

from __future__ import annotations

import functools
import random

import pytest

from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.plugins import queuesort
from kubesched.testing.wrappers import MakePod


def _q(priority, ts, name="p"):
    return QueuedPodInfo(PodInfo(MakePod().name(name).priority(priority).obj()), timestamp=ts)


@pytest.mark.parametrize("a,b,want", [
    ((100, 1.0), (50, 2.0), True),        # p1 > p2
    ((50, 1.0), (100, 2.0), False),       # p1 < p2
    ((100, 1.0), (100, 2.0), True),       # equal priority, p1 earlier
    ((100, 2.0), (100, 1.0), False),      # equal priority, p1 later
    ((100, 1.0), (100, 1.0), False),      # equal everything
], ids=["higher-priority", "lower-priority", "earlier", "later", "equal"])
def test_less(a, b, want):
    pl = queuesort.new(None, None)
    assert pl.less(_q(*a), _q(*b)) is want


def test_unset_priority_is_zero():
    pl = queuesort.new(None, None)
    a = QueuedPodInfo(PodInfo(MakePod().obj()), timestamp=1.0)
    assert pl.less(_q(1, 2.0), a) and not pl.less(_q(-1, 0.0), a)


def test_sort_key_same_order_as_less():
    pl = queuesort.new(None, None)
    rng = random.Random(7)
    items = [_q(rng.choice([-5, 0, 5, 1000]), rng.choice([0.0, 1.0, 2.5, 3.0]), f"p{i}") for i in range(60)]
    by_key = sorted(items, key=pl.sort_key)
    by_less = sorted(items, key=functools.cmp_to_key(lambda x, y: -1 if pl.less(x, y) else (1 if pl.less(y, x) else 0)))
    assert [(q.pod_info.priority, q.timestamp) for q in by_key] == [(q.pod_info.priority, q.timestamp) for q in by_less]
