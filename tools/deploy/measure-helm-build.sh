#!/usr/bin/env bash
# Measure what a CI machine with empty Go caches pays for helm: download vs compile of
# helm.sh/helm/v3/cmd/helm (CGO_ENABLED=0, -trimpath, niced, as build-helm.sh builds it).
# Phase 1 downloads exactly the modules cmd/helm imports (`go list -deps`, network);
# phase 2 compiles with GOPROXY=off (no network). Prints wall and CPU (user+sys, children) of
# each phase and the load average beside it. Builds into a temp dir; touches no cache of yours.
#
# Usage: tools/deploy/measure-helm-build.sh   Env: HELM_VERSION (default v3.22.0), GOFLAGS (default -p=1)
set -euo pipefail
version=${HELM_VERSION:-v3.22.0}
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
export GOMODCACHE=$tmp/mod GOCACHE=$tmp/cache GOFLAGS="${GOFLAGS:--p=1} -buildvcs=false" CGO_ENABLED=0
cpu() { awk '{print $14+$15+$16+$17}' /proc/$$/stat; }   # utime+stime+cutime+cstime, ticks
hz=$(getconf CLK_TCK)
phase() {  # name cmd...
  local t0 c0 t1 c1; t0=$(date +%s.%N); c0=$(cpu)
  nice -n 19 "${@:2}" >"$tmp/$1.log" 2>&1 || { echo "$1 failed:"; tail -20 "$tmp/$1.log"; exit 1; }
  t1=$(date +%s.%N); c1=$(cpu)
  printf '%-9s wall %6.0fs  cpu %6.0fs  (%s)\n' "$1" "$(echo "$t1 - $t0" | bc)" "$(echo "($c1 - $c0) / $hz" | bc -l)" \
    "$(uptime | sed 's/.*load/load/')"
}
echo "helm $version, $("$go" version), nproc $(nproc)"
mkdir -p "$tmp/src"
phase download-helm "$go" mod download "helm.sh/helm/v3@$version"
cp -r "$GOMODCACHE/helm.sh/helm/v3@$version/." "$tmp/src"; chmod -R u+w "$tmp/src"
cd "$tmp/src"
phase download-deps "$go" list -deps ./cmd/helm
echo "module cache: $(du -sh "$GOMODCACHE" | cut -f1)"
GOPROXY=off phase compile "$go" build -trimpath -ldflags "-s -w" -o "$tmp/helm" ./cmd/helm
echo "build cache: $(du -sh "$GOCACHE" | cut -f1), helm binary: $(du -h "$tmp/helm" | cut -f1)"
"$tmp/helm" version --short
