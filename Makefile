# Quick start:  make demo   (set up + schedule the built-in example)
#               make test   (set up + run the test suite; PYTEST_ARGS=tests/deploy for a part of it)
#               make lint   (ruff + mypy on src/, import contracts)
#               make upstream (build upstream kube-apiserver, kube-scheduler, etcd; needs Go)
#               make helm     (build helm into .cache/helm; lint the chart; check deploy/*.yaml)
#               make helm-check (CI: lint/template the chart and run the helm tests if helm is built)
#               make image    (the OCI image archive out/image/kubesched-<version>.oci.tar; needs mmdebstrap, umoci)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lint bench replay upstream helm helm-check manifests image clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,plot,sweep,bench]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/kubesched up -f examples/quickstart --until-idle

# PYTEST_ARGS (default none: the whole suite) passes through, e.g. PYTEST_ARGS=tests/deploy .ci/run
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src
	$(BIN)/mypy src
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python benchmarks/scheduler_perf.py --workload all

replay: $(STAMP)
	$(BIN)/kubesched replay alibaba-openb \
	  --nodes ../shared/data/alibaba-openb-v2023/openb_node_list_all_node.csv \
	  --pods ../shared/data/alibaba-openb-v2023/openb_pod_list_default.csv --seed 1

# Reference binaries for tests/benchmarks against upstream, built from Go modules into
# .cache/upstream/<version>/bin (or $$KUBESCHED_UPSTREAM_DIR/bin); reused when present.
# Both versions, side by side: v1.37.2 (kubesched's default) and v1.34.12 (--emulated-version 1.34).
upstream:
	tools/upstream/build.sh --version 1.37
	tools/upstream/build.sh --version 1.34

# Deployment (docs/deploy.md): helm built from its Go module and cached like the upstream binaries;
# the chart deploy/helm/kubesched is the source of deploy/*.yaml (make manifests renders them).
HELM = $(shell tools/deploy/build-helm.sh --print-bin)
helm:
	tools/deploy/build-helm.sh
	$(HELM) lint --strict deploy/helm/kubesched
	tools/deploy/render-manifests.sh --check

# CI's helm step (.ci/run builds helm in the background while `make test` runs): with helm built,
# lint --strict, template, deploy/*.yaml as the chart's rendering and the helm tests (install,
# upgrade, rollback into the box); without it (no Go or no network on the CI machine) a skip line.
helm-check: $(STAMP)
	HELM_CHECK_PYTHON=$(BIN)/python tools/deploy/helm-check.sh

manifests:
	tools/deploy/build-helm.sh
	tools/deploy/render-manifests.sh

image:
	tools/deploy/build-image.sh

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
