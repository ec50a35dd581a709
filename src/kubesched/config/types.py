"""Typed ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

Ported from ``staging/src/k8s.io/kube-scheduler/config/v1/types.go`` and the
component-base ``LeaderElectionConfiguration`` / ``ClientConnectionConfiguration``
(``staging/src/k8s.io/component-base/config/v1alpha1/types.go``).

Every struct decodes strictly: JSON/YAML keys are camelCase (``rename="camel"``) and an
unknown key is an error (``forbid_unknown_fields=True``). Optional upstream pointers are
``X | None``; :func:`kubesched.config.defaults.set_defaults` fills them in.

Units: ``*_seconds`` fields are integer seconds; durations (``leaseDuration``,
``httpTimeout``, ...) are Go duration strings such as ``"15s"`` or ``"1m30s"``, read
with :func:`parse_duration`. ``percentageOfNodesToScore`` is a percentage 0-100
(``None`` or 0 = adaptive).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

__all__ = [
    "API_VERSION",
    "ClientConnectionConfiguration",
    "EXTENSION_POINTS",
    "EXTENSION_POINT_JSON",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "KIND",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "parse_duration",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

#: Extension points of :class:`Plugins` in upstream execution order (``multi_point`` excluded).
EXTENSION_POINTS: tuple[str, ...] = (
    "pre_enqueue",
    "queue_sort",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "post_bind",
    "placement_generate",
    "placement_score",
    "pod_group_post_filter",
)

#: snake_case extension point -> its JSON/YAML name (used in error field paths).
EXTENSION_POINT_JSON: dict[str, str] = {
    p: p.split("_")[0] + "".join(w.title() for w in p.split("_")[1:]) for p in EXTENSION_POINTS
}


class _Struct(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True,
              omit_defaults=True):
    """Base: camelCase keys, unknown keys rejected, keyword-only construction."""


# --------------------------------------------------------------------------- plugins


class Plugin(_Struct):
    """A plugin reference. ``weight`` only matters for Score plugins (None/0 -> 1 at framework init)."""

    name: str
    weight: int | None = None


class PluginSet(_Struct):
    """Enabled / disabled plugins of one extension point. ``disabled: [{name: "*"}]`` drops all defaults."""

    enabled: list[Plugin] = msgspec.field(default_factory=list)
    disabled: list[Plugin] = msgspec.field(default_factory=list)


class Plugins(_Struct):
    """Plugin sets per extension point, plus ``multi_point`` (all points a plugin implements)."""

    pre_enqueue: PluginSet = msgspec.field(default_factory=PluginSet)
    queue_sort: PluginSet = msgspec.field(default_factory=PluginSet)
    pre_filter: PluginSet = msgspec.field(default_factory=PluginSet)
    filter: PluginSet = msgspec.field(default_factory=PluginSet)
    post_filter: PluginSet = msgspec.field(default_factory=PluginSet)
    pre_score: PluginSet = msgspec.field(default_factory=PluginSet)
    score: PluginSet = msgspec.field(default_factory=PluginSet)
    reserve: PluginSet = msgspec.field(default_factory=PluginSet)
    permit: PluginSet = msgspec.field(default_factory=PluginSet)
    pre_bind: PluginSet = msgspec.field(default_factory=PluginSet)
    bind: PluginSet = msgspec.field(default_factory=PluginSet)
    post_bind: PluginSet = msgspec.field(default_factory=PluginSet)
    multi_point: PluginSet = msgspec.field(default_factory=PluginSet)
    placement_generate: PluginSet = msgspec.field(default_factory=PluginSet)
    """PlacementGenerate plugins (v1.36+, workload-aware scheduling; at most one per profile)."""
    placement_score: PluginSet = msgspec.field(default_factory=PluginSet)
    """PlacementScore plugins (v1.36+; weighted like Score)."""
    pod_group_post_filter: PluginSet = msgspec.field(default_factory=PluginSet)
    """PodGroupPostFilter plugins (v1.36+; run after a failed pod-group cycle)."""


class PluginConfig(_Struct):
    """Args for one plugin. After decoding, ``args`` is a typed args Struct for in-tree
    plugins (see :data:`kubesched.config.args.ARGS_TYPES`), else the raw mapping (or None)."""

    name: str
    args: Any = None


class KubeSchedulerProfile(_Struct, dict=True):
    """A scheduling profile, selected by ``pod.spec.schedulerName``.

    After defaulting (:func:`kubesched.config.defaults.set_profile_defaults`) the instance also
    carries ``plugin_paths: dict[tuple[str, str], str]`` — (extension point, plugin name) → the field
    path where the file names it, e.g. ``profiles[0].plugins.multiPoint.enabled[0].name`` — so that
    errors about a plugin point into the file, not into the merged default list (not encoded).
    """

    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- extenders


class ExtenderManagedResource(_Struct):
    """An extended resource managed by an extender."""

    name: str
    ignored_by_scheduler: bool = False


class ExtenderTLSConfig(_Struct):
    """TLS settings for an extender (``*Data`` fields are base64 PEM, as in JSON []byte)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = msgspec.field(default="", name="caFile")
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = msgspec.field(default="", name="caData")


class Extender(_Struct):
    """A scheduler extender (HTTP webhook). An empty verb means "not supported".

    ``http_timeout`` is a duration string; None means upstream's 5s (``pkg/scheduler/extender.go``).
    """

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = msgspec.field(default=False, name="enableHTTPS")
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: str | None = None
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = msgspec.field(default_factory=list)
    ignorable: bool = False


# --------------------------------------------------------------------------- component-base


class LeaderElectionConfiguration(_Struct):
    """Leader election (component-base v1alpha1). Durations are strings ("15s")."""

    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_lock: str = ""
    resource_name: str = ""
    resource_namespace: str = ""


class ClientConnectionConfiguration(_Struct):
    """API client settings (component-base v1alpha1). ``qps`` in requests/s, ``burst`` in requests."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float = msgspec.field(default=0.0, name="qps")
    burst: int = 0


# --------------------------------------------------------------------------- top level


class KubeSchedulerConfiguration(_Struct):
    """The scheduler configuration file (``kind: KubeSchedulerConfiguration``)."""

    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: int | None = None
    leader_election: LeaderElectionConfiguration | None = None
    client_connection: ClientConnectionConfiguration | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[KubeSchedulerProfile] = msgspec.field(default_factory=list)
    extenders: list[Extender] = msgspec.field(default_factory=list)
    delay_cache_until_active: bool = False


# --------------------------------------------------------------------------- durations

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_RE = re.compile(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Parse a Go duration string (``time.ParseDuration``: "300ms", "-1.5h", "2h45m") into seconds.

    Raises ``ValueError`` with Go's wording (``time: invalid duration "x"``) when malformed.
    """
    s = text
    sign = 1.0
    if s[:1] in ("+", "-"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _DURATION_RE.match(s, pos)
        if not m or m.group(1) in ("", "."):
            unit = re.match(r"[\d.]*([^\d.]*)", s[pos:])
            if m is None and unit and unit.group(1) and s[pos:pos + 1].isdigit():
                raise ValueError(f'time: unknown unit "{unit.group(1)}" in duration "{text}"')
            if m is None and s[pos:].replace(".", "").isdigit():
                raise ValueError(f'time: missing unit in duration "{text}"')
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total
