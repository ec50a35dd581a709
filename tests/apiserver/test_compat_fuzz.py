"""Bad input never escapes as a traceback: admission, patches, tables and field validation on
arbitrary JSON either answer or raise their documented error."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.apiserver.admission import AdmissionError, admit
from kubesched.apiserver.fieldvalidation import unknown_fields
from kubesched.apiserver.patch import STRATEGIC_MERGE_PATCH, PatchError, apply_patch
from kubesched.apiserver.tables import to_table

_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "x", "-1", "1Gi", "Always", "In"]))
_keys = st.sampled_from(["metadata", "spec", "status", "name", "namespace", "containers", "resources", "requests", "limits",
                         "cpu", "tolerations", "affinity", "nodeAffinity", "labels", "image", "ports", "hostPort",
                         "conditions", "type", "$patch", "$setElementOrder/containers", "$retainKeys", "priority",
                         "$deleteFromPrimitiveList/finalizers", "finalizers", "capacity", "taints", "effect"])
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=4)),
                     max_leaves=25)
_obj = st.dictionaries(_keys, _json, max_size=5)

_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}


def _no_lookup(resource: str, ns: str, name: str) -> dict[str, Any] | None:
    return None


def _no_list(resource: str) -> list[dict[str, Any]]:
    return []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(resource=st.sampled_from(["pods", "nodes", "priorityclasses", "namespaces", "deployments", "jobs",
                                 "poddisruptionbudgets", "configmaps"]),
       obj=_obj, op=st.sampled_from(["CREATE", "UPDATE"]))
def test_admit_answers_or_raises_admission_error(resource: str, obj: dict[str, Any], op: str) -> None:
    try:
        out = admit(resource, obj, obj if op == "UPDATE" else None, operation=op, lookup=_no_lookup, list_objects=_no_list)
    except AdmissionError as exc:
        assert exc.code in (400, 403, 422)
        assert exc.status["kind"] == "Status" and exc.status["message"]
    else:
        assert isinstance(out, dict)


@settings(max_examples=300, deadline=None)
@given(patch=_obj)
def test_strategic_patch_answers_or_raises_patch_error(patch: dict[str, Any]) -> None:
    try:
        out = apply_patch(STRATEGIC_MERGE_PATCH, _POD, json.dumps(patch).encode(), gvk=("", "v1", "Pod"))
    except PatchError as exc:
        assert exc.status_code in (400, 415, 422, 500)
    else:
        assert isinstance(out, dict)


@settings(max_examples=200, deadline=None)
@given(obj=_obj, resource=st.sampled_from(["pods", "nodes", "events", "deployments", "services", "widgets"]))
def test_tables_and_field_validation_never_raise(obj: dict[str, Any], resource: str) -> None:
    table = to_table(resource, [obj], now=datetime(2026, 1, 1, tzinfo=UTC))
    assert len(table["rows"]) == 1
    assert isinstance(unknown_fields(("", "v1", "Pod"), obj), list)
