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
_TEXT_HANDLER: logging.StreamHandler[TextIO] | None = None
"""The text handler :func:`configure_logging` put on the root logger (None for JSON): while it is
the only handler a record reaches, :func:`kv_log` writes its line straight to it."""


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
    level = logging.ERROR if error else logging.INFO
    h = _TEXT_HANDLER
    if h is not None and _only_handler(logger, h, level):
        # the line a LogRecord would give, without one (no record, caller lookup by stack walk,
        # handler/filter dispatch: half the cost of the per-pod "Successfully bound" line)
        caller = sys._getframe(1)
        line = KlogFormatter.line(time.time(), level, os.path.basename(caller.f_code.co_filename),
                                  caller.f_lineno, str(msg), kv)
        h.acquire()
        try:
            h.stream.write(line + "\n")
            h.stream.flush()
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - as StreamHandler.emit: reported by handleError
            h.handleError(logging.makeLogRecord({"msg": msg, "levelno": level}))
        finally:
            h.release()
        return
    logger.log(level, msg, extra={"kv": kv, "klog_v": v}, stacklevel=2)


def _only_handler(logger: logging.Logger, h: logging.Handler, level: int) -> bool:
    """Whether a record of ``level`` from ``logger`` would reach ``h`` alone, unfiltered: enabled,
    no handler or filter on the way to the root, the root's one handler ``h`` (tests that capture
    logs add theirs, and get records)."""
    if not logger.isEnabledFor(level) or h.level > level or h.filters:
        return False
    c: logging.Logger | None = logger
    while c is not None:
        if c.filters:
            return False
        if c.parent is None:  # the root
            return len(c.handlers) == 1 and c.handlers[0] is h
        if c.handlers or not c.propagate:
            return False
        c = c.parent
    return False


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
        line = self.line(record.created, record.levelno, record.filename, record.lineno, record.getMessage(),
                         getattr(record, "kv", None))
        if record.exc_info:
            line += f" err={_quote(self.formatException(record.exc_info))}"
        return line

    @classmethod
    def line(cls, t: float, levelno: int, filename: str, lineno: int, msg: str, kv: dict[str, Any] | None) -> str:
        """One log line: ``t`` (unix seconds), the logging level, the caller's file name and line,
        the message and its key/value pairs."""
        sec = int(t)
        if sec != cls._second:  # the "mmdd hh:mm:ss" part changes once a second
            lt = time.gmtime(sec)
            cls._date = f"{lt.tm_mon:02d}{lt.tm_mday:02d} {lt.tm_hour:02d}:{lt.tm_min:02d}:{lt.tm_sec:02d}"
            cls._second = sec
        usec = int((t - sec) * 1_000_000)
        level = _LEVEL_CHAR.get(levelno, "I")
        parts = [f"{level}{cls._date}.{usec:06d} {os.getpid():7d} {filename}:{lineno}]", _quote(msg)]
        if kv:
            parts.extend(f"{k}={_value(v)}" for k, v in kv.items())
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
    global _TEXT_HANDLER
    set_verbosity(v)
    handler = logging.StreamHandler(stream or sys.stderr)
    _TEXT_HANDLER = handler if fmt != "json" else None
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
