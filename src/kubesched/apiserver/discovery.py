"""Discovery and OpenAPI of the box: ``/version``, ``/api``, ``/apis``, resource lists,
``/openapi/v2`` and ``/openapi/v3`` (``staging/src/k8s.io/apiserver/pkg/endpoints/discovery``,
``pkg/server/routes/openapi.go``), for the built-in resources served at the emulated version
and the Established CRDs.
"""

from __future__ import annotations

import hashlib
import re
from types import ModuleType
from typing import Any

from aiohttp import web

from kubesched.apiserver import resources as res
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.handlers import JSON_MEDIA_TYPE, json_response
from kubesched.apiserver.registry import Registry
from kubesched.features import BINARY_VERSION

__all__ = ["VERSION_INFO", "Discovery"]

VERSION_INFO = {
    "major": str(BINARY_VERSION[0]),
    "minor": str(BINARY_VERSION[1]),
    "emulationMajor": str(BINARY_VERSION[0]),
    "emulationMinor": str(BINARY_VERSION[1]),
    "minCompatibilityMajor": str(BINARY_VERSION[0]),
    "minCompatibilityMinor": str(BINARY_VERSION[1] - 1),
    "gitVersion": f"v{BINARY_VERSION[0]}.{BINARY_VERSION[1]}.2-kubesched",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _version_priority(version: str) -> tuple[int, int, int]:
    """Sort key of Kubernetes API versions (``v1`` < ``v1beta1`` < ``v1alpha3``: preferred first)."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (3, 0, 0)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


class Discovery(Registry):
    """The discovery documents (``APIVersions``, ``APIGroupList``, ``APIGroup``,
    ``APIResourceList`` with subresources) and the OpenAPI v2/v3 documents of what is served:
    the built-in resources at the emulated version and gates (:meth:`served`) and the
    Established CRDs. ``host``/``port``/``scheme``: where the server listens (set at start)."""

    host: str
    port: int
    scheme: str
    version_info: dict[str, str]

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{self.scheme}://{host}:{self.port}"

    def _api_versions(self, request: web.Request) -> dict[str, Any]:
        host = request.host or f"{self.host}:{self.port}"
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}

    def _group_entry(self, group: str) -> dict[str, Any]:
        # kube-apiserver's version priority: GA, then beta, then alpha (v1 > v1beta1 > v1alpha3)
        versions = sorted({r.version for r in self._all_infos() if r.group == group and self.served(r)},
                          key=_version_priority)
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}

    def _api_group_list(self) -> dict[str, Any]:
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group_entry(g) for g in self._groups() if g]}

    def _api_group(self, group: str) -> dict[str, Any]:
        if group not in self._groups() or not group:
            raise APIError.no_route()
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group)}

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        gv = f"{group}/{version}" if group else version
        infos = [r for r in res.by_group_version().get(gv) or () if self.served(r)] or \
            [r for r in self.crds.infos() if r.group_version == gv]
        if not infos:
            raise APIError.no_route()
        out: list[dict[str, Any]] = []
        for r in infos:
            item: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                                    "kind": r.kind, "verbs": list(r.verbs)}
            if r.short_names:
                item["shortNames"] = list(r.short_names)
            if r.categories:
                item["categories"] = list(r.categories)
            out.append(item)
            for sub in r.subresources:
                s: dict[str, Any] = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                     "kind": r.kind, "verbs": ["get", "patch", "update"]}
                if sub == "binding":
                    s.update(kind="Binding", verbs=["create"])
                elif sub == "eviction":
                    s.update(group="policy", version="v1", kind="Eviction", verbs=["create"])
                elif sub == "scale":
                    s.update(group="autoscaling", version="v1", kind="Scale")
                elif sub == "finalize":
                    s.update(verbs=["update"])
                out.append(s)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}

    def _openapi(self, request: web.Request, rest: list[str]) -> web.StreamResponse:
        from kubesched.apiserver import openapi  # loaded at the first document asked for

        served = [(r.group, r.version, r.kind, r.plural, r.namespaced) for r in res.RESOURCES if self.served(r)]
        if rest == ["v2"]:
            if "protobuf" in request.headers.get("Accept", ""):  # what kubectl asks for
                return web.Response(body=openapi.v2_protobuf(self.api_version),
                                    headers={"Content-Type": openapi.V2_PROTOBUF_CONTENT_TYPE})
            return web.Response(body=openapi.v2_document(served, self.api_version), content_type=JSON_MEDIA_TYPE)
        if rest == ["v3"]:
            index = openapi.v3_index(self.url, served, self.api_version)
            for gv in sorted({r.group_version for r in self.crds.infos()}):
                body = self._openapi_custom(openapi, *gv.split("/"))
                digest = hashlib.sha512(body).hexdigest().upper()
                index["paths"][f"apis/{gv}"] = {"serverRelativeURL": f"/openapi/v3/apis/{gv}?hash={digest}"}
            return json_response(index)
        if len(rest) >= 3 and rest[0] == "v3":
            if rest[1] == "api":
                group, version = "", rest[2]
            elif rest[1] == "apis" and len(rest) >= 4:
                group, version = rest[2], rest[3]
            else:
                raise APIError.no_route()
            doc = openapi.v3_group_version(group, version, served, self.api_version)
            if doc is None and any(r.group == group and r.version == version for r in self.crds.infos()):
                doc = self._openapi_custom(openapi, group, version)
            if doc is None:
                raise APIError.no_route()
            return web.Response(body=doc, content_type=JSON_MEDIA_TYPE)
        raise APIError.no_route()

    def _openapi_custom(self, openapi: ModuleType, group: str, version: str) -> bytes:
        crs = sorted((c for c in self.crds.by_gvr.values() if c.info.group == group and c.info.version == version),
                     key=lambda c: c.info.kind)
        return openapi.v3_custom(group, version, [(c.info.kind, c.info.plural, c.info.namespaced, c.schema, c.status)
                                                  for c in crs], self.api_version)
