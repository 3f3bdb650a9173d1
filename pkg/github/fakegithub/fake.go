// Package fakegithub is an in-memory double of the GitHub REST endpoints
// mcp-eval uses, for tests: workflow runs (with Link pagination), run
// artifacts, the artifact download's 302 to a zip served by the same
// server, issue comments (list, create, edit), the repository, and the
// failure modes CI meets (read-only token, expired artifact).
//
// The API is mounted under APIPath so a client that rewrites the base URL
// (go-github's enterprise helper adds "/api/v3/") misses every route. The
// blob route rejects any request that carries an Authorization header and
// records it, so a test can prove the token never left for the blob store.
package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// APIPath is where the fake mounts the REST API; APIURL() includes it.
const APIPath = "/fake-api"

// Run is one workflow run.
type Run struct {
	ID         int64
	Number     int
	Workflow   string // file name the run belongs to, e.g. "evals.yml"
	Event      string // push, schedule, pull_request, …
	Branch     string // head_branch
	HeadRepo   string // head_repository.full_name
	Conclusion string // success, failure, …
	HeadSHA    string
	Created    time.Time
}

// Artifact is one artifact of a run; Zip is what the blob URL serves.
type Artifact struct {
	ID      int64
	RunID   int64
	Name    string
	Expired bool
	Zip     []byte
	// Size overrides size_in_bytes (default len(Zip)).
	Size int64
}

// Comment is one issue comment.
type Comment struct {
	ID       int64
	PR       int
	Body     string
	Login    string
	UserType string // "Bot" or "User"
}

// Server is the fake. Set its fields before the first request; the handlers
// lock it, so tests may read them afterwards.
type Server struct {
	*httptest.Server

	mu            sync.Mutex
	Owner, Repo   string
	DefaultBranch string
	Runs          []Run // any order; listed newest first
	Artifacts     []Artifact
	Comments      []Comment
	// Token is the expected bearer token; "" accepts any. A wrong token gets 401.
	Token string
	// ReadOnly makes comment writes answer 403 "Resource not accessible by
	// integration", as GitHub does for a fork's GITHUB_TOKEN.
	ReadOnly bool
	// BotLogin authors created comments (default github-actions[bot]).
	BotLogin string

	// Requests records "METHOD path?query" for every request, in order.
	Requests []string
	// BlobAuth counts blob requests that carried an Authorization header.
	BlobAuth int
	nextID   int64
}

// New starts a fake for owner/repo with default branch "main".
func New(owner, repo string) *Server {
	s := &Server{Owner: owner, Repo: repo, DefaultBranch: "main", BotLogin: "github-actions[bot]", nextID: 9000}
	mux := http.NewServeMux()
	p := APIPath + "/repos/{owner}/{repo}"
	mux.HandleFunc("GET "+p, s.api(s.getRepo))
	mux.HandleFunc("GET "+p+"/actions/workflows/{wf}/runs", s.api(s.listRuns))
	mux.HandleFunc("GET "+p+"/actions/runs/{id}/artifacts", s.api(s.listArtifacts))
	mux.HandleFunc("GET "+p+"/actions/artifacts/{id}/zip", s.api(s.downloadArtifact))
	mux.HandleFunc("GET "+p+"/issues/{n}/comments", s.api(s.listComments))
	mux.HandleFunc("POST "+p+"/issues/{n}/comments", s.api(s.createComment))
	mux.HandleFunc("PATCH "+p+"/issues/comments/{id}", s.api(s.editComment))
	mux.HandleFunc("GET /blob/{id}", s.blob)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		writeError(w, http.StatusNotFound, "Not Found (fake: no route for "+r.Method+" "+r.URL.Path+")")
	})
	s.Server = httptest.NewServer(mux)
	return s
}

// APIURL is what GITHUB_API_URL should be set to.
func (s *Server) APIURL() string { return s.URL + APIPath }

// Calls returns a copy of the recorded requests.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Requests...)
}

// CommentsOn returns the comments of a pull request, oldest first.
func (s *Server) CommentsOn(pr int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.Comments {
		if c.PR == pr {
			out = append(out, c)
		}
	}
	return out
}

// BlobAuthCount is the number of blob requests that carried credentials.
func (s *Server) BlobAuthCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.BlobAuth
}

func (s *Server) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := ""
	if r.URL.RawQuery != "" {
		q = "?" + r.URL.RawQuery
	}
	s.Requests = append(s.Requests, r.Method+" "+r.URL.Path+q)
}

