#!/usr/bin/env bash
# CI's helm step (`make helm-check`, called by .ci/run after `make test`): with the helm binary
# tools/deploy/build-helm.sh caches, `helm lint --strict` and `helm template` of the chart,
# deploy/*.yaml checked as its rendering, then the helm tests (tests/deploy/test_helm*.py:
# template values, install/upgrade/rollback into the box). Any of these failing fails CI.
# Without the binary (no Go, no network, or the background build not finished in time: see
# .ci/run) it prints why and exits 0: helm is a packaging tool, not a requirement of kubesched.
#
# Usage: tools/deploy/helm-check.sh   Env: HELM (default: the cached binary), HELM_CHECK_PYTHON (default .venv/bin/python)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
helm=${HELM:-$("$here/build-helm.sh" --print-bin)}
python=${HELM_CHECK_PYTHON:-$repo/.venv/bin/python}
if [[ ! -x "$helm" ]]; then
  why=""
  [[ -f "$repo/out/ci/helm-build.log" ]] && why=": $(tail -1 "$repo/out/ci/helm-build.log")"
  echo "helm-check: SKIPPED, helm is not built ($helm)$why; build it with make helm"
  exit 0
fi
cd "$repo"
chart=deploy/helm/kubesched
echo "helm-check: $("$helm" version --short)"
"$helm" lint --strict "$chart"
"$helm" template kubesched "$chart" --namespace kube-system >/dev/null
echo "helm template: ok"
HELM=$helm tools/deploy/render-manifests.sh --check
"$python" -m pytest -q -p no:cacheprovider tests/deploy/test_helm.py tests/deploy/test_helm_install.py
