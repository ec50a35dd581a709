"""What kube-apiserver does to an object between decoding and storage, for the box.

``admit(resource, obj, old, operation=..., lookup=..., list_objects=...)`` returns the object to
store (a new dict) or raises :class:`AdmissionError` carrying a ready upstream ``Status`` body.
In order, as the API server:

1. decoding checks — a Pod/Node quantity that does not parse → 400 ``BadRequest``
   (``Pod in version "v1" cannot be handled as a Pod: quantities must match ...``);
2. defaulting (``pkg/apis/core/v1/defaults.go``): pods get ``schedulerName:
   default-scheduler``, ``restartPolicy``, ``dnsPolicy``, ``terminationGracePeriodSeconds``,
   ``securityContext``, ``enableServiceLinks``, container ``terminationMessagePath/Policy``,
   ``imagePullPolicy`` (``Always`` for ``:latest`` or no tag), port ``protocol``, and
   requests defaulted from limits; nodes get ``status.allocatable`` from ``capacity``;
   priority classes ``preemptionPolicy``;
3. on pod create the registry's ``PrepareForCreate`` (``pkg/registry/core/pod/strategy.go``):
   status reset to ``{phase: Pending, qosClass}``, ``metadata.generation: 1``;
4. admission plugins: ``Priority`` (``plugin/pkg/admission/priority/admission.go``: the pod's
   PriorityClass → ``spec.priority`` and ``spec.preemptionPolicy``; the global default class;
   0 when none; ``system-node-critical``/``system-cluster-critical`` built in; 403
   ``pods "x" is forbidden: no PriorityClass with name foo was found``; a pod's own
   ``spec.priority`` must match; one global default PriorityClass only) and
   ``DefaultTolerationSeconds`` (``not-ready``/``unreachable`` NoExecute tolerations, 300 s);
5. validation (:mod:`kubesched.api.validation`) → 422 ``Invalid`` with field causes and
   upstream's message.

``resource`` is the plural resource name, optionally with a subresource (``pods/status``);
subresource writes get only node-status defaulting. ``operation`` is ``CREATE`` or ``UPDATE``
(anything else passes the object through). ``lookup(resource, namespace, name)`` reads a stored
object; ``list_objects(resource)`` lists a resource across namespaces.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import validation
from kubesched.api.quantity import nano_value

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
        ("system-node-critical", 2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
        ("system-cluster-critical", 2_000_000_000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
    )
}

_KINDS = {
    "pods": ("", "Pod"), "nodes": ("", "Node"), "namespaces": ("", "Namespace"), "services": ("", "Service"),
    "priorityclasses": ("scheduling.k8s.io", "PriorityClass"), "configmaps": ("", "ConfigMap"),
    "secrets": ("", "Secret"), "endpoints": ("", "Endpoints"), "events": ("", "Event"),
    "persistentvolumes": ("", "PersistentVolume"), "persistentvolumeclaims": ("", "PersistentVolumeClaim"),
    "replicationcontrollers": ("", "ReplicationController"), "serviceaccounts": ("", "ServiceAccount"),
    "deployments": ("apps", "Deployment"), "replicasets": ("apps", "ReplicaSet"), "statefulsets": ("apps", "StatefulSet"),
    "daemonsets": ("apps", "DaemonSet"), "jobs": ("batch", "Job"), "cronjobs": ("batch", "CronJob"),
    "poddisruptionbudgets": ("policy", "PodDisruptionBudget"), "storageclasses": ("storage.k8s.io", "StorageClass"),
    "leases": ("coordination.k8s.io", "Lease"),
}
_GROUPS = {r: g for r, (g, _k) in _KINDS.items()}


class AdmissionError(Exception):
    """A write the API server refuses. ``status`` is the complete ``Status`` body to send,
    ``code`` its HTTP status code."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.code: int = int(status.get("code", 500))


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


