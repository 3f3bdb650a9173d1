package config

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The JSON Schema editors use and the Go struct the loader uses must name
// the same keys, at every level: a key only one of them knows is either
// rejected at load time or never autocompleted.
func TestSchemaMatchesStruct(t *testing.T) {
	b, err := os.ReadFile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	compare(t, "", reflect.TypeOf(Config{}), schema)
	user := schema["properties"].(map[string]any)["server"].(map[string]any)["properties"].(map[string]any)["user"].(map[string]any)
	var enum []string
	for _, v := range user["enum"].([]any) {
		enum = append(enum, v.(string))
	}
	if !reflect.DeepEqual(enum, serverUsers) {
		t.Errorf("server.user: schema enum %q, loader accepts %q", enum, serverUsers)
	}
}

func compare(t *testing.T, path string, typ reflect.Type, schema map[string]any) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Struct:
		props, _ := schema["properties"].(map[string]any)
		var goKeys, schemaKeys []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			goKeys = append(goKeys, key)
			sub, ok := props[key].(map[string]any)
			if !ok {
				continue
			}
			compare(t, path+"."+key, f.Type, sub)
		}
		for k := range props {
			schemaKeys = append(schemaKeys, k)
		}
		sort.Strings(goKeys)
		sort.Strings(schemaKeys)
		if !reflect.DeepEqual(goKeys, schemaKeys) {
			t.Errorf("%s: struct keys %v, schema keys %v", orRoot(path), goKeys, schemaKeys)
		}
		if schema["additionalProperties"] != false {
			t.Errorf("%s: the schema must reject unknown keys (additionalProperties: false)", orRoot(path))
		}
	case reflect.Map:
		if sub, ok := schema["additionalProperties"].(map[string]any); ok {
			compare(t, path+".*", typ.Elem(), sub)
		}
	case reflect.Slice:
		// A list of entries (waivers): each entry's keys too.
		if sub, ok := schema["items"].(map[string]any); ok {
			compare(t, path+"[]", typ.Elem(), sub)
		}
	}
}

func orRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}
