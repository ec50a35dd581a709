"""The strict decoder's checks (unknown fields, pruning, type errors) remember a ``spec`` found
clean by its exact JSON: every answer equals the plain walk's, in any order of calls."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api import schemas

POD = ("", "v1", "Pod")
DEPLOY = ("apps", "v1", "Deployment")
C = {"name": "c", "image": "pause"}

OBJECTS: list[tuple[tuple[str, str, str], dict[str, Any]]] = [
    (POD, {"spec": {"containers": [C]}}),
    (POD, {"spec": {"containers": [{**C, "imagee": "x"}]}}),  # unknown field under spec
    (POD, {"spec": {"containers": [C], "bogus": 1}}),
    (POD, {"spec": {"containers": "c"}}),  # type error under spec
    (POD, {"spec": {"containers": [{**C, "resources": {"requests": {"cpu": "1x"}}}]}}),  # quantity
    (POD, {"spec": {"containers": [C], "terminationGracePeriodSeconds": 1e30}}),
    (POD, {"metadata": {"name": 5}, "spec": {"containers": [C]}}),  # the error is outside spec
    (POD, {"spec": {"containers": [C]}, "specc": {}}),
    (DEPLOY, {"spec": {"replicas": 1, "template": {"spec": {"containers": [{**C, "x": 1}]}}}}),
    (DEPLOY, {"spec": {"replicas": "1"}}),
]


def _answers(gvk: tuple[str, str, str], obj: dict[str, Any]) -> tuple[Any, ...]:
    pruned = copy.deepcopy(obj)
    paths = schemas.prune_unknown_fields(gvk, pruned)
    return (schemas.decode_error(gvk, obj), schemas.unknown_field_paths(gvk, obj), paths, pruned)


def test_memo_answers_as_the_plain_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(schemas, "_CLEAN_MAX_BYTES", 0)  # nothing remembered: the plain walks
        plain = [_answers(gvk, obj) for gvk, obj in OBJECTS]
    assert any(p[0] for p in plain) and any(p[1] for p in plain)  # the table has errors of each kind
    schemas._CLEAN.clear()
    for _round in range(2):  # the second round answers clean specs from the memo
        for (gvk, obj), want in zip(OBJECTS, plain, strict=True):
            assert _answers(gvk, copy.deepcopy(obj)) == want, obj
    assert schemas._CLEAN
