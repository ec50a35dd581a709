"""The pod and workload subresources of the box: ``pods/binding``, ``pods/eviction`` (PDBs),
``*/scale``.

Follows ``pkg/registry/core/pod/storage/storage.go`` (BindingREST, ``setPodNodeAndMetadata``),
``pkg/registry/core/pod/storage/eviction.go`` and ``pkg/registry/apps/deployment/storage``
(ScaleREST).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from kubesched.api import strategy
from kubesched.apiserver import crd as crdmod
from kubesched.apiserver import patch as patchmod
from kubesched.apiserver import resources as res
from kubesched.apiserver.controllers import pdb_selects, pdb_status
from kubesched.apiserver.errors import APIError, status_success
from kubesched.apiserver.handlers import Handlers, Route, check_resource_version_type, dry_run, json_response
from kubesched.apiserver.registry import by_plural, now_rfc3339
from kubesched.apiserver.storage import Conflict

__all__ = ["Subresources"]

#: a binding's answer (``Status{Success, 201}``), encoded once
_BOUND = orjson.dumps(status_success(201))


class Subresources(Handlers):
    """``pods/binding`` (and the ``bindings`` resource), ``pods/eviction`` with the PDB check (429
    when an eviction would break a budget), ``*/scale`` (autoscaling/v1 ``Scale`` of workloads and
    of custom resources with a scale subresource)."""

    async def _bind(self, request: web.Request, r: Route) -> web.Response:
        pods = res.find("", "v1", "pods")
        assert pods is not None
        info = pods
        self.write_fault(info, "binding", "create")
        dry = dry_run(request, "CreateOptions")
        body = await self._read_body(request)
        check_resource_version_type(("Binding", "v1"), body)
        target = body.get("target") or {}
        bmd = body.get("metadata") or {}
        ns = r.ns or ""
        name = r.name if r.name is not None else str(bmd.get("name") or "")
        if not name:
            raise APIError.invalid("Binding", "", "", [("FieldValueRequired", "metadata.name",
                                                        "metadata.name: Required value: name is required")])
        if bmd.get("name") and bmd["name"] != name:
            raise APIError.bad_request("name in URL does not match name in Binding object")
        if target.get("kind") not in (None, "", "Node"):
            raise APIError.invalid("Binding", "", name, [(
                "FieldValueNotSupported", "target.kind",
                f'target.kind: Unsupported value: "{target.get("kind")}": supported values: "Node", ""')])
        node = target.get("name") or ""
        if not node:
            raise APIError.invalid("Binding", "", name, [(
                "FieldValueRequired", "target.name", "target.name: Required value")])
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found("pods", "", name)
        pod = entry.obj()
        md, spec = pod["metadata"], pod.setdefault("spec", {})

        def conflict(why: str) -> APIError:
            return APIError.conflict("pods/binding", "", name, why)

        def precondition_failed(why: str) -> APIError:
            # the storage layer's precondition check (GuaranteedUpdate with the binding's UID
            # and resourceVersion), passed through by storeerr.InterpretUpdateError as a
            # Conflict on "pods" (pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata)
            return APIError.conflict("pods", "", name, f"StorageError: invalid object, Code: 4, Key: "
                                     f"/registry/pods/{ns}/{name}, ResourceVersion: 0, AdditionalErrorMsg: {why}")

        if bmd.get("uid") and bmd["uid"] != md.get("uid"):
            raise precondition_failed(f"Precondition failed: UID in precondition: {bmd['uid']}, "
                                      f"UID in object meta: {md.get('uid')}")
        if bmd.get("resourceVersion") and bmd["resourceVersion"] != md.get("resourceVersion"):
            raise precondition_failed(f"Precondition failed: ResourceVersion in precondition: "
                                      f"{bmd['resourceVersion']}, ResourceVersion in object meta: "
                                      f"{md.get('resourceVersion')}")
        if md.get("deletionTimestamp"):
            raise conflict(f"pod {name} is being deleted, cannot be assigned to a host")
        if spec.get("nodeName"):
            raise conflict(f'pod {name} is already assigned to node "{spec["nodeName"]}"')
        if spec.get("schedulingGates"):
            raise conflict(f"pod {name} has non-empty .spec.schedulingGates")
        spec["nodeName"] = node
        status = pod.setdefault("status", {})
        if self.features.enabled("ClearingNominatedNodeNameAfterBinding"):
            # clear the nomination hint (pkg/registry/core/pod/storage/storage.go L246-249)
            status.pop("nominatedNodeName", None)
        if bmd.get("annotations"):
            md.setdefault("annotations", {}).update(bmd["annotations"])
        labels = dict(bmd.get("labels") or {})
        nodes_info = by_plural("nodes")
        node_entry = self.store.get(nodes_info.key, "", node) if nodes_info is not None else None
        if node_entry is not None:  # PodTopologyLabels admission on the binding (admission.go admitBinding)
            # the entry's labels are the node's metadata.labels: the node is not decoded
            labels.update(strategy.pod_topology_labels(node_entry.labels, self.features))
        if labels:
            md.setdefault("labels", {}).update(labels)
        conds = status.setdefault("conditions", [])
        now = now_rfc3339()
        for c in conds:
            if c.get("type") == "PodScheduled":
                if c.get("status") != "True":
                    c["lastTransitionTime"] = now
                c["status"] = "True"
                c.pop("reason", None)
                c.pop("message", None)
                break
        else:
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now})
        if not dry:
            try:
                e = self.store.update(info.key, ns, name, pod, expect_rv=entry.rv)
            except Conflict:
                raise APIError.modified("pods", "", name) from None
            self._after_write(info, e)
        return json_response(_BOUND, 201)

    @staticmethod
    def _to_scale(obj: dict[str, Any]) -> dict[str, Any]:
        """autoscaling/v1 ``Scale`` of a workload.

        Upstream: ``pkg/registry/apps/deployment/storage`` ``scaleFromDeployment``.
        """
        md = obj["metadata"]
        spec, st = obj.get("spec") or {}, obj.get("status") or {}
        sel = spec.get("selector") or {}
        if "matchLabels" in sel or "matchExpressions" in sel:
            parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
            for ex in sel.get("matchExpressions") or []:
                op = ex.get("operator")
                vals = ",".join(ex.get("values") or [])
                parts.append({"In": f"{ex['key']} in ({vals})", "NotIn": f"{ex['key']} notin ({vals})",
                              "Exists": ex["key"], "DoesNotExist": f"!{ex['key']}"}.get(op, ex["key"]))
            selector = ",".join(parts)
        else:  # ReplicationController: a plain map
            selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        scale_md = {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_md,
                "spec": {"replicas": spec.get("replicas", 1)},
                "status": {"replicas": st.get("replicas", 0), "selector": selector}}

    async def _scale(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        assert r.name is not None
        entry = self._get_entry(r)
        obj = entry.obj()
        cr = self.crds.of_info(info)
        to_scale: Callable[[dict[str, Any]], dict[str, Any]] = \
            self._to_scale if cr is None else (lambda o: crdmod.scale_of(cr, o))
        if request.method == "GET":
            return json_response(to_scale(obj))
        if request.method not in ("PUT", "PATCH"):
            raise APIError.method_not_allowed()
        self.write_fault(info, "scale", "update" if request.method == "PUT" else "patch")
        scale = to_scale(obj)
        if request.method == "PUT":
            new_scale = await self._read_body(request)
        else:
            ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
            body = await request.read()
            try:
                new_scale = patchmod.apply_patch(ctype, scale, body, gvk=("autoscaling", "v1", "Scale"))
            except patchmod.PatchError as e:
                raise APIError(e.status) from None
        rv_s = (new_scale.get("metadata") or {}).get("resourceVersion")
        precondition = self._parse_rv(rv_s) if rv_s and rv_s != str(entry.rv) else None
        replicas = (new_scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise APIError.invalid("Scale", "autoscaling", r.name, [(
                "FieldValueInvalid", "spec.replicas",
                f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")])
        if cr is not None and cr.scale is not None:
            crdmod.set_path(obj, str(cr.scale.get("specReplicasPath") or ".spec.replicas"), replicas)
        else:
            obj.setdefault("spec", {})["replicas"] = replicas
        ns = self._space_ns(info, r.ns)
        new_entry = self.commit_update(info, ns, r.name, obj, entry, "", precondition,
                                        dry_run(request, "UpdateOptions"), manager=self._field_manager(request),
                                        manager_sub="scale")
        return json_response(to_scale(new_entry.obj()))

    async def _evict(self, request: web.Request, r: Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self.write_fault(info, "eviction", "create")
        dry = dry_run(request, "CreateOptions")
        body = await self._read_body(request)
        check_resource_version_type(("Eviction", "v1"), body)
        ns, name = r.ns or "", r.name
        bmd = body.get("metadata") or {}
        if bmd.get("name") and bmd["name"] != name:
            raise APIError.bad_request("name in URL does not match name in Eviction object")
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found("pods", "", name)
        pod = entry.obj()
        opts = body.get("deleteOptions") or {}
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase in ("Succeeded", "Failed", "Pending"):
            if not dry:
                self.delete_object(info, ns, name, opts, entry)
            return json_response(status_success(201), 201)
        pdbs = [p for p in self._pdbs_for(ns, pod)]
        if len(pdbs) > 1:
            raise APIError.internal("This pod has more than one PodDisruptionBudget, which the eviction "
                                    "subresource does not support.")
        if pdbs:
            pdb = pdbs[0]
            _expected, healthy, desired = self._pdb_counts(ns, pdb)
            if healthy - desired <= 0:
                pname = pdb["metadata"]["name"]
                raise APIError.too_many_requests(
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    [{"reason": "DisruptionBudget",
                      "message": f"The disruption budget {pname} needs {desired} healthy pods and has {healthy} "
                                 f"currently"}])
        if not dry:
            self.delete_object(info, ns, name, opts, entry)
        return json_response(status_success(201), 201)

    def _pdbs_for(self, ns: str, pod: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for e in self.store.list("policy/poddisruptionbudgets", ns):
            pdb = e.obj()
            if pdb_selects(pdb, pod):
                out.append(pdb)
        return out

    def _pdb_counts(self, ns: str, pdb: dict[str, Any]) -> tuple[int, int, int]:
        """(expected, currently healthy, desired healthy), computed now as the disruption
        controller would (so evictions are right even without the simulated controllers)."""
        st = pdb_status(pdb, [e.obj() for e in self.store.list("pods", ns)], now_rfc3339())
        return st["expectedPods"], st["currentHealthy"], st["desiredHealthy"]
