"""What a sweep leaves in its output folder, and the summary it prints.

* ``results.parquet`` (pyarrow) or ``results.csv``: one row per run — ``run`` (its hash),
  ``input`` (with ``×factor`` for a sped-up trace), ``config`` (its label), one column per
  grid parameter, ``seed``, ``status``, ``error``, the metrics, ``host``, ``pid``.
* the summary (:func:`summarize`): per input and metric, the best configuration by the mean
  over seeds (the direction of "better" is :data:`~kubesched.sweep.spec.METRICS`'), with its
  spread (standard deviation over seeds, and min–max), and the worst configuration's mean.
* ``plots/<metric>.png`` (matplotlib): the metric against each parameter (columns), one row per
  input; a dot per run, a line through the means.
* ``index.html``: the summary, the plots (inline) and the table, self-contained.
"""

from __future__ import annotations

import base64
import csv
import html
import math
import os
import statistics
from typing import Any

from kubesched.errors import InputError
from kubesched.sweep.spec import METRICS, Plan

__all__ = ["rows", "summarize", "write_html", "write_plots", "write_table"]


def rows(plan: Plan, results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run that has a result, in the plan's order."""
    out = []
    for r in plan.runs:
        res = results.get(r.key)
        if res is None:
            continue
        m = res.get("metrics") or {}
        row: dict[str, Any] = {"run": r.key, "input": r.input_label, "config": r.config}
        row.update({p: r.params.get(p, "") for p in plan.parameters if p != "config"})
        row.update(seed=r.seed, status=res.get("status", ""), error=res.get("error", ""))
        row.update({k: m.get(k) for k in plan.metrics})
        row.update(host=res.get("host", ""), pid=res.get("pid"))
        out.append(row)
    return out


def write_table(table: list[dict[str, Any]], out_dir: str, fmt: str = "parquet") -> str:
    """Write ``results.parquet`` or ``results.csv``; return its path. ``parquet`` needs pyarrow."""
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("Parquet needs pyarrow: pip install 'kubesched[sweep]' (or --format csv)",
                             "--format") from None
        path = os.path.join(out_dir, "results.parquet")
        pq.write_table(pa.Table.from_pylist(table), path)
        return path
    path = os.path.join(out_dir, "results.csv")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if table:
            w = csv.DictWriter(fh, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
    return path


def _numeric(metrics: list[str]) -> list[str]:
    return [m for m in metrics if METRICS[m][0]]


def summarize(plan: Plan, table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per input and numeric metric: ``best`` config, its ``mean``, ``sd`` and ``min``/``max``
    over seeds, ``seeds`` (how many), ``worst`` config and ``worstMean``."""
    out: list[dict[str, Any]] = []
    inputs = list(dict.fromkeys(r["input"] for r in table))
    for inp in inputs:
        ok = [r for r in table if r["input"] == inp and r["status"] == "ok"]
        for m in _numeric(plan.metrics):
            by: dict[str, list[float]] = {}
            for r in ok:
                if r.get(m) is not None:
                    by.setdefault(r["config"], []).append(float(r[m]))
            if not by:
                continue
            means = {c: statistics.fmean(v) for c, v in by.items()}
            sign = 1 if METRICS[m][0] == "max" else -1
            order = sorted(means, key=lambda c: (-sign * means[c], c))
            best, worst = order[0], order[-1]
            v = by[best]
            out.append({"input": inp, "metric": m, "best": best, "mean": means[best],
                        "sd": statistics.stdev(v) if len(v) > 1 else 0.0, "min": min(v), "max": max(v),
                        "seeds": len(v), "worst": worst, "worstMean": means[worst],
                        "tie": sum(1 for c in order if means[c] == means[best])})
    return out


def fmt_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if v != 0 and abs(v) < 1:
            return f"{v:.4f}"
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.0f}"
    return str(v)


def write_plots(plan: Plan, table: list[dict[str, Any]], out_dir: str) -> list[str]:
    """One PNG per numeric metric (see the module docstring); returns their paths. Needs
    matplotlib (``pip install 'kubesched[plot]'``)."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'kubesched[plot]' (or --no-plots)",
                         "--no-plots") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    ok = [r for r in table if r["status"] == "ok"]
    inputs = list(dict.fromkeys(r["input"] for r in table))
    params = plan.parameters
    values = {p: list(dict.fromkeys(v.params[p] for v in plan.variants)) for p in params}
    paths = []
    for m in _numeric(plan.metrics):
        if not any(r.get(m) is not None for r in ok):
            continue
        fig, axes = plt.subplots(len(inputs), len(params), squeeze=False,
                                 figsize=(max(6.5, 3.6 * len(params)), 2.8 * len(inputs) + 0.8),
                                 constrained_layout=True)
        for i, inp in enumerate(inputs):
            for j, p in enumerate(params):
                ax = axes[i][j]
                cats = values[p]
                xs, ys, means = [], [], []
                for k, cat in enumerate(cats):
                    key = "config" if p == "config" else p
                    vs = [float(r[m]) for r in ok if r["input"] == inp and r[key] == cat and r.get(m) is not None]
                    n = len(vs)
                    xs += [k + (t - (n - 1) / 2) * min(0.5 / max(n, 1), 0.06) for t in range(n)]
                    ys += vs
                    means.append(statistics.fmean(vs) if vs else float("nan"))
                ax.scatter(xs, ys, s=9, alpha=0.45, color="tab:blue", linewidths=0)
                ax.plot(range(len(cats)), means, color="tab:red", marker="o", lw=1.4, ms=4, label="mean")
                ax.set_xticks(range(len(cats)), [str(c) for c in cats], rotation=20 if len(cats) > 3 else 0,
                              fontsize=8)
                ax.grid(alpha=0.3)
                if i == len(inputs) - 1:
                    ax.set_xlabel(p)
                if j == 0:
                    ax.set_ylabel(f"{inp}\n{m}", fontsize=9)
        fig.suptitle(f"{plan.spec.name}: {m} ({METRICS[m][0]} is better)\n{METRICS[m][1]}", fontsize=9)
        path = os.path.join(out_dir, "plots", f"{m}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def _esc(v: Any) -> str:
    return html.escape(fmt_value(v), quote=True)


def write_html(plan: Plan, table: list[dict[str, Any]], summary: list[dict[str, Any]], plots: list[str],
               out_dir: str, *, title: str = "") -> str:
    """``index.html``: summary, plots (embedded), the table (see the module docstring)."""
    title = title or f"kubesched sweep {plan.spec.name}"
    ok = sum(1 for r in table if r["status"] == "ok")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
             "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
             "text-align:right}th{background:#f3f3f3}td.t,th.t{text-align:left}tr.failed td{background:#fde8e8}"
             "img{max-width:100%;border:1px solid #ddd;margin:8px 0}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p id='counts'>{len(plan.runs)} runs: {len(plan.inputs)} input(s) × {len(plan.variants)} "
             f"configuration(s) × {len(plan.spec.seeds)} seed(s); {ok} ok, {len(table) - ok} failed, "
             f"{len(plan.runs) - len(table)} missing.</p>",
             "<h2>Best configuration per metric</h2><table id='summary'><tr><th class=t>input</th>"
             "<th class=t>metric</th><th class=t>best config</th><th>mean</th><th>± sd</th><th>min–max</th>"
             "<th>seeds</th><th class=t>worst config</th><th>worst mean</th></tr>"]
    for s in summary:
        tie = f" (+{s['tie'] - 1} tied)" if s["tie"] > 1 else ""
        parts.append(f"<tr><td class=t>{_esc(s['input'])}</td><td class=t>{_esc(s['metric'])}</td>"
                     f"<td class=t>{_esc(s['best'])}{tie}</td><td>{_esc(s['mean'])}</td><td>{_esc(s['sd'])}</td>"
                     f"<td>{_esc(s['min'])}–{_esc(s['max'])}</td><td>{s['seeds']}</td>"
                     f"<td class=t>{_esc(s['worst'])}</td><td>{_esc(s['worstMean'])}</td></tr>")
    parts.append("</table><h2>Plots</h2><div id='plots'>")
    for p in plots:
        with open(p, "rb") as fh:
            data = base64.b64encode(fh.read()).decode()
        name = os.path.splitext(os.path.basename(p))[0]
        parts.append(f"<figure id='plot-{html.escape(name)}'><img alt='{html.escape(name)}' "
                     f"src='data:image/png;base64,{data}'></figure>")
    parts.append("</div><h2>Runs</h2><table id='runs'>")
    if table:
        cols = list(table[0])
        parts.append("<tr>" + "".join(f"<th class=t>{html.escape(c)}</th>" for c in cols) + "</tr>")
        for r in table:
            cls = " class=failed" if r["status"] != "ok" else ""
            parts.append(f"<tr{cls}>" + "".join(
                f"<td class=t>{_esc(r[c])}</td>" if isinstance(r[c], str) else f"<td>{_esc(r[c])}</td>"
                for c in cols) + "</tr>")
    parts.append("</table></body></html>\n")
    path = os.path.join(out_dir, "index.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    return path
