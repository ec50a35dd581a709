"""docs/architecture.md stays the map: every module, file and package it names exists.

A rename or a move that forgets the map fails here (issue 21 item 1). Checked: backticked
``*.py`` paths (relative to ``src/kubesched``, the repository or ``src``), backticked bare
``name.py`` file names (somewhere under ``src/kubesched`` or ``tests``), and backticked dotted
``kubesched.*`` names (a module or package). Placeholders (``plugins/<name>.py``) and the planned
packages the document announces as open items are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
SRC = REPO / "src"
PLANNED: set[str] = set()  # packages the document announces before they exist


def _names_under(*roots: Path) -> set[str]:
    return {p.name for r in roots for p in r.rglob("*.py")}


def test_every_named_path_exists() -> None:
    text = DOC.read_text()
    files = _names_under(SRC / "kubesched", REPO / "tests")
    missing = []
    for ref in sorted(set(re.findall(r"`([^`\s]*?\.py)`", text))):
        if "<" in ref:
            continue
        if "/" in ref:
            if not any((base / ref).exists() for base in (SRC / "kubesched", REPO, SRC)):
                missing.append(ref)
        elif ref not in files:
            missing.append(ref)
    for ref in sorted(set(re.findall(r"`(kubesched(?:\.[a-z_0-9]+)+)", text)) - PLANNED):
        p = SRC / ref.replace(".", "/")
        if not (p.with_suffix(".py").exists() or p.is_dir()):
            missing.append(ref)
    assert missing == []


def test_every_package_is_in_the_layer_table() -> None:
    """The layer table names every top-level package and module of ``kubesched``."""
    text = DOC.read_text()
    table = text[text.index("## Layers"):text.index("## The two cycles")]
    pkgs = {p.name for p in (SRC / "kubesched").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    mods = {p.stem for p in (SRC / "kubesched").glob("*.py") if p.stem != "__init__"}
    assert sorted(n for n in pkgs | mods if f"`kubesched.{n}`" not in table) == []
