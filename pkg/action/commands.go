package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
)

// EscapeCommandData escapes the message of a workflow command (the text after
// the second "::") so the runner shows it verbatim: "%", CR and LF are
// percent-encoded as in actions/toolkit's escapeData, which keeps the whole
// message on its line and so unable to start a command of its own. A leading
// "::" (after blanks) is encoded too, for text printed on its own line: the
// runner trims a line before looking for "::".
func EscapeCommandData(s string) string {
	s = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
	return escapeLeadingColons(s)
}

// EscapeCommandProperty escapes a property value (file=…, title=…): the data
// escapes plus ":" and ",", which would end the value or the property list.
func EscapeCommandProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func escapeLeadingColons(s string) string {
	trimmed := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(trimmed, "::") {
		return s
	}
	return s[:len(s)-len(trimmed)] + "%3A%3A" + trimmed[2:]
}

// WriteCommand writes one workflow command line: ::name k=v,k=v::message.
// Property keys are sorted so output is deterministic; empty values are
// left out. name and keys are ours and must be plain words.
func WriteCommand(w io.Writer, name string, props map[string]string, message string) error {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(name)
	keys := make([]string, 0, len(props))
	for k, v := range props {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(EscapeCommandProperty(props[k]))
	}
	b.WriteString("::")
	b.WriteString(EscapeCommandData(message))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// EchoUntrusted writes text from the server under test or a model to the log
// inside a stop-commands block: between "::stop-commands::TOKEN" and
// "::TOKEN::" the runner runs no workflow command, so the text cannot add a
// mask, set an output, or fake an annotation. TOKEN is random per call and
// never in text (checked), so the text cannot end the block early.
func EchoUntrusted(w io.Writer, text string) error {
	var token string
	for {
		t, err := randomToken()
		if err != nil {
			return err
		}
		if !strings.Contains(text, t) {
			token = t
			break
		}
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := fmt.Fprintf(w, "::stop-commands::%s\n%s::%s::\n", token, text, token)
	return err
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return "mcp-eval-" + hex.EncodeToString(b), nil
}
