package action

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLayers(t *testing.T) {
	tests := []struct {
		in   string
		auto bool
		want []Layer
		err  string
	}{
		{in: "", auto: true},
		{in: "AUTO", auto: true},
		{in: "0", want: []Layer{0}},
		{in: "3, 1,behaviour,conformance", want: []Layer{0, 1, 3}},
		{in: "resilience,telemetry", want: []Layer{2, 3}},
		{in: "0,4", err: `unknown layer "4"`},
		{in: "auto,1", err: `"auto" cannot be combined`},
		{in: "all", want: []Layer{0, 1, 2, 3}},
		{in: "all,1", err: `"all" cannot be combined`},
		{in: "0,,1", err: `unknown layer ""`},
	}
	for _, tt := range tests {
		auto, got, err := ParseLayers(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseLayers(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || auto != tt.auto || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseLayers(%q) = %v, %v, %v", tt.in, auto, got, err)
		}
	}
}
