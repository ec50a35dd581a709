#!/usr/bin/env python
"""Regenerate src/kubesched/apiserver/data/k8s-api.fields.json.gz: for each Go struct of the
Kubernetes API types (k8s.io/api */v1, autoscaling/v2, apimachinery meta/v1), keyed by the
proto message and field name, the fields whose JSON encoding is not the plain one: ``p`` a
pointer scalar (``*int32``: a set 0 or false is meaningful), ``k`` a scalar without
``omitempty`` (a zero is kept), ``i`` an embedded struct inlined in JSON (``json:",inline"``,
e.g. ``Probe.ProbeHandler``: its fields belong to the parent). kubesched.apiserver.protobuf
drops every other zero scalar, as Go's ``omitempty`` does.

Dev-time only; reads the Go module cache (``make upstream`` fills it)::

    python tools/protobuf/gen_fieldinfo.py [--version v0.37.2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
from pathlib import Path

FIELD = re.compile(r'^\s*(\w+)\s+(\*?)([\w.\[\]*]+)\s+`json:"([^"]*)"[^`]*protobuf:"([^"]*)"')
STRUCT = re.compile(r"^type (\w+) struct \{")
#: an embedded struct inlined in JSON: ``json:",inline"`` (k8s.io/api ≤ v0.34) or ``json:""`` (v0.37)
EMBEDDED = re.compile(r'^\s*\*?[\w.]+\s+`json:"(?:,inline)?"[^`]*protobuf:"([^"]*)"')
SCALARS = {"string", "bool", "int", "int32", "int64", "uint32", "uint64", "float64"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", default="v0.37.2")
    a = ap.parse_args()
    try:
        mod = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        mod = os.path.expanduser("~/go/pkg/mod")
    api = Path(mod) / f"k8s.io/api@{a.version}"
    mach = Path(mod) / f"k8s.io/apimachinery@{a.version}"
    sources: list[tuple[str, Path]] = []
    for d in sorted(api.glob("*/v1")) + [api / "autoscaling/v2"]:
        sources.append((f"k8s.io.api.{d.parent.name}.{d.name}", d))
    sources.append(("k8s.io.apimachinery.pkg.apis.meta.v1", mach / "pkg/apis/meta/v1"))
    out: dict[str, dict[str, str]] = {}
    for package, d in sources:
        for f in sorted(d.glob("*.go")):
            if f.name.endswith("_test.go") or f.name.startswith("zz_generated"):
                continue
            struct = None
            for line in f.read_text().splitlines():
                m = STRUCT.match(line)
                if m:
                    struct = m[1]
                    continue
                if line.startswith("}"):
                    struct = None
                    continue
                if struct is None:
                    continue
                e = EMBEDDED.match(line)
                if e:  # an embedded struct inlined in JSON: its fields belong to the parent
                    name = next((p[5:] for p in e[1].split(",") if p.startswith("name=")), None)
                    if name:
                        out.setdefault(f"{package}.{struct}", {})[name] = "i"
                    continue
                m = FIELD.match(line)
                if not m:
                    continue
                _, ptr, typ, jtag, ptag = m.groups()
                name = next((p[5:] for p in ptag.split(",") if p.startswith("name=")), None)
                if name is None or typ.lstrip("*") not in SCALARS and not ptr:
                    continue
                if ptr and typ not in SCALARS:
                    continue  # pointer to a struct: a message, present or not
                kind = "p" if ptr else ("" if "omitempty" in jtag.split(",")[1:] else "k")
                if kind:
                    out.setdefault(f"{package}.{struct}", {})[name] = kind
    dest = Path(__file__).resolve().parents[2] / "src/kubesched/apiserver/data/k8s-api.fields.json.gz"
    dest.write_bytes(gzip.compress(json.dumps(out, sort_keys=True, separators=(",", ":")).encode(), 9, mtime=0))
    print(f"wrote {dest.relative_to(Path.cwd()) if dest.is_relative_to(Path.cwd()) else dest}: "
          f"{sum(len(v) for v in out.values())} fields of {len(out)} structs")


if __name__ == "__main__":
    main()
