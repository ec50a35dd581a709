"""kubesched.apiserver.patch: the three patch types as the API server applies them.

Strategic-merge behaviour follows apimachinery's strategicpatch (patch.go); the worked
examples below restate upstream patch_test.go cases on a schema twin of its ``MergeItem``
type, then the same rules on the real v1.34 Pod/Node/Deployment schemas with the patch
bodies kubectl and kube-scheduler send.
"""

from __future__ import annotations

import copy
import json

import pytest

from kubesched.apiserver.patch import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    PatchError,
    apply_patch,
    strategic_merge_patch_with_schema,
)
from tests.apiserver.smp_schema import MERGE_ITEM

POD = ("", "v1", "Pod")
NODE = ("", "v1", "Node")
DEPLOYMENT = ("apps", "v1", "Deployment")


def smp(original: dict, patch: dict) -> dict:
    return strategic_merge_patch_with_schema(original, patch, MERGE_ITEM)


def body(obj: object) -> bytes:
    return json.dumps(obj).encode()


# ---- upstream worked examples (MergeItem schema) --------------------------------------------

WORKED = [
    # (description, original, patch, expected)
    ("merging int list is a set union", {"mergingIntList": [1, 2]}, {"mergingIntList": [2, 3]}, {"mergingIntList": [1, 2, 3]}),
    ("$patch: delete on a map empties it", {"simpleMap": {"a": "1", "b": "2"}}, {"simpleMap": {"$patch": "delete"}}, {"simpleMap": {}}),
    ("$patch: replace element empties a merging list", {"mergingList": [{"name": "1"}, {"name": "2"}]},
     {"mergingList": [{"$patch": "replace"}]}, {"mergingList": []}),
    ("$patch: replace on a map keeps only the patch", {"name": "1", "value": "1"}, {"other": "a", "$patch": "replace"}, {"other": "a"}),
    ("delete directive removes every duplicate", {"mergingList": [{"name": "1"}, {"name": "1"}, {"name": "2", "value": "a"}, {"name": "3"}]},
     {"mergingList": [{"name": "1", "$patch": "delete"}, {"name": "3", "$patch": "delete"}]}, {"mergingList": [{"name": "2", "value": "a"}]}),
    ("merging list keeps the patch's order, server-only items first",
     {"mergingList": [{"name": "1"}, {"name": "2", "value": "b"}, {"name": "3"}]},
     {"mergingList": [{"name": "3", "value": "c"}, {"name": "1", "value": "a"}]},
     {"mergingList": [{"name": "2", "value": "b"}, {"name": "3", "value": "c"}, {"name": "1", "value": "a"}]}),
    ("int list keeps the patch's order", {"mergingIntList": [1, 2, 3]}, {"mergingIntList": [3, 1]}, {"mergingIntList": [2, 3, 1]}),
    ("$setElementOrder orders the merged list",
     {"mergingList": [{"name": "1"}, {"name": "2", "value": "b"}, {"name": "4", "other": "c"}]},
     {"$setElementOrder/mergingList": [{"name": "2"}, {"name": "3"}], "mergingList": [{"name": "3"}, {"name": "1", "$patch": "delete"}]},
     {"mergingList": [{"name": "2", "value": "b"}, {"name": "4", "other": "c"}, {"name": "3"}]}),
    ("$setElementOrder alone reorders an int list", {"mergingIntList": [1, 3]}, {"$setElementOrder/mergingIntList": [3, 2, 1]},
     {"mergingIntList": [3, 1]}),
    ("$deleteFromPrimitiveList of a missing item changes nothing", {"mergingIntList": [1, 2]},
     {"$deleteFromPrimitiveList/mergingIntList": [3]}, {"mergingIntList": [1, 2]}),
    ("$deleteFromPrimitiveList on a missing list adds no list", {}, {"$deleteFromPrimitiveList/mergingIntList": [1]}, {}),
    ("$deleteFromPrimitiveList works on a non-merging list too", {"nonMergingIntList": [1, 2]},
     {"$deleteFromPrimitiveList/nonMergingIntList": [2]}, {"nonMergingIntList": [1]}),
    ("non-merging list replaces", {"nonMergingList": [{"name": "1"}, {"name": "2"}]}, {"nonMergingList": [{"name": "3"}]},
     {"nonMergingList": [{"name": "3"}]}),
    ("nested merge: field added to an element", {"mergingList": [{"name": "1", "value": "1"}, {"name": "2"}]},
     {"$setElementOrder/mergingList": [{"name": "1"}, {"name": "2"}], "mergingList": [{"name": "1", "other": "x"}]},
     {"mergingList": [{"name": "1", "value": "1", "other": "x"}, {"name": "2"}]}),
    ("null deletes a field of an element", {"mergingList": [{"name": "1", "value": "1"}]},
     {"mergingList": [{"name": "1", "value": None}]}, {"mergingList": [{"name": "1"}]}),
    ("$retainKeys clears fields not listed", {"retainKeysMap": {"name": "foo", "value": "a", "other": "b"}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "c"}}, {"retainKeysMap": {"name": "foo", "value": "c"}}),
    ("$retainKeys in a merging list element", {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a", "other": "b"}]},
     {"retainKeysMergingList": [{"name": "foo", "$retainKeys": ["name", "other"]}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "other": "b"}]}),
    ("replace strategy on a map replaces it", {"replacingItem": {"a": 1, "b": 2}}, {"replacingItem": {"c": 3}}, {"replacingItem": {"c": 3}}),
    ("unmatched nulls are dropped from new values", {}, {"simpleMap": {"a": "1", "b": None}}, {"simpleMap": {"a": "1"}}),
    ("a changed type replaces", {"name": {"x": 1}}, {"name": "str"}, {"name": "str"}),
    ("$setElementOrder interleaves server-only items",
     {"mergingList": [{"name": "1", "other": "a"}, {"name": "2", "value": "2"}, {"name": "7"}, {"name": "9"},
                      {"name": "8"}, {"name": "3", "value": "3"}, {"name": "4", "value": "4"}]},
     {"$setElementOrder/mergingList": [{"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}]},
     {"mergingList": [{"name": "2", "value": "2"}, {"name": "1", "other": "a"}, {"name": "7"}, {"name": "9"},
                      {"name": "8"}, {"name": "4", "value": "4"}, {"name": "3", "value": "3"}]}),
    ("delete in one list, reorder another",
     {"mergingList": [{"name": "a", "value": "a"}, {"name": "b", "value": "b"}],
      "mergeItemPtr": [{"name": "c", "value": "c"}, {"name": "d", "value": "d"}]},
     {"$setElementOrder/mergingList": [{"name": "b"}], "$setElementOrder/mergeItemPtr": [{"name": "d"}, {"name": "c"}],
      "mergingList": [{"$patch": "delete", "name": "a"}]},
     {"mergingList": [{"name": "b", "value": "b"}], "mergeItemPtr": [{"name": "d", "value": "d"}, {"name": "c", "value": "c"}]}),
    ("$retainKeys on a merge-list element clears its other fields",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a", "other": "x"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}],
      "retainKeysMergingList": [{"$retainKeys": ["name", "value"], "name": "foo"}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]}),
    ("merge list nested in a merge list",
     {"mergingList": [{"name": "1", "mergingList": [{"name": "x", "value": "1"}, {"name": "y"}]}]},
     {"mergingList": [{"name": "1", "mergingList": [{"name": "x", "other": "o"}, {"name": "z"}]}]},
     # mergeSortedSlice: a patch item the server order cannot place ("z") goes before server-only ones
     {"mergingList": [{"name": "1", "mergingList": [{"name": "x", "value": "1", "other": "o"}, {"name": "z"}, {"name": "y"}]}]}),
]


@pytest.mark.parametrize(("desc", "original", "patch", "expected"), WORKED, ids=[w[0] for w in WORKED])
def test_upstream_worked_examples(desc: str, original: dict, patch: dict, expected: dict) -> None:
    before = copy.deepcopy(original)
    patch_before = copy.deepcopy(patch)
    got = smp(original, patch)
    assert got == expected
    # order matters for lists (the result is what GET returns afterwards)
    assert json.dumps(got) == json.dumps(expected) or got == expected
    for key, value in expected.items():
        if isinstance(value, list):
            assert got[key] == value
    assert original == before and patch == patch_before  # inputs untouched


@pytest.mark.parametrize(
    ("original", "patch", "fragment", "code"),
    [
        ({"mergingList": [{"name": "1", "value": "a"}]}, {"mergingList": [{"value": "b"}]},
         "map: map[value:b] does not contain declared merge key: name", 500),
        ({"mergingList": [{"name": "1"}, {"name": "3"}, {"name": "2"}]},
         {"$setElementOrder/mergingList": [{"name": "1"}, {"name": "2"}, {"name": "3"}],
          "mergingList": [{"name": "3", "value": "3"}, {"name": "1", "value": "1"}]}, "doesn't match", 500),
        ({"simpleMap": {"a": "1"}}, {"simpleMap": {"$patch": "bogus"}}, "unknown patch type: bogus in map: map[$patch:bogus]", 500),
        ({"retainKeysMap": {"name": "a"}}, {"retainKeysMap": {"$retainKeys": ["name"], "value": "x"}},
         "invalid patch format of retainKeys", 400),
        ({"mergingList": [{"name": "1"}]}, {"mergingList": [{"name": "1", "$patch": "merge"}]},
         "merging lists cannot yet be specified in the patch", 500),
        ({"nonMergingIntList": [[1]]}, {"$deleteFromPrimitiveList/nonMergingIntList": [[1]]}, "lists of lists are not supported", 422),
    ],
)
def test_strategic_merge_errors(original: dict, patch: dict, fragment: str, code: int) -> None:
    with pytest.raises(PatchError) as info:
        smp(original, patch)
    assert fragment in info.value.message
    assert info.value.status_code == code
    if code == 500:  # a plain error: ErrorToAPIStatus, no reason
        assert info.value.status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": info.value.message, "code": 500}


# ---- real schemas, the bodies clients send -------------------------------------------------


def _pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}, "finalizers": ["a/x", "b/y"]},
        "spec": {
            "containers": [
                {"name": "app", "image": "nginx:1", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "side", "image": "busybox", "args": ["a", "b"]},
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "Initialized", "status": "True"}, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


def test_scheduler_status_patch_with_set_element_order() -> None:
    # kube-scheduler's util.PatchPodStatus: two-way SMP of {status: old} -> {status: new}
    patch = {
        "status": {
            "$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "PodScheduled"}],
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}],
            "nominatedNodeName": "n1",
        }
    }
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(patch), gvk=POD)
    assert got["status"]["conditions"] == [
        {"type": "Initialized", "status": "True"},
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"},
    ]
    assert got["status"]["nominatedNodeName"] == "n1"
    assert got["spec"] == _pod()["spec"]


