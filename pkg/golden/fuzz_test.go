package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// A golden file comes with a pull request: whatever it holds, Parse
// returns a set or positioned errors, and never panics.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/ok/*.yaml", "testdata/err/*.yaml", "../../golden-examples/tasks.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		set, err := Parse("testdata/fuzz.yaml", src)
		if err == nil {
			for i := range set.Cases {
				c := &set.Cases[i]
				if c.ID == "" || c.Prompt == "" || (!c.Negative && len(c.Steps()) == 0) {
					t.Fatalf("loaded an incomplete case: %+v", c)
				}
			}
			Hygiene(set, []string{"a"})
			return
		}
		if es, ok := err.(Errors); ok {
			for _, e := range es {
				if e.Pos.File == "" {
					t.Fatalf("error without a file: %v", e)
				}
			}
		}
	})
}
