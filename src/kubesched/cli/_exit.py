"""The exit-code convention shared by the live commands (``run``, ``up``)."""

from __future__ import annotations

from collections.abc import Callable

import click

from kubesched.errors import InputError, KubeschedError

__all__ = ["command_exit_code"]


def command_exit_code(body: Callable[[], int]) -> int:
    """Run a command's body and return its exit code.

    An :class:`InputError` (bad flags, config or manifests) is printed as one ``error: ...`` line
    on stderr and gives 2; any other :class:`KubeschedError` is printed the same way and gives 1.
    Other exceptions propagate.
    """
    try:
        return body()
    except InputError as e:
        click.echo(f"error: {e}", err=True)
        return 2
    except KubeschedError as e:
        click.echo(f"error: {e}", err=True)
        return 1