// api wraps a handler with recording, auth and the owner/repo check.
func (s *Server) api(h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		s.mu.Lock()
		token, owner, repo := s.Token, s.Owner, s.Repo
		s.mu.Unlock()
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			writeError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if r.PathValue("owner") != owner || r.PathValue("repo") != repo {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		h(w, r)
	}
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"full_name": s.Owner + "/" + s.Repo, "default_branch": s.DefaultBranch})
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var runs []Run
	for _, run := range s.Runs {
		if run.Workflow != r.PathValue("wf") {
			continue
		}
		if b := q.Get("branch"); b != "" && run.Branch != b {
			continue
		}
		if e := q.Get("event"); e != "" && run.Event != e {
			continue
		}
		if st := q.Get("status"); st != "" && run.Conclusion != st {
			continue
		}
		runs = append(runs, run)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Created.After(runs[j].Created) })
	_, start, end := paginate(w, r, len(runs))
	items := []map[string]any{}
	for _, run := range runs[start:end] {
		items = append(items, map[string]any{
			"id": run.ID, "run_number": run.Number, "event": run.Event, "head_branch": run.Branch,
			"head_sha": run.HeadSHA, "status": "completed", "conclusion": run.Conclusion,
			"created_at":      run.Created.UTC().Format(time.RFC3339),
			"html_url":        fmt.Sprintf("https://github.example/%s/%s/actions/runs/%d", s.Owner, s.Repo, run.ID),
			"head_repository": map[string]any{"full_name": run.HeadRepo},
			"repository":      map[string]any{"full_name": s.Owner + "/" + s.Repo},
		})
	}
	writeJSON(w, map[string]any{"total_count": len(runs), "workflow_runs": items})
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var arts []Artifact
	for _, a := range s.Artifacts {
		if a.RunID == id {
			arts = append(arts, a)
		}
	}
	_, start, end := paginate(w, r, len(arts))
	items := []map[string]any{}
	for _, a := range arts[start:end] {
		size := a.Size
		if size == 0 {
			size = int64(len(a.Zip))
		}
		items = append(items, map[string]any{
			"id": a.ID, "name": a.Name, "expired": a.Expired, "size_in_bytes": size,
			"expires_at":           time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
			"archive_download_url": s.APIURL() + fmt.Sprintf("/repos/%s/%s/actions/artifacts/%d/zip", s.Owner, s.Repo, a.ID),
		})
	}
	writeJSON(w, map[string]any{"total_count": len(arts), "artifacts": items})
}

func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, a := range s.Artifacts {
		if a.ID != id {
			continue
		}
		if a.Expired {
			writeError(w, http.StatusGone, "Artifact has expired")
			return
		}
		// Real GitHub points at a pre-signed blob URL on another host.
		w.Header().Set("Location", fmt.Sprintf("%s/blob/%d?sig=presigned", s.URL, id))
		w.WriteHeader(http.StatusFound)
		return
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) blob(w http.ResponseWriter, r *http.Request) {
	s.record(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "" {
		s.BlobAuth++
		http.Error(w, "credentials must not be sent to the blob store", http.StatusForbidden)
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, a := range s.Artifacts {
		if a.ID == id {
			w.Header().Set("Content-Type", "application/zip")
			_, _ = w.Write(a.Zip)
			return
		}
	}
	http.NotFound(w, r)
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var cs []Comment
	for _, c := range s.Comments {
		if c.PR == n {
			cs = append(cs, c)
		}
	}
	_, start, end := paginate(w, r, len(cs))
	items := []map[string]any{}
	for _, c := range cs[start:end] {
		items = append(items, commentJSON(c))
	}
	writeJSON(w, items)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	if s.ReadOnly {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.nextID++
	c := Comment{ID: s.nextID, PR: n, Body: in.Body, Login: s.BotLogin, UserType: "Bot"}
	s.Comments = append(s.Comments, c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	writeJSON(w, commentJSON(c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	if s.ReadOnly {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	for i := range s.Comments {
		if s.Comments[i].ID == id {
			if s.Comments[i].Login != s.BotLogin {
				writeError(w, http.StatusForbidden, "You cannot edit someone else's comment")
				return
			}
			s.Comments[i].Body = in.Body
			writeJSON(w, commentJSON(s.Comments[i]))
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

func commentJSON(c Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Login, "type": c.UserType}}
}

// paginate reads page/per_page, sets a Link header like GitHub's, and
// returns the page number and the slice bounds.
func paginate(w http.ResponseWriter, r *http.Request, n int) (page, start, end int) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ = strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	start = min((page-1)*per, n)
	end = min(start+per, n)
	last := (n + per - 1) / per
	var links []string
	link := func(p int, rel string) {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		qq := r.URL.Query()
		qq.Set("page", strconv.Itoa(p))
		u.RawQuery = qq.Encode()
		links = append(links, fmt.Sprintf("<%s>; rel=%q", u.String(), rel))
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if page > 1 {
		link(1, "first")
		link(page-1, "prev")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	return page, start, end
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}
