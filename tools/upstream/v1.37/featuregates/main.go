// Command featuregates prints kube-scheduler's feature gates as JSON: every gate the
// kube-scheduler binary registers (k8s.io/kubernetes/pkg/features, component-base logs,
// client-go, apiserver), with its versioned specs and the declared dependencies.
// kubesched's src/kubesched/data/feature_gates.json is this program's output
// (tools/upstream/gen_feature_gates.sh); nothing is typed by hand.
package main

import (
	"encoding/json"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

type spec struct {
	Version                 string `json:"version"`
	Default                 bool   `json:"default"`
	LockToDefault           bool   `json:"lockToDefault,omitempty"`
	PreRelease              string `json:"preRelease"`
	MinCompatibilityVersion string `json:"minCompatibilityVersion,omitempty"`
}

type gate struct {
	Name         string   `json:"name"`
	Specs        []spec   `json:"specs"`
	Dependencies []string `json:"dependencies,omitempty"`
}

func main() {
	fg := utilfeature.DefaultMutableFeatureGate
	deps := fg.Dependencies()
	var out []gate
	for name, specs := range fg.GetAllVersioned() {
		g := gate{Name: string(name)}
		for _, s := range specs {
			js := spec{Default: s.Default, LockToDefault: s.LockToDefault, PreRelease: string(s.PreRelease)}
			if s.Version != nil {
				js.Version = s.Version.String()
			}
			if s.MinCompatibilityVersion != nil {
				js.MinCompatibilityVersion = s.MinCompatibilityVersion.String()
			}
			g.Specs = append(g.Specs, js)
		}
		for _, d := range deps[name] {
			g.Dependencies = append(g.Dependencies, string(d))
		}
		sort.Strings(g.Dependencies)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	_ = featuregate.Feature("")
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
}
