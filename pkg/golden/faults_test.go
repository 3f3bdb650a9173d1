package golden

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// faults: (Layer 2) is read, checked against the known names, and
// rejected on a negative case, with positions.
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	set, err := Load(write("ok.yaml", "cases:\n  - id: w\n    prompt: weather?\n    expect_tool: get_weather\n    faults: [http_500, timeout, malformed_json, expired_token, oversized]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Cases[0].Faults; !reflect.DeepEqual(got, FaultNames()) {
		t.Fatalf("faults %v", got)
	}
	_, err = Load(write("bad.yaml", "cases:\n  - id: w\n    prompt: weather?\n    expect_tool: get_weather\n    faults: [http_501, timeout, timeout]\n  - id: n\n    prompt: joke\n    expect_tool: null\n    faults: [timeout]\n"))
	if err == nil {
		t.Fatal("bad faults accepted")
	}
	for _, want := range []string{`bad.yaml:5:14: unknown fault "http_501"`, "did you mean http_500?", `fault "timeout" is listed twice`, "faults on a negative case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