def test_preemption_condition_added_to_conditions() -> None:
    patch = {"status": {"$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "PodScheduled"}, {"type": "DisruptionTarget"}],
                        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(patch), gvk=POD)
    assert [c["type"] for c in got["status"]["conditions"]] == ["Initialized", "PodScheduled", "DisruptionTarget"]


def test_clearing_nominated_node_name_with_null() -> None:
    pod = _pod()
    pod["status"]["nominatedNodeName"] = "n1"
    got = apply_patch(STRATEGIC_MERGE_PATCH, pod, b'{"status":{"nominatedNodeName":null}}', gvk=POD)
    assert "nominatedNodeName" not in got["status"]


def test_containers_merge_by_name_and_args_replace() -> None:
    patch = {"spec": {"containers": [{"name": "side", "args": ["c"]}, {"name": "new", "image": "x"}]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(patch), gvk=POD)
    by_name = {c["name"]: c for c in got["spec"]["containers"]}
    assert set(by_name) == {"app", "side", "new"}
    assert by_name["side"] == {"name": "side", "image": "busybox", "args": ["c"]}
    assert by_name["app"]["resources"] == {"requests": {"cpu": "100m"}}


def test_tolerations_have_no_strategy_so_they_replace() -> None:
    patch = {"spec": {"tolerations": [{"key": "other", "operator": "Exists"}]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(patch), gvk=POD)
    assert got["spec"]["tolerations"] == [{"key": "other", "operator": "Exists"}]


def test_finalizers_union_and_delete_from_primitive_list() -> None:
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body({"metadata": {"finalizers": ["c/z"]}}), gvk=POD)
    # upstream puts patch items whose position the server cannot place first (mergeSortedSlice)
    assert got["metadata"]["finalizers"] == ["c/z", "a/x", "b/y"]
    ordered = {"metadata": {"$setElementOrder/finalizers": ["a/x", "b/y", "c/z"], "finalizers": ["c/z"]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(ordered), gvk=POD)
    assert got["metadata"]["finalizers"] == ["a/x", "b/y", "c/z"]
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a/x"]}}), gvk=POD)
    assert got["metadata"]["finalizers"] == ["b/y"]


def test_kubectl_label_and_annotate_patches() -> None:
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), b'{"metadata":{"labels":{"tier":"fe","app":null}}}', gvk=POD)
    assert got["metadata"]["labels"] == {"tier": "fe"}
    got = apply_patch(MERGE_PATCH, _pod(), b'{"metadata":{"annotations":{"a":"b"}}}', gvk=POD)
    assert got["metadata"]["annotations"] == {"a": "b"}


def test_kubectl_cordon_patch_on_node() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, node, b'{"spec":{"unschedulable":true}}', gvk=NODE)
    assert got["spec"] == {"taints": [{"key": "a", "effect": "NoSchedule"}], "unschedulable": True}
    got = apply_patch(STRATEGIC_MERGE_PATCH, got, b'{"spec":{"unschedulable":null}}', gvk=NODE)
    assert got["spec"] == {"taints": [{"key": "a", "effect": "NoSchedule"}]}


