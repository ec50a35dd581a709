#!/usr/bin/env bash
# Build kubesched's OCI image from registry packages alone, written as an OCI archive
# (an OCI image layout in a tar: `skopeo copy oci-archive:... `, `podman load -i ...`):
#   1. the project's wheel (pip wheel) and its dependencies' wheels from PyPI (binary only,
#      for the image's CPython 3.11 / glibc 2.36);
#   2. a Debian bookworm rootfs (mmdebstrap, Debian's packages: python3, ca-certificates, libstdc++6 (numpy's manylinux wheels),
#      no docs/man/locales), the wheels installed into /usr/local by pip, a numeric non-root
#      user kubesched (65532:65532), byte-code compiled at build time (read-only root friendly);
#   3. assembled with umoci: one layer (the rootfs tar), config user 65532:65532, workdir /,
#      entrypoint kubesched, env PATH/PYTHONDONTWRITEBYTECODE/PYTHONUNBUFFERED, port 10259;
#      the index names it NAME:TAG (annotation org.opencontainers.image.ref.name), which
#      `podman load -i` stores as localhost/kubesched:<version> (a bare tag would become
#      localhost/<version>:latest).
# Reproducible: SOURCE_DATE_EPOCH (default: the last commit's time) fixes file times in the
# rootfs tar and the image's timestamps; the Debian snapshot is whatever the mirror serves.
#
# Usage: tools/deploy/build-image.sh [--out FILE] [--name NAME] [--tag TAG]
#   --out  the archive (default out/image/kubesched-<version>.oci.tar)
#   --name the image's name in the archive's index (default kubesched)
#   --tag  the image's tag (default the project version)
#   --reuse-rootfs  keep out/image/work/rootfs.tar from the last run (iterate on the assembly only)
# Needs: mmdebstrap, umoci (apt), /usr/bin/python3 with pip on a bookworm host (it fetches and installs the
# wheels: Debian bookworm's CPython 3.11, the image's), network access to deb.debian.org and PyPI.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml" | head -1)
tag=$version
name=kubesched
out=""
reuse=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift ;;
    --tag) tag=$2; shift ;;
    --name) name=$2; shift ;;
    --reuse-rootfs) reuse=1 ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
out=${out:-$repo/out/image/kubesched-$version.oci.tar}
for tool in mmdebstrap umoci /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "build-image.sh: $tool not found (apt-get install mmdebstrap umoci)" >&2; exit 2; }
done
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}
work=$repo/out/image/work
if [[ $reuse == 1 && -f "$work/rootfs.tar" ]]; then
  echo "== reusing $work/rootfs.tar"
else
reuse=0
rm -rf "$work"; mkdir -p "$work/wheels" "$(dirname "$out")"
py=/usr/bin/python3  # Debian bookworm's CPython 3.11: its pip installs with the image's scheme and shebang
pyver=3.11

echo "== wheels"
# the project's wheel, built in isolation from a copy of the source tree (no stale build/ state)
mkdir -p "$work/src"
tar -C "$repo" --exclude=__pycache__ --exclude='*.egg-info' -cf - pyproject.toml README.md src | tar -C "$work/src" -xf -
nice "$py" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheels" "$work/src"
# its dependencies: wheels only, for the image's interpreter and platform
nice "$py" -m pip download --quiet --dest "$work/wheels" --only-binary=:all: \
  --python-version "$pyver" --implementation cp --abi "cp${pyver/./}" --abi abi3 --abi none \
  --platform manylinux_2_36_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any \
  "$work"/wheels/kubesched-*.whl

echo "== rootfs (mmdebstrap)"
# the hooks run on the host with $1 = the rootfs; pip's --ignore-installed: with --root it would
# otherwise skip what the host's own Python has (e.g. Debian's python3-yaml)
nice mmdebstrap --variant=essential --mode=auto \
  --include=python3,ca-certificates,tzdata,libstdc++6 \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --customize-hook="$py -m pip install --quiet --break-system-packages --ignore-installed --no-warn-script-location --root \"\$1\" --no-index --find-links $work/wheels kubesched" \
  --customize-hook='echo "kubesched:x:65532:" >> "$1/etc/group"' \
  --customize-hook='echo "kubesched:x:65532:65532:kubesched:/nonexistent:/usr/sbin/nologin" >> "$1/etc/passwd"' \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/* "$1"/tmp/*' \
  bookworm "$work/rootfs.tar"
fi

echo "== image (umoci)"
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
layout=$work/oci
ref=$name:$tag   # the index's org.opencontainers.image.ref.name
mkdir -p "$(dirname "$out")"
rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:$ref"
umoci raw add-layer --image "$layout:$ref" --history.created_by "mmdebstrap bookworm + kubesched $version wheels" \
  --history.created "$created" "$work/rootfs.tar"
umoci config --image "$layout:$ref" --created "$created" --history.created "$created" \
  --history.created_by "kubesched: user, entry point, env" \
  --config.user 65532:65532 --config.workingdir / \
  --config.entrypoint kubesched \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.env PYTHONDONTWRITEBYTECODE=1 \
  --config.env PYTHONUNBUFFERED=1 --config.exposedports 10259/tcp \
  --config.label org.opencontainers.image.title=kubesched \
  --config.label org.opencontainers.image.version="$version"
umoci gc --layout "$layout"
# an OCI archive: the image layout, in a tar
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$out" .
ls -l "$out"
