"""kubesched.config — ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

Decoding is strict (unknown or duplicate keys are errors, located by field path), then
upstream v1 defaults are applied (``pkg/scheduler/apis/config/v1/defaults.go``) and the result
is validated (``pkg/scheduler/apis/config/validation``). Every problem is raised as a
:class:`kubesched.errors.ConfigError`; no other exception escapes these functions.

    >>> cfg = decode_config("apiVersion: kubescheduler.config.k8s.io/v1\\nkind: KubeSchedulerConfiguration\\n")
    >>> cfg.profiles[0].scheduler_name
    'default-scheduler'
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import yaml

from kubesched.config.args import ARGS_TYPES, decode_args, strict_convert
from kubesched.config.defaults import DEFAULT_SCHEDULER_NAME, default_plugins, set_defaults
from kubesched.config.types import (
    API_VERSION,
    EXTENSION_POINT_JSON,
    EXTENSION_POINTS,
    KIND,
    ClientConnectionConfiguration,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    parse_duration,
)
from kubesched.config.validation import validate_config
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate

__all__ = [
    "API_VERSION",
    "ARGS_TYPES",
    "ClientConnectionConfiguration",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "EXTENSION_POINT_JSON",
    "Extender",
    "KIND",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "decode_args",
    "decode_config",
    "default_config",
    "default_plugins",
    "encode_config",
    "load_config",
    "parse_duration",
    "set_defaults",
    "validate_config",
]

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe YAML loader that rejects duplicate mapping keys, as sigs.k8s.io/yaml strict mode does."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                    seen.add(key)
                except TypeError:
                    continue
                if dup:
                    raise yaml.constructor.ConstructorError(
                        None, None, f'key "{key}" already set in map', key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _parse(text: str, source: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"invalid JSON: {e.msg}", f"{source}:{e.lineno}:{e.colno}") from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a safe loader
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = e.problem or e.context or "invalid YAML"
        raise ConfigError(f"invalid YAML: {problem}", where) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"invalid YAML: {e}", source) from None


def decode_config(data: str | bytes | dict, source: str = "<config>",
                  features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """Decode (strictly), default and validate a configuration from YAML/JSON text or a mapping.

    ``source`` names the input in syntax errors (``file:line:column``); ``features`` are the gates
    at the emulated version (default: v1.37's defaults), which choose the default plugins and
    args. Raises :class:`ConfigError`.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError(f"not UTF-8 text: {e.reason} at byte {e.start}", source) from None
    obj = _parse(data, source) if isinstance(data, str) else data
    if not isinstance(obj, dict):
        got = "empty document" if obj is None else type(obj).__name__
        raise ConfigError(f"expected a KubeSchedulerConfiguration object, got {got}", source)
    api_version = obj.get("apiVersion")
    if not api_version:
        raise ConfigError(f'Required value: must be "{API_VERSION}"', "apiVersion")
    if api_version != API_VERSION:
        raise ConfigError(f'Unsupported value: {json.dumps(api_version)}: supported values: "{API_VERSION}"',
                          "apiVersion")
    kind = obj.get("kind")
    if not kind:
        raise ConfigError(f'Required value: must be "{KIND}"', "kind")
    if kind != KIND:
        raise ConfigError(f'Unsupported value: {json.dumps(kind)}: supported values: "{KIND}"', "kind")
    cfg = strict_convert(obj, KubeSchedulerConfiguration, "")
    return validate_config(set_defaults(cfg, features), features)


def load_config(path: str | None, features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """Read, decode, default and validate the file at ``path``; None gives :func:`default_config`."""
    if path is None:
        return default_config(features)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read configuration file: {e.strerror or e}", path) from None
    return decode_config(data, source=path, features=features)


def default_config(features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """The configuration kube-scheduler runs with when given no file: all defaults (at ``features``'
    emulated version and gates; default v1.37)."""
    return validate_config(set_defaults(KubeSchedulerConfiguration(), features), features)


def encode_config(cfg: KubeSchedulerConfiguration) -> dict[str, Any]:
    """``cfg`` as JSON-ready builtins with camelCase keys, ``apiVersion``/``kind`` first.

    ``decode_config(encode_config(cfg))`` gives back an equal configuration.
    """
    body = msgspec.to_builtins(cfg)
    return {"apiVersion": cfg.api_version, "kind": cfg.kind, **body}
