package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v60/github"
)

// Comment actions returned by UpsertComment.
const (
	CommentCreated   = "created"
	CommentUpdated   = "updated"
	CommentUnchanged = "unchanged"
	CommentSkipped   = "skipped"
)

// MaxCommentChars is GitHub's limit on a comment body (65,536 characters).
const MaxCommentChars = 65536

// commentBot is the author of comments made with GITHUB_TOKEN.
const commentBot = "github-actions[bot]"

const (
	commentsPerPage = 100
	// maxCommentPages bounds the scan: 3,000 comments is beyond any PR a
	// person reads, and the cost stays at 30 requests.
	maxCommentPages = 30
)

var markerKey = regexp.MustCompile(`^[A-Za-z0-9._/:-]{1,100}$`)

// Marker returns the hidden HTML comment that identifies mcp-eval's comment
// for key (one per workflow, e.g. the workflow file name). Characters outside
// [A-Za-z0-9._/:-] are replaced so the marker cannot close early ("-->").
func Marker(key string) string {
	key = strings.Map(func(r rune) rune {
		if r < 128 && markerKey.MatchString(string(r)) {
			return r
		}
		return '_'
	}, key)
	if key == "" {
		key = "default"
	}
	if len(key) > 100 {
		key = key[:100]
	}
	return "<!-- mcp-eval-action:" + key + " -->"
}

// UpsertComment keeps one comment per pull request and marker. It looks for
// the newest comment that contains marker and was written by a bot (the
// github-actions[bot] of GITHUB_TOKEN, or a GitHub App's bot when an app
// token is used; a person's comment that quotes the marker is never
// touched), edits it when the body changed, leaves it when not, and creates
// it otherwise. The posted body starts with the marker and is cut to
// GitHub's size limit with a note. pr <= 0 returns CommentSkipped.
//
// A 403 or 404 (fork pull requests get a read-only token) returns
// ErrReadOnlyToken: warn and keep the verdict.
func (c *Client) UpsertComment(ctx context.Context, owner, repo string, pr int, marker, body string) (string, error) {
	if pr <= 0 {
		return CommentSkipped, nil
	}
	op := fmt.Sprintf("update the mcp-eval comment on %s/%s#%d", owner, repo, pr)
	if !namePattern.MatchString(owner) || !namePattern.MatchString(repo) {
		return "", &Error{Op: op, Kind: ErrConfig, Detail: "repository is not owner/name"}
	}
	if !strings.HasPrefix(marker, "<!--") || !strings.HasSuffix(marker, "-->") {
		return "", &Error{Op: op, Kind: ErrConfig, Detail: "the marker must be an HTML comment", Hint: "use github.Marker(key)"}
	}
	body = commentBody(marker, body)

	existing, err := c.findComment(ctx, owner, repo, pr, marker, op)
	if err != nil {
		return "", err
	}
	if existing != nil {
		if normalize(existing.GetBody()) == normalize(body) {
			return CommentUnchanged, nil
		}
		ctx, cancel := c.call(ctx)
		defer cancel()
		_, resp, err := c.gh.Issues.EditComment(ctx, owner, repo, existing.GetID(), &gogithub.IssueComment{Body: gogithub.String(body)})
		if err != nil {
			return "", c.commentError(op, resp, err)
		}
		return CommentUpdated, nil
	}
	ctx, cancel := c.call(ctx)
	defer cancel()
	_, resp, err := c.gh.Issues.CreateComment(ctx, owner, repo, pr, &gogithub.IssueComment{Body: gogithub.String(body)})
	if err != nil {
		return "", c.commentError(op, resp, err)
	}
	return CommentCreated, nil
}

// findComment returns the newest matching comment, or nil.
func (c *Client) findComment(ctx context.Context, owner, repo string, pr int, marker, op string) (*gogithub.IssueComment, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: commentsPerPage}}
	var found *gogithub.IssueComment
	for page := 0; page < maxCommentPages; page++ {
		list, resp, err := func() ([]*gogithub.IssueComment, *gogithub.Response, error) {
			ctx, cancel := c.call(ctx)
			defer cancel()
			return c.gh.Issues.ListComments(ctx, owner, repo, pr, opts)
		}()
		if err != nil {
			return nil, c.commentError(op, resp, err)
		}
		// Issue comments come oldest first: a later match replaces an earlier one.
		for _, cm := range list {
			if strings.Contains(cm.GetBody(), marker) && isBot(cm.GetUser()) {
				found = cm
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return found, nil
}

func isBot(u *gogithub.User) bool {
	return u.GetLogin() == commentBot || u.GetType() == "Bot"
}

// commentError maps 403/404 to ErrReadOnlyToken, except rate limits.
func (c *Client) commentError(op string, resp *gogithub.Response, err error) error {
	e := c.apiError(op, resp, err)
	if e.Kind == ErrAPI && (e.Status == http.StatusForbidden || e.Status == http.StatusNotFound) {
		e.Kind = ErrReadOnlyToken
		e.Hint = "pull requests from forks get a read-only GITHUB_TOKEN; otherwise give the job `permissions: pull-requests: write`. The verdict is unaffected and the job summary has the report"
	}
	return e
}

// IsReadOnly reports whether err is ErrReadOnlyToken.
func IsReadOnly(err error) bool { return errors.Is(err, ErrReadOnlyToken) }

// commentBody puts the marker first (so truncation cannot cut it) and keeps
// the body within MaxCommentChars.
func commentBody(marker, body string) string {
	body = strings.TrimSpace(strings.ReplaceAll(body, marker, ""))
	out := marker + "\n" + body + "\n"
	if utf8.RuneCountInString(out) <= MaxCommentChars {
		return out
	}
	const note = "\n\n> **Truncated**: the report is longer than a GitHub comment allows. The job summary and the report artifact have all of it.\n"
	budget := MaxCommentChars - utf8.RuneCountInString(marker) - utf8.RuneCountInString(note) - 1
	cut := truncateRunes(body, budget)
	// Cut at a line end so no table row or tag is left half open; an open
	// <details> is closed by the note's paragraph in GitHub's renderer.
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
		cut = cut[:i]
	}
	return marker + "\n" + cut + note
}

func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// normalize compares bodies the way GitHub stores them (CRLF may come back).
func normalize(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}
