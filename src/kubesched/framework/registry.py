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


def _load_file(name: str, target: str, path: str, attr: str) -> PluginFactory:
    """Import a plugin module from a file path (``examples/random-scheduler/random_plugins.py``);
    the module is registered in ``sys.modules`` under its file's stem, so a second plugin of the
    same file shares it."""
    import importlib.util

    full = os.path.abspath(path)
    mod_name = "kubesched_plugin_" + os.path.splitext(os.path.basename(full))[0]
    module = sys.modules.get(mod_name)
    if module is None or getattr(module, "__file__", None) != full:
        if not os.path.isfile(full):
            raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: no such file {path!r}")
        spec = importlib.util.spec_from_file_location(mod_name, full)
        if spec is None or spec.loader is None:
            raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # noqa: BLE001 - any import-time failure is the user's plugin's
            del sys.modules[mod_name]
            raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: {type(e).__name__}: {e}") from None
    try:
        factory: Callable[[Any, Any], Any] = getattr(module, attr)
        return factory
    except AttributeError as e:
        raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: {e}") from None


def load_out_of_tree(spec: str) -> tuple[str, PluginFactory]:
    """Resolve ``"name=package.module:factory"`` (the current directory is searched too),
    ``"name=path/to/file.py:factory"``, or an entry-point name in ``kubesched.plugins``.

    Raises :class:`PluginConfigError` when it cannot be imported.
    """
    if "=" in spec:
        name, target = spec.split("=", 1)
        mod_name, _, attr = target.rpartition(":") if target.count(":") else (target, "", "")
        if mod_name.endswith(".py"):
            return name, _load_file(name, target, mod_name, attr or "new")
        cwd = os.getcwd()
        if cwd not in sys.path:  # as `uvicorn module:app`: modules next to where the command runs
            sys.path.insert(0, cwd)
        try:
            module = importlib.import_module(mod_name)
            factory = getattr(module, attr or "new")
        except (ImportError, AttributeError) as e:
            raise PluginConfigError(f"cannot load plugin {name!r} from {target!r}: {e}") from None
        return name, factory
    from importlib.metadata import entry_points  # here: importing it (csv, zipfile, email, ...) costs every start

    found = entry_points(group="kubesched.plugins").select(name=spec)
    for ep in found:
        return spec, ep.load()
    raise PluginConfigError(f"no plugin {spec!r} in entry-point group 'kubesched.plugins'")
