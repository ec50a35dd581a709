"""Slim typed views of the Kubernetes objects the scheduler reads.

msgspec Structs named and shaped after ``k8s.io/api/core/v1`` (and ``scheduling/v1``,
``apps/v1``, ``policy/v1``): attribute names are the snake_case of the JSON field names
(``rename="camel"``, with explicit names where camel-casing is wrong: ``hostIP``,
``podCIDR``, ``providerID``). Only the fields the scheduler uses are kept; unknown fields
are ignored on decode. Quantities stay raw (:data:`Quantity`) and are parsed at use by
:mod:`kubesched.api.quantity`. Structs are ``gc=False``: treat decoded objects as
immutable and replace them on update (never build reference cycles through them).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

from kubesched.errors import InputError

__all__ = [
    "KINDS",
    "Affinity",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "ContainerRestartRule",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeCondition",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodePodPreemptionPolicy",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "ImageVolumeSource",
    "PersistentVolumeClaimVolumeSource",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodDisruptionBudget",
    "PodDisruptionBudgetSpec",
    "PodDisruptionBudgetStatus",
    "PodSchedulingGate",
    "PodSchedulingGroup",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "Quantity",
    "ReplicaSet",
    "ReplicaSetSpec",
    "ReplicationController",
    "ReplicationControllerSpec",
    "ResourceRequirements",
    "Service",
    "ServiceSpec",
    "StatefulSet",
    "StatefulSetSpec",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "VolumeMount",
    "WeightedPodAffinityTerm",
    "decode",
    "encode_builtins",
    "is_terminating",
    "node_allocatable",
    "pod_key",
    "pod_priority",
]

#: A raw resource quantity as found in manifests (``"100m"``, ``2``, ``0.5``); parse with
#: :func:`kubesched.api.quantity.to_int`.
Quantity = str | int | float
IntOrString = int | str


class _Base(msgspec.Struct, rename="camel", omit_defaults=True, gc=False):
    """Common config: camelCase JSON names, defaults omitted on encode, not GC-tracked."""


# --- metadata ---------------------------------------------------------------------------


class OwnerReference(_Base):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


class ObjectMeta(_Base):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    owner_references: list[OwnerReference] = []
    resource_version: str = ""
    generation: int = 0


class LabelSelectorRequirement(_Base):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class LabelSelector(_Base):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


# --- affinity ---------------------------------------------------------------------------


class NodeSelectorRequirement(_Base):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class NodeSelectorTerm(_Base):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(_Base):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(_Base):
    weight: int = 0
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(_Base):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(_Base):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(_Base):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = msgspec.field(default_factory=PodAffinityTerm)


class PodAffinity(_Base):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class PodAntiAffinity(_Base):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(_Base):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


# --- taints, spreading ------------------------------------------------------------------


class Toleration(_Base):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class Taint(_Base):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class TopologySpreadConstraint(_Base):
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


# --- pods -------------------------------------------------------------------------------


class ContainerPort(_Base):
    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = msgspec.field(default="", name="hostIP")
    name: str = ""


class ResourceRequirements(_Base):
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}


class ContainerRestartRule(_Base):
    """``containers[].restartPolicyRules[]`` (ContainerRestartRules): NodeDeclaredFeatures reads
    ``action`` (``RestartAllContainers`` needs the node feature RestartAllContainersOnContainerExits)."""

    action: str = ""
    exit_codes: dict[str, Any] | None = None


class VolumeMount(_Base):
    """``containers[].volumeMounts[]``: NodeDeclaredFeatures reads ``bindMountOptions``
    (VolumeBindMountOptions)."""

    name: str = ""
    mount_path: str = ""
    bind_mount_options: list[str] = []


class Container(_Base):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = msgspec.field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = []
    restart_policy: str | None = None
    restart_policy_rules: list[ContainerRestartRule] = []
    volume_mounts: list[VolumeMount] = []


class PodSchedulingGate(_Base):
    name: str = ""


class PodSchedulingGroup(_Base):
    """``spec.schedulingGroup`` (v1.36+, GenericWorkload): the PodGroup the pod belongs to
    (``k8s.io/api/core/v1`` ``PodSchedulingGroup``; one-of, ``podGroupName`` the only member)."""

    pod_group_name: str | None = None


class PersistentVolumeClaimVolumeSource(_Base):
    claim_name: str = ""
    read_only: bool = False


class ImageVolumeSource(_Base):
    """``volumes[].image`` (ImageVolume): an OCI image mounted as a volume; ImageLocality
    scores its ``reference`` like a container image (since v1.36)."""

    reference: str = ""
    pull_policy: str = ""


class Volume(_Base):
    """A pod volume: the claim-backed sources, the in-tree sources subject to CSI migration
    (kept as their JSON mappings; NodeVolumeLimits counts them as upstream's csi-translation-lib
    translates them) and image volumes. hostPath, emptyDir, secret, nfs, downwardAPI, configMap and
    projected are kept as their JSON mappings for the batching signature (``VolumesSigner``); other
    sources are not read."""

    name: str = ""
    host_path: dict[str, Any] | None = None
    empty_dir: dict[str, Any] | None = None
    secret: dict[str, Any] | None = None
    nfs: dict[str, Any] | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    downward_api: dict[str, Any] | None = msgspec.field(default=None, name="downwardAPI")
    config_map: dict[str, Any] | None = None
    projected: dict[str, Any] | None = None
    ephemeral: dict[str, Any] | None = None
    aws_elastic_block_store: dict[str, Any] | None = None
    gce_persistent_disk: dict[str, Any] | None = None
    azure_disk: dict[str, Any] | None = None
    azure_file: dict[str, Any] | None = None
    cinder: dict[str, Any] | None = None
    vsphere_volume: dict[str, Any] | None = None
    portworx_volume: dict[str, Any] | None = None
    csi: dict[str, Any] | None = None
    image: ImageVolumeSource | None = None


class PodResourceClaim(_Base):
    """``spec.resourceClaims[]`` (DRA): exactly one of the two sources is set."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodResourceClaimStatus(_Base):
    """``status.resourceClaimStatuses[]``: the claim generated for a template entry (None: none needed)."""

    name: str = ""
    resource_claim_name: str | None = None


