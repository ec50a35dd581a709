#!/usr/bin/env bash
# Build helm (helm.sh/helm/v3, the version pinned below) from its Go module into
# <repo>/.cache/helm/<version>/bin/helm, as tools/upstream/build.sh caches kube-apiserver;
# reused when present. Test-and-packaging tool only: kubesched itself is pure Python.
#
# Usage: tools/deploy/build-helm.sh [--force] [--print-bin]
# Env:   HELM_VERSION (default below), GO (default: go on PATH, /usr/local/go/bin/go),
#        GOFLAGS passed through (default -p=1: the build runs niced on a shared machine)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${HELM_VERSION:-v3.22.0}
bin=$repo/.cache/helm/$version/bin/helm
force=0
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --print-bin) echo "$bin"; exit 0 ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-helm.sh: unknown argument: $a (try --help)" >&2; exit 2 ;;
  esac
done
if [[ -x "$bin" && $force == 0 ]]; then
  echo "helm $version: $bin (present)"
  exit 0
fi
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
mkdir -p "$(dirname "$bin")"
# as helm's Makefile: CGO off, -trimpath, the version in internal/version and the Kubernetes
# version of its client-go (the default of `helm template`'s .Capabilities.KubeVersion and lint's)
( cd "$(dirname "$bin")" && "$go" mod download "helm.sh/helm/v3@$version" )
gomod=$("$go" env GOMODCACHE)/helm.sh/helm/v3@$version/go.mod
k8s=$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$gomod")   # v0.<minor>.<patch>
minor=$(echo "$k8s" | cut -d. -f2)
[[ -n "$minor" ]] || { echo "build-helm.sh: cannot read k8s.io/client-go from $gomod" >&2; exit 2; }
ld="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
for pkg in pkg/lint/rules pkg/chartutil; do
  ld+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$minor"
done
# installed into a scratch directory, then renamed into place: a test (or `make helm-check`) that
# looks for the binary while CI builds it in the background never sees a partly written file
stage=$(mktemp -d "$(dirname "$bin")/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
( cd "$(dirname "$bin")" && GOBIN=$stage CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--p=1} -buildvcs=false" \
    nice -n 19 "$go" install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$version" )
mv -f "$stage/helm" "$bin"
"$bin" version --short
