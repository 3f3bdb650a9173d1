package report

import (
	"fmt"
	"strings"
)

// Validate checks what the schema cannot express: k ≤ n, unique ids, and
// that every result names a case and a model the report defines. The gate
// relies on these, and a report is untrusted input.
func (r *Report) Validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if r.SchemaVersion != SchemaVersion {
		bad("/schemaVersion: %d, want %d", r.SchemaVersion, SchemaVersion)
	}
	models := map[string]bool{}
	for i, m := range r.Models {
		if models[m.ID] {
			bad("/models/%d/id: %q appears twice; model ids must be unique", i, m.ID)
		}
		models[m.ID] = true
	}
	knownModel := func(loc, id string) {
		if !models[id] {
			bad("%s: model %q is not in /models (add it there, with requested and served names)", loc, id)
		}
	}
	if b := r.Behavior; b != nil {
		cases := map[string]bool{}
		for i, c := range b.Cases {
			if cases[c.ID] {
				bad("/behavior/cases/%d/id: %q appears twice; case ids must be unique", i, c.ID)
			}
			cases[c.ID] = true
		}
		pairs := map[[2]string]bool{}
		for i, res := range b.Results {
			loc := fmt.Sprintf("/behavior/results/%d", i)
			if !cases[res.Case] {
				bad("%s/case: %q is not in /behavior/cases", loc, res.Case)
			}
			knownModel(loc+"/model", res.Model)
			key := [2]string{res.Case, res.Model}
			if pairs[key] {
				bad("%s: case %q with model %q appears twice", loc, res.Case, res.Model)
			}
			pairs[key] = true
			countOK(loc+"/passed", res.Passed, bad)
			if res.Errors > res.Passed.N {
				bad("%s/errors: %d errored runs of %d", loc, res.Errors, res.Passed.N)
			}
			scoresOK(loc+"/scores", res.Scores, bad)
		}
	}
	if s := r.Resilience; s != nil {
		for i, f := range s.Faults {
			loc := fmt.Sprintf("/resilience/faults/%d", i)
			knownModel(loc+"/model", f.Model)
			scoresOK(loc+"/scores", f.Scores, bad)
		}
		for i, a := range s.Attacks {
			loc := fmt.Sprintf("/resilience/attacks/%d", i)
			knownModel(loc+"/model", a.Model)
			scoresOK(loc+"/scores", a.Scores, bad)
		}
		for i, u := range s.Unmeasured {
			loc := fmt.Sprintf("/resilience/unmeasured/%d", i)
			knownModel(loc+"/model", u.Model)
			sum := 0
			for _, w := range u.Why {
				sum += w.Runs
			}
			if u.Uncounted > u.Runs || sum != u.Uncounted {
				bad("%s: %d runs not counted of %d, the reasons add up to %d", loc, u.Uncounted, u.Runs, sum)
			}
		}
	}
	if t := r.Telemetry; t != nil {
		telemetryOK(t, bad)
	}
	if c := r.Conformance; c != nil {
		for i, res := range c.Checks {
			if res.Passes() > res.Runs {
				bad("/conformance/checks/%d: %s passed %d of %d runs", i, res.ID, res.Passes(), res.Runs)
			}
		}
	}
	if g := r.Gate; g != nil {
		for i, it := range g.Items {
			if it.New != nil {
				countOK(fmt.Sprintf("/gate/items/%d/new", i), *it.New, bad)
			}
			if it.Baseline != nil {
				countOK(fmt.Sprintf("/gate/items/%d/baseline", i), *it.Baseline, bad)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) > maxSchemaErrors {
		errs = append(errs[:maxSchemaErrors], fmt.Sprintf("… and %d more", len(errs)-maxSchemaErrors))
	}
	return fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(errs, "\n  "))
}

func countOK(loc string, c Count, bad func(string, ...any)) {
	if c.K > c.N {
		bad("%s: k %d is more than n %d", loc, c.K, c.N)
	}
}

func scoresOK(loc string, scores []Score, bad func(string, ...any)) {
	seen := map[string]bool{}
	for j, s := range scores {
		if s.K > s.N {
			bad("%s/%d: %s k %d is more than n %d", loc, j, s.Name, s.K, s.N)
		}
		if d, ok := DirectionOf(s.Name); ok && d != s.Direction {
			bad("%s/%d: %s is a %q-is-better score, not %q", loc, j, s.Name, d, s.Direction)
		}
		if seen[s.Name] {
			bad("%s/%d: score %s appears twice", loc, j, s.Name)
		}
		seen[s.Name] = true
	}
}
