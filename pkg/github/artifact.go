package github

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	gogithub "github.com/google/go-github/v60/github"
)

// ReportFile is the one entry read from the artifact zip, at its root.
const ReportFile = "report.json"

// downloadReport fetches an artifact's zip and returns its report.json.
func (c *Client) downloadReport(ctx context.Context, owner, repo string, art *gogithub.Artifact) ([]byte, error) {
	op := fmt.Sprintf("download artifact %q (%d)", art.GetName(), art.GetID())
	max := c.limits.MaxZipBytes
	if art.GetSizeInBytes() > max {
		return nil, &Error{Op: op, Kind: ErrTooLarge,
			Detail: fmt.Sprintf("%d bytes, the limit is %d", art.GetSizeInBytes(), max),
			Hint:   "upload only report.json in this artifact (put traces and HTML in another one)"}
	}
	loc, err := c.artifactLocation(ctx, owner, repo, art.GetID(), op)
	if err != nil {
		return nil, err
	}
	zipBytes, err := c.fetchBlob(ctx, loc, op)
	if err != nil {
		return nil, err
	}
	report, err := extractReport(zipBytes, c.limits)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Op = op
		}
		return nil, err
	}
	return report, nil
}

// artifactLocation asks the API for the artifact and returns the 302
// Location: a pre-signed URL valid for about a minute.
func (c *Client) artifactLocation(ctx context.Context, owner, repo string, id int64, op string) (string, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	// maxRedirects 0: go-github v60 only follows 301, and we want the 302
	// target for ourselves so the token is not sent along.
	loc, resp, err := c.gh.Actions.DownloadArtifact(ctx, owner, repo, id, 0)
	if err == nil {
		if loc.Scheme != "https" && loc.Scheme != "http" {
			return "", &Error{Op: op, Kind: ErrAPI, Detail: "the download redirect is not an http(s) URL"}
		}
		return loc.String(), nil
	}
	// DownloadArtifact reports a non-302 answer as a plain error with the
	// response attached, not as *ErrorResponse.
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	switch status {
	case http.StatusGone:
		return "", &Error{Op: op, Kind: ErrArtifactExpired, Status: status, Detail: "GitHub answered 410 Gone: the artifact's content was deleted"}
	case http.StatusNotFound:
		return "", &Error{Op: op, Kind: ErrNoArtifact, Status: status, Detail: "GitHub answered 404",
			Hint: "the artifact was deleted, or the job lacks `permissions: actions: read`"}
	}
	return "", c.apiError(op, resp, err)
}

// fetchBlob downloads the zip with the plain client: no Authorization header.
func (c *Client) fetchBlob(ctx context.Context, loc, op string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.downloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrAPI, Detail: "bad download URL", Err: err}
	}
	resp, err := c.download.Do(req)
	if err != nil {
		// url.Error holds the pre-signed URL; it is short-lived, but keep the
		// message short and free of query strings anyway.
		detail := "download failed"
		if errors.Is(err, context.DeadlineExceeded) {
			detail = fmt.Sprintf("download took longer than %s", c.downloadTimeout)
		}
		return nil, &Error{Op: op, Kind: ErrAPI, Detail: detail, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Op: op, Kind: ErrAPI, Status: resp.StatusCode,
			Detail: fmt.Sprintf("the artifact storage answered HTTP %d", resp.StatusCode),
			Hint:   "the pre-signed URL lives about a minute; re-run the job"}
	}
	max := c.limits.MaxZipBytes
	if resp.ContentLength > max {
		return nil, &Error{Op: op, Kind: ErrTooLarge, Detail: fmt.Sprintf("the zip is %d bytes, the limit is %d", resp.ContentLength, max)}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrAPI, Detail: "reading the download failed", Err: err}
	}
	if int64(len(b)) > max {
		return nil, &Error{Op: op, Kind: ErrTooLarge, Detail: fmt.Sprintf("the zip is over %d bytes", max)}
	}
	return b, nil
}

