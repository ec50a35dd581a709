#!/usr/bin/env bash
# Regenerate src/kubesched/apiserver/data/k8s-api.desc.gz: the protobuf descriptors of the
# Kubernetes API types (k8s.io/api */v1 + autoscaling/v2, with the apimachinery types they
# import), compiled from the generated.proto files of the Go modules the reference binaries
# are built from (tools/upstream/go.mod). Dev-time only: needs the Go module cache
# (`make upstream` fills it) and grpcio-tools (`pip install grpcio-tools`) for protoc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${K8S_STAGING_VERSION:-v0.37.2}
mod=$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/k8s.io"
ln -s "$mod/k8s.io/api@$version" "$root/k8s.io/api"
ln -s "$mod/k8s.io/apimachinery@$version" "$root/k8s.io/apimachinery"
cd "$root"
files=$(ls k8s.io/api/*/v1/generated.proto k8s.io/api/autoscaling/v2/generated.proto)
python -m grpc_tools.protoc -I"$root" --include_imports --descriptor_set_out="$root/k8s.desc" $files 2>/dev/null
gzip -9 -n -c "$root/k8s.desc" > "$repo/src/kubesched/apiserver/data/k8s-api.desc.gz"
echo "wrote src/kubesched/apiserver/data/k8s-api.desc.gz from k8s.io/api@$version"
