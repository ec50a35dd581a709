"""The finalizers a DELETE leaves for the garbage collector (:func:`kubesched.apiserver.gc.deletion_finalizers`),
as k8s.io/apiserver@v0.37.2 ``registry/generic/registry/store.go`` ``deletionFinalizersForGarbageCollection``
(``shouldOrphanDependents`` / ``shouldDeleteDependentsInForeground``) with the registries'
``DefaultGarbageCollectionPolicy`` (batch/v1 Jobs and v1 ReplicationControllers orphan)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.apiserver import resources as res
from kubesched.apiserver.gc import deletion_finalizers


def _info(group: str, version: str, plural: str) -> res.ResourceInfo:
    info = res.find(group, version, plural)
    assert info is not None
    return info


DEPLOY = _info("apps", "v1", "deployments")
JOB = _info("batch", "v1", "jobs")
RC = _info("", "v1", "replicationcontrollers")
POD = _info("", "v1", "pods")


@pytest.mark.parametrize(("info", "finalizers", "opts", "want"), [
    (DEPLOY, [], {}, None),                                             # DeleteDependents: background
    (DEPLOY, [], {"propagationPolicy": "Foreground"}, ["foregroundDeletion"]),
    (DEPLOY, [], {"propagationPolicy": "Orphan"}, ["orphan"]),
    (DEPLOY, ["x"], {"orphanDependents": True}, ["x", "orphan"]),        # the deprecated field wins
    (DEPLOY, ["orphan"], {"propagationPolicy": "Background"}, []),      # an explicit policy overrides
    (DEPLOY, ["orphan"], {}, None),                                     # a finalizer already there decides
    (JOB, [], {}, ["orphan"]),                                          # batch/v1 default: orphan
    (JOB, [], {"propagationPolicy": "Background"}, None),
    (RC, [], {}, ["orphan"]),
    (POD, [], {}, None),
    (POD, ["keep"], {"propagationPolicy": "Foreground"}, ["keep", "foregroundDeletion"]),
    (DEPLOY, ["foregroundDeletion"], {"propagationPolicy": "Orphan"}, ["orphan"]),
])
def test_deletion_finalizers(info: res.ResourceInfo, finalizers: list[str], opts: dict[str, Any],
                             want: list[str] | None) -> None:
    obj = {"metadata": {"name": "x", "finalizers": finalizers}}
    assert deletion_finalizers(info, obj, opts) == want