// extractReport reads report.json from a zip held in memory. Nothing is
// written to disk. The archive is rejected, not repaired, when it has too many
// entries, an entry that declares more than the limit, an unsafe name (".."
// segments, absolute paths, backslashes, drive letters), a duplicate
// report.json, or a report.json that is not a regular file or inflates past
// the limit whatever its header claims.
func extractReport(zipBytes []byte, l Limits) ([]byte, error) {
	l = l.withDefaults()
	corrupt := func(detail string, err error) error {
		return &Error{Op: "read the artifact zip", Kind: ErrCorruptArtifact, Detail: detail, Err: err,
			Hint: "the baseline is ignored; the next green run that uploads report.json with actions/upload-artifact (path: the file itself) replaces it"}
	}
	zr, err := zip.NewReader(bytes.NewReader(zipBytes), int64(len(zipBytes)))
	if err != nil {
		return nil, corrupt("not a zip archive", err)
	}
	if len(zr.File) > l.MaxEntries {
		return nil, &Error{Op: "read the artifact zip", Kind: ErrTooLarge, Detail: fmt.Sprintf("%d entries, the limit is %d", len(zr.File), l.MaxEntries)}
	}
	var report *zip.File
	for _, f := range zr.File {
		if !safeName(f.Name) {
			return nil, corrupt(fmt.Sprintf("unsafe entry name %q", f.Name), nil)
		}
		if f.UncompressedSize64 > uint64(l.MaxEntryBytes) {
			return nil, &Error{Op: "read the artifact zip", Kind: ErrTooLarge,
				Detail: fmt.Sprintf("entry %q declares %d bytes, the limit is %d", f.Name, f.UncompressedSize64, l.MaxEntryBytes)}
		}
		if f.Name != ReportFile {
			continue
		}
		if report != nil {
			return nil, corrupt("two entries named "+ReportFile, nil)
		}
		report = f
	}
	if report == nil {
		return nil, corrupt("no "+ReportFile+" at the zip root", nil)
	}
	if !report.Mode().IsRegular() {
		return nil, corrupt(ReportFile+" is not a regular file", nil)
	}
	rc, err := report.Open()
	if err != nil {
		return nil, corrupt("cannot open "+ReportFile, err)
	}
	defer rc.Close()
	// The header's size may lie: bound what inflation may produce.
	b, err := io.ReadAll(io.LimitReader(rc, l.MaxReportBytes+1))
	if int64(len(b)) > l.MaxReportBytes {
		return nil, &Error{Op: "read the artifact zip", Kind: ErrTooLarge, Detail: fmt.Sprintf("%s inflates past %d bytes", ReportFile, l.MaxReportBytes)}
	}
	if err != nil {
		return nil, corrupt(ReportFile+" does not decompress", err)
	}
	return b, nil
}

func safeName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") {
		return false
	}
	if len(name) >= 2 && name[1] == ':' { // C:evil
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return false
		}
	}
	return true
}

// MaxShardArtifacts bounds how many shard reports FetchRunReports
// downloads: pipeline.MaxShards.
const MaxShardArtifacts = 256

// ArtifactReport is report.json of one artifact.
type ArtifactReport struct {
	Name   string
	ID     int64
	Report []byte
}

// FetchRunReports downloads report.json from every artifact of run runID
// whose name starts with prefix: the shards of a sharded run, for the
// merge job of the same run (artifacts of upload-artifact v4 are listed
// as soon as they are uploaded). Expired artifacts are an error, as is
// finding none.
func (c *Client) FetchRunReports(ctx context.Context, owner, repo string, runID int64, prefix string) ([]ArtifactReport, error) {
	op := fmt.Sprintf("list artifacts of run %d", runID)
	opts := &gogithub.ListOptions{PerPage: artifactsPerPage}
	var arts []*gogithub.Artifact
	for page := 0; page < maxArtifactPages; page++ {
		list, resp, err := func() (*gogithub.ArtifactList, *gogithub.Response, error) {
			ctx, cancel := c.call(ctx)
			defer cancel()
			return c.gh.Actions.ListWorkflowRunArtifacts(ctx, owner, repo, runID, opts)
		}()
		if err != nil {
			return nil, c.apiError(op, resp, err).withHint404("give the job `permissions: actions: read`")
		}
		for _, a := range list.Artifacts {
			if !strings.HasPrefix(a.GetName(), prefix) {
				continue
			}
			if a.GetExpired() {
				return nil, &Error{Op: op, Kind: ErrArtifactExpired, Detail: fmt.Sprintf("artifact %q has expired", a.GetName())}
			}
			if len(arts) == MaxShardArtifacts {
				return nil, &Error{Op: op, Kind: ErrTooLarge, Detail: fmt.Sprintf("more than %d artifacts named %s*", MaxShardArtifacts, prefix)}
			}
			arts = append(arts, a)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(arts) == 0 {
		return nil, &Error{Op: op, Kind: ErrNoArtifact, Detail: fmt.Sprintf("no artifact named %s* in this run", prefix),
			Hint: "upload each shard's report.json as an artifact named " + prefix + "<i> (actions/upload-artifact@v4), and make the merge job need the shard jobs"}
	}
	var out []ArtifactReport
	for _, a := range arts {
		b, err := c.downloadReport(ctx, owner, repo, a)
		if err != nil {
			return nil, err
		}
		out = append(out, ArtifactReport{Name: a.GetName(), ID: a.GetID(), Report: b})
	}
	return out, nil
}
