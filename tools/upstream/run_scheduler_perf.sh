#!/usr/bin/env bash
# Run upstream's own scheduler_perf benchmark (k8s.io/kubernetes/test/integration/
# scheduler_perf, the version pinned in the go.mod of $UPSTREAM_VERSION, default 1.37, as
# build.sh) for one workload on this machine, with the
# etcd built by build.sh on PATH, and print its SchedulingThroughput data item.
#
# Usage: tools/upstream/run_scheduler_perf.sh [--build-only] [Case/Workload]
#        (default SchedulingBasic/5000Nodes_10000Pods; --build-only builds the binaries, so that
#        the build can run at low priority and the measurement at normal priority)
# Env:   UPSTREAM_VERSION, KUBESCHED_UPSTREAM_DIR (as build.sh), GO, GOFLAGS (e.g. -p=1),
#        PERF_TIMEOUT (go test -timeout for the run, default 30m),
#        PERF_LABELS (-perf-scheduling-label-filter, default performance; integration-test for the
#        small sizes)
# The test binary is built once per version into <dir>/bin (build.sh's tags, CGO off); results go to <dir>/scheduler_perf/<time>/
# (BenchmarkPerfScheduling_benchmark_*.json data items, per-test logs via ARTIFACTS, run.json with the
# wall time, exit code and load average).
# Equivalent of upstream's README command:
#   make test-integration WHAT=./test/integration/scheduler_perf/... \
#     KUBE_TEST_ARGS='-run=^$ -benchtime=1ns -bench=BenchmarkPerfScheduling/<Case>/<Workload>'
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_only=0
if [[ "${1:-}" == "--build-only" ]]; then build_only=1; shift; fi
workload=${1:-SchedulingBasic/5000Nodes_10000Pods}
case_name=${workload%%/*}
wl_name=${workload#*/}
if [[ "$case_name" == "$workload" || -z "$wl_name" ]]; then
  echo "run_scheduler_perf.sh: expected Case/Workload, e.g. SchedulingBasic/5000Nodes_10000Pods" >&2
  exit 2
fi

"$here/build.sh"                       # etcd (and the rest) present, or build them
bin=$("$here/build.sh" --print-dir)
mod=$("$here/build.sh" --print-module-dir)
dir=$(dirname "$bin")
go_bin=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")

# Which topic package holds the test case (misc, affinity, topology_spreading, ...).
k8s_dir=$(cd "$mod" && "$go_bin" list -m -f '{{.Dir}}' k8s.io/kubernetes)
[[ -n "$k8s_dir" ]] || (cd "$mod" && "$go_bin" mod download k8s.io/kubernetes)
k8s_dir=$(cd "$mod" && "$go_bin" list -m -f '{{.Dir}}' k8s.io/kubernetes)
perf_dir="$k8s_dir/test/integration/scheduler_perf"
# v1.37 nests some topics one level deeper (podgroup/gangscheduling, podgroup/tas, ...), so
# search the whole tree; the topic is the folder relative to scheduler_perf.
config=$(cd "$perf_dir" && grep -l -E "^- name: ${case_name}\$" $(find . -name performance-config.yaml | sort) \
  | head -1 || true)
if [[ -z "$config" ]]; then
  echo "run_scheduler_perf.sh: no test case '$case_name' in $perf_dir/**/performance-config.yaml" >&2
  exit 2
fi
topic=$(dirname "${config#./}")
pkg="k8s.io/kubernetes/test/integration/scheduler_perf/$topic"

test_bin="$bin/scheduler_perf_${topic//\//_}.test"
if [[ ! -x "$test_bin" || "$test_bin" -ot "$mod/go.sum" ]]; then
  echo "building $pkg test binary ($k8s_version)"
  # -trimpath and the tags of build.sh, so that every package the kube-apiserver build compiled
  # comes from Go's build cache (a cold build of this test binary takes most of an hour on two
  # busy cores). The in-process test API server finds its testdata through the source path in
  # the binary (cmd/kube-apiserver/app/testing/testserver.go pkgPath), which -trimpath makes
  # relative: the run below sets TEST_SRCDIR/TEST_WORKSPACE (its bazel branch) to the module cache.
  (cd "$mod" && CGO_ENABLED=0 "$go_bin" test -c -trimpath -vet=off -tags=selinux,notest,grpcnotrace \
    -o "$test_bin.tmp" "$pkg")
  mv -f "$test_bin.tmp" "$test_bin"
fi

if [[ $build_only == 1 ]]; then echo "built $test_bin"; exit 0; fi

out="$dir/scheduler_perf/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "running BenchmarkPerfScheduling/$case_name/$wl_name ($pkg, etcd from $bin); output in $out"
# The benchmark reads performance-config.yaml and templates relative to its package folder.
start=$(date +%s)
load_start=$(cut -d' ' -f1 /proc/loadavg)
rc=0
modcache=$(cd "$mod" && "$go_bin" env GOMODCACHE)
(cd "$perf_dir/$topic" && PATH="$bin:$PATH" ARTIFACTS="$out" \
  TEST_SRCDIR="$(dirname "$modcache")" TEST_WORKSPACE="$(basename "$modcache")" "$test_bin" \
  -test.run='^$' -test.bench="^BenchmarkPerfScheduling\$/^${case_name}\$/^${wl_name}\$" \
  -test.benchtime=1ns -test.timeout="${PERF_TIMEOUT:-30m}" -test.short=false \
  -perf-scheduling-label-filter="${PERF_LABELS:-performance}" -data-items-dir="$out") 2>&1 | tee "$out/bench.txt" || rc=$?
echo "wall time $(( $(date +%s) - start )) s, exit code $rc, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The run's own record, read by benchmarks/scheduler_perf_coverage.py --table (1-min load averages).
printf '{"workload": "%s", "wall_s": %d, "rc": %d, "load_start": %s, "load_end": %s}\n' "$case_name/$wl_name" \
  "$(( $(date +%s) - start ))" "$rc" "$load_start" "$(cut -d' ' -f1 /proc/loadavg)" > "$out/run.json"
# Exit code 1 with data items written usually means only that the workload's `threshold`
# (upstream's CI floor) was not met on this machine: the figures below are still the run's.

python3 - "$out" "$case_name/$wl_name" <<'EOF'
import glob, json, sys
out, name = sys.argv[1], sys.argv[2]
files = sorted(f for f in glob.glob(f"{out}/*.json") if not f.endswith("/run.json"))
if not files:
    sys.exit(f"no data items written to {out}")
for f in files:
    for item in json.load(open(f))["dataItems"]:
        labels = item.get("labels", {})
        if labels.get("Metric") == "SchedulingDuration":  # start of collecting to the last pod scheduled
            print(f"{labels.get('Name')}: SchedulingDuration {item['data']['Duration']:.2f} s  [{f}]")
        if labels.get("Metric") == "SchedulingThroughput":
            d = item["data"]
            print(f"{labels.get('Name')}: SchedulingThroughput Average {d['Average']:.1f} pods/s "
                  f"(Perc50 {d.get('Perc50', 0):.0f}, Perc90 {d.get('Perc90', 0):.0f}, "
                  f"Perc99 {d.get('Perc99', 0):.0f})  [{f}]")
EOF
exit "$rc"