def apply_defaults(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Upstream v1 defaulting for the kinds the scheduler reads (mutates and returns ``obj``)."""
    if resource == "pods":
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("securityContext", {})
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("enableServiceLinks", True)
        for c in spec.get("containers") or []:
            if isinstance(c, dict):
                _default_container(c, requests_from_limits=True)
        for c in spec.get("initContainers") or []:
            if isinstance(c, dict):
                _default_container(c, requests_from_limits=True)
        if spec.get("hostNetwork"):
            for c in spec.get("containers") or []:
                for port in (c.get("ports") or []) if isinstance(c, dict) else []:
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    elif resource in ("nodes", "nodes/status"):
        status = obj.get("status")
        if isinstance(status, dict) and isinstance(status.get("capacity"), dict) and status.get("allocatable") is None:
            status["allocatable"] = copy.deepcopy(status["capacity"])
    elif resource == "priorityclasses":
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
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
            if t_key == key or (not t_key and t.get("operator") == "Exists"):
                tolerated = True
                break
        if not tolerated:
            tolerations.append({"key": key, "operator": "Exists", "effect": effect, "tolerationSeconds": 300})
    if tolerations:
        spec["tolerations"] = tolerations


def _priority_class(name: str, lookup: Callable[[str, str, str], dict[str, Any] | None]) -> dict[str, Any] | None:
    pc = lookup("priorityclasses", "", name)
    if pc is None:
        pc = SYSTEM_PRIORITY_CLASSES.get(name)
    return pc


def _default_priority_class(list_objects: Callable[[str], list[dict[str, Any]]]) -> dict[str, Any] | None:
    best = None
    for pc in list_objects("priorityclasses"):
        if pc.get("globalDefault") and (best is None or best.get("value", 0) > pc.get("value", 0)):
            best = pc
    return best


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
    if not class_name:
        pc = _default_priority_class(list_objects)
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
            priority = int(pc.get("value", 0))
            policy = pc.get("preemptionPolicy")
        else:
            priority, policy = 0, "PreemptLowerPriority"
    else:
        pc = _priority_class(str(class_name), lookup)
        if pc is None:
            raise _forbidden("pods", name, f"no PriorityClass with name {class_name} was found")
        priority = int(pc.get("value", 0))
        policy = pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden("pods", name, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                       f"priority admission controller computed {priority} from the given PriorityClass name")
    spec["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise _forbidden("pods", name, f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; "
                                           f"priority admission controller computed {policy} from the given PriorityClass name")
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


# ---- entry point -------------------------------------------------------------------------------------


def admit(
    resource: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    *,
    operation: str,
    lookup: Callable[[str, str, str], dict[str, Any] | None],
    list_objects: Callable[[str], list[dict[str, Any]]],
) -> dict[str, Any]:
    """Default, admit and validate a write; returns the object to store (``obj`` is not mutated).

    Raises :class:`AdmissionError` (400 undecodable quantity, 403 Forbidden from an admission
    plugin, 422 Invalid from validation).
    """
    base, _, sub = resource.partition("/")
    out = copy.deepcopy(obj)
    if operation not in ("CREATE", "UPDATE"):
        return out
    if sub:
        if base == "nodes" and sub == "status":
            apply_defaults("nodes/status", out)
        return out
    group, kind = _KINDS.get(base, ("", str(out.get("kind") or "")))
    if base in ("pods", "nodes"):
        bad = validation.quantity_decode_errors(out)
        if bad:
            version = "v1"
            raise AdmissionError(_status(400, "BadRequest",
                                         f'{kind} in version "{version}" cannot be handled as a {kind}: {bad[0].detail}'))
    apply_defaults(base, out)
    if base == "pods":
        if operation == "CREATE":
            out["status"] = {"phase": "Pending", "qosClass": pod_qos_class(out)}
            out.setdefault("metadata", {})["generation"] = 1
        _default_toleration_seconds(out)  # upstream plugin handles Create and Update
        _admit_pod_priority(out, old, operation, lookup, list_objects)
    elif base == "priorityclasses":
        _admit_priority_class(out, old, operation, list_objects)
    errs = validation.validate_object(out if out.get("kind") else {**out, "kind": kind})
    if errs:
        name = str((out.get("metadata") or {}).get("name") or "")
        raise _invalid(kind, group, name, errs)
    return out
