"""validate_pod remembers a spec's errors (pods of one template share it): every answer equals
the plain ValidatePodSpec walk's, whatever the order of calls."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api import validation as v


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


SPECS: list[dict[str, Any]] = [
    {"containers": [{"name": "c", "image": "pause"}]},
    {"containers": [{"name": "c", "image": " pause"}]},  # whitespace: validateContainersOnlyForPod
    {"containers": []},
    {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "-1"}}}]},
    {"containers": [{"name": "C_", "image": "pause"}], "restartPolicy": "Sometimes"},
    {"containers": [{"name": "c", "image": "pause"}],
     "tolerations": [{"key": "k", "operator": "Gt", "value": "1", "effect": "NoSchedule"}]},
    {"containers": [{"name": "c", "image": "pause"}],
     "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": {"matchLabels": {"a": "b"}}, "matchLabelKeys": ["a"]}]},
]
OPTIONS = [v.PodValidationOptions(), v.PodValidationOptions(allow_taint_toleration_comparison_operators=True),
           v.PodValidationOptions(allow_match_label_keys_in_pod_topology_spread=False)]


def _plain(pod: dict[str, Any], opts: v.PodValidationOptions) -> list[v.FieldError]:
    errs = v.validate_object_meta(pod["metadata"], namespaced=True)
    errs.extend(v.validate_pod_spec(pod["spec"], "spec", opts))
    for i, c in enumerate(pod["spec"].get("containers") or []):
        if c["image"] != c["image"].strip():
            errs.append(v.FieldError(f"spec.containers[{i}].image", v.INVALID, c["image"],
                                     "must not have leading or trailing whitespace"))
    return errs


def test_memo_answers_as_the_plain_walk() -> None:
    v._SPEC_ERRORS.clear()
    for _round in range(2):  # the second round answers from the memo
        for i, spec in enumerate(SPECS):
            for opts in OPTIONS:
                pod = _pod(f"p-{i}", copy.deepcopy(spec))
                assert v.validate_pod(pod, opts) == _plain(pod, opts), (spec, opts)
    assert v._SPEC_ERRORS  # remembered


def test_memo_is_keyed_by_exact_json() -> None:
    v._SPEC_ERRORS.clear()
    ok = {"containers": [{"name": "c", "image": "pause"}], "terminationGracePeriodSeconds": 30}
    assert v.validate_pod(_pod("a", ok)) == []
    # another spec is judged on its own; the memo hands out copies
    bad = {"containers": [{"name": "c", "image": "pause"}], "priorityClassName": "Bad_Name"}
    assert v.validate_pod(_pod("b", bad)) != []
    errs = v.validate_pod(_pod("c", bad))
    errs.append(v.FieldError("x", v.INVALID, "y"))  # a caller's list is its own
    assert v.validate_pod(_pod("d", bad)) == v.validate_pod(_pod("e", copy.deepcopy(bad)))
    assert len(v.validate_pod(_pod("d", bad))) == len(errs) - 1
