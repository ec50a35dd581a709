#!/usr/bin/env bash
# Regenerate src/kubesched/data/feature_gates.json: every feature gate the upstream
# kube-scheduler binary registers, with its versioned specs (default, stage, lock, version)
# and dependencies, dumped by a Go program linked against k8s.io/kubernetes (see
# tools/upstream/v1.37/featuregates/main.go). Needs Go and the Go module proxy.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out="$here/../../src/kubesched/data/feature_gates.json"
(cd "$here/v1.37" && go run ./featuregates) > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out") gates)"
