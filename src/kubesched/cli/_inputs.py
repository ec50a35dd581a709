"""What the commands read before they run: the scheduler configuration (``--config`` or a
``KubeSchedulerConfiguration`` among the ``-f`` inputs) and the out-of-tree plugins of ``--plugin``.
Shared by simulate, replay, run, up, capacity and compare (one place, no command imports another).
"""

from __future__ import annotations

from typing import Any

from kubesched.errors import PluginConfigError

__all__ = ["load_config_file", "load_inputs", "plugin_registry"]


def load_config_file(path: str | None, features: Any = None) -> Any:
    """``--config`` (None: the defaults of ``features``), decoded, defaulted and validated."""
    from kubesched.config import load_config

    return load_config(path, features)


def load_inputs(paths: list[str], config_path: str | None, features: Any = None) -> tuple[Any, list[Any], bool]:
    """The manifests of ``-f`` and the scheduler configuration: ``--config``, or a
    ``KubeSchedulerConfiguration`` document found among the ``-f`` inputs (one at most; not
    both), defaulted for ``features`` (a :class:`~kubesched.features.FeatureGate`; default v1.37).
    Returns ``(config, raw objects, whether a configuration was given)``.

    Raises:
        InputError: two configurations; ConfigError / ManifestError for bad input.
    """
    from kubesched.config import decode_config
    from kubesched.errors import ConfigError, InputError
    from kubesched.sim.manifests import load_manifests

    found: list[Any] = []
    raws = load_manifests(paths, configs=found)
    if len(found) > 1:
        raise InputError(f"a second KubeSchedulerConfiguration (the first is at {found[0].source})",
                         found[1].source)
    if found and config_path is not None:
        raise InputError(f"--config {config_path} and a KubeSchedulerConfiguration among the inputs: give one",
                         found[0].source)
    if found:
        try:
            return decode_config(found[0].data, source=found[0].source, features=features), raws, True
        except ConfigError as e:
            raise ConfigError(e.message, f"{found[0].source}: {e.path}" if e.path else found[0].source) from None
    return load_config_file(config_path, features), raws, config_path is not None


def plugin_registry(plugins: tuple[str, ...]) -> dict[str, Any] | None:
    """The in-tree registry plus every ``--plugin NAME=module:factory`` (None when none is given).
    Raises :class:`PluginConfigError` with the flag in the message."""
    if not plugins:
        return None
    from kubesched.framework.registry import load_out_of_tree
    from kubesched.plugins.registry import in_tree_registry

    reg = in_tree_registry()
    for spec in plugins:
        name, _, target = spec.partition("=")
        if "=" in spec and (not name or not target or target.startswith(":") or target.endswith(":")):
            raise PluginConfigError(f"invalid --plugin {spec!r}: expected NAME=module:factory "
                                    "(or an entry point name in 'kubesched.plugins')")
        try:
            name, factory = load_out_of_tree(spec)
        except PluginConfigError as e:
            raise PluginConfigError(f"--plugin {spec}: {e.message} (expected NAME=module:factory, "
                                    "or an entry point name in 'kubesched.plugins')") from None
        reg.register(name, factory)
    return dict(reg)
