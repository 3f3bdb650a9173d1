package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

func TestUpsertCommentLifecycle(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	marker := Marker("evals.yml")
	// 150 comments by people first, one of them quoting our marker: the scan
	// pages through the Link header and never edits a person's comment.
	for i := range 150 {
		f.Comments = append(f.Comments, fakegithub.Comment{ID: int64(i + 1), PR: 7, Body: fmt.Sprintf("comment %d", i), Login: "alice", UserType: "User"})
	}
	f.Comments[120].Body = "quoting " + marker + " here"

	steps := []struct {
		body, want string
	}{
		{"verdict: pass", CommentCreated},
		{"verdict: pass", CommentUnchanged},
		{"verdict: fail", CommentUpdated},
		{"verdict: fail\r\n", CommentUnchanged},
	}
	for i, s := range steps {
		got, err := c.UpsertComment(ctx, "octo", "server", 7, marker, s.body)
		if err != nil || got != s.want {
			t.Fatalf("step %d: got %q, %v; want %q", i, got, err, s.want)
		}
	}
	cs := f.CommentsOn(7)
	if len(cs) != 151 {
		t.Fatalf("%d comments, want 150 + 1", len(cs))
	}
	last := cs[150]
	if last.Login != "github-actions[bot]" || !strings.HasPrefix(last.Body, marker+"\n") || !strings.Contains(last.Body, "verdict: fail") {
		t.Errorf("bot comment = %+v", last)
	}
	if cs[120].Body != "quoting "+marker+" here" {
		t.Errorf("a person's comment was edited: %q", cs[120].Body)
	}
	calls := strings.Join(f.Calls(), "\n")
	if !strings.Contains(calls, "/issues/7/comments?page=2&per_page=100") {
		t.Errorf("comments were not paged:\n%s", calls)
	}
	if n := strings.Count(calls, "PATCH "); n != 1 {
		t.Errorf("%d edits, want exactly 1 (unchanged bodies are not re-posted)", n)
	}
}

func TestUpsertCommentFindsAnAppBotsComment(t *testing.T) {
	f, c := newFake(t)
	marker := Marker("evals.yml")
	f.BotLogin = "mcp-eval-app[bot]"
	f.Comments = []fakegithub.Comment{{ID: 5, PR: 3, Body: marker + "\nold", Login: "mcp-eval-app[bot]", UserType: "Bot"}}
	got, err := c.UpsertComment(context.Background(), "octo", "server", 3, marker, "new")
	if err != nil || got != CommentUpdated {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestUpsertCommentReadOnlyToken(t *testing.T) {
	f, c := newFake(t)
	f.ReadOnly = true
	_, err := c.UpsertComment(context.Background(), "octo", "server", 9, Marker("x"), "body")
	if !errors.Is(err, ErrReadOnlyToken) || !IsReadOnly(err) {
		t.Fatalf("err = %v, want ErrReadOnlyToken", err)
	}
	if !strings.Contains(err.Error(), "fork") || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), testToken) {
		t.Errorf("message = %q", err)
	}
}

func TestUpsertCommentSkipsWithoutPR(t *testing.T) {
	f, c := newFake(t)
	got, err := c.UpsertComment(context.Background(), "octo", "server", 0, Marker("x"), "body")
	if err != nil || got != CommentSkipped || len(f.Calls()) != 0 {
		t.Fatalf("got %q, %v, calls %v", got, err, f.Calls())
	}
}

func TestCommentBodyIsCutToGitHubsLimit(t *testing.T) {
	marker := Marker("k")
	line := strings.Repeat("é", 99) + "\n" // multi-byte: the limit is in characters
	body := strings.Repeat(line, 1000) + marker
	got := commentBody(marker, body)
	if n := utf8.RuneCountInString(got); n > MaxCommentChars {
		t.Fatalf("%d characters", n)
	}
	if !strings.HasPrefix(got, marker+"\n") || strings.Count(got, marker) != 1 || !strings.Contains(got, "Truncated") {
		t.Errorf("body head %q tail %q", got[:60], got[len(got)-200:])
	}
	if !utf8.ValidString(got) {
		t.Error("cut inside a character")
	}
}

func TestMarker(t *testing.T) {
	for in, want := range map[string]string{
		"evals.yml":         "<!-- mcp-eval-action:evals.yml -->",
		"":                  "<!-- mcp-eval-action:default -->",
		"x --> <b>@you</b>": "<!-- mcp-eval-action:x_--___b__you_/b_ -->",
	} {
		if got := Marker(in); got != want {
			t.Errorf("Marker(%q) = %q, want %q", in, got, want)
		}
	}
}
