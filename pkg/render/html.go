package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// HTMLOptions shape the HTML report. The zero value is the default.
type HTMLOptions struct {
	// MaxFailing bounds how many failing case × model pairs are shown with
	// their trajectories (default DefaultHTMLMaxFailing); a note counts
	// the rest.
	MaxFailing int
	// MaxRunsPerCase bounds the failed runs shown per pair (default 3).
	MaxRunsPerCase int
}

// DefaultHTMLMaxFailing keeps a report of a badly broken run readable and
// its file a few MB at most.
const DefaultHTMLMaxFailing = 100

// HTML writes a report as one self-contained HTML page: the case × model
// matrix as a heat map, the per-model columns, the latency distributions,
// and the failing cases with their trajectories. It loads nothing: no
// script, no font, no stylesheet or image from anywhere, and its
// Content-Security-Policy forbids any, so it reads the same offline, from
// a CI artifact, as anywhere. Every string from the report goes through
// html/template's contextual escaping, and control and bidirectional
// characters are replaced first (see cleanText): the report is untrusted.
func HTML(w io.Writer, rep *report.Report, opts HTMLOptions) error {
	if opts.MaxFailing <= 0 {
		opts.MaxFailing = DefaultHTMLMaxFailing
	}
	if opts.MaxRunsPerCase <= 0 {
		opts.MaxRunsPerCase = 3
	}
	t, err := template.New("report").Funcs(template.FuncMap{"css": func() template.CSS { return template.CSS(htmlCSS) }}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("render: the HTML template: %w", err)
	}
	// Render to memory first: a template error half way must not leave a
	// truncated page that looks complete.
	var buf bytes.Buffer
	if err := t.Execute(&buf, buildHTMLView(rep, opts)); err != nil {
		return fmt.Errorf("render: HTML: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

//go:embed html.tmpl
var htmlTemplate string

// htmlCSS is our own stylesheet, inlined as trusted CSS: it is a constant
// of this package, never report data.
//
//go:embed html.css
var htmlCSS string

// cleanText prepares untrusted text for the page: control characters,
// bidirectional overrides and Unicode tags become U+FFFD (they could make
// text read differently from what it is), newlines are kept only where
// the text is shown preformatted, and the text is clipped to max runes.
// html/template escapes what remains.
func cleanText(s string, max int, keepNewlines bool) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' && keepNewlines:
			return r
		case r == '\n' || r == '\r':
			if keepNewlines {
				return -1
			}
			return '⏎'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '\uFFFD'
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f:
			return '\uFFFD'
		case r >= 0xe0000 && r <= 0xe007f:
			return '\uFFFD'
		}
		return r
	}, s)
	return clip(s, max)
}

// Bounds of one untrusted value on the page.
const (
	htmlMaxLine = 300  // a name, an id, a one-line message
	htmlMaxText = 4000 // a model's text, a tool result, arguments
)

func line(s string) string { return cleanText(s, htmlMaxLine, false) }

func block(s string) string { return cleanText(s, htmlMaxText, true) }