class PodSpec(_Base):
    containers: list[Container] = []
    init_containers: list[Container] = []
    node_name: str = ""
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    overhead: dict[str, Quantity] = {}
    scheduling_gates: list[PodSchedulingGate] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    volumes: list[Volume] = []
    host_network: bool = False
    host_users: bool | None = None  # user namespaces (NodeDeclaredFeatures: UserNamespacesHostNetworkSupport)
    ephemeral_containers: list[Container] = []  # read only for their volumeMounts (NodeDeclaredFeatures)
    resources: ResourceRequirements | None = None  # pod-level resources (PodLevelResources)
    resource_claims: list[PodResourceClaim] = []  # DRA (DynamicResources)
    scheduling_group: PodSchedulingGroup | None = None  # GenericWorkload (v1.36+)


class PodCondition(_Base):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None
    observed_generation: int = 0


class PodStatus(_Base):
    phase: str = ""
    conditions: list[PodCondition] = []
    nominated_node_name: str = ""
    start_time: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] = []  # DRA: claims generated from templates
    extended_resource_claim_status: dict[str, Any] | None = None
    """DRAExtendedResource: ``{"requestMappings": [...], "resourceClaimName"}``, written by the scheduler."""


class Pod(_Base):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


# --- nodes ------------------------------------------------------------------------------


class ContainerImage(_Base):
    names: list[str] = []
    size_bytes: int = 0


class NodeCondition(_Base):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class NodePodPreemptionPolicy(_Base):
    """``spec.podPreemptionPolicy`` (k8s.io/api v0.37.2 core/v1 types.go ``NodePodPreemptionPolicy``,
    gate InPlacePodVerticalScalingSchedulerPreemption): a non-empty ``disableResizePreemption``
    (the names of the components asking for it) stops DeferredPodScheduling from preempting for
    a deferred resize on this node."""

    disable_resize_preemption: list[str] = []


class NodeSpec(_Base):
    unschedulable: bool = False
    taints: list[Taint] = []
    pod_cidr: str = msgspec.field(default="", name="podCIDR")
    provider_id: str = msgspec.field(default="", name="providerID")
    pod_preemption_policy: NodePodPreemptionPolicy | None = None


class NodeStatus(_Base):
    capacity: dict[str, Quantity] = {}
    allocatable: dict[str, Quantity] = {}
    images: list[ContainerImage] = []
    conditions: list[NodeCondition] = []
    declared_features: list[str] = []  # NodeDeclaredFeatures: sorted, unique (API validation)


class Node(_Base):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


