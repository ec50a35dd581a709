"""``--report OUT.html``: one self-contained HTML page of a run.

No network at all: the CSS, the JavaScript and the pictures (SVG) are inline, and the figures
are embedded as JSON (``<script type="application/json" id="kubesched-data">``). The page
works without JavaScript for the pictures and tables; JavaScript adds the pod filter and shows
the decision record of a pod (Filter verdicts and reasons per node, each Score plugin's raw →
normalized → weighted score, chosen node and runner-up) when its row or a node tile is clicked.

Sections (element ids, stable for tests and scripts): ``summary``, ``heatmap`` (one grid of
node tiles per resource, colour = requested ÷ allocatable), ``pending`` (pending reasons with
their pods), ``zones`` (per-zone allocation bars), ``pods`` (every pending pod of the input,
``tr.pod[data-pod=NS/NAME]``), ``record`` (the panel the decision record is drawn in),
``preemptions``; a replay report has ``timeline`` instead.

The data comes from :func:`kubesched.sim.explain.report_data`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from typing import Any

from kubesched.errors import InputError
from kubesched.sim.explain import RawJSON
from kubesched.sim.explain_compact import compact_json

__all__ = ["check_writable", "render_report", "render_replay_report", "write_report", "write_text"]

TILE = 14
GAP = 2
MAX_COLS = 48


_SPECIAL = re.compile("[&<>\"']").search


def _esc(s: Any) -> str:
    """``html.escape(str(s), quote=True)``: the same replacements, skipped when there is nothing
    to replace (most names and messages; the report escapes ~7 texts per pod)."""
    s = str(s)
    if _SPECIAL(s) is None:
        return s
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#x27;"))


def _fmt(res: str, v: int | float | None) -> str:
    """A resource amount for people: cpu in cores, memory/storage in Gi/Mi, counts as is."""
    if v is None:
        return "–"
    if res == "cpu":
        return f"{v / 1000:g}" if v % 1000 == 0 else f"{v}m"
    if res in ("memory", "ephemeral-storage") or res.startswith("hugepages-"):
        for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if v >= size:
                return f"{v / size:.1f}{unit}".replace(".0" + unit, unit)
        return str(v)
    return str(v)


def _pct(u: float | None) -> str:
    return "n/a" if u is None else f"{100 * u:.0f}%"


@functools.lru_cache(maxsize=4096)  # a heatmap has one tile per node and resource, few distinct values
def _colour(u: float | None) -> str:
    """Sequential blue scale for 0..1; red above 1 (over-committed); grey when the node has none."""
    if u is None:
        return "#d9d9d9"
    if u > 1.0:
        return "#cb181d"
    t = max(0.0, min(1.0, u))
    lo, hi = (0xf7, 0xfb, 0xff), (0x08, 0x30, 0x6b)
    r, g, b = (round(a + (c - a) * t) for a, c in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def _heatmap(data: dict[str, Any]) -> str:
    nodes = data["nodes"]
    if not nodes:
        return "<p class='muted'>no nodes</p>"
    n = len(nodes)
    tile = 6 if n > 2000 else 9 if n > 400 else TILE if n > 64 else 28
    cols = max(1, min(math.ceil(math.sqrt(n * 2)), max(MAX_COLS, 720 // (tile + GAP))))
    rows = math.ceil(len(nodes) / cols)
    w, h = cols * (tile + GAP), rows * (tile + GAP)
    out: list[str] = []
    for res in data["resources"]:
        tiles: list[str] = []
        for i, nd in enumerate(nodes):
            x, y = (i % cols) * (tile + GAP), (i // cols) * (tile + GAP)
            u = nd["utilisation"].get(res)
            tip = (f"{nd['name']}{' (zone ' + nd['zone'] + ')' if nd['zone'] else ''}: {res} {_pct(u)} "
                   f"({_fmt(res, nd['requested'].get(res, 0))} / {_fmt(res, nd['allocatable'].get(res))}), "
                   f"{len(nd['pods'])} pod(s)")
            tiles.append(f'<rect class="tile" data-node="{_esc(nd["name"])}" x="{x}" y="{y}" width="{tile}" '
                         f'height="{tile}" rx="2" fill="{_colour(u)}" stroke="#c8d1dc" stroke-width="0.5">'
                         f'<title>{_esc(tip)}</title></rect>')
        out.append(f'<figure class="heat"><figcaption>{_esc(res)}</figcaption>'
                   f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                   f'role="img" aria-label="{_esc(res)} utilisation per node">{"".join(tiles)}</svg></figure>')
    legend = "".join(f'<span class="key" style="background:{_colour(u)}"></span>{lab} '
                     for u, lab in ((0.0, "0%"), (0.5, "50%"), (1.0, "100%"), (1.5, "&gt;100%"), (None, "none")))
    return f'<div class="heats">{"".join(out)}</div><p class="legend">{legend}</p>'


def _bar(u: float | None) -> str:
    if u is None:
        return "<span class='muted'>n/a</span>"
    width = max(0.0, min(100.0, 100 * u))
    return (f'<span class="bar"><span style="width:{width:.1f}%;background:{_colour(u)}"></span></span> '
            f"{_pct(u)}")


def _zones(data: dict[str, Any]) -> str:
    res = data["resources"]
    head = "".join(f"<th>{_esc(r)}</th>" for r in res)
    rows = []
    for z in data["zones"]:
        cells = "".join(
            f'<td>{_bar(z["utilisation"].get(r))}<div class="muted">{_fmt(r, z["requested"].get(r, 0))} / '
            f'{_fmt(r, z["allocatable"].get(r))}</div></td>' for r in res)
        rows.append(f'<tr><td>{_esc(z["zone"] or "(no zone label)")}</td><td>{z["nodes"]}</td>{cells}</tr>')
    return f"<table><thead><tr><th>zone</th><th>nodes</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _pending(data: dict[str, Any]) -> str:
    if not data["pending"]:
        return "<p class='muted'>every pending pod was scheduled</p>"
    rows = []
    for p in data["pending"]:
        pods = " ".join(f'<a href="#record" class="podlink" data-pod="{_esc(k)}">{_esc(k)}</a>' for k in p["pods"][:50])
        more = f" … {len(p['pods']) - 50} more" if len(p["pods"]) > 50 else ""
        rows.append(f'<tr><td class="num">{p["count"]}</td><td>{_esc(p["reason"])}</td><td>{pods}{more}</td></tr>')
    return f"<table><thead><tr><th>pods</th><th>reason</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _pods(data: dict[str, Any]) -> str:
    rows = []
    for p in data["pods"]:
        cls = {"scheduled": "ok", "preempted": "bad"}.get(p["result"], "warn")
        rows.append(f'<tr class="pod" data-pod="{_esc(p["key"])}" tabindex="0"><td>{_esc(p["key"])}</td>'
                    f'<td class="{cls}">{_esc(p["result"])}</td><td>{_esc(p["node"] or "")}</td>'
                    f'<td class="num">{p["attempts"] or ""}</td><td>{_esc(p["message"])}</td></tr>')
    return ('<input id="podfilter" type="search" placeholder="filter pods…" aria-label="filter pods">'
            "<table id='podtable'><thead><tr><th>pod</th><th>result</th><th>node</th><th>attempts</th>"
            f"<th>message</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _preemptions(data: dict[str, Any]) -> str:
    if not data["preemptions"]:
        return "<p class='muted'>no pod was preempted</p>"
    rows = "".join(f'<tr><td>{_esc(p["victim"])}</td><td class="num">{p["victimPriority"]}</td>'
                   f'<td><a href="#record" class="podlink" data-pod="{_esc(p["preemptor"])}">{_esc(p["preemptor"])}</a>'
                   f'</td><td class="num">{p["preemptorPriority"]}</td><td>{_esc(p["node"])}</td></tr>'
                   for p in data["preemptions"])
    return ("<table><thead><tr><th>evicted pod</th><th>priority</th><th>by</th><th>priority</th><th>node</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def _summary(s: dict[str, Any]) -> str:
    items = [("nodes", s.get("nodes")), ("pending pods", s.get("pending")), ("scheduled", s.get("scheduled")),
             ("unschedulable", s.get("unschedulable")), ("preempted", s.get("preempted")),
             ("attempts", s.get("attempts"))]
    return "".join(f'<div class="card"><div class="big">{_esc(v)}</div><div>{_esc(k)}</div></div>'
                   for k, v in items if v is not None)


def _dumps(data: Any) -> str:
    """``json.dumps(data, separators=(",", ":"))``, a pod's explanation that is already JSON text
    (:class:`~kubesched.sim.explain.RawJSON`) embedded as is."""
    pods = data.get("pods") if isinstance(data, dict) else None
    if not pods or not any(isinstance(p.get("explanation"), RawJSON) for p in pods):
        return compact_json(data)

    def item(k: str, v: Any) -> str:
        return f"{json.dumps(k)}:{v if isinstance(v, RawJSON) else compact_json(v)}"

    def pod(p: dict[str, Any]) -> str:
        last = next(reversed(p), None)
        ex = p[last] if last is not None else None
        if isinstance(ex, RawJSON) and len(p) > 1:  # the rest in one encoding, the explanation spliced in
            head = compact_json({k: v for k, v in p.items() if k != last})
            return f"{head[:-1]},{json.dumps(last)}:{ex}}}"
        return "{" + ",".join(item(k, v) for k, v in p.items()) + "}"

    return "{" + ",".join(f"{json.dumps(k)}:[{','.join(map(pod, v))}]" if k == "pods" else item(k, v)
                          for k, v in data.items()) + "}"


def _json_script(data: Any) -> str:
    text = _dumps(data)
    # nothing inside may close the script element or open a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="kubesched-data">{text}</script>'


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1b1f24;background:#fff}
header{background:#0b3d91;color:#fff;padding:12px 20px}header h1{margin:0;font-size:18px}
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(320px,2fr);gap:16px;padding:16px 20px}
main.one{grid-template-columns:minmax(0,1fr);max-width:960px}section{margin-bottom:18px}
h2{font-size:15px;margin:0 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.cards{display:flex;gap:10px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:6px;padding:6px 12px;min-width:90px}
.big{font-size:20px;font-weight:600}.muted{color:#6a737d;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eee;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right}
.ok{color:#1a7f37}.warn{color:#9a6700}.bad{color:#cf222e}
tr.pod{cursor:pointer}tr.pod:hover,tr.pod.sel{background:#ddf4ff}
.heats{display:flex;flex-wrap:wrap;gap:18px}.heat{margin:0}.heat figcaption{font-weight:600;margin-bottom:4px}
rect.tile{cursor:pointer}rect.tile:hover{stroke:#000;stroke-width:1}
.legend .key{display:inline-block;width:12px;height:12px;margin:0 4px 0 10px;vertical-align:middle;
border:1px solid #ccc}
.bar{display:inline-block;width:90px;height:10px;background:#eee;border-radius:3px;vertical-align:middle}
.bar span{display:block;height:10px;border-radius:3px}
#record{position:sticky;top:10px;border:1px solid #ddd;border-radius:6px;padding:10px;max-height:94vh;overflow:auto}
#record .chosen{background:#dafbe1}#record .runner{background:#fff8c5}
#podfilter{margin:0 0 6px;padding:4px;width:60%}
#pods td:first-child,#pods td:nth-child(3),#preemptions td:first-child,#record td:first-child{white-space:nowrap}
"""

