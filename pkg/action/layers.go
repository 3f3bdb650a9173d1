package action

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Layer is one evaluation layer.
type Layer int

// The four layers. Behaviour, resilience and telemetry call models and need
// provider keys (secrets); conformance does not.
const (
	Conformance Layer = 0
	Behavior    Layer = 1
	Resilience  Layer = 2
	Telemetry   Layer = 3
)

var layerNames = [...]string{"conformance", "behavior", "resilience", "telemetry"}

func (l Layer) String() string {
	if l >= 0 && int(l) < len(layerNames) {
		return layerNames[l]
	}
	return "layer" + strconv.Itoa(int(l))
}

// NeedsSecrets reports whether the layer calls a model.
func (l Layer) NeedsSecrets() bool { return l != Conformance }

// AllLayers returns 0 to 3.
func AllLayers() []Layer { return []Layer{Conformance, Behavior, Resilience, Telemetry} }

// ParseLayers reads the layers input: "auto" (or empty), "all", or a comma
// list of numbers 0-3 and names ("behaviour" is accepted too), as --layers
// reads them. The result is sorted and free of duplicates.
func ParseLayers(s string) (auto bool, layers []Layer, err error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "auto") {
		return true, nil, nil
	}
	if strings.EqualFold(s, "all") {
		return false, AllLayers(), nil
	}
	seen := map[Layer]bool{}
	for _, part := range strings.Split(s, ",") {
		p := strings.ToLower(strings.TrimSpace(part))
		l, ok := parseLayer(p)
		if !ok {
			if p == "auto" || p == "all" {
				return false, nil, fmt.Errorf("%q cannot be combined with other layers; use auto or all alone, or list the layers", p)
			}
			return false, nil, fmt.Errorf("unknown layer %q; use auto, all, or a comma list of 0,1,2,3 or conformance,behavior,resilience,telemetry", strings.TrimSpace(part))
		}
		if !seen[l] {
			seen[l] = true
			layers = append(layers, l)
		}
	}
	sort.Slice(layers, func(i, j int) bool { return layers[i] < layers[j] })
	return false, layers, nil
}

func parseLayer(p string) (Layer, bool) {
	switch p {
	case "0", "conformance":
		return Conformance, true
	case "1", "behavior", "behaviour":
		return Behavior, true
	case "2", "resilience":
		return Resilience, true
	case "3", "telemetry":
		return Telemetry, true
	}
	return 0, false
}

// joinLayers renders "0 conformance, 1 behavior".
func joinLayers(ls []Layer) string {
	if len(ls) == 0 {
		return "none"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%d %s", int(l), l)
	}
	return strings.Join(parts, ", ")
}
