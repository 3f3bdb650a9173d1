package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v60/github"
)

// Error kinds. Test with errors.Is; every *Error carries exactly one.
var (
	// ErrNoRun: no green push/schedule run of the workflow on the default
	// branch had a usable report within the walk-back bound.
	ErrNoRun = errors.New("no usable baseline run")
	// ErrNoArtifact: the candidate runs carry no artifact with the name asked for.
	ErrNoArtifact = errors.New("baseline artifact not found")
	// ErrArtifactExpired: the artifact exists but GitHub deleted its content
	// (retention, 90 days by default).
	ErrArtifactExpired = errors.New("baseline artifact expired")
	// ErrTooLarge: the zip, one of its entries or report.json is over the limit.
	ErrTooLarge = errors.New("baseline artifact too large")
	// ErrCorruptArtifact: not a readable zip, no report.json, or unsafe entries.
	ErrCorruptArtifact = errors.New("baseline artifact is corrupt")
	// ErrInvalidReport: Params.Validate rejected report.json.
	ErrInvalidReport = errors.New("baseline report is invalid")
	// ErrReadOnlyToken: GitHub answered 403 or 404 to a write (or to the read
	// before it). Fork pull requests always get a read-only GITHUB_TOKEN, so
	// callers turn this into a warning and keep the verdict.
	ErrReadOnlyToken = errors.New("the token cannot write to this pull request")
	// ErrRateLimited: primary or secondary API rate limit.
	ErrRateLimited = errors.New("GitHub API rate limit reached")
	// ErrAPI: any other failed API call (network, 5xx, unexpected status).
	ErrAPI = errors.New("GitHub API request failed")
	// ErrConfig: bad Options or Params, found before any request.
	ErrConfig = errors.New("invalid GitHub request")
)

// Error is what every function of this package returns on failure.
type Error struct {
	Op     string // what was being done, e.g. "list workflow runs of evals.yml"
	Kind   error  // one of the Err* sentinels above
	Status int    // HTTP status, 0 when there was no response
	Detail string // what happened, single line
	Hint   string // how to fix it, single line
	Err    error  // underlying error, if any (never printed: Detail says it)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is / errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// apiError classifies a failed go-github call. op names the call for the
// reader; the token is scrubbed from anything that came back.
func (c *Client) apiError(op string, resp *gogithub.Response, err error) *Error {
	e := &Error{Op: op, Kind: ErrAPI, Err: err}
	if resp != nil && resp.Response != nil {
		e.Status = resp.StatusCode
	}
	var (
		rl    *gogithub.RateLimitError
		abuse *gogithub.AbuseRateLimitError
		er    *gogithub.ErrorResponse
	)
	switch {
	case errors.As(err, &rl):
		e.Kind, e.Status = ErrRateLimited, http.StatusForbidden
		e.Detail = "limit " + fmt.Sprint(rl.Rate.Limit) + " per hour, resets at " + rl.Rate.Reset.UTC().Format(time.RFC3339)
		e.Hint = "GITHUB_TOKEN allows 1,000 requests per hour per repository; re-run later or run fewer jobs at once"
	case errors.As(err, &abuse):
		e.Kind, e.Status = ErrRateLimited, http.StatusForbidden
		e.Detail = "secondary rate limit"
		if abuse.RetryAfter != nil {
			e.Detail += ", retry after " + abuse.RetryAfter.String()
		}
		e.Hint = "too many requests in a short time; re-run the job later"
	case errors.Is(err, context.DeadlineExceeded):
		e.Detail = "no answer before the deadline"
		e.Hint = "GitHub may be slow or unreachable from this runner; check GITHUB_API_URL"
	case errors.Is(err, context.Canceled):
		e.Detail = "cancelled"
	case errors.As(err, &er):
		if er.Response != nil {
			e.Status = er.Response.StatusCode
		}
		e.Detail = fmt.Sprintf("HTTP %d", e.Status)
		if er.Message != "" {
			e.Detail += ": " + er.Message
		}
	default:
		if e.Status != 0 {
			e.Detail = fmt.Sprintf("HTTP %d", e.Status)
		} else {
			e.Detail = err.Error()
		}
	}
	e.Detail = c.scrub(e.Detail)
	return e
}

// scrub keeps text single-line and free of the token, whatever a server or
// a transport error put into it.
func (c *Client) scrub(s string) string {
	if c.token != "" {
		s = strings.ReplaceAll(s, c.token, "***")
	}
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	const max = 300
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}
