"""klog-style logging for ``kubesched run`` (k8s.io/klog/v2 text format, component-base JSON).

Text (``--logging-format text``)::

    I1124 08:26:12.123456   12345 adapter.py:512] "Successfully bound pod to node" pod="ns/name" node="n1"

``Lmmdd hh:mm:ss.uuuuuu`` (level I/W/E/F, UTC), the process id right-aligned in 7 columns,
``file:line]``, then the quoted message and ``key=value`` pairs (strings quoted as Go's
``strconv.Quote``, numbers and bools bare). JSON (``--logging-format json``) is one object per
line: ``{"ts": <unix ms>, "caller": "file:line", "msg": ..., "v": <level>, key: value, ...}``
(errors carry ``"err"`` and no ``"v"``), as component-base's zap logger.

Verbosity ``-v N``: :func:`kv_log` with level ``v`` logs only when ``v <= N`` (klog ``V(v)``).
Plain ``logging`` calls (``log.info("...")``) are level 0 and use the same format.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from typing import Any, TextIO

__all__ = ["JSONFormatter", "KlogFormatter", "configure_logging", "kv_log", "set_verbosity", "verbosity"]

_VERBOSITY = 0


def set_verbosity(v: int) -> None:
    global _VERBOSITY
    _VERBOSITY = int(v)


def verbosity() -> int:
    return _VERBOSITY


def kv_log(logger: logging.Logger, v: int, msg: str, *, error: bool = False, **kv: Any) -> None:
    """Log ``msg`` with structured ``kv`` at klog verbosity ``v`` (dropped when ``v`` > ``-v``);
    ``error=True`` logs at ERROR whatever the verbosity."""
    if not error and v > _VERBOSITY:
        return
    logger.log(logging.ERROR if error else logging.INFO, msg, extra={"kv": kv, "klog_v": v}, stacklevel=2)


_ESCAPED = re.compile(r'[\x00-\x1f"\\]')
"""What ``json.dumps(s, ensure_ascii=False)`` escapes: control characters, ``"`` and ``\\``."""


def _quote(s: str) -> str:
    if _ESCAPED.search(s) is None:  # nothing to escape (almost every pod and node name): no encoder
        return f'"{s}"'
    return json.dumps(s, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if v is None:
        return "<nil>"
    return _quote(str(v))


_LEVEL_CHAR = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
               logging.CRITICAL: "F"}


class KlogFormatter(logging.Formatter):
    """klog text header + quoted message + ``key="value"`` pairs."""

    _second = -1
    _date = ""

    def format(self, record: logging.LogRecord) -> str:
        t = record.created
        sec = int(t)
        if sec != self._second:  # the "mmdd hh:mm:ss" part changes once a second
            lt = time.gmtime(sec)
            self._date = f"{lt.tm_mon:02d}{lt.tm_mday:02d} {lt.tm_hour:02d}:{lt.tm_min:02d}:{lt.tm_sec:02d}"
            self._second = sec
        usec = int((t - sec) * 1_000_000)
        level = _LEVEL_CHAR.get(record.levelno, "I")
        head = f"{level}{self._date}.{usec:06d} {os.getpid():7d} {record.filename}:{record.lineno}]"
        parts = [head, _quote(record.getMessage())]
        kv = getattr(record, "kv", None)
        if kv:
            parts.extend(f"{k}={_value(v)}" for k, v in kv.items())
        if record.exc_info:
            parts.append(f"err={_quote(self.formatException(record.exc_info))}")
        return " ".join(parts)


class JSONFormatter(logging.Formatter):
    """component-base JSON lines."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": round(record.created * 1000, 3), "caller": f"{record.filename}:{record.lineno}",
                               "msg": record.getMessage()}
        if record.levelno < logging.ERROR:
            out["v"] = getattr(record, "klog_v", 0)
        kv = getattr(record, "kv", None)
        if kv:
            for k, v in kv.items():
                out[k] = v if isinstance(v, int | float | bool | str) or v is None else str(v)
        if record.exc_info:
            out["err"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(fmt: str = "text", v: int = 0, stream: TextIO | None = None) -> None:
    """Route the root logger to ``stream`` (stderr) in klog text or JSON format at verbosity ``v``."""
    set_verbosity(v)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else KlogFormatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # neither format shows the thread or process names: LogRecord need not look them up per line
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    # aiohttp's access log and client noise stay quiet unless -v is high
    logging.getLogger("aiohttp").setLevel(logging.INFO if v >= 6 else logging.WARNING)
