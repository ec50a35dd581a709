"""Plugin registry: name → factory (upstream ``pkg/scheduler/framework/runtime/registry.go``).

A factory is ``new(args, handle) -> plugin`` where ``args`` is the plugin's typed args (in-tree
plugins, see :mod:`kubesched.config.args`) or the raw ``pluginConfig`` mapping (out-of-tree
plugins), and ``handle`` is a :class:`~kubesched.framework.handle.Handle`.

Out-of-tree plugins written in Python load without rebuilding anything, from a
``module:factory`` reference or the ``kubesched.plugins`` entry-point group — but only the names
a profile lists, never autoloaded (style anchor: pluggy).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from kubesched.errors import PluginConfigError

__all__ = ["PluginFactory", "Registry", "load_out_of_tree"]

PluginFactory = Callable[[Any, Any], Any]


class Registry(dict[str, PluginFactory]):
    """``dict`` of plugin name → factory that refuses duplicates (upstream ``Registry.Register``)."""

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self:
            raise PluginConfigError(f"a plugin named {name} already exists")
        self[name] = factory

    def merge(self, other: Mapping[str, PluginFactory]) -> None:
        for name, factory in other.items():
            self.register(name, factory)


def load_out_of_tree(spec: str) -> tuple[str, PluginFactory]:
    """Resolve ``"name=package.module:factory"`` (the current directory is searched too) or an
    entry-point name in ``kubesched.plugins``.

    Raises :class:`PluginConfigError` when it cannot be imported.
    """
    if "=" in spec:
        name, target = spec.split("=", 1)
        mod_name, _, attr = target.partition(":")
        cwd = os.getcwd()
        if cwd not in sys.path:  # as `uvicorn module:app`: modules next to where the command runs
            sys.path.insert(0, cwd)
        try:
            module = importlib.import_module(mod_name)
            factory = getattr(module, attr or "new")
        except (ImportError, AttributeError) as e:
            raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: {e}") from None
        return name, factory
    found = entry_points(group="kubesched.plugins").select(name=spec)
    for ep in found:
        return spec, ep.load()
    raise PluginConfigError(f"no plugin {spec!r} in entry-point group 'kubesched.plugins'")
