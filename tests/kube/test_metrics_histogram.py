"""kubesched's ``Histogram`` (``kube/metrics.py``: observations counted without locks) exposes what
prometheus_client's own ``Histogram`` exposes for the same observations — buckets are ``le``
(a value on a bound counts in that bucket), cumulative, ``+Inf`` last, then ``_count`` and
``_sum`` — for unlabelled and labelled series, and a labelled parent still refuses observations."""

from __future__ import annotations

import prometheus_client
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.kube.metrics import Histogram, exponential_buckets

BOUNDS = exponential_buckets(0.001, 2, 15)


def _exposition(cls: type, observations: list[tuple[str, float]]) -> bytes:
    reg = prometheus_client.CollectorRegistry()
    plain = cls("x_seconds", "help", buckets=BOUNDS, registry=reg)
    labelled = cls("y_seconds", "help", ["result"], buckets=BOUNDS, registry=reg)
    for label, v in observations:
        plain.observe(v)
        labelled.labels(result=label).observe(v)
    return bytes(prometheus_client.generate_latest(reg))


values = st.one_of(st.sampled_from([0.0, *BOUNDS, BOUNDS[-1] * 2]),  # on the bounds, past the last
                   st.floats(min_value=0.0, max_value=100.0, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["scheduled", "error"]), values), max_size=40))
def test_same_exposition_as_prometheus_client(observations: list[tuple[str, float]]) -> None:
    assert _exposition(Histogram, observations) == _exposition(prometheus_client.Histogram, observations)


def test_a_labelled_parent_refuses_observations() -> None:
    h = Histogram("z_seconds", "help", ["result"], buckets=BOUNDS, registry=prometheus_client.CollectorRegistry())
    with pytest.raises(ValueError, match="missing label values"):
        h.observe(1.0)
    h.labels(result="ok").observe(1.0)
