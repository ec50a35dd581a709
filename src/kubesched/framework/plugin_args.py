"""Typed args for out-of-tree plugins, decoded from ``pluginConfig[].args`` (upstream: each
plugin's ``*Args`` type registered in the scheme, decoded by ``PluginConfig.decodeNestedObjects``
and checked by the plugin's validation; ``pkg/scheduler/apis/config/v1``).

A plugin declares its args type on its factory; the framework decodes the profile's
``pluginConfig`` entry into it (strictly, defaults from the type) before calling the factory,
and reports any problem as one error with the field path::

    class RandomArgs(PluginArgs):
        keep_percentage: int = 80          # YAML: keepPercentage
        seed: int | None = None

        def validate(self) -> None:
            if not 0 <= self.keep_percentage <= 100:
                raise InputError(f"must be in 0..100, got {self.keep_percentage}", "keepPercentage")

    @plugin_args(RandomArgs)
    def new(args: RandomArgs, handle: Handle) -> RandomFilter: ...

→ ``profiles[1].pluginConfig[0].args.keepPercentage: must be in 0..100, got 120``.

Any ``msgspec.Struct`` or dataclass works as an args type; :class:`PluginArgs` (defined in
:mod:`kubesched.config.args`, the base of the in-tree args too) gives the upstream conventions
(camelCase keys, unknown keys rejected, keyword-only fields).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kubesched.config.args import PluginArgs, strict_convert
from kubesched.errors import ConfigError, InputError

__all__ = ["PluginArgs", "decode_plugin_args", "plugin_args"]

_F = TypeVar("_F", bound=Callable[..., Any])

API_VERSION = "kubescheduler.config.k8s.io/v1"


def plugin_args(args_type: type) -> Callable[[_F], _F]:
    """Decorator for a plugin factory: its ``args`` are decoded into ``args_type`` (the factory
    gets an instance, with defaults when the profile has no ``pluginConfig`` for it)."""

    def mark(factory: _F) -> _F:
        factory.args_type = args_type  # type: ignore[attr-defined]
        return factory

    return mark


def decode_plugin_args(plugin_name: str, args_type: type, raw: Any, path: str) -> Any:
    """Decode ``raw`` (a mapping, None, or already an ``args_type``) into ``args_type`` and run its
    ``validate()``. ``apiVersion``/``kind`` keys are accepted when they name
    ``kubescheduler.config.k8s.io/v1`` / ``<plugin_name>Args``.

    Raises:
        ConfigError: located at ``path`` plus the field path inside the args.
    """
    if isinstance(raw, args_type):
        args = raw
    else:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise ConfigError(f"args for plugin {plugin_name} must be an object, got {type(raw).__name__}", path)
        raw = dict(raw)
        kind = raw.pop("kind", None)
        api_version = raw.pop("apiVersion", None)
        if kind is not None and kind != f"{plugin_name}Args":
            raise ConfigError(f"args for plugin {plugin_name} were not of type {plugin_name}Args, got {kind}", path)
        if api_version is not None and api_version != API_VERSION:
            raise ConfigError(f'Unsupported value: "{api_version}": supported values: "{API_VERSION}"',
                              f"{path}.apiVersion")
        args = strict_convert(raw, args_type, path)
    validate = getattr(args, "validate", None)
    if callable(validate):
        try:
            validate()
        except InputError as e:
            where = f"{path}.{e.path}" if e.path and not e.path.startswith("[") else f"{path}{e.path or ''}"
            raise ConfigError(e.message, where) from None
    return args
