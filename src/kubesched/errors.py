"""The exception hierarchy of kubesched.

::

    KubeschedError                 base of every error kubesched raises on purpose
    ├── InputError                 bad user input; ``str(err)`` is one readable line
    │   ├── QuantityError          an invalid resource quantity ("12x", "1.5.3Gi")
    │   ├── SelectorError          an invalid label / node selector (bad operator, values)
    │   ├── ManifestError          malformed YAML/JSON, duplicate or inconsistent objects
    │   └── ConfigError            an invalid KubeSchedulerConfiguration (with field path)
    │       └── PluginConfigError  unknown plugin, plugin enabled at a point it does not implement
    ├── MissingStateError          a plugin read CycleState data its PreFilter never wrote
    └── BindError                  binding a pod to a node failed

Every ``InputError`` carries an optional ``path`` (a field path such as
``profiles[0].plugins.score.enabled[1].name`` or a ``file:line`` location) that is
prefixed to the message, so the CLI prints exactly one line and exits with code 2.
"""

from __future__ import annotations

__all__ = [
    "BindError",
    "ConfigError",
    "InputError",
    "KubeschedError",
    "ManifestError",
    "MissingStateError",
    "PluginConfigError",
    "QuantityError",
    "SelectorError",
]


class KubeschedError(Exception):
    """Base class of all errors kubesched raises on purpose."""


class InputError(KubeschedError, ValueError):
    """Bad user input. ``path`` (field path or ``file:line``) is prefixed to the message."""

    def __init__(self, message: str, path: str | None = None) -> None:
        self.message = message
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)

    def at(self, path: str) -> "InputError":
        """Return a copy of this error located at ``path`` (prefixing any existing path)."""
        new_path = path if not self.path else (
            f"{path}{self.path}" if self.path.startswith(("[", ".")) else f"{path}.{self.path}"
        )
        return type(self)(self.message, new_path)


class QuantityError(InputError):
    """An invalid Kubernetes resource quantity."""


class SelectorError(InputError):
    """An invalid label selector or node selector requirement."""


class ManifestError(InputError):
    """Malformed or inconsistent manifests (YAML/JSON syntax, duplicates, dangling refs)."""


class ConfigError(InputError):
    """An invalid KubeSchedulerConfiguration; ``path`` is the field path."""


class PluginConfigError(ConfigError):
    """A plugin that is unknown, or enabled at an extension point it does not implement."""


class MissingStateError(KubeschedError):
    """A plugin read CycleState data that its PreFilter never wrote (upstream: "error reading ... from cycleState")."""


class BindError(KubeschedError):
    """Binding a pod to a node failed. ``code``: the HTTP status when the API answered (e.g. 404
    pod not found, 409 already assigned), None otherwise."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
