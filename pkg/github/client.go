package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v60/github"
)

// DefaultAPIURL is GITHUB_API_URL on github.com.
const DefaultAPIURL = "https://api.github.com"

// Defaults for Options and Limits. The report of a full run with trajectories
// stays well under a few MiB; 32 MiB leaves room without letting a hostile or
// broken artifact exhaust the runner's memory.
const (
	DefaultCallTimeout     = 30 * time.Second
	DefaultDownloadTimeout = 2 * time.Minute
	DefaultMaxZipBytes     = 32 << 20
	DefaultMaxReportBytes  = 32 << 20
	DefaultMaxEntries      = 1000
)

// Options configures a Client. The zero value talks to api.github.com without
// a token, which is enough for public repositories' runs and artifacts lists
// but not for downloads or comments.
type Options struct {
	// APIURL is GITHUB_API_URL. It is used verbatim with "/" appended (never
	// go-github's enterprise helper, which may add "/api/v3/").
	APIURL string
	// Token is github-token. It is sent only to APIURL, never to the
	// artifact download host, and never appears in errors.
	Token string
	// HTTPClient carries API calls; the token is added on top of it.
	// nil: a client with a 60 s overall timeout.
	HTTPClient *http.Client
	// DownloadClient fetches the pre-signed artifact URL. It must not add
	// credentials. nil: a plain client with DownloadTimeout.
	DownloadClient *http.Client
	// CallTimeout bounds each API call (default 30 s); DownloadTimeout bounds
	// the artifact download (default 2 min).
	CallTimeout     time.Duration
	DownloadTimeout time.Duration
	// Limits bound what is read from an artifact.
	Limits Limits
}

// Limits bound the artifact zip. Zero fields take the defaults above.
type Limits struct {
	MaxZipBytes    int64 // the downloaded zip
	MaxEntryBytes  int64 // the declared uncompressed size of any entry
	MaxReportBytes int64 // report.json once decompressed
	MaxEntries     int   // entries in the zip
}

func (l Limits) withDefaults() Limits {
	if l.MaxZipBytes <= 0 {
		l.MaxZipBytes = DefaultMaxZipBytes
	}
	if l.MaxReportBytes <= 0 {
		l.MaxReportBytes = DefaultMaxReportBytes
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = l.MaxReportBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}

// Client is safe for concurrent use; it holds no mutable state.
type Client struct {
	gh              *gogithub.Client
	download        *http.Client
	token           string
	callTimeout     time.Duration
	downloadTimeout time.Duration
	limits          Limits
}

// New builds a Client. It makes no request.
func New(opts Options) (*Client, error) {
	base, err := baseURL(opts.APIURL)
	if err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	gh := gogithub.NewClient(hc)
	if opts.Token != "" {
		gh = gh.WithAuthToken(opts.Token)
	}
	gh.BaseURL = base
	gh.UploadURL = base
	gh.UserAgent = "mcp-eval-action"

	c := &Client{
		gh:              gh,
		download:        opts.DownloadClient,
		token:           opts.Token,
		callTimeout:     opts.CallTimeout,
		downloadTimeout: opts.DownloadTimeout,
		limits:          opts.Limits.withDefaults(),
	}
	if c.callTimeout <= 0 {
		c.callTimeout = DefaultCallTimeout
	}
	if c.downloadTimeout <= 0 {
		c.downloadTimeout = DefaultDownloadTimeout
	}
	if c.download == nil {
		c.download = &http.Client{Timeout: c.downloadTimeout}
	}
	return c, nil
}

// baseURL turns GITHUB_API_URL into go-github's BaseURL: verbatim plus "/".
func baseURL(api string) (*url.URL, error) {
	if api == "" {
		api = DefaultAPIURL
	}
	u, err := url.Parse(strings.TrimRight(api, "/") + "/")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &Error{
			Op:     "configure the GitHub client",
			Kind:   ErrConfig,
			Detail: fmt.Sprintf("GITHUB_API_URL %q is not an http(s) URL", api),
			Hint:   "leave GITHUB_API_URL as the runner sets it (https://api.github.com, or https://HOST/api/v3 on GitHub Enterprise Server)",
		}
	}
	return u, nil
}

// call gives one API request its own deadline inside the caller's context.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.callTimeout)
}
