"""What kube-apiserver does to an object between decoding and storage, for the box.

``admit(resource, obj, old, operation=..., lookup=..., list_objects=..., features=...)`` returns
the object to store (a new dict) or raises :class:`AdmissionError` carrying a ready upstream
``Status`` body. ``features`` (a :class:`~kubesched.features.FeatureGate`, None = v1.37 defaults)
is the API server's: its emulated version picks the API schemas decoding uses (a v1.37 field is
unknown at 1.34) and its gates drive the strategies and validation below. In order, as the API
server:

1. decoding checks — a value of the wrong JSON type for its field, or a quantity that does not
   parse → 400 ``BadRequest`` (``Pod in version "v1" cannot be handled as a Pod: json: cannot
   unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container``,
   ``... quantities must match ...``, see :func:`fieldvalidation.decode_error`); ``null``
   fields and fields the kind does not have are dropped, as decoding into the Go types and
   encoding back does (strict field validation, when asked for, happens before: see
   :mod:`kubesched.apiserver.fieldvalidation`);
2. defaulting (``pkg/apis/core/v1/defaults.go``, apps/batch ``defaults.go``): pods get
   ``schedulerName: default-scheduler``, ``restartPolicy``, ``dnsPolicy``,
   ``terminationGracePeriodSeconds``, ``securityContext``, ``enableServiceLinks``, container
   ``terminationMessagePath/Policy``, ``imagePullPolicy`` (``Always`` for ``:latest`` or no
   tag), port ``protocol``, and requests defaulted from limits; workloads their replicas,
   strategies and pod-template defaults; services type, session affinity, ports; nodes
   ``status.allocatable`` from ``capacity``; priority classes ``preemptionPolicy``;
3. on pod create the registry's ``PrepareForCreate`` (``pkg/registry/core/pod/strategy.go``):
   status reset to ``{phase: Pending, qosClass}`` (plus ``PodScheduled=False`` reason
   ``SchedulingGated`` for a pod with scheduling gates), ``metadata.generation: 1``, fields of
   disabled gates dropped (``spec.schedulingGroup`` without GenericWorkload) and
   ``matchLabelKeys`` merged into the spread/affinity selectors (:mod:`kubesched.api.strategy`);
   on update the gated fields the old pod does not use are dropped; nodes and DRA objects
   likewise (``status.declaredFeatures`` without NodeDeclaredFeatures, ResourceSlice device
   taints without DRADeviceTaints, ...);
4. admission plugins: ``Priority`` (``plugin/pkg/admission/priority/admission.go``: the pod's
   PriorityClass → ``spec.priority`` and ``spec.preemptionPolicy``; the global default class;
   0 when none; ``system-node-critical``/``system-cluster-critical`` built in; 403
   ``pods "x" is forbidden: no PriorityClass with name foo was found``; a pod's own
   ``spec.priority`` must match; one global default PriorityClass only) and
   ``DefaultTolerationSeconds`` (``not-ready``/``unreachable`` NoExecute tolerations, 300 s)
   and ``DefaultStorageClass`` (a claim created without a class gets the default StorageClass);
   a Service created gets its ClusterIP and node ports (:func:`_allocate_service`);
5. validation (:mod:`kubesched.api.validation`, options from the gates and the old pod as
   ``GetValidationOptionsFromPodSpecAndMeta``) → 422 ``Invalid`` with field causes and
   upstream's message; a pod UPDATE also gets ``ValidatePodUpdate``'s rule that only images,
   tolerations (additions), deadlines and scheduling gates (removals) may change in the spec
   (so ``schedulingGroup`` is immutable).

``resource`` is the plural resource name, optionally with a subresource (``pods/status``);
subresource writes get only node-status defaulting. ``operation`` is ``CREATE`` or ``UPDATE``
(anything else passes the object through). ``lookup(resource, namespace, name)`` reads a stored
object; ``list_objects(resource)`` lists a resource across namespaces.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from kubesched.api import podgroups, rbacvalidation, strategy, validation
from kubesched.api.quantity import nano_value
from kubesched.apiserver import fieldvalidation
from kubesched.controllers import pvcontroller

if TYPE_CHECKING:
    from kubesched.features import FeatureGate

__all__ = ["SYSTEM_PRIORITY_CLASSES", "AdmissionError", "admit", "apply_defaults", "pod_qos_class"]

#: The two PriorityClasses the API server creates at start (``pkg/apis/scheduling/types.go``).
SYSTEM_PRIORITY_CLASSES: dict[str, dict[str, Any]] = {
    name: {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": description,
    }
    for name, value, description in (
        ("system-node-critical", 2_000_001_000,
         "Used for system critical pods that must not be moved from their current node."),
        ("system-cluster-critical", 2_000_000_000,
         "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
    )
}

_KINDS = {
    "pods": ("", "Pod"), "nodes": ("", "Node"), "namespaces": ("", "Namespace"), "services": ("", "Service"),
    "priorityclasses": ("scheduling.k8s.io", "PriorityClass"), "configmaps": ("", "ConfigMap"),
    "secrets": ("", "Secret"), "endpoints": ("", "Endpoints"), "events": ("", "Event"),
    "persistentvolumes": ("", "PersistentVolume"), "persistentvolumeclaims": ("", "PersistentVolumeClaim"),
    "replicationcontrollers": ("", "ReplicationController"), "serviceaccounts": ("", "ServiceAccount"),
    "deployments": ("apps", "Deployment"), "replicasets": ("apps", "ReplicaSet"),
    "statefulsets": ("apps", "StatefulSet"),
    "daemonsets": ("apps", "DaemonSet"), "jobs": ("batch", "Job"), "cronjobs": ("batch", "CronJob"),
    "poddisruptionbudgets": ("policy", "PodDisruptionBudget"), "storageclasses": ("storage.k8s.io", "StorageClass"),
    "leases": ("coordination.k8s.io", "Lease"),
    "podgroups": ("scheduling.k8s.io", "PodGroup"), "workloads": ("scheduling.k8s.io", "Workload"),
    "compositepodgroups": ("scheduling.k8s.io", "CompositePodGroup"),
}
#: the workload API's resources (:mod:`kubesched.api.podgroups`)
_WORKLOAD_API = frozenset(("podgroups", "workloads", "compositepodgroups"))
_GROUPS = {r: g for r, (g, _k) in _KINDS.items()}


class AdmissionError(Exception):
    """A write the API server refuses. ``status`` is the complete ``Status`` body to send,
    ``code`` its HTTP status code."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.code: int = int(status.get("code", 500))