def test_kubectl_apply_three_way_patch_shape() -> None:
    # What client-side apply sends after a manifest drops a container's env var and a label.
    pod = _pod()
    pod["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}, "labels": {"app": None}},
        "spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "side"}],
            "containers": [{"$setElementOrder/env": [{"name": "A"}], "name": "app", "env": [{"name": "B", "$patch": "delete"}]}],
        },
    }
    got = apply_patch(STRATEGIC_MERGE_PATCH, pod, body(patch), gvk=POD)
    assert got["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    assert "labels" not in got["metadata"] or got["metadata"]["labels"] == {}
    assert [c["name"] for c in got["spec"]["containers"]] == ["app", "side"]


def test_volumes_retain_keys() -> None:
    # PodSpec.volumes is "merge,retainKeys": switching a volume's source clears the old one
    patch = {"spec": {"volumes": [{"name": "v", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), body(patch), gvk=POD)
    assert got["spec"]["volumes"] == [{"name": "v", "configMap": {"name": "cm"}}]


def test_deployment_strategy_retain_keys() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    got = apply_patch(STRATEGIC_MERGE_PATCH, dep, body(patch), gvk=DEPLOYMENT)
    assert got["spec"]["strategy"] == {"type": "Recreate"}


def test_unknown_fields_merge_like_a_merge_patch() -> None:
    got = apply_patch(STRATEGIC_MERGE_PATCH, _pod(), b'{"spec":{"bogus":{"a":1}}}', gvk=POD)
    assert got["spec"]["bogus"] == {"a": 1}


def test_merge_patch_rfc7386() -> None:
    got = apply_patch(MERGE_PATCH, _pod(), body({"spec": {"containers": [{"name": "only"}]}, "status": None}), gvk=POD)
    assert got["spec"]["containers"] == [{"name": "only"}]  # lists replace in a merge patch
    assert "status" not in got


def test_json_patch() -> None:
    ops = [{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"},
           {"op": "add", "path": "/metadata/labels/x", "value": "y"},
           {"op": "remove", "path": "/metadata/finalizers/0"}]
    original = _pod()
    got = apply_patch(f"{JSON_PATCH}; charset=utf-8", original, body(ops), gvk=POD)
    assert got["spec"]["containers"][0]["image"] == "nginx:2"
    assert got["metadata"]["labels"] == {"app": "web", "x": "y"}
    assert got["metadata"]["finalizers"] == ["b/y"]
    assert original == _pod()


def test_json_patch_failures() -> None:
    with pytest.raises(PatchError) as info:
        apply_patch(JSON_PATCH, _pod(), body([{"op": "remove", "path": "/spec/nope"}]), gvk=POD)
    assert info.value.status_code == 422
    assert info.value.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request", "reason": "Invalid",
        "details": {"causes": [{"reason": "UnexpectedServerResponse", "message": info.value.message}]}, "code": 422,
    }
    with pytest.raises(PatchError) as info:
        apply_patch(JSON_PATCH, _pod(), body([{"op": "test", "path": "/metadata/name", "value": "other"}]), gvk=POD)
    assert info.value.status_code == 422
    with pytest.raises(PatchError) as info:
        apply_patch(JSON_PATCH, _pod(), body({"op": "add"}), gvk=POD)
    assert info.value.status_code == 400
    assert info.value.message == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
    with pytest.raises(PatchError) as info:
        apply_patch(JSON_PATCH, _pod(), body([{"op": "test", "path": "/kind", "value": "Pod"}] * 10001), gvk=POD)
    assert info.value.status_code == 413 and info.value.status["reason"] == "RequestEntityTooLarge"
    assert info.value.message == "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"


@pytest.mark.parametrize("ctype", [STRATEGIC_MERGE_PATCH, MERGE_PATCH, JSON_PATCH])
def test_malformed_json_is_400(ctype: str) -> None:
    with pytest.raises(PatchError) as info:
        apply_patch(ctype, _pod(), b"{not json", gvk=POD)
    assert info.value.status_code == 400
    assert info.value.reason == "BadRequest"


def test_unsupported_media_types_are_415() -> None:
    for ctype in (APPLY_PATCH, "application/json", "text/plain"):
        with pytest.raises(PatchError) as info:
            apply_patch(ctype, _pod(), b"{}", gvk=POD)
        assert info.value.status_code == 415
        assert info.value.reason == "UnsupportedMediaType"
        assert "the body of the request was in an unknown format" in info.value.message
        assert info.value.status["reason"] == "UnsupportedMediaType" and info.value.status["code"] == 415


def test_strategic_patch_on_unknown_kind_is_415() -> None:
    with pytest.raises(PatchError) as info:
        apply_patch(STRATEGIC_MERGE_PATCH, {}, b"{}", gvk=("example.com", "v1", "Widget"))
    assert info.value.status_code == 415
