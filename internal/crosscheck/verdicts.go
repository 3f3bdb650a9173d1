package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Official is what scripts/official-suite.sh --json writes.
type Official struct {
	Header    string             `json:"header"`
	ExitCode  int                `json:"exitCode"`
	Scenarios []OfficialScenario `json:"scenarios"`
}

type OfficialScenario struct {
	Scenario string          `json:"scenario"`
	Scoring  string          `json:"scoring"` // required | not_scored | unscored
	Verdict  string          `json:"verdict"`
	Checks   []OfficialCheck `json:"checks"`
}

type OfficialCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
	Message      string `json:"message"` // ERROR rows the script adds
}

func (c OfficialCheck) text() string {
	if c.ErrorMessage != "" {
		return c.ErrorMessage
	}
	return c.Message
}

// statusRank orders the suite's statuses from least to most severe; a
// group of instances of one check shows its most severe one.
var statusRank = map[string]int{"SKIPPED": 0, "INFO": 1, "SUCCESS": 2, "WARNING": 3, "FAILURE": 4, "ERROR": 5}

// Instances are the emitted instances of a mapped check: of (scenario,
// check), or of check in every scenario for "*".
func (o *Official) Instances(scenario, check string) []OfficialCheck {
	var out []OfficialCheck
	for _, s := range o.Scenarios {
		if scenario != "*" && s.Scenario != scenario {
			continue
		}
		for _, c := range s.Checks {
			if c.ID == check {
				out = append(out, c)
			}
		}
	}
	return out
}

// Agg is the group's status: the most severe, "" when none was emitted.
func Agg(cs []OfficialCheck) string {
	worst := ""
	for _, c := range cs {
		if worst == "" || statusRank[c.Status] > statusRank[worst] {
			worst = c.Status
		}
	}
	return worst
}

// showOfficial is "SUCCESS", "SUCCESS 3/3", "FAILURE 2/3" (n/m: m of n
// instances succeeded), or "—" when the suite did not emit the check.
func showOfficial(cs []OfficialCheck) string {
	agg := Agg(cs)
	if agg == "" {
		return "—"
	}
	if len(cs) == 1 {
		return agg
	}
	ok := 0
	for _, c := range cs {
		if c.Status == "SUCCESS" {
			ok++
		}
	}
	return fmt.Sprintf("%s %d/%d", agg, ok, len(cs))
}

// Ours is our report's Layer 0 part, indexed.
type Ours struct {
	Conformance  *report.Conformance
	byID         map[string]*report.CheckResult
	unobservable map[string]string
}

// Verdict of our check id: pass, fail, warn, skip, error, "unobservable"
// (listed as such in the report) or "absent" (not run at all).
func (o *Ours) Verdict(id string) string {
	if r, ok := o.byID[id]; ok {
		return string(r.Verdict)
	}
	if _, ok := o.unobservable[id]; ok {
		return "unobservable"
	}
	return "absent"
}

func loadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func loadOurs(path string) (*Ours, error) {
	var rep report.Report
	if err := loadJSON(path, &rep); err != nil {
		return nil, err
	}
	if rep.Conformance == nil {
		return nil, fmt.Errorf("%s: the report has no conformance section", path)
	}
	o := &Ours{Conformance: rep.Conformance, byID: map[string]*report.CheckResult{}, unobservable: rep.Conformance.Unobservable}
	for i := range rep.Conformance.Checks {
		o.byID[rep.Conformance.Checks[i].ID] = &rep.Conformance.Checks[i]
	}
	return o, nil
}

func loadOfficial(path string) (*Official, error) {
	var o Official
	if err := loadJSON(path, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// oursCombined is the verdict of a row's ids taken together: fail (or
// error) if any failed, else warn if any warned, else pass if any passed,
// else skip; "unobservable" when every id is.
func oursCombined(o *Ours, ids []string) string {
	seen := map[string]bool{}
	for _, id := range ids {
		seen[o.Verdict(id)] = true
	}
	for _, v := range []string{"error", "fail", "warn", "pass", "skip", "absent", "unobservable"} {
		if seen[v] {
			return v
		}
	}
	return "—"
}

// Compare is the result of one mapped row on one target.
func Compare(official string, ours string) string {
	switch {
	case official == "":
		return "not emitted by the suite"
	case official == "SKIPPED" || official == "INFO":
		return "not compared (suite " + official + ")"
	case ours == "unobservable":
		return "ours-unobservable"
	case ours == "absent" || ours == "—":
		return "not compared (ours did not run)"
	case ours == "skip":
		return "not compared (ours skipped)"
	case ours == "error":
		return "not compared (ours errored)"
	}
	switch official {
	case "SUCCESS":
		switch ours {
		case "pass":
			return "agree"
		case "warn":
			return "agree (ours warns)"
		}
		return "DISAGREE"
	case "WARNING":
		if ours == "pass" {
			return "DISAGREE (suite warns)"
		}
		return "agree"
	default: // FAILURE, ERROR
		switch ours {
		case "fail":
			return "agree"
		case "warn":
			return "DISAGREE (ours only warns)"
		}
		return "DISAGREE"
	}
}

// comparable says whether a Compare result compared anything.
func comparable(result string) bool {
	return strings.HasPrefix(result, "agree") || strings.HasPrefix(result, "DISAGREE")
}
