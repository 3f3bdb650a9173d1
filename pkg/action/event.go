package action

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// RunEvalsLabel is the label whose addition to a same-repository pull request
// runs every layer. It is matched exactly (case and all), so "run-evals-later"
// or "Run-Evals" do not start paid runs.
const RunEvalsLabel = "run-evals"

// maxEventBytes bounds the payload read; real payloads are a few hundred KiB.
const maxEventBytes = 25 << 20

// event is the part of GITHUB_EVENT_PATH's payload the plan needs.
type event struct {
	Action string `json:"action"`
	Number int    `json:"number"`
	Label  *struct {
		Name string `json:"name"`
	} `json:"label"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			Repo *repoRef `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo *repoRef `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository *repoRef `json:"repository"`
	Schedule   string   `json:"schedule"`
}

type repoRef struct {
	FullName      string `json:"full_name"`
	DefaultBranch string `json:"default_branch"`
}

// readEvent loads the payload. A missing path is an empty event (local runs,
// and push or schedule need little of it); an unreadable or malformed file is
// an error.
func readEvent(path string) (event, error) {
	var ev event
	if path == "" {
		return ev, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEventBytes+1))
	if err != nil {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	if len(b) > maxEventBytes {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH: payload over %d bytes", maxEventBytes)
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH %s is not a JSON event payload: %w", path, err)
	}
	return ev, nil
}

// isPullRequest covers the events whose payload has a pull_request.
func isPullRequest(name string) bool {
	return name == "pull_request" || name == "pull_request_target"
}

// prNumber is the pull request's number, 0 when there is none.
func (ev event) prNumber() int {
	if ev.PullRequest != nil && ev.PullRequest.Number > 0 {
		return ev.PullRequest.Number
	}
	return ev.Number
}

// fromFork reports whether the pull request's head lives in another
// repository. A deleted fork has no head repo: treat it as a fork.
func (ev event) fromFork(repository string) bool {
	if ev.PullRequest == nil {
		return false
	}
	head := ev.PullRequest.Head.Repo
	if head == nil {
		return true
	}
	base := repository
	if ev.PullRequest.Base.Repo != nil && ev.PullRequest.Base.Repo.FullName != "" {
		base = ev.PullRequest.Base.Repo.FullName
	}
	return !strings.EqualFold(head.FullName, base)
}

// labeledRunEvals reports whether this is the labelled event for RunEvalsLabel.
func (ev event) labeledRunEvals() bool {
	return ev.Action == "labeled" && ev.Label != nil && ev.Label.Name == RunEvalsLabel
}

func (ev event) defaultBranch() string {
	if ev.Repository != nil {
		return ev.Repository.DefaultBranch
	}
	return ""
}
