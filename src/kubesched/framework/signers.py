"""Pod signatures for opportunistic batching (KEP-5598, OpportunisticBatching β since 1.35).

Follows staging ``k8s.io/kube-scheduler@v0.37.2/framework/signers.go`` (the fragment keys and
the shared signers) and ``pkg/scheduler/framework/runtime/framework.go`` L831-927
(``computeBatchablePlugins``, ``SignPod``).

A *fragment* is ``(key, value)``; a plugin's ``sign_pod(pod)`` returns ``(fragments, None)`` or
``(None, status)`` when it cannot sign the pod (upstream ``SignPlugin.SignPod``). The profile's
signature is Go's ``json.Marshal`` of the map {``SchedulerNameSignerName`` → schedulerName,
every fragment key → value} (later plugins overwrite equal keys; Go sorts map keys), as
``bytes``; ``None`` = unsignable. Values are plain Python data shaped as the Go values
marshal: Go structs as ``dict`` in field order (:class:`GoStruct`), Go maps as ``dict`` (keys
sorted on encode), ``None`` for a nil map / pointer.

Only byte *equality* of two signatures matters to the scheduler's decisions. Known byte-level
differences from upstream (equality is unaffected): an empty ``nodeSelector`` / ``labels`` map
always encodes as ``null`` (the API objects here do not keep nil and empty apart), volume
sources are encoded as the API JSON given (upstream re-marshals the typed struct, so field
order inside a source may differ), and ``schedulerName`` is the pod's as given (upstream's API
server defaults an empty one to ``default-scheduler``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import NodeSelectorRequirement, NodeSelectorTerm, Pod

__all__ = [
    "DYNAMIC_RESOURCES_SIGNER_NAME",
    "FEATURES_SIGNER_NAME",
    "HOST_PORTS_SIGNER_NAME",
    "IMAGE_NAMES_SIGNER_NAME",
    "LABELS_SIGNER_NAME",
    "NODE_AFFINITY_SIGNER_NAME",
    "NODE_NAME_SIGNER_NAME",
    "NODE_SELECTOR_SIGNER_NAME",
    "RESOURCES_SIGNER_NAME",
    "SCHEDULER_NAME_SIGNER_NAME",
    "TOLERATIONS_SIGNER_NAME",
    "VOLUMES_SIGNER_NAME",
    "GoStruct",
    "go_json",
    "host_ports_signer",
    "node_affinity_signer",
    "sign_pod",
    "tolerations_signer",
    "volumes_signer",
]

DYNAMIC_RESOURCES_SIGNER_NAME = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER_NAME = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER_NAME = "v1.Pod.Labels"
NODE_NAME_SIGNER_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER_NAME = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER_NAME = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER_NAME = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER_NAME = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER_NAME = "v1.Pod.Spec.RequiredFeatures()"

Fragments = list[tuple[str, Any]]


class GoStruct(dict[str, Any]):
    """A Go struct value: encoded with its keys in insertion (field declaration) order, where a
    plain ``dict`` (a Go map) is encoded with sorted keys."""


_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                               "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _plain(value: Any) -> Any:
    if isinstance(value, GoStruct):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: _plain(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, msgspec.Struct):
        return json.loads(msgspec.json.encode(value))
    return value


def go_json(value: Any) -> str:
    """Go ``json.Marshal`` of ``value``: compact, map keys sorted, struct fields in order, HTML
    characters escaped as ``\\u003c`` etc. API objects (msgspec structs) encode as their API
    JSON (camelCase names, empty fields omitted — the ``omitempty`` of the Go types)."""
    return json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False).translate(_HTML_ESCAPES)


# ───────────────────────────── shared signers (signers.go) ─────────────────────────────


def host_ports_signer(pod: Pod) -> list[int]:
    """``HostPortsSigner``: the distinct non-zero host ports of all containers and init
    containers, sorted."""
    ports = {p.host_port for c in (*pod.spec.containers, *pod.spec.init_containers) for p in c.ports if p.host_port}
    return sorted(ports)


def _requirements_signer(reqs: Sequence[NodeSelectorRequirement]) -> list[str]:
    """``NodeSelectorRequirementsSigner``: each requirement with sorted values, as JSON; sorted."""
    out = [go_json(msgspec.structs.replace(r, values=sorted(r.values))) for r in reqs]
    return sorted(out)


def _term_signer(t: NodeSelectorTerm) -> GoStruct:
    """``NodeSelectorTermSigner``."""
    return GoStruct(MatchExpressions=_requirements_signer(t.match_expressions),
                    MatchFields=_requirements_signer(t.match_fields))


def node_affinity_signer(pod: Pod) -> GoStruct | None:
    """``NodeAffinitySigner``: None without node affinity, else {Required: sorted JSON of each
    required term, Preferred: sorted JSON of each {Weight, Preference} term}."""
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    n = aff.node_affinity
    pref = sorted(go_json(GoStruct(Weight=t.weight, Preference=_term_signer(t.preference)))
                  for t in n.preferred_during_scheduling_ignored_during_execution)
    req: list[str] = []
    if n.required_during_scheduling_ignored_during_execution is not None:
        req = sorted(go_json(_term_signer(t))
                     for t in n.required_during_scheduling_ignored_during_execution.node_selector_terms)
    return GoStruct(Required=req, Preferred=pref)


def tolerations_signer(pod: Pod) -> list[Any]:
    """``TolerationsSigner``: the tolerations sorted by (key, value) — a stable sort."""
    return sorted(pod.spec.tolerations, key=lambda t: (t.key, t.value))


# Go's v1.VolumeSource field order, for the source JSON of ``VolumesSigner``
_VOLUME_SOURCE_FIELDS = (
    ("host_path", "hostPath"), ("empty_dir", "emptyDir"), ("gce_persistent_disk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore"), ("git_repo", "gitRepo"), ("secret", "secret"),
    ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("persistent_volume_claim", "persistentVolumeClaim"), ("rbd", "rbd"), ("flex_volume", "flexVolume"),
    ("cinder", "cinder"), ("cephfs", "cephfs"), ("flocker", "flocker"), ("downward_api", "downwardAPI"),
    ("fc", "fc"), ("azure_file", "azureFile"), ("config_map", "configMap"), ("vsphere_volume", "vsphereVolume"),
    ("quobyte", "quobyte"), ("azure_disk", "azureDisk"), ("photon_persistent_disk", "photonPersistentDisk"),
    ("projected", "projected"), ("portworx_volume", "portworxVolume"), ("scale_io", "scaleIO"),
    ("storageos", "storageos"), ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"),
)


def volumes_signer(pod: Pod) -> list[str]:
    """``VolumesSigner``: the JSON of every volume source that is neither a ConfigMap nor a
    Secret, sorted (the volume's name is not part of it)."""
    out = []
    for vol in pod.spec.volumes:
        if getattr(vol, "config_map", None) is not None or getattr(vol, "secret", None) is not None:
            continue
        src = GoStruct()
        for attr, name in _VOLUME_SOURCE_FIELDS:
            v = getattr(vol, attr, None)
            if v is not None:
                src[name] = v
        out.append(go_json(src))
    return sorted(out)


# ───────────────────────────── the profile's signature ─────────────────────────────


def batchable_plugins(point_lists: Iterable[Sequence[Any]], has_extenders: bool) -> tuple[list[Any], bool]:
    """Upstream ``computeBatchablePlugins`` (framework.go L833-877): the PreFilter, Filter,
    PreScore and Score plugins (in that order, each name once) that implement ``sign_pod``,
    and whether signatures are enabled (no extenders, and every such plugin can sign)."""
    enabled = not has_extenders
    seen: set[str] = set()
    out: list[Any] = []
    for plugins in point_lists:
        for pl in plugins:
            if pl.name in seen:
                continue
            seen.add(pl.name)
            if callable(getattr(pl, "sign_pod", None)):
                out.append(pl)
            else:
                enabled = False
    return out, enabled


def sign_pod(pod: Pod, plugins: Sequence[Any],
             on_refusal: Callable[[str, Any], None] | None = None) -> bytes | None:
    """Upstream ``SignPod`` (framework.go L884-927): {schedulerName} plus every plugin's
    fragments as Go-marshalled JSON bytes; None as soon as one plugin refuses (any non-success
    status). ``on_refusal(plugin name, status)`` is told which plugin refused."""
    sig: dict[str, Any] = {SCHEDULER_NAME_SIGNER_NAME: pod.spec.scheduler_name}
    for pl in plugins:
        fragments, st = pl.sign_pod(pod)
        if st is not None and not st.is_success():
            if on_refusal is not None:
                on_refusal(pl.name, st)
            return None
        for key, value in fragments or ():
            sig[key] = value
    return go_json(sig).encode()
