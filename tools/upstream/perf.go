//go:build tools

// Package upstream only pins, for `go mod tidy`, the packages that
// run_scheduler_perf.sh tests: upstream's scheduler_perf benchmark
// (k8s.io/kubernetes/test/integration/scheduler_perf/<topic>) imports these.
// It is never compiled (build tag "tools").
package upstream

import (
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/kubernetes/test/integration/scheduler_perf"
)
