#!/usr/bin/env bash
# Build upstream kube-apiserver, kube-scheduler (k8s.io/kubernetes, see go.mod)
# and etcd (go.etcd.io/etcd/server/v3, see etcd/go.mod) from Go modules into a
# cache folder, as envtest and sigs.k8s.io/scheduler-plugins do. These are test
# and benchmark references only; kubesched itself is pure Python.
#
# Usage: tools/upstream/build.sh [--version 1.37|1.34] [--force] [--print-dir] [--print-module-dir]
#   --version X         the Kubernetes minor to build (default: $UPSTREAM_VERSION, else 1.37);
#                       each has its own Go module, the one place its patch version is pinned:
#                       1.37 -> v1.37/go.mod, 1.34 -> go.mod
#   --force             rebuild even when the binaries are present
#   --print-dir         print the bin folder and exit (nothing is built)
#   --print-module-dir  print the folder of the version's go.mod and exit
# Env:
#   UPSTREAM_VERSION        default of --version
#   KUBESCHED_UPSTREAM_DIR  folder to build into (binaries in $DIR/bin);
#                           default <repo>/.cache/upstream/<k8s version>, so versions sit side by side
#   GO                      the go command to use (default: go on PATH, /usr/local/go/bin/go)
#   GOFLAGS                 passed through (e.g. GOFLAGS=-p=1 on a busy machine)
# Needs only a Go toolchain (>= 1.26 for v1.37, the go directive of its module;
# >= 1.25 for v1.34) and the Go module proxy. Flags follow hack/lib/golang.sh
# (-trimpath, -s -w, tags selinux,notest,grpcnotrace, CGO_ENABLED=0 for these
# static server binaries) and hack/lib/version.sh (version ldflags). etcd is
# v3.6.x for both: kubernetes v1.37.2 tests with 3.7.0 (hack/lib/etcd.sh) but its
# apiserver still supports 3.6 (one etcd module, see etcd/go.mod).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

force=0
print_dir=0
print_module=0
version=${UPSTREAM_VERSION:-1.37}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --force) force=1 ;;
    --print-dir) print_dir=1 ;;
    --print-module-dir) print_module=1 ;;
    --version) [[ $# -ge 2 ]] || { echo "build.sh: --version needs a value (1.37 or 1.34)" >&2; exit 2; }
               version=$2; shift ;;
    --version=*) version=${1#--version=} ;;
    -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# One Go module per version: v<minor>/go.mod, or the original go.mod (v1.34).
version=${version#v}
case "$version" in
  1.34) mod_dir=$here ;;
  1.37) mod_dir=$here/v1.37 ;;
  *) echo "build.sh: unsupported --version $version (expected 1.37 or 1.34)" >&2; exit 2 ;;
esac
if [[ $print_module == 1 ]]; then
  echo "$mod_dir"
  exit 0
fi

# Versions come from the go.mod files so that there is one place to bump them.
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$mod_dir/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ {print $2; exit}' "$here/etcd/go.mod")
if [[ -z "$k8s_version" || -z "$etcd_version" ]]; then
  echo "build.sh: cannot read the k8s.io/kubernetes or etcd version from $mod_dir/go.mod, $here/etcd/go.mod" >&2
  exit 2
fi
if [[ "$k8s_version" != "v$version".* ]]; then
  echo "build.sh: $mod_dir/go.mod pins k8s.io/kubernetes $k8s_version, not $version" >&2
  exit 2
fi

dir=${KUBESCHED_UPSTREAM_DIR:-$repo/.cache/upstream/$k8s_version}
bin="$dir/bin"
if [[ $print_dir == 1 ]]; then
  echo "$bin"
  exit 0
fi

binaries=(kube-apiserver kube-scheduler etcd)
stamp="$bin/.stamp"
# The stamp records what was built; a change of versions or go.sum rebuilds.
want_stamp="k8s=$k8s_version etcd=$etcd_version sums=$(cat "$mod_dir/go.sum" "$here/etcd/go.sum" | cksum | cut -d' ' -f1)"

present=1
for b in "${binaries[@]}"; do [[ -x "$bin/$b" ]] || present=0; done
if [[ $force == 0 && $present == 1 && -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" ]]; then
  echo "upstream binaries present (kubernetes $k8s_version, etcd $etcd_version): $bin"
  exit 0
fi

if [[ -n "${GO:-}" ]]; then
  go_bin=$(command -v "$GO" || true)
else
  go_bin=$(command -v go || true)
  if [[ -z "$go_bin" && -x /usr/local/go/bin/go ]]; then go_bin=/usr/local/go/bin/go; fi
fi
if [[ -z "$go_bin" ]]; then
  cat >&2 <<EOF
build.sh: no Go toolchain found (looked for ${GO:-'go' on PATH and /usr/local/go/bin/go}).
The upstream reference binaries (kube-apiserver, kube-scheduler $k8s_version, etcd $etcd_version)
are built from Go modules and need Go >= 1.26 and access to the Go module proxy.
Install Go from https://go.dev/dl/ and run 'make upstream' again. kubesched itself
does not need Go; only the tests and benchmarks against upstream do (they are skipped without it).
EOF
  exit 3
fi
echo "using $("$go_bin" version) ($go_bin)"

tmp="$dir/.build.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# The commit of the tag, for `kube-apiserver --version` / GET /version, from the
# module proxy's origin record when it has one.
git_commit=$(cd "$mod_dir" && "$go_bin" mod download -json "k8s.io/kubernetes@$k8s_version" 2>/dev/null \
  | awk -F'"' '$2 == "Hash" {print $4; exit}' || true)
minor=$(echo "$k8s_version" | cut -d. -f2)
build_date=$(date -u ${SOURCE_DATE_EPOCH:+--date=@$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  [[ -n "$git_commit" ]] && ldflags+=" -X $pkg.gitCommit=$git_commit"
done

start=$(date +%s)
echo "building kube-apiserver, kube-scheduler $k8s_version into $bin (this takes a while the first time)"
(cd "$mod_dir" && CGO_ENABLED=0 "$go_bin" build -trimpath -tags=selinux,notest,grpcnotrace \
  -ldflags="$ldflags" -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler)

echo "building etcd $etcd_version"
etcd_sha=$(cd "$here/etcd" && "$go_bin" mod download -json "go.etcd.io/etcd/server/v3@$etcd_version" 2>/dev/null \
  | awk -F'"' '$2 == "Hash" {print substr($4, 1, 9); exit}' || true)
(cd "$here/etcd" && CGO_ENABLED=0 "$go_bin" build -trimpath \
  -ldflags="-s -w${etcd_sha:+ -X go.etcd.io/etcd/api/v3/version.GitSHA=$etcd_sha}" \
  -o "$tmp/etcd" go.etcd.io/etcd/server/v3)

mkdir -p "$bin"
for b in "${binaries[@]}"; do mv -f "$tmp/$b" "$bin/$b"; done
echo "$want_stamp" > "$stamp"
echo "built in $(( $(date +%s) - start )) s:"
for b in "${binaries[@]}"; do
  printf '  %-15s %6s MB  %s\n' "$b" "$(( $(stat -c %s "$bin/$b") / 1048576 ))" \
    "$("$bin/$b" --version 2>&1 | head -1)"
done
