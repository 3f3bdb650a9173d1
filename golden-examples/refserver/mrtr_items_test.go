package refserver

import "testing"

func TestParseMRTRItems(t *testing.T) {
	got, err := ParseMRTRItems("tool:ask_a, prompt:ask_b:MRTR-4:stateless,tool:bulk:x3")
	if err != nil {
		t.Fatal(err)
	}
	want := []MRTRItem{
		{Kind: "tool", Name: "ask_a"},
		{Kind: "prompt", Name: "ask_b", Stateless: true, Break: "MRTR-4"},
		{Kind: "tool", Name: "bulk_1"}, {Kind: "tool", Name: "bulk_2"}, {Kind: "tool", Name: "bulk_3"},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"ask_a", "resource:x", "tool:bad name", "tool:a:MRTR-8", "tool:a:x0", "tool:a:x100001", "tool:a:x60000,tool:b:x60000"} {
		if _, err := ParseMRTRItems(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