def _clone(obj: Any) -> Any:
    """A deep copy of a JSON value (orjson round trip: ~10x ``copy.deepcopy``)."""
    try:
        return orjson.loads(orjson.dumps(obj))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(obj)


def _drop_nulls(v: Any) -> Any:
    """What decoding into Go types and encoding back does to ``null``: the field disappears."""
    if isinstance(v, dict):
        return {k: _drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_nulls(x) for x in v]
    return v


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason}
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _forbidden(resource: str, name: str, message: str) -> AdmissionError:
    group = _GROUPS.get(resource, "")
    qualified = f"{resource}.{group}" if group else resource
    text = f'{qualified} "{name}" is forbidden: {message}' if name else f"{qualified} is forbidden: {message}"
    details: dict[str, Any] = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    if not name:
        del details["name"]
    return AdmissionError(_status(403, "Forbidden", text, details))


def _invalid(kind: str, group: str, name: str, errs: list[validation.FieldError]) -> AdmissionError:
    details: dict[str, Any] = {"name": name, "kind": kind, "causes": validation.status_causes(errs)}
    if group:
        details["group"] = group
    return AdmissionError(_status(422, "Invalid", validation.invalid_message(kind, name, errs, group=group), details))


# ---- defaulting ---------------------------------------------------------------------------------