_JS = r"""
(function(){
const DATA = JSON.parse(document.getElementById('kubesched-data').textContent);
const PODS = new Map(DATA.pods.map(p => [p.key, p]));
const NODES = new Map(DATA.nodes.map(n => [n.name, n]));
const panel = document.getElementById('record');
if (!panel) return;
function el(tag, attrs, ...kids){ const e = document.createElement(tag);
  for (const [k,v] of Object.entries(attrs||{})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e; }
function table(head, rows){ const t = el('table');
  t.append(el('thead', {}, el('tr', {}, ...head.map(h => el('th', {}, h)))));
  const b = el('tbody'); rows.forEach(r => b.append(r)); t.append(b); return t; }
function showPod(key){
  document.querySelectorAll('tr.pod.sel').forEach(r => r.classList.remove('sel'));
  const row = document.querySelector('tr.pod[data-pod="' + CSS.escape(key) + '"]');
  if (row) row.classList.add('sel');
  const p = PODS.get(key); panel.replaceChildren();
  panel.append(el('h2', {id: 'record-title'}, 'decision record: ' + key));
  if (!p){ panel.append(el('p', {}, 'not a pending pod of this run')); return; }
  const ex = p.explanation;
  panel.append(el('p', {class: p.result === 'scheduled' ? 'ok' : 'bad'},
    p.result + (p.node ? ' on ' + p.node : '') + (ex ? ' — attempt ' + ex.attempt : '')));
  if (p.message) panel.append(el('p', {}, p.message));
  if (!ex){ panel.append(el('p', {class: 'muted'}, 'no decision record')); return; }
  const facts = [];
  facts.push((ex.total_nodes != null ? ex.total_nodes + ' nodes, ' : '') + ex.evaluated_nodes + ' evaluated, '
    + ex.feasible_nodes + ' feasible');
  if (ex.scoring_skipped) facts.push('only one feasible node: scoring skipped');
  if (ex.selected_ties) facts.push('chosen among ' + (ex.selected_ties + 1)
    + ' nodes with the same total (seeded random)');
  if (ex.runner_up) facts.push('runner-up ' + ex.runner_up + (ex.margin != null ? ' (' + ex.margin + ' behind)' : '')
    + (ex.runner_up_ties ? ', tied with ' + ex.runner_up_ties + ' other node(s)' : ''));
  for (const [pl, m] of Object.entries(ex.pre_filter || {})) facts.push('PreFilter ' + pl + ': ' + m);
  const pf = ex.post_filter || {};
  if (pf.status) facts.push('PostFilter ' + (pf.plugin || '') + ': ' + pf.status
    + (pf.message ? ' — ' + pf.message : '')
    + (pf.nominatedNodeName ? ' (nominated ' + pf.nominatedNodeName + ')' : ''));
  const g = ex.group;
  if (g) {
    facts.push('pod group ' + g.podGroup + ' (' + g.policy + (g.minCount != null ? ' minCount=' + g.minCount : '')
      + ', ' + g.members + ' member(s) in this cycle): ' + g.result + (g.message ? ' — ' + g.message : ''));
    (g.placements || []).forEach(p => facts.push('placement ' + (p.name || '(all nodes)') + ' (' + p.nodes
      + ' nodes): ' + (p.feasible ? 'feasible' : 'infeasible — ' + p.status)
      + (p.scores ? ', scores ' + Object.entries(p.scores).map(([k, v]) => k + ' ' + v).join(', ')
        + ', total ' + p.total : '') + (p.chosen ? ' (chosen)' : '')));
  }
  (ex.history || []).forEach(h => facts.push('earlier attempt ' + h.attempt + ': ' + h.result
    + (h.nominatedNode ? ', nominated to ' + h.nominatedNode : '') + (h.message ? ' — ' + h.message : '')));
  (ex.preempted || []).forEach(v => facts.push('preempted ' + v.victim + ' on node ' + v.node));
  if (ex.nodes_omitted) facts.push(ex.nodes_omitted + ' more node(s) not shown: '
    + Object.entries(ex.omitted_reasons || {}).slice(0, 5).map(([r, c]) => c + ' × ' + r).join(', '));
  const ul = el('ul', {class: 'facts'}); facts.forEach(f => ul.append(el('li', {}, f))); panel.append(ul);
  const label = n => n.node + (n.selected ? ' (chosen)' : n.runner_up ? ' (runner-up)' : '');
  const cls = n => n.selected ? 'chosen' : n.runner_up ? 'runner' : '';
  panel.append(el('h3', {}, 'Filter'));
  panel.append(table(['node', 'verdict', 'reasons'], ex.nodes.map(n =>
    el('tr', {class: cls(n)}, el('td', {}, label(n)),
       el('td', {class: n.feasible ? 'ok' : 'bad'}, n.feasible ? 'feasible' : 'rejected'),
       el('td', {}, n.reasons.join('; '))))));
  const scored = ex.nodes.filter(n => n.total != null);
  if (scored.length){
    panel.append(el('h3', {}, 'Score (raw → normalized → weighted)'));
    const head = ['rank', 'node', 'total'].concat(
      ex.plugins.map(p => p + (ex.weights[p] != null ? ' ×' + ex.weights[p] : '')));
    panel.append(table(head, scored.map(n =>
      el('tr', {class: cls(n)}, el('td', {}, n.rank), el('td', {}, label(n)), el('td', {}, n.total),
        ...ex.plugins.map((p, i) => { const s = n.scores[i];
          return el('td', {}, s ? s[0] + ' → ' + s[1] + ' → ' + s[2] : ''); })))));
  }
}
// a resource amount for people, as the page's Python side (_fmt): cores, Ki/Mi/Gi/Ti, counts
function fmt(res, v){
  if (v == null) return '–';
  if (res === 'cpu') return v % 1000 === 0 ? String(v / 1000) : v + 'm';
  if (res === 'memory' || res === 'ephemeral-storage' || res.startsWith('hugepages-')){
    for (const [u, size] of [['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]])
      if (v >= size) return (v / size).toFixed(1).replace(/\.0$/, '') + u;
  }
  return String(v);
}
function showNode(name){
  const n = NODES.get(name); if (!n) return; panel.replaceChildren();
  panel.append(el('h2', {id: 'record-title'}, 'node ' + name + (n.zone ? ' (zone ' + n.zone + ')' : '')));
  panel.append(table(['resource', 'requested', 'allocatable', 'utilisation'], DATA.resources.map(r =>
    el('tr', {}, el('td', {}, r), el('td', {class: 'num'}, fmt(r, n.requested[r] || 0)),
       el('td', {class: 'num'}, fmt(r, n.allocatable[r])),
       el('td', {}, n.utilisation[r] == null ? 'n/a' : Math.round(100 * n.utilisation[r]) + '%')))));
  const ul = el('ul');
  n.pods.forEach(k => ul.append(el('li', {}, el('a', {href: '#record', class: 'podlink', 'data-pod': k}, k))));
  panel.append(el('h3', {}, n.pods.length + ' pod(s)')); panel.append(ul);
}
document.addEventListener('click', ev => {
  const t = ev.target.closest('tr.pod, .podlink, rect.tile'); if (!t) return;
  if (t.matches('rect.tile')) showNode(t.dataset.node); else { ev.preventDefault(); showPod(t.dataset.pod); }
});
document.addEventListener('keydown', ev => {
  if (ev.key === 'Enter' && ev.target.matches('tr.pod')) showPod(ev.target.dataset.pod); });
const f = document.getElementById('podfilter');
if (f) f.addEventListener('input', () => { const q = f.value.toLowerCase();
  document.querySelectorAll('tr.pod').forEach(r => {
    r.style.display = r.textContent.toLowerCase().includes(q) ? '' : 'none'; }); });
})();
"""


