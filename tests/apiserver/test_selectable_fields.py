"""The selectable fields of stored objects (upstream ``GetAttrs``, e.g. ``pkg/registry/core/pod/strategy.go``
``PodToSelectableFields``): the one-pass form the store uses gives what each field's accessor reads."""

from __future__ import annotations

import random
from typing import Any

from kubesched.apiserver import resources as res


def _values(rng: random.Random) -> Any:
    return rng.choice(["", "x", "Running", "node-1", 0, 3, 1.5, True, False, None, {}, {"a": "b"}, [], ["x"]])


def _obj(rng: random.Random, names: tuple[str, ...]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for name in names:
        if rng.random() < 0.2:
            continue
        parts = name.split(".")
        cur = obj
        for depth, part in enumerate(parts[:-1]):
            if depth and rng.random() < 0.05:  # a scalar or a list where an object is expected
                cur[part] = rng.choice(["s", 1, ["l"]])
                break
            nxt = cur.get(part)
            if not isinstance(nxt, dict):
                nxt = cur[part] = {}
            cur = nxt
        else:
            cur[parts[-1]] = _values(rng)
    return obj


def test_one_pass_fields_equal_the_accessors() -> None:
    rng = random.Random(7)
    for info in res.RESOURCES:
        for _ in range(200):
            obj = _obj(rng, info.field_names)
            plain = res.selectable_fields(info, obj, info.field_names)
            assert res.selectable_fields(info, obj) == plain, (info.key, obj)


def test_pod_fields() -> None:
    info = res.find("", "v1", "pods")
    assert info is not None
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"nodeName": "n1", "schedulerName": "s"},
           "status": {"phase": "Pending"}}
    got = res.selectable_fields(info, pod)
    assert got["metadata.name"] == "p" and got["spec.nodeName"] == "n1" and got["status.phase"] == "Pending"
    assert got["spec.hostNetwork"] == "false"  # unset reads "false", as upstream's PodToSelectableFields
