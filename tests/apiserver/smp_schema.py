"""A JSON-schema twin of upstream strategicpatch's test type ``MergeItem`` (patch_test.go):
field names and patch strategies as upstream's test struct, so upstream's worked examples
read the same here."""

from __future__ import annotations

from typing import Any

_STR: dict[str, Any] = {"type": "string"}
_INT_LIST: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}
_SIMPLE_MAP: dict[str, Any] = {"type": "object", "additionalProperties": _STR}

MERGE_ITEM: dict[str, Any] = {"type": "object", "properties": {}}
RETAIN_KEYS_MERGE_ITEM: dict[str, Any] = {"type": "object", "properties": {}}

_merging_list = {"type": "array", "items": MERGE_ITEM, "x-kubernetes-patch-strategy": "merge",
                 "x-kubernetes-patch-merge-key": "name"}
MERGE_ITEM["properties"].update({
    "name": _STR, "value": _STR, "other": _STR,
    "mergingList": _merging_list,
    "nonMergingList": {"type": "array", "items": MERGE_ITEM},
    "mergingIntList": {**_INT_LIST, "x-kubernetes-patch-strategy": "merge"},
    "nonMergingIntList": _INT_LIST,
    # upstream: *MergeItem with merge/name; looked up as a slice it is a list of MergeItem
    "mergeItemPtr": _merging_list,
    "simpleMap": _SIMPLE_MAP,
    "replacingItem": {"type": "object", "x-kubernetes-patch-strategy": "replace"},
    "retainKeysMap": {**RETAIN_KEYS_MERGE_ITEM, "x-kubernetes-patch-strategy": "retainKeys"},
    "retainKeysMergingList": {"type": "array", "items": MERGE_ITEM,
                              "x-kubernetes-patch-strategy": "merge,retainKeys",
                              "x-kubernetes-patch-merge-key": "name"},
})
RETAIN_KEYS_MERGE_ITEM["properties"].update({
    "name": _STR, "value": _STR, "other": _STR, "simpleMap": _SIMPLE_MAP,
    "mergingIntList": {**_INT_LIST, "x-kubernetes-patch-strategy": "merge"},
    "mergingList": _merging_list,
    "nonMergingList": {"type": "array", "items": MERGE_ITEM},
})
