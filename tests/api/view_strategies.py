"""Hypothesis strategies the view tests share (test_storage_views, test_dra_views): camelCase
mappings whose fields are each absent, null or set, as API objects arrive."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
LABELS = st.dictionaries(NAME, NAME, max_size=3)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_PRESENCE = st.sampled_from(("absent", "null", "set"))


@st.composite
def partial(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    """A mapping where each of ``fields`` is absent, null, or drawn from its strategy."""
    out: dict[str, Any] = {}
    for key, strategy in fields.items():
        presence = draw(_PRESENCE)
        if presence == "null":
            out[key] = None
        elif presence == "set":
            out[key] = draw(strategy)
    return out


def metadata(**extra: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """ObjectMeta: name, namespace, uid, labels, annotations, resourceVersion, deletionTimestamp,
    ownerReferences, and ``extra`` fields."""
    return partial({"name": NAME, "namespace": NAME, "uid": NAME, "labels": LABELS, "annotations": LABELS,
                    "resourceVersion": st.integers(0, 10**6).map(str),
                    "deletionTimestamp": st.just("2026-01-01T00:00:00Z"),
                    "ownerReferences": st.lists(st.fixed_dictionaries({"uid": NAME, "controller": st.booleans()}),
                                                max_size=2), **extra})
