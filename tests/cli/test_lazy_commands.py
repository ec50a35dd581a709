"""``kubesched``'s subcommands that live in their own module are imported only when looked up
(cli/main.py ``LAZY_COMMANDS``, click's lazily-loaded subcommands): ``kubesched run`` imports none of
the others, and every subcommand still answers ``--help`` and is listed by ``kubesched --help``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kubesched.cli.main import LAZY_COMMANDS, main

OTHER_MODULES = sorted({spec.partition(":")[0] for spec in LAZY_COMMANDS.values()} | {"kubesched.cli._inputs"})


def _imported_after(argv: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after ``kubesched ARGV`` (click not exiting the process)."""
    code = ("import json, sys\nfrom kubesched.cli.main import main\n"
            f"try:\n    main({argv!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "sys.stdout.write('\\n' + json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.rsplit("\n", 1)[1]))


def test_run_imports_no_other_subcommand_module() -> None:
    mods = _imported_after(["run", "--help"])
    assert "kubesched.cli.run_cmd" in mods
    assert sorted(m for m in OTHER_MODULES if m in mods) == ["kubesched.cli.run_cmd"]


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_each_lazy_subcommand_answers_help(name: str) -> None:
    res = CliRunner().invoke(main, [name, "--help"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"Usage: main {name} ")


def test_top_level_help_lists_every_command_with_its_summary() -> None:
    res = CliRunner().invoke(main, ["--help"])
    assert res.exit_code == 0, res.output
    listed = [line.split()[0] for line in res.output.split("Commands:\n", 1)[1].splitlines() if line.strip()]
    assert listed == sorted({*LAZY_COMMANDS, "bench", "replay", "simulate", "version"})
    for name in LAZY_COMMANDS:
        line = next(line for line in res.output.splitlines() if line.split()[:1] == [name])
        assert len(line.split()) > 1, f"{name} has no summary in --help"


def test_unknown_command_is_one_error() -> None:
    res = CliRunner().invoke(main, ["nope"])
    assert res.exit_code == 2 and "No such command 'nope'" in res.output
