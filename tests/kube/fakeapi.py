"""An in-memory object store with the ``APIClient`` coroutine surface, for unit tests of pure
state machines only (the lease logic with a fake clock). Tests of HTTP behaviour run against the
box (``kubesched.apiserver``) over real HTTP instead."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.kube.client import APIError


class FakeAPI:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 0
        self.calls: list[tuple[str, str]] = []
        self.fail_writes: int | None = None  # HTTP status to answer writes with
        self.after_get: Any = None  # one-shot coroutine function run after a GET took its snapshot

    def _bump(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        return obj

    async def get(self, path: str, params: Any = None) -> dict[str, Any]:
        self.calls.append(("GET", path))
        if path not in self.objects:
            raise APIError(404, "NotFound", f"{path} not found")
        snap = copy.deepcopy(self.objects[path])
        hook, self.after_get = self.after_get, None
        if hook is not None:
            await hook()
        return snap

    async def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("POST", path))
        if self.fail_writes:
            raise APIError(self.fail_writes, "InternalError", "injected")
        full = f"{path}/{body['metadata']['name']}"
        if full in self.objects:
            raise APIError(409, "AlreadyExists", f"{full} already exists")
        obj = self._bump(copy.deepcopy(body))
        obj["metadata"].setdefault("uid", f"uid-{self.rv}")
        self.objects[full] = obj
        return copy.deepcopy(obj)

    async def replace(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("PUT", path))
        if self.fail_writes:
            raise APIError(self.fail_writes, "InternalError", "injected")
        cur = self.objects.get(path)
        if cur is None:
            raise APIError(404, "NotFound", f"{path} not found")
        if body["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
            raise APIError(409, "Conflict", "the object has been modified")
        obj = self._bump(copy.deepcopy(body))
        self.objects[path] = obj
        return copy.deepcopy(obj)
