package action

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// maxSummaryBytes keeps under GitHub's 1 MiB per step ("upload aborted,
// supports content up to a size of 1024k"), with room for the note.
const maxSummaryBytes = 1000 * 1000

// appendFile appends to a runner file (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY).
// go-githubactions panics when such a file cannot be opened; a library
// should return the error instead, naming the variable.
func appendFile(envName, path, data string) error {
	if path == "" {
		return fmt.Errorf("%s is not set (not running in GitHub Actions?)", envName)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", envName, err)
	}
	_, werr := f.WriteString(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("%s: %w", envName, err)
	}
	return nil
}

// outputValue accepts only what may safely go into an output: one line,
// printable ASCII, at most 512 bytes. Untrusted text (server or model
// output) never gets here; this is the guard that makes sure of it. (A
// loop, not a regexp: `[\x20-\x7E]{0,512}` compiles to a program of 512
// copies, milliseconds at every start of mcp-eval.)
func outputValue(s string) bool {
	if len(s) > 512 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// formatOutputs renders name/value pairs for GITHUB_OUTPUT as heredocs with a
// random delimiter (go-githubactions uses a fixed one). Values are checked
// single-line first, so the delimiter is a second line of defence.
func formatOutputs(pairs [][2]string) (string, error) {
	delim, err := randomToken()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, kv := range pairs {
		if !outputValue(kv[1]) {
			return "", fmt.Errorf("output %q: value is not a single printable line", kv[0])
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", kv[0], delim, kv[1], delim)
	}
	return b.String(), nil
}

// capSummary keeps the job summary under GitHub's limit, cutting at a line
// end and saying so.
func capSummary(md string) string {
	if len(md) <= maxSummaryBytes {
		return md
	}
	const note = "\n\n> **Truncated**: the report is longer than a job summary allows (1 MiB). The report artifact has all of it.\n"
	cut := md[:maxSummaryBytes-len(note)]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + note
}
