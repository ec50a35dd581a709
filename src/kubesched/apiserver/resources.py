"""The registry of resources the box serves: one :class:`ResourceInfo` per (group, version, plural).

Mirrors what kube-apiserver advertises in discovery (``APIResourceList``) for the kinds the
scheduler and kubectl use, plus each kind's *selectable fields* (the field-selector labels
accepted by list/watch; upstream: ``pkg/registry/<group>/<kind>/strategy.go`` ``GetAttrs`` /
``ToSelectableFields`` and ``pkg/apis/core/v1/conversion.go`` ``AddFieldLabelConversionFunc``).

A field getter returns ``dict[str, str]`` — the value of each selectable field as a string,
``""`` when absent — computed once per write and kept beside the stored bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "GROUPS",
    "RESOURCES",
    "ResourceInfo",
    "by_group_version",
    "find",
    "selectable_fields",
]

_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


#: the review kinds: POST only, answered from the request (no storage, no list/watch)
REVIEW_KINDS = frozenset(("TokenReview", "SelfSubjectReview", "SubjectAccessReview", "SelfSubjectAccessReview",
                          "LocalSubjectAccessReview", "SelfSubjectRulesReview"))


@dataclass(frozen=True)
class ResourceInfo:
    """One served resource (upstream ``metav1.APIResource`` + storage facts).

    ``storage`` is the key space in the store (``"events"`` is shared by core/v1 and
    events.k8s.io/v1, as upstream where both are views of one object). ``subresources``
    lists the served subresource names (``status``, ``binding``, ``eviction``, ``scale``).
    ``generation``: ``metadata.generation`` is set on create and bumped on spec changes.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _ALL_VERBS
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    generation: bool = False
    extra_fields: tuple[str, ...] = ()
    storage: str = ""
    # derived once, plain attributes (read several times per request; a frozen dataclass would
    # otherwise also hash all its fields at each dict or lru_cache lookup)
    group_version: str = field(init=False, repr=False, compare=False)
    api_version: str = field(init=False, repr=False, compare=False)
    #: the store key space (``storage`` or ``group/plural``)
    key: str = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)
    _plan: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        gv = f"{self.group}/{self.version}" if self.group else self.version
        object.__setattr__(self, "group_version", gv)
        object.__setattr__(self, "api_version", gv)
        object.__setattr__(self, "key", self.storage or (f"{self.group}/{self.plural}" if self.group
                                                         else self.plural))
        object.__setattr__(self, "_hash", hash((self.group, self.version, self.kind, self.plural, self.singular,
                                                self.namespaced, self.short_names, self.verbs, self.subresources,
                                                self.categories, self.generation, self.extra_fields,
                                                self.storage)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def qualified(self) -> str:
        """``pods`` or ``deployments.apps``: the name used in upstream error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def field_names(self) -> tuple[str, ...]:
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return base + self.extra_fields


def _r(group: str, version: str, kind: str, plural: str, namespaced: bool, **kw: Any) -> ResourceInfo:
    return ResourceInfo(group, version, kind, plural, kind.lower(), namespaced, **kw)


_EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
)

RESOURCES: tuple[ResourceInfo, ...] = (
    # core/v1
    _r("", "v1", "Namespace", "namespaces", False, short_names=("ns",), subresources=("status", "finalize"),
       verbs=("create", "delete", "get", "list", "patch", "update", "watch"), extra_fields=("status.phase",)),
    _r("", "v1", "Node", "nodes", False, short_names=("no",), subresources=("status",),
       extra_fields=("spec.unschedulable",)),
    _r("", "v1", "Pod", "pods", True, short_names=("po",), subresources=("status", "binding", "eviction"),
       categories=("all",), generation=True,
       extra_fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                     "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")),
    _r("", "v1", "Service", "services", True, short_names=("svc",), subresources=("status",), categories=("all",),
       verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")),
    _r("", "v1", "Binding", "bindings", True, verbs=("create",)),
    ResourceInfo("", "v1", "Endpoints", "endpoints", "endpoints", True, short_names=("ep",)),
    _r("", "v1", "ConfigMap", "configmaps", True, short_names=("cm",)),
    _r("", "v1", "Secret", "secrets", True, extra_fields=("type",)),
    _r("", "v1", "Event", "events", True, short_names=("ev",), extra_fields=_EVENT_FIELDS, storage="events"),
    _r("", "v1", "PersistentVolume", "persistentvolumes", False, short_names=("pv",), subresources=("status",)),
    _r("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, short_names=("pvc",),
       subresources=("status",)),
    _r("", "v1", "ReplicationController", "replicationcontrollers", True, short_names=("rc",),
       subresources=("status", "scale"), categories=("all",), generation=True, extra_fields=("status.replicas",)),
    _r("", "v1", "ServiceAccount", "serviceaccounts", True, short_names=("sa",)),
    # apps/v1
    _r("apps", "v1", "Deployment", "deployments", True, short_names=("deploy",), subresources=("status", "scale"),
       categories=("all",), generation=True),
    _r("apps", "v1", "ReplicaSet", "replicasets", True, short_names=("rs",), subresources=("status", "scale"),
       categories=("all",), generation=True, extra_fields=("status.replicas",)),
    _r("apps", "v1", "StatefulSet", "statefulsets", True, short_names=("sts",), subresources=("status", "scale"),
       categories=("all",), generation=True),
    _r("apps", "v1", "DaemonSet", "daemonsets", True, short_names=("ds",), subresources=("status",),
       categories=("all",), generation=True),
    _r("apps", "v1", "ControllerRevision", "controllerrevisions", True),
    # batch/v1
    _r("batch", "v1", "Job", "jobs", True, subresources=("status",), categories=("all",), generation=True,
       extra_fields=("status.successful",)),
    _r("batch", "v1", "CronJob", "cronjobs", True, short_names=("cj",), subresources=("status",),
       categories=("all",), generation=True),
    # policy/v1
    _r("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, short_names=("pdb",),
       subresources=("status",), generation=True),
    # scheduling.k8s.io/v1
    _r("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)),
    # scheduling.k8s.io/v1beta1 (GenericWorkload, 1.37) and v1alpha3 (CompositePodGroup): served only when
    # their gates are on (APIServer.served, kubesched.api.podgroups.served_api)
    _r("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", True, subresources=("status",)),
    _r("scheduling.k8s.io", "v1beta1", "Workload", "workloads", True),
    _r("scheduling.k8s.io", "v1alpha3", "CompositePodGroup", "compositepodgroups", True, subresources=("status",)),
    # storage.k8s.io/v1
    _r("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, short_names=("sc",)),
    _r("storage.k8s.io", "v1", "CSINode", "csinodes", False),
    _r("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    ResourceInfo("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", "csistoragecapacity", True),
    _r("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, subresources=("status",)),
    # coordination.k8s.io/v1
    _r("coordination.k8s.io", "v1", "Lease", "leases", True),
    # events.k8s.io/v1 (same storage as core/v1 events)
    _r("events.k8s.io", "v1", "Event", "events", True, short_names=("ev",), storage="events"),
    # resource.k8s.io/v1
    _r("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False, generation=True),
    _r("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True, subresources=("status",), generation=True),
    _r("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True, generation=True),
    _r("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False, generation=True,
       extra_fields=("spec.nodeName", "spec.driver")),
    # apiextensions.k8s.io/v1: the custom resources they define are served by kubesched.apiserver.crd
    _r("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
       short_names=("crd", "crds"), subresources=("status",), categories=("api-extensions",), generation=True),
    # rbac.authorization.k8s.io/v1 (evaluated by kubesched.apiserver.rbac)
    _r("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    _r("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    _r("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    _r("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    # create-only reviews, answered and never stored (authentication.k8s.io, authorization.k8s.io)
    _r("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=("create",)),
    _r("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, verbs=("create",)),
    _r("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False, verbs=("create",)),
    _r("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
       verbs=("create",)),
    _r("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True,
       verbs=("create",)),
    _r("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False, verbs=("create",)),
)

#: Group names in discovery order (the core group "" first).
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(r.group for r in RESOURCES))

_INDEX: dict[tuple[str, str, str], ResourceInfo] = {(r.group, r.version, r.plural): r for r in RESOURCES}


def find(group: str, version: str, plural: str) -> ResourceInfo | None:
    """The resource served at ``/apis/<group>/<version>/<plural>`` (``group`` "" = core), or None."""
    return _INDEX.get((group, version, plural))


def by_group_version() -> dict[str, list[ResourceInfo]]:
    """``{"v1": [...], "apps/v1": [...], ...}`` in discovery order."""
    out: dict[str, list[ResourceInfo]] = {}
    for r in RESOURCES:
        out.setdefault(r.group_version, []).append(r)
    return out


def _get(obj: dict[str, Any], path: str) -> str:
    return _accessor(path)(obj)


def _event_source(obj: dict[str, Any]) -> str:
    src = obj.get("source") or {}
    return str(src.get("component", "")) if isinstance(src, dict) else ""


_SPECIAL: dict[str, Callable[[dict[str, Any]], str]] = {
    "source": _event_source,
    # upstream pods: spec.hostNetwork is "false" when unset
    "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
    "spec.unschedulable": lambda o: "true" if (o.get("spec") or {}).get("unschedulable") else "false",
}


@lru_cache(maxsize=1024)
def _accessor(name: str) -> Callable[[dict[str, Any]], str]:
    """The value of the selectable field ``name`` (a dotted path) of an object as a string, ``""``
    when absent or not a scalar."""
    special = _SPECIAL.get(name)
    if special is not None:
        return special
    parts = tuple(name.split("."))

    def get(obj: dict[str, Any]) -> str:
        cur: Any = obj
        for part in parts:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(part)
            if cur is None:
                return ""
        return cur if cur.__class__ is str else _field_str(cur)

    return get


@lru_cache(maxsize=256)
def _plan(info: ResourceInfo) -> tuple[tuple[tuple[str, tuple[tuple[str, str], ...]], ...],
                                       tuple[tuple[str, Callable[[dict[str, Any]], str]], ...]]:
    """``info``'s selectable fields split for one pass over an object: the two-level plain fields
    grouped by their top-level key (``metadata``: name, namespace; ``spec``: nodeName, …), and
    the rest (special or deeper) with their accessors."""
    groups: dict[str, list[tuple[str, str]]] = {}
    rest: list[tuple[str, Callable[[dict[str, Any]], str]]] = []
    for name in info.field_names:
        parts = name.split(".")
        if name in _SPECIAL or len(parts) != 2:
            rest.append((name, _accessor(name)))
        else:
            groups.setdefault(parts[0], []).append((name, parts[1]))
    return tuple((top, tuple(keys)) for top, keys in groups.items()), tuple(rest)


def _field_str(v: Any) -> str:
    """A selectable field's value as a string ("" for an object or a list)."""
    if v.__class__ is str:
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return ""
    return str(v)


def selectable_fields(info: ResourceInfo, obj: dict[str, Any], names: Iterable[str] | None = None) -> dict[str, str]:
    """The selectable field values of ``obj`` as strings (upstream ``GetAttrs``).

    Empty values are left out (a missing field reads as ``""``); short values are interned,
    since thousands of objects share them (``default``, ``Pending``, ``default-scheduler``).
    """
    out: dict[str, str] = {}
    if names is not None:
        for name in names:
            v = _accessor(name)(obj)
            if v:
                out[name] = sys.intern(v) if len(v) <= 64 else v
        return out
    plan = info._plan
    if plan is None:
        plan = _plan(info)
        object.__setattr__(info, "_plan", plan)
    groups, rest = plan
    for top, keys in groups:
        d = obj.get(top)
        if not isinstance(d, dict):
            continue
        for name, key in keys:
            x = d.get(key)
            if x is None:
                continue
            v = x if x.__class__ is str else _field_str(x)
            if v:
                out[name] = sys.intern(v) if len(v) <= 64 else v
    for name, get in rest:
        v = get(obj)
        if v:
            out[name] = sys.intern(v) if len(v) <= 64 else v
    return out