def _page_parts(title: str, body: str, data: Any) -> tuple[str, str, str]:
    """The page as three texts: what comes before the data, the data's script element (the
    bulk, ASCII: written apart it is never widened to the page's wider characters), the rest."""
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            # no network: forbid every fetch the page could make
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{_esc(title)}</h1></header>{body}", _json_script(data),
            f"<script>{_JS}</script></body></html>\n")


def _page(title: str, body: str, data: Any) -> str:
    return "".join(_page_parts(title, body, data))


def render_report(data: dict[str, Any]) -> str:
    """The HTML page of :func:`kubesched.sim.explain.report_data`'s figures (a ``str``)."""
    return "".join(_report_parts(data))


def _report_parts(data: dict[str, Any]) -> tuple[str, str, str]:
    """:func:`render_report` in the three parts of :func:`_page_parts`."""
    left = (f'<section id="summary"><h2>summary</h2><div class="cards">{_summary(data["summary"])}</div></section>'
            f'<section id="heatmap"><h2>node utilisation (requested ÷ allocatable)</h2>{_heatmap(data)}</section>'
            f'<section id="pending"><h2>pending reasons</h2>{_pending(data)}</section>'
            f'<section id="zones"><h2>allocation per zone</h2>{_zones(data)}</section>'
            f'<section id="preemptions"><h2>preemptions</h2>{_preemptions(data)}</section>'
            f'<section id="pods"><h2>pods</h2>{_pods(data)}</section>')
    right = ('<aside><div id="record"><h2 id="record-title">decision record</h2>'
             "<p class='muted'>click a pod (or a node tile) to see what the scheduler decided and why</p>"
             "</div></aside>")
    return _page_parts(data.get("title") or "kubesched report", f"<main><div>{left}</div>{right}</main>", data)


