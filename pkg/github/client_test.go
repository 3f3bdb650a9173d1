package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsABadAPIURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "not a url", "https://"} {
		if _, err := New(Options{APIURL: u}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "GITHUB_API_URL") {
			t.Errorf("New(%q) err = %v", u, err)
		}
	}
}

// The base URL is GITHUB_API_URL + "/" verbatim: no "/api/v3/" appended.
func TestBaseURLIsVerbatim(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "https://api.github.com/",
		"https://api.github.com":       "https://api.github.com/",
		"http://127.0.0.1:9/x":         "http://127.0.0.1:9/x/",
		"https://ghe.corp/api/v3/":     "https://ghe.corp/api/v3/",
		"https://proxy.example/gh-api": "https://proxy.example/gh-api/",
	} {
		c, err := New(Options{APIURL: in})
		if err != nil || c.gh.BaseURL.String() != want {
			t.Errorf("APIURL %q → %v, %v; want %s", in, c.gh.BaseURL, err, want)
		}
	}
}

// Errors carry no token, even when the server echoes it back.
func TestErrorsNeverCarryTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`{"message":"upstream saw ` + r.Header.Get("Authorization") + `\nand more"}`))
	}))
	defer srv.Close()
	c, _ := New(Options{APIURL: srv.URL, Token: testToken})
	_, _, err := c.FetchBaseline(context.Background(), Params{Owner: "o", Repo: "r", WorkflowFile: "e.yml", DefaultBranch: "main"})
	if !errors.Is(err, ErrAPI) || strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q", err)
	}
	if !strings.Contains(err.Error(), "HTTP 502") || !strings.Contains(err.Error(), "***") {
		t.Errorf("err = %q, want the status and the scrubbed echo", err)
	}
}

func TestRateLimitIsItsOwnKind(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Header().Set("X-RateLimit-Reset", "1785585600")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"API rate limit exceeded"}`))
	}))
	defer srv.Close()
	c, _ := New(Options{APIURL: srv.URL, Token: testToken})
	_, err := c.UpsertComment(context.Background(), "o", "r", 1, Marker("k"), "b")
	if !errors.Is(err, ErrRateLimited) || errors.Is(err, ErrReadOnlyToken) {
		t.Fatalf("err = %v", err)
	}
}

func TestEveryCallHasADeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c, _ := New(Options{APIURL: srv.URL, CallTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := c.UpsertComment(context.Background(), "o", "r", 1, Marker("k"), "b")
	if !errors.Is(err, ErrAPI) || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}
