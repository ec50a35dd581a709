"""The sweep spec: field paths, expansion into runs, and one-line errors with the field path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.config import decode_config
from kubesched.errors import InputError
from kubesched.sweep.spec import apply_patch, load_spec, parse_path, set_path

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"


def write_spec(tmp_path: Path, body: str) -> str:
    p = tmp_path / "spec.yaml"
    p.write_text(body)
    return str(p)


HEAD = f"""\
apiVersion: kubesched.io/v1alpha1
kind: Sweep
name: t
inputs:
  - name: qs
    files: [{QUICKSTART}]
"""


# ───────────────────────────── field paths ─────────────────────────────

def test_parse_path() -> None:
    assert parse_path("profiles[0].pluginConfig[NodeResourcesFit].args.x") == [
        "profiles", 0, "pluginConfig", ("NodeResourcesFit",), "args", "x"]
    for bad in ("", "a..b", ".a", "a.", "[0]", "a[]", "a[0]b"):
        with pytest.raises(ValueError):
            parse_path(bad)


def test_set_path_creates_selects_and_deletes() -> None:
    doc: dict = {}
    set_path(doc, "profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type", "MostAllocated")
    assert doc == {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                  "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
    # a second patch on the same element selects it by name instead of adding another
    set_path(doc, "profiles[0].pluginConfig[NodeResourcesFit].args.ignoredResources", ["x"])
    assert len(doc["profiles"][0]["pluginConfig"]) == 1
    # profiles are selected by schedulerName; an object set at a selector keeps the name
    set_path(doc, "profiles[other].plugins.score.disabled[PodTopologySpread]", {})
    assert doc["profiles"][1] == {"schedulerName": "other",
                                  "plugins": {"score": {"disabled": [{"name": "PodTopologySpread"}]}}}
    set_path(doc, "profiles[other]", None)  # null deletes
    assert len(doc["profiles"]) == 1
    with pytest.raises(ValueError, match="index 5 beyond"):
        set_path(doc, "profiles[5].x", 1)
    with pytest.raises(ValueError, match="not a list"):
        set_path(doc, "profiles[0].pluginConfig[NodeResourcesFit].args[0]", 1)


def test_apply_patch_copies() -> None:
    base = {"a": {"b": 1}}
    out = apply_patch(base, {"a.c": 2})
    assert out == {"a": {"b": 1, "c": 2}} and base == {"a": {"b": 1}}


# ───────────────────────────── expansion ─────────────────────────────

def test_grid_is_the_product_and_variants_decode(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, HEAD + textwrap.dedent("""\
        configs:
          grid:
            - name: strategy
              path: profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type
              values: [LeastAllocated, MostAllocated]
            - name: fitWeight
              path: profiles[0].plugins.score.enabled[NodeResourcesFit].weight
              values: [1, 3, 5]
        seeds: [1, 2]
        """))
    plan = load_spec(spec)
    assert plan.parameters == ["strategy", "fitWeight"]
    assert len(plan.variants) == 6 and len(plan.runs) == 12
    v = plan.variant("strategy=MostAllocated,fitWeight=3")
    cfg = decode_config(v.config)
    prof = cfg.profiles[0]
    fit = next(pc.args for pc in prof.plugin_config if pc.name == "NodeResourcesFit")
    assert fit.scoring_strategy.type == "MostAllocated"
    # upstream merges an enabled default plugin in place with the custom weight
    assert [p.weight for p in prof.plugins.score.enabled if p.name == "NodeResourcesFit"] == [3]


def test_list_variants_and_trace_load_factors(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, textwrap.dedent("""\
        apiVersion: kubesched.io/v1alpha1
        kind: Sweep
        inputs:
          - name: tr
            trace: alibaba-openb
            nodes: n.csv
            pods: p.csv
            loadFactor: [1, 10]
        configs:
          list:
            - name: default
            - name: packed
              patch: {"profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type": MostAllocated}
        """))
    plan = load_spec(spec)
    assert plan.parameters == ["config"]
    assert [v.label for v in plan.variants] == ["default", "packed"]
    assert sorted({r.input_label for r in plan.runs}) == ["tr", "tr×10"]
    assert plan.inputs[0].paths == [str(tmp_path / "n.csv"), str(tmp_path / "p.csv")]  # relative to the spec


# ───────────────────────────── errors ─────────────────────────────

@pytest.mark.parametrize("body, where, what", [
    (HEAD + "seeds: [1]\nmetricz: [x]\n", "spec.yaml: metricz", 'unknown field "metricz"'),
    (HEAD.replace("files:", "filez:"), "spec.yaml: inputs[0].filez", 'unknown field "filez"'),
    (HEAD + "metrics: [pending, speed]\n", "spec.yaml: metrics[1]", "unknown metric 'speed'"),
    (HEAD + "seeds: []\n", "spec.yaml: seeds", "at least one seed"),
    (HEAD.replace("kind: Sweep", "kind: Swept"), "spec.yaml: kind", "unsupported value"),
    (HEAD + "configs:\n  grid:\n    - name: w\n      path: a..b\n      values: [1]\n",
     "spec.yaml: configs.grid[0].path", "invalid field path"),
    (HEAD + "configs:\n  grid:\n    - name: s\n      path: profiles[0].pluginConfig[NodeResourcesFit].args."
            "scoringStrategy.type\n      values: [LeastAllocated, Bogus]\n",
     "spec.yaml: configs (s=Bogus): profiles[0].pluginConfig[0].args.scoringStrategy.type", "Unsupported value"),
    (HEAD + "configs:\n  grid: [{name: a, path: x, values: [1]}]\n  list: [{name: b}]\n",
     "spec.yaml: configs", "not both"),
    (HEAD.replace("files: [", "limit: 3\n    files: ["), "spec.yaml: inputs[0].loadFactor", "traces only"),
])
def test_spec_errors_name_the_field(tmp_path: Path, body: str, where: str, what: str) -> None:
    spec = write_spec(tmp_path, body)
    with pytest.raises(InputError) as e:
        load_spec(spec)
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / where)), msg
    assert what in msg


def test_cli_prints_one_error_line(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, HEAD + "metrics: [speed]\n")
    r = CliRunner().invoke(main, ["sweep", spec, "--serial"])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "metrics[0]" in lines[0], r.output