def _timeline(samples: list[dict[str, float]]) -> str:
    """Allocation (cpu, memory, gpu, left axis scaled to the highest allocation seen) and pending
    pods (right axis) over virtual time, as inline SVG."""
    if not samples:
        return "<p class='muted'>no samples</p>"
    w, h, pad = 900, 240, 44
    t0, t1 = samples[0]["time"], samples[-1]["time"]
    span = (t1 - t0) or 1.0
    pmax = max(1, max(int(s["pending"]) for s in samples))
    amax = max(s[k] for s in samples for k in ("cpu", "memory", "gpu"))
    ascale = min(1.0, max(0.05, math.ceil(amax * 20) / 20))  # next 5 %
    step = max(1, len(samples) // 2000)
    pts = samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else [])

    def line(key: str, colour: str, scale: float) -> str:
        xy = " ".join(f"{pad + (s['time'] - t0) / span * (w - 2 * pad):.1f},"
                      f"{h - pad - min(1.0, s[key] / scale) * (h - 2 * pad):.1f}" for s in pts)
        return (f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{xy}">'
                f'<title>{key}</title></polyline>')

    axes = (f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#999"/>'
            f'<line x1="{w - pad}" y1="{pad}" x2="{w - pad}" y2="{h - pad}" stroke="#d62728"/>'
            f'<text x="{pad}" y="{pad - 10}" font-size="11">{100 * ascale:.0f}% allocated</text>'
            f'<text x="{w - pad}" y="{pad - 10}" font-size="11" text-anchor="end" fill="#d62728">{pmax} pending</text>'
            f'<text x="{pad}" y="{h - pad + 14}" font-size="11">0</text>'
            f'<text x="{w - pad}" y="{h - 12}" font-size="11" text-anchor="end">{span / 3600:.1f} h (virtual)</text>')
    lines = "".join(line(k, c, sc) for k, c, sc in (("cpu", "#1f77b4", ascale), ("memory", "#2ca02c", ascale),
                                                     ("gpu", "#ff7f0e", ascale), ("pending", "#d62728", float(pmax))))
    legend = " ".join(f'<span class="key" style="background:{c}"></span>{k}' for k, c in (
        ("cpu", "#1f77b4"), ("memory", "#2ca02c"), ("gpu", "#ff7f0e"), ("pending pods (right axis)", "#d62728")))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="allocation and pending pods over time">{axes}{lines}</svg><p class="legend">{legend}</p>')


