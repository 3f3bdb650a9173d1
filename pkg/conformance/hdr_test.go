package conformance

import (
	"reflect"
	"testing"
)

func TestHDRMutants(t *testing.T) {
	for _, c := range hdrFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestHDRInfo(t *testing.T) { assertPasses(t, HDR6) }

func TestHDRArgumentPaths(t *testing.T) {
	args := map[string]any{"query": "q"}
	hdrSetPath(args, []string{"where", "region"}, "eu")
	if !reflect.DeepEqual(args, map[string]any{"query": "q", "where": map[string]any{"region": "eu"}}) {
		t.Fatalf("set: %v", args)
	}
	c := hdrCloneArgs(args)
	hdrSetPath(c, []string{"where", "region"}, nil)
	if !reflect.DeepEqual(c, map[string]any{"query": "q", "where": map[string]any{}}) || args["where"].(map[string]any)["region"] != "eu" {
		t.Fatalf("delete on a clone: %v, original %v", c, args)
	}
	for v, want := range map[any]string{"x": "x", true: "true", int64(42): "42"} {
		if got := hdrParamText(v); got != want {
			t.Errorf("hdrParamText(%v) = %q, want %q", v, got, want)
		}
	}
	if got := hdrB64("café"); got != "=?base64?Y2Fmw6k=?=" {
		t.Errorf("hdrB64 = %q", got)
	}
}