def _image_pull_policy(image: str) -> str:
    """``SetDefaults_Container``: ``Always`` when the tag is ``latest`` or missing (no digest)."""
    ref = image.split("@", 1)
    if len(ref) == 2:  # digest reference: no tag defaulting
        name = ref[0]
        last = name.rsplit("/", 1)[-1]
        tag = last.split(":", 1)[1] if ":" in last else ""
        return "Always" if tag == "latest" else "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _default_container(c: dict[str, Any], *, requests_from_limits: bool) -> None:
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = _image_pull_policy(str(c.get("image", "")))
    for port in c.get("ports") or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    res = c.get("resources")
    if res is None:
        c["resources"] = res = {}
    if requests_from_limits and isinstance(res, dict) and isinstance(res.get("limits"), dict):
        requests = res.get("requests")
        if not isinstance(requests, dict):
            res["requests"] = requests = {}
        for k, v in res["limits"].items():
            requests.setdefault(k, copy.deepcopy(v))


def _default_pod_spec(spec: dict[str, Any], *, pod: bool) -> None:
    """``SetDefaults_PodSpec`` + container defaults (+ requests from limits for a Pod only)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if pod:
        spec.setdefault("enableServiceLinks", True)
    for cname in ("containers", "initContainers"):
        for c in spec.get(cname) or []:
            if isinstance(c, dict):
                _default_container(c, requests_from_limits=pod)
    if spec.get("hostNetwork"):
        for c in spec.get("containers") or []:
            for port in (c.get("ports") or []) if isinstance(c, dict) else []:
                if isinstance(port, dict) and not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")


def _template_spec(obj: dict[str, Any], *path: str) -> dict[str, Any] | None:
    cur: Any = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur if isinstance(cur, dict) else None


_WORKLOAD_TEMPLATES = {
    "deployments": ("spec", "template", "spec"), "replicasets": ("spec", "template", "spec"),
    "statefulsets": ("spec", "template", "spec"), "daemonsets": ("spec", "template", "spec"),
    "replicationcontrollers": ("spec", "template", "spec"), "jobs": ("spec", "template", "spec"),
    "cronjobs": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _default_rolling_update(spec: dict[str, Any], key: str, rolling_update: dict[str, Any]) -> None:
    """Default ``spec[key]`` (a Deployment's ``strategy``, a StatefulSet's or DaemonSet's
    ``updateStrategy``) to type ``RollingUpdate`` and, when it is one, its ``rollingUpdate`` fields
    to ``rolling_update`` (each set only if absent; non-dict values are left for validation)."""
    strategy = spec.setdefault(key, {})
    if not isinstance(strategy, dict):
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        if isinstance(ru, dict):
            for field, value in rolling_update.items():
                ru.setdefault(field, value)


def _default_workload(resource: str, obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if resource in ("deployments", "replicasets", "statefulsets", "replicationcontrollers"):
        spec.setdefault("replicas", 1)
    if resource in ("deployments", "statefulsets", "daemonsets"):
        spec.setdefault("revisionHistoryLimit", 10)
    if resource == "deployments":
        spec.setdefault("progressDeadlineSeconds", 600)
        _default_rolling_update(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    elif resource == "statefulsets":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        _default_rolling_update(spec, "updateStrategy", {"partition": 0})
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    elif resource == "daemonsets":
        _default_rolling_update(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    elif resource == "jobs":
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        # JobPodReplacementPolicy (GA): Failed with a podFailurePolicy, else TerminatingOrFailed
        spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
        spec.setdefault("manualSelector", False)
    elif resource == "cronjobs":  # SetDefaults_CronJob (pkg/apis/batch/v1/defaults.go:72)
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
    template = _template_spec(obj, *_WORKLOAD_TEMPLATES[resource])
    if template is not None:
        _default_pod_spec(template, pod=False)


def _default_service(obj: dict[str, Any]) -> None:
    """``SetDefaults_Service``: type, sessionAffinity, port protocol and targetPort, traffic policies."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("sessionAffinity", "None")
    stype = spec.setdefault("type", "ClusterIP")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    if stype in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if stype in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if stype == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