def _figure(k: str, v: Any) -> str:
    if k.startswith("alloc_") and isinstance(v, float):
        return f"{100 * v:.3f} %"
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def render_replay_report(summary: dict[str, Any], samples: list[dict[str, float]], title: str) -> str:
    """A replay's page: its figures and allocation/pending over virtual time (``samples``:
    ``{time, cpu, memory, gpu, pending}`` dicts, fractions 0..1)."""
    rows = "".join(f"<tr><td>{_esc(k.replace('_', ' '))}</td><td class='num'>{_esc(_figure(k, v))}</td></tr>"
                   for k, v in summary.items())
    body = (f'<main class="one"><div><section id="timeline"><h2>allocation and pending pods over virtual time</h2>'
            f'{_timeline(samples)}</section><section id="summary"><h2>summary</h2><table>{rows}</table></section>'
            f'</div></main>')
    return _page(title, body, {"pods": [], "nodes": [], "resources": [], "summary": summary})


def check_writable(path: str, flag: str = "--report") -> None:
    """Fail before a long run, not after it: the folder of ``path`` must exist and be writable
    (and ``path`` itself, when it exists). Raises :class:`InputError` naming ``flag``."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {path}: No such file or directory", flag)
    if os.path.isdir(path):
        raise InputError(f"cannot write {path}: Is a directory", flag)
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InputError(f"cannot write {path}: Permission denied", flag)


def write_text(text: str | tuple[str, ...], path: str) -> None:
    """Write ``text`` (or its parts, one after the other) to ``path`` (UTF-8); an unwritable
    path is an :class:`InputError`."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            for part in (text,) if isinstance(text, str) else text:
                f.write(part)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(path)}: {e.strerror or e}", "--report") from None


def write_report(data: dict[str, Any], path: str) -> None:
    """Render :func:`render_report` into ``path``."""
    write_text(_report_parts(data), path)
