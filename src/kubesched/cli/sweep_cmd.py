"""``kubesched sweep SPEC.yaml``: inputs × scheduler configurations × seeds, on Ray.

Bad input (the spec, a configuration variant, an input file) prints one ``error: …`` line with
the field path and exits 2. Runs that fail are results: listed, the rest go on; the exit code
is 1 when any failed (0 otherwise). See :mod:`kubesched.sweep`.
"""

from __future__ import annotations

import os

import click

from kubesched.cli.whatif_cmd import friendly

__all__ = ["sweep_command"]


@click.command("sweep")
@click.argument("spec_path", metavar="SPEC.yaml", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: sweep-<spec name>/ beside the spec). Finished runs are kept "
                   "there by hash: running again resumes.")
@click.option("--address", default=None, metavar="HOST:PORT|auto",
              help="Run on this Ray cluster (its GCS address, or 'auto' for the one this machine is in); "
                   "default: a local Ray instance.")
@click.option("--num-cpus", type=click.IntRange(min=1), default=None,
              help="CPUs of the local Ray instance (default: all of this machine's).")
@click.option("--serial", is_flag=True, help="No Ray: run every run in this process, one after the other.")
@click.option("--max-retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Retries of a run whose worker or node died (a run that fails by itself is not retried).")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet", show_default=True,
              help="The results table's format.")
@click.option("--no-plots", is_flag=True, help="Skip the plots (and matplotlib).")
@friendly
def sweep_command(spec_path: str, out_dir: str | None, address: str | None, num_cpus: int | None, serial: bool,
                  max_retries: int, fmt: str, no_plots: bool) -> None:
    """Run a what-if study: every input × configuration × seed of SPEC.yaml, on Ray; write a
    table, plots and an HTML page, and print the best configuration per metric."""
    import sys

    from kubesched.sweep.execute import run_plan
    from kubesched.sweep.output import rows, summarize, write_html, write_plots, write_table
    from kubesched.sweep.spec import load_spec

    plan = load_spec(spec_path)
    if out_dir is None:
        out_dir = os.path.join(os.path.dirname(os.path.abspath(spec_path)), f"sweep-{plan.spec.name}")
    if serial and address:
        raise click.UsageError("--serial runs without Ray: drop --address")
    click.echo(f"{plan.spec.name}: {len(plan.runs)} runs = {sum(len(i.load_factors) for i in plan.inputs)} input(s) "
               f"× {len(plan.variants)} configuration(s) × {len(plan.spec.seeds)} seed(s) → {out_dir}", err=True)
    res = run_plan(plan, out_dir, address=address, serial=serial, num_cpus=num_cpus, max_retries=max_retries,
                   progress=sys.stderr.isatty())
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    if res.skipped:
        click.echo(f"resumed: {res.skipped} of {len(plan.runs)} runs were already done in {out_dir}", err=True)
    table = rows(plan, res.results)
    table_path = write_table(table, out_dir, fmt)
    summary = summarize(plan, table)
    plots = [] if no_plots else write_plots(plan, table, out_dir)
    page = write_html(plan, table, summary, plots, out_dir)
    _print_summary(summary)
    for run, err in res.failed:
        click.echo(f"failed: {run.input_label} {run.config} seed {run.seed}: {err}", err=True)
    click.echo(f"{res.ran} run(s) in {res.wall_s:.1f}s, {len(res.failed)} failed; table {table_path}, "
               f"page {page}" + (f", plots {os.path.join(out_dir, 'plots')}" if plots else ""), err=True)
    if res.failed:
        sys.exit(1)


def _print_summary(summary: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    from kubesched.sweep.output import fmt_value

    t = Table(title="best configuration per metric (mean over seeds)", title_justify="left")
    for col, just in (("INPUT", "left"), ("METRIC", "left"), ("BEST CONFIG", "left"), ("MEAN", "right"),
                      ("± SD", "right"), ("MIN–MAX", "right"), ("WORST CONFIG", "left"), ("WORST MEAN", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for s in summary:
        tie = f" (+{s['tie'] - 1} tied)" if s["tie"] > 1 else ""
        t.add_row(s["input"], s["metric"], s["best"] + tie, fmt_value(s["mean"]), fmt_value(s["sd"]),
                  f"{fmt_value(s['min'])}–{fmt_value(s['max'])}", s["worst"], fmt_value(s["worstMean"]))
    Console(width=max(160, Console().width), soft_wrap=False).print(t)