#: The ``metav1.Time`` fields of each kind's status conditions: a zero Time is encoded as
#: ``null`` by Go (``omitempty`` does not omit a struct), so the real API server answers
#: ``"lastProbeTime": null`` for a condition written without one.
_CONDITION_TIMES = {"pods": ("lastProbeTime", "lastTransitionTime"),
                    "nodes": ("lastHeartbeatTime", "lastTransitionTime")}


def _null_condition_times(resource: str, obj: dict[str, Any]) -> None:
    fields = _CONDITION_TIMES.get(resource)
    status = obj.get("status") if fields else None
    conds = status.get("conditions") if isinstance(status, dict) else None
    if not fields or not isinstance(conds, list):
        return
    for c in conds:
        if isinstance(c, dict):
            for f in fields:
                c.setdefault(f, None)


def apply_defaults(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Upstream v1 defaulting (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/apps/v1/defaults.go``,
    ``pkg/apis/batch/v1/defaults.go``) for pods, pod templates of workloads, nodes, services,
    namespaces and priority classes (mutates and returns ``obj``)."""
    if resource == "pods":
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            _default_pod_spec(spec, pod=True)
    elif resource in _WORKLOAD_TEMPLATES:
        _default_workload(resource, obj)
    elif resource == "services":
        _default_service(obj)
    elif resource in ("nodes", "nodes/status"):
        status = obj.get("status")
        if isinstance(status, dict) and isinstance(status.get("capacity"), dict) and status.get("allocatable") is None:
            status["allocatable"] = copy.deepcopy(status["capacity"])
    elif resource == "priorityclasses":
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
    elif resource in ("persistentvolumes", "persistentvolumeclaims"):
        # SetDefaults_PersistentVolume / SetDefaults_PersistentVolumeClaimSpec (core/v1/defaults.go)
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
            if resource == "persistentvolumes" and not spec.get("persistentVolumeReclaimPolicy"):
                spec["persistentVolumeReclaimPolicy"] = "Retain"
    elif resource == "secrets":
        if not obj.get("type"):
            obj["type"] = "Opaque"  # SetDefaults_Secret
    elif resource in ("rolebindings", "clusterrolebindings"):
        rbacvalidation.default_rbac(obj)
    elif resource == "namespaces":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
    return obj


def pod_qos_class(pod: Mapping[str, Any]) -> str:
    """``qos.GetPodQOS`` (``pkg/apis/core/helper/qos``): Guaranteed, Burstable or BestEffort."""
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        for name, q in (res.get("requests") or {}).items():
            if name in ("cpu", "memory"):
                n = nano_value(q)
                if n > 0:
                    requests[name] = requests.get(name, 0) + n
        found = set()
        for name, q in (res.get("limits") or {}).items():
            if name in ("cpu", "memory"):
                n = nano_value(q)
                if n > 0:
                    found.add(name)
                    limits[name] = limits.get(name, 0) + n
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(k) == v for k, v in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


# ---- admission plugins -----------------------------------------------------------------------------

_DEFAULT_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"))


def _default_toleration_seconds(pod: dict[str, Any]) -> None:
    """``DefaultTolerationSeconds`` (plugin/pkg/admission/defaulttolerationseconds)."""
    spec = pod.setdefault("spec", {})
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    for key, effect in _DEFAULT_TOLERATIONS:
        tolerated = False
        for t in tolerations:
            if not isinstance(t, dict):
                continue
            t_effect = t.get("effect") or ""
            if t_effect not in ("", effect):
                continue
            t_key = t.get("key") or ""
            if t_key in (key, ""):
                tolerated = True
                break
        if not tolerated:
            tolerations.append({"key": key, "operator": "Exists", "effect": effect, "tolerationSeconds": 300})
    if tolerations:
        spec["tolerations"] = tolerations


#: The box's ``--service-cluster-ip-range`` (kube-apiserver's default, 10.0.0.0/24); the first
#: address is the ``kubernetes`` Service's, as upstream reserves it.
SERVICE_CLUSTER_IP_RANGE = ipaddress.ip_network("10.0.0.0/24")
#: ``--service-node-port-range`` (default 30000-32767).
NODE_PORT_RANGE = range(30000, 32768)


def _allocate_service(svc: dict[str, Any], list_objects: Callable[[str], list[dict[str, Any]]]) -> None:
    """The service REST storage's allocation on create (``pkg/registry/core/service/storage/
    alloc.go``): a ClusterIP from the service range for every type but ExternalName (``None``,
    headless, stays), ``clusterIPs``, ``ipFamilies: [IPv4]``, ``ipFamilyPolicy: SingleStack``,
    and a ``nodePort`` per port of a NodePort or LoadBalancer Service. Simplification: the lowest
    free address/port is taken where upstream picks at random."""
    spec = svc.get("spec")
    if not isinstance(spec, dict) or spec.get("type", "ClusterIP") == "ExternalName":
        return
    others = [o.get("spec") or {} for o in list_objects("services")]
    if not spec.get("clusterIP") and not spec.get("clusterIPs"):
        used = {str(ip) for o in others for ip in [o.get("clusterIP"), *(o.get("clusterIPs") or [])] if ip}
        hosts = SERVICE_CLUSTER_IP_RANGE.hosts()
        next(hosts)  # the kubernetes Service's
        ip = next((str(h) for h in hosts if str(h) not in used), None)
        if ip is None:
            raise AdmissionError(_status(500, "InternalError", "Internal error occurred: failed to allocate a "
                                         "serviceIP: range is full"))
        spec["clusterIP"] = ip
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        used_ports = {p.get("nodePort") for o in others for p in o.get("ports") or [] if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                free = next((n for n in NODE_PORT_RANGE if n not in used_ports), None)
                if free is None:
                    raise AdmissionError(_status(500, "InternalError", "Internal error occurred: failed to "
                                                 "allocate a nodePort: range is full"))
                port["nodePort"] = free
                used_ports.add(free)


def _apply_scheduling_gated_condition(pod: dict[str, Any]) -> None:
    """``applySchedulingGatedCondition`` (pkg/registry/core/pod/strategy.go:953, PrepareForCreate):
    a new pod with scheduling gates and no PodScheduled condition gets ``PodScheduled=False``,
    reason ``SchedulingGated`` (transition time now, as ``UpdatePodCondition`` sets it)."""
    if not (pod.get("spec") or {}).get("schedulingGates"):
        return
    status = pod.setdefault("status", {})
    conds = status.setdefault("conditions", [])
    if any(isinstance(c, dict) and c.get("type") == "PodScheduled" for c in conds):
        return
    conds.append({"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                  "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates"})


def _admit_pod_priority(pod: dict[str, Any], old: Mapping[str, Any] | None, operation: str,
                        lookup: Callable[[str, str, str], dict[str, Any] | None],
                        list_objects: Callable[[str], list[dict[str, Any]]]) -> None:
    spec = pod.setdefault("spec", {})
    name = str((pod.get("metadata") or {}).get("name") or "")
    if operation == "UPDATE":
        old_spec = (old or {}).get("spec") or {}
        if spec.get("priority") is None and old_spec.get("priority") is not None:
            spec["priority"] = old_spec["priority"]
        if spec.get("preemptionPolicy") is None and old_spec.get("preemptionPolicy") is not None:
            spec["preemptionPolicy"] = old_spec["preemptionPolicy"]
        return
    class_name = spec.get("priorityClassName") or ""
    classes = list_objects("priorityclasses") if not class_name else []
    try:
        resolved, priority, policy = validation.resolve_pod_priority(
            spec, lambda n: lookup("priorityclasses", "", n), classes)
    except validation.PriorityAdmissionError as exc:
        raise _forbidden("pods", name, str(exc)) from None
    if resolved:
        spec["priorityClassName"] = resolved
    spec["priority"] = priority
    if policy is not None:
        spec["preemptionPolicy"] = policy


def _admit_priority_class(pc: dict[str, Any], old: Mapping[str, Any] | None, operation: str,
                          list_objects: Callable[[str], list[dict[str, Any]]]) -> None:
    if not pc.get("globalDefault"):
        return
    if operation == "UPDATE" and old is not None and old.get("globalDefault"):
        return
    name = str((pc.get("metadata") or {}).get("name") or "")
    for other in list_objects("priorityclasses"):
        other_name = (other.get("metadata") or {}).get("name")
        if other.get("globalDefault") and other_name != name:
            raise _forbidden("priorityclasses", name,
                             f"PriorityClass {other_name} is already marked as default. Only one default can exist")


# ---- the workload API (scheduling.k8s.io/v1beta1, v1alpha3) ------------------------------------------


def _admit_workload_api(base: str, out: dict[str, Any], old: dict[str, Any] | None, *, operation: str,
                        lookup: Callable[[str, str, str], dict[str, Any] | None],
                        list_objects: Callable[[str], list[dict[str, Any]]],
                        features: FeatureGate | None) -> dict[str, Any]:
    """Workload / PodGroup / CompositePodGroup writes (:mod:`kubesched.api.podgroups`), in
    kube-apiserver's order: defaulting (decoding), mutating admission on create (Priority,
    PodGroupProtection), the strategy (``PrepareForCreate``/``PrepareForUpdate``), validation."""
    group, kind = _KINDS[base]
    out["kind"] = kind
    name = str((out.get("metadata") or {}).get("name") or "")
    podgroups.default_object(out, features)
    if operation == "CREATE":
        try:
            podgroups.admit_priority(out, get_class=lambda n: lookup("priorityclasses", "", n),
                                     list_classes=lambda: list_objects("priorityclasses"), features=features)
        except podgroups.PodGroupAdmissionError as exc:
            raise _forbidden(base, name, str(exc)) from None
        podgroups.add_protection_finalizer(out, features)
        podgroups.prepare_for_create(out, features)
        errs = podgroups.validate(out)
    else:
        assert old is not None
        podgroups.prepare_for_update(out, old, features)
        errs = podgroups.validate_update(out, old, features)
    if errs:
        raise _invalid(kind, group, name, errs)
    if kind == "Workload" and isinstance(out.get("spec"), dict):
        _null_template_constraints(out["spec"])
    return out


def _null_template_constraints(spec: dict[str, Any]) -> None:
    """``PodGroupTemplate.schedulingConstraints`` has no ``omitempty``: the API serves ``null``."""
    for t in spec.get("podGroupTemplates") or []:
        if isinstance(t, dict):
            t.setdefault("schedulingConstraints", None)
    for c in spec.get("compositePodGroupTemplates") or []:
        if isinstance(c, dict):
            _null_template_constraints(c)


def _admit_workload_api_status(out: dict[str, Any], old: dict[str, Any], features: FeatureGate | None) -> None:
    """A ``/status`` write of a PodGroup or CompositePodGroup: spec and metadata kept, status validated."""
    base = {"PodGroup": "podgroups", "CompositePodGroup": "compositepodgroups"}.get(str(old.get("kind") or ""))
    if base is None:
        return
    group, kind = _KINDS[base]
    out["kind"] = kind
    podgroups.prepare_for_status_update(out, old, features)
    errs = podgroups.validate_status_update(out, old)
    if errs:
        raise _invalid(kind, group, str((out.get("metadata") or {}).get("name") or ""), errs)


# ---- entry point -------------------------------------------------------------------------------------


def admit(
    resource: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    *,
    operation: str,
    lookup: Callable[[str, str, str], dict[str, Any] | None],
    list_objects: Callable[[str], list[dict[str, Any]]],
    features: FeatureGate | None = None,
) -> dict[str, Any]:
    """Default, admit and validate a write; returns the object to store (``obj`` is not mutated).

    ``features``: the API server's gates and emulated version (None: v1.37 defaults).
    Raises :class:`AdmissionError` (400 undecodable quantity, 403 Forbidden from an admission
    plugin, 422 Invalid from validation).
    """
    api = features.emulated_version if features is not None else None
    base, _, sub = resource.partition("/")
    try:
        raw = orjson.dumps(obj)
        out = orjson.loads(raw)
        has_null = b"null" in raw
    except (TypeError, orjson.JSONEncodeError):
        out, has_null = copy.deepcopy(obj), True
    if operation not in ("CREATE", "UPDATE"):
        return out
    if sub:
        if base == "nodes" and sub == "status":
            apply_defaults("nodes/status", out)
        if base == "pods" and sub == "status" and old is not None:
            strategy.drop_disabled_pod_fields(out, old, features)  # podStatusStrategy.PrepareForUpdate
        if sub == "status" and base in _WORKLOAD_API and old is not None:
            _admit_workload_api_status(out, old, features)
        if sub == "status":
            _null_condition_times(base, out)
        return out
    group, kind = _KINDS.get(base, ("", str(out.get("kind") or "")))
    if base not in _KINDS:
        api_version = str(out.get("apiVersion") or "v1")
        group = api_version.rpartition("/")[0]
    version = "v1"
    if base in _WORKLOAD_API:
        version = str(out.get("apiVersion") or "").rpartition("/")[2] or "v1beta1"
    problem = fieldvalidation.decode_error((group, version, kind), out, api)
    if problem:
        raise AdmissionError(_status(400, "BadRequest", fieldvalidation.decode_error_message(kind, version, problem)))
    if has_null:
        out = _drop_nulls(out)
    fieldvalidation.prune_unknown_fields((group, version, kind), out, api)
    if base in _WORKLOAD_API:
        return _admit_workload_api(base, out, old, operation=operation, lookup=lookup, list_objects=list_objects,
                                   features=features)
    apply_defaults(base, out)
    _null_condition_times(base, out)
    pod_options = None
    if base == "pods":
        if operation == "CREATE":
            out["status"] = {"phase": "Pending", "qosClass": pod_qos_class(out)}
            out.setdefault("metadata", {})["generation"] = 1
            strategy.prepare_pod_for_create(out, features)
            _apply_scheduling_gated_condition(out)
            node_name = (out.get("spec") or {}).get("nodeName")
            if node_name:  # PodTopologyLabels admission (mutating, on create with spec.nodeName)
                node = lookup("nodes", "", str(node_name))
                topo = strategy.pod_topology_labels(((node or {}).get("metadata") or {}).get("labels"), features)
                if topo:
                    out.setdefault("metadata", {}).setdefault("labels", {}).update(topo)
        elif old is not None:
            strategy.prepare_pod_for_update(out, old, features)
        pod_options = validation.pod_validation_options(
            features, (old or {}).get("spec") if operation == "UPDATE" else None)
        _default_toleration_seconds(out)  # upstream plugin handles Create and Update
        _admit_pod_priority(out, old, operation, lookup, list_objects)
    elif base == "priorityclasses":
        _admit_priority_class(out, old, operation, list_objects)
    elif base == "nodes":
        strategy.prepare_node(out, old if operation == "UPDATE" else None, features)
    elif base in _WORKLOAD_TEMPLATES:
        pod_options = validation.pod_validation_options(features)
    else:
        strategy.drop_disabled_dra_fields(out, old if operation == "UPDATE" else None, features, kind)
    if base == "services" and operation == "CREATE":
        _allocate_service(out, list_objects)
    if base == "persistentvolumeclaims" and operation == "CREATE":
        # DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault/admission.go:86)
        out = pvcontroller.with_default_class(out, list_objects("storageclasses")) or out
    typed = out if out.get("kind") else {**out, "kind": kind}
    if base == "pods" and operation == "UPDATE" and old is not None:
        errs = validation.validate_pod_update(typed, old, pod_options)
    elif kind in rbacvalidation.RBAC_KINDS and operation == "UPDATE" and old is not None:
        errs = rbacvalidation.validate_rbac_update(typed, old)
    else:
        errs = validation.validate_object(typed, pod_options=pod_options)
    if base == "jobs":
        errs += podgroups.validate_job_scheduling(out, old if operation == "UPDATE" else None, features)
    if errs:
        name = str((out.get("metadata") or {}).get("name") or "")
        raise _invalid(kind, group, name, errs)
    return out
