package report

import (
	"encoding/json"
	"reflect"
)

// Normalize replaces every nil slice and map in the report with an empty
// one, so the JSON has [] and {} where a consumer iterates, never null.
// Encode and Save call it; it changes nothing else.
//
// It walks the value by reflection rather than listing fields, so every
// section stays null-free as it grows.
func (r *Report) Normalize() { fillNil(reflect.ValueOf(r)) }

var rawMessage = reflect.TypeFor[json.RawMessage]()

func fillNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			fillNil(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillNil(v.Field(i))
			}
		}
	case reflect.Slice:
		// Bytes are JSON strings or raw JSON, where empty is not [].
		if v.Type() == rawMessage || v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			fillNil(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}