# --- other kinds ------------------------------------------------------------------------


class Namespace(_Base):
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class PriorityClass(_Base):
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None


class ServiceSpec(_Base):
    selector: dict[str, str] = {}


class Service(_Base):
    api_version: str = "v1"
    kind: str = "Service"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)


class ReplicationControllerSpec(_Base):
    selector: dict[str, str] = {}


class ReplicationController(_Base):
    api_version: str = "v1"
    kind: str = "ReplicationController"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = msgspec.field(default_factory=ReplicationControllerSpec)


class ReplicaSetSpec(_Base):
    selector: LabelSelector | None = None


class ReplicaSet(_Base):
    api_version: str = "apps/v1"
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = msgspec.field(default_factory=ReplicaSetSpec)


class StatefulSetSpec(_Base):
    selector: LabelSelector | None = None


class StatefulSet(_Base):
    api_version: str = "apps/v1"
    kind: str = "StatefulSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = msgspec.field(default_factory=StatefulSetSpec)


class PodDisruptionBudgetSpec(_Base):
    selector: LabelSelector | None = None
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None


class PodDisruptionBudgetStatus(_Base):
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, str] = {}


class PodDisruptionBudget(_Base):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = msgspec.field(default_factory=PodDisruptionBudgetStatus)


#: Kind name → Struct class, for manifest loaders and the live adapter.
KINDS: dict[str, type] = {
    "Namespace": Namespace,
    "Node": Node,
    "Pod": Pod,
    "PodDisruptionBudget": PodDisruptionBudget,
    "PriorityClass": PriorityClass,
    "ReplicaSet": ReplicaSet,
    "ReplicationController": ReplicationController,
    "Service": Service,
    "StatefulSet": StatefulSet,
}

# --- decoding and helpers ---------------------------------------------------------------

T = TypeVar("T")
_AT = re.compile(r"^(?P<msg>.*?) - at `\$(?P<path>[^`]*)`$", re.S)


def _join_path(prefix: str, field: str) -> str:
    if not prefix:
        return field
    if not field:
        return prefix
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


def decode(cls: type[T], raw: Any, path: str = "") -> T:
    """Convert builtins (``dict`` from JSON/YAML) into ``cls``, strictly typed.

    Unknown fields are ignored; types are strict (no ``"1"`` → ``1`` coercion), except that
    quantities accept strings, ints and floats. On a type error raises
    :class:`~kubesched.errors.InputError` whose ``path`` is the Kubernetes-style field path
    (``spec.containers[0].ports[0].containerPort``; map keys show as ``[...]``), prefixed
    with ``path`` when given (``items[3]`` → ``items[3].spec...``).
    """
    try:
        return msgspec.convert(raw, cls, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        m = _AT.match(text)
        msg, field = (m.group("msg"), m.group("path").lstrip(".")) if m else (text, "")
        full = _join_path(path, field)
        raise InputError(msg, full or None) from None


def encode_builtins(obj: Any) -> Any:
    """The object as JSON-ready builtins (``msgspec.to_builtins``: camelCase keys, defaults
    omitted), except that a top-level object always carries its ``apiVersion`` and ``kind``.
    """
    out = msgspec.to_builtins(obj)
    if isinstance(out, dict) and hasattr(obj, "api_version") and hasattr(obj, "kind"):
        out = {"apiVersion": obj.api_version, "kind": obj.kind, **out}
    return out


def node_allocatable(node: Node) -> dict[str, Quantity]:
    """``status.allocatable``, or ``status.capacity`` when allocatable is absent/empty.

    The apiserver defaults a missing allocatable to capacity (``SetDefaults_NodeStatus``,
    ``pkg/apis/core/v1/defaults.go``); an explicitly empty map is treated as absent here.
    """
    status = node.status
    return status.allocatable if status.allocatable else status.capacity


def pod_priority(pod: Pod) -> int:
    """``spec.priority`` or 0 when unset (upstream ``corev1helpers.PodPriority``)."""
    p = pod.spec.priority
    return 0 if p is None else p


def pod_key(pod: Pod) -> str:
    """``"namespace/name"`` (upstream ``cache.MetaNamespaceKeyFunc``; just ``name`` without a namespace)."""
    meta = pod.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def is_terminating(obj: Any) -> bool:
    """True when ``metadata.deletionTimestamp`` is set."""
    return obj.metadata.deletion_timestamp is not None
