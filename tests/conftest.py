"""Suite-wide settings: debug consistency checks are on in every test (``KUBESCHED_DEBUG=1``,
inherited by subprocesses too), e.g. ``NodeTable.frozen`` during scheduling cycles."""

from __future__ import annotations

import os

os.environ.setdefault("KUBESCHED_DEBUG", "1")

from kubesched.framework import node_table  # noqa: E402  (after the environment is set)

node_table.set_debug_checks(os.environ["KUBESCHED_DEBUG"] not in ("", "0"))
