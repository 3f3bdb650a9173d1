package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://github.com/mcp-eval/mcp-eval-action/pkg/golden/golden.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// yamlAsJSON reads a YAML file into the JSON data model the schema sees.
func yamlAsJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// What the loader accepts, editors must not flag.
func TestSchemaAcceptsValidSets(t *testing.T) {
	sch := compileSchema(t)
	for _, f := range []string{"../../golden-examples/tasks.yaml", "testdata/ok/full.yaml"} {
		if _, err := Load(f); err != nil {
			t.Fatalf("%s does not load: %v", f, err)
		}
		if err := sch.Validate(yamlAsJSON(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// What the schema can see of the loader's errors (unknown keys, missing
// or exclusive keys, bad matchers, kinds, ids), editors flag too.
func TestSchemaRejectsInvalidSets(t *testing.T) {
	sch := compileSchema(t)
	for _, f := range []string{"unknown_key.yaml", "top_key.yaml", "expect.yaml", "matchers.yaml"} {
		if err := sch.Validate(yamlAsJSON(t, filepath.Join("testdata/err", f))); err == nil {
			t.Errorf("%s: the schema accepts what the loader rejects", f)
		}
	}
}

// The schema and the loader name the same keys at every level: a key only
// one of them knows is either rejected at load time or never completed.
func TestSchemaKeysMatchLoader(t *testing.T) {
	var s struct {
		OneOf []struct {
			Properties map[string]any `json:"properties"`
		} `json:"oneOf"`
		Defs struct {
			Case struct {
				Properties           map[string]any `json:"properties"`
				AdditionalProperties *bool          `json:"additionalProperties"`
			} `json:"case"`
			Step struct {
				OneOf []struct {
					Properties map[string]any `json:"properties"`
				} `json:"oneOf"`
			} `json:"step"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	same := func(what string, schema map[string]any, loader []string) {
		var keys []string
		for k := range schema {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := append([]string(nil), loader...)
		sort.Strings(want)
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("%s: schema keys %v, loader keys %v", what, keys, want)
		}
	}
	same("top level", s.OneOf[0].Properties, topKeys)
	same("case", s.Defs.Case.Properties, caseKeys)
	same("sequence step", s.Defs.Step.OneOf[1].Properties, stepKeys)
	if a := s.Defs.Case.AdditionalProperties; a == nil || *a {
		t.Error("the schema must reject unknown case keys")
	}
}
