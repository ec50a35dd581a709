"""``kubesched snapshot``: export a live cluster into a folder that ``kubesched simulate -f`` reads.

One file per kind, ``NN-<resource>.json`` (or ``.yaml``), each a ``v1 List``, numbered in the
order of :data:`kubesched.kube.snapshot.SNAPSHOT_RESOURCES`. Exit codes: 0 written; 2 bad flags or
output directory; 1 the kubeconfig or the cluster could not be used.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import click

from kubesched.cli._exit import command_exit_code
from kubesched.errors import InputError

__all__ = ["snapshot"]

_OURS = re.compile(r"^\d\d-[a-z]+\.(json|yaml)$")


def _prepare_dir(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", str(out))
    if out.is_dir():
        entries = [p for p in out.iterdir() if not p.name.startswith(".")]
        if entries and not overwrite:
            raise InputError("directory is not empty (use --overwrite to replace a previous snapshot)", str(out))
        others = [p.name for p in entries if not _OURS.match(p.name)]
        if others:
            raise InputError(f"directory holds files that are not a snapshot's ({', '.join(sorted(others)[:3])}); "
                             "refusing to overwrite", str(out))
        for p in entries:
            p.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create directory: {e.strerror or e}", str(out)) from None


@click.command("snapshot")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="kubeconfig of the cluster (default: in-cluster service account).")
@click.option("--context", default=None, help="kubeconfig context (default: current-context).")
@click.option("--master", default=None, help="API server URL (overrides the kubeconfig's).")
@click.option("-o", "--output-dir", "output_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write (created; must be empty unless --overwrite).")
@click.option("--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace the files of a previous snapshot in the folder.")
@click.option("--timeout", "timeout_s", type=float, default=60.0, show_default=True,
              help="Seconds to wait for every list to complete.")
def snapshot(kubeconfig: str | None, context: str | None, master: str | None, output_dir: str, fmt: str,
             overwrite: bool, timeout_s: float) -> None:
    """Export nodes, pods and everything the scheduler reads from a live cluster, for simulate -f."""

    def body() -> int:
        from kubesched.kube.client import APIClient, load_config
        from kubesched.kube.snapshot import SNAPSHOT_RESOURCES, take_snapshot
        from kubesched.sim.manifests import write_list

        out = Path(output_dir)
        cfg = load_config(kubeconfig, master, context=context, qps=-1)
        _prepare_dir(out, overwrite)

        async def fetch():
            async with APIClient(cfg, user_agent_suffix="/snapshot") as client:
                return await take_snapshot(client, timeout_s=timeout_s)

        snap = asyncio.run(fetch())
        for n, kind in enumerate(SNAPSHOT_RESOURCES):
            if kind not in snap.objects:
                continue
            path = out / f"{n:02d}-{SNAPSHOT_RESOURCES[kind].resource}.{fmt}"
            tmp = path.with_name("." + path.name)
            try:
                with open(tmp, "w", encoding="utf-8") as fh:
                    write_list(snap.objects[kind], "json" if fmt == "json" else "yaml", fh)
                os.replace(tmp, path)
            except OSError as e:
                raise InputError(f"cannot write: {e.strerror or e}", str(path)) from None
        counts = ", ".join(f"{len(v)} {k}" for k, v in snap.objects.items() if v)
        click.echo(f"wrote {snap.count()} objects to {out}: {counts or 'nothing'}", err=True)
        if snap.skipped:
            click.echo(f"not served by the cluster, skipped: {', '.join(snap.skipped)}", err=True)
        return 0

    sys.exit(command_exit_code(body))
