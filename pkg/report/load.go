package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxBytes is the largest report Parse and Load accept. A real report of
// every layer is a few MiB at most; a larger file is a mistake or an
// attack, and decoding it would cost memory before any check ran.
const MaxBytes = 32 << 20

// Errors a caller can tell apart with errors.Is; each comes wrapped with
// what was read and how to fix it.
var (
	ErrTooLarge = errors.New("report is too large")
	ErrNotJSON  = errors.New("report is not valid JSON")
	ErrVersion  = errors.New("report schema version is not supported")
	ErrSchema   = errors.New("report does not match report.schema.json")
	ErrInvalid  = errors.New("report is inconsistent")
)

// Parse reads a report from untrusted bytes: size, JSON syntax, schema
// version, schema and cross-references are all checked before a Report is
// returned.
func Parse(data []byte) (*Report, error) {
	if err := checkBytes(data); err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := json.Unmarshal(data, rep); err != nil {
		// The schema passed, so this is a value Go cannot hold (an
		// integer beyond int64, say).
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	rep.Normalize()
	if err := rep.Validate(); err != nil {
		return nil, err
	}
	return rep, nil
}

// checkBytes is what Parse checks of the bytes themselves: size, one JSON
// value and nothing after it, the schema version and report.schema.json.
func checkBytes(data []byte) error {
	if len(data) > MaxBytes {
		return fmt.Errorf("%w: %s is more than the %s a report may have", ErrTooLarge, size(int64(len(data))), size(MaxBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // the schema validator wants json.Number
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%w: %v", ErrNotJSON, jsonErr(err, data))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the report at byte %d", ErrNotJSON, dec.InputOffset())
	}
	if err := checkVersion(doc); err != nil {
		return err
	}
	return validateSchema(doc)
}

// checkVersion looks at schemaVersion before the schema does, so a report
// from another mcp-eval gets one clear sentence instead of a list of
// schema violations.
func checkVersion(doc any) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: the top level is a %s, not an object; is this an mcp-eval report.json?", ErrSchema, jsonType(doc))
	}
	raw, ok := obj["schemaVersion"]
	if !ok {
		if _, ok := obj["checks"]; ok {
			return fmt.Errorf("%w: no schemaVersion: this looks like a bare Layer 0 result (`mcp-eval check --json`), not a report.json; use the report.json that `mcp-eval run` writes", ErrVersion)
		}
		return fmt.Errorf("%w: no schemaVersion; is this an mcp-eval report.json?", ErrVersion)
	}
	if n, ok := raw.(json.Number); !ok || n.String() != fmt.Sprint(SchemaVersion) {
		return fmt.Errorf("%w: schemaVersion %v, this mcp-eval reads version %d only (use the mcp-eval release that wrote it, or re-create the report)", ErrVersion, raw, SchemaVersion)
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "object"
}

// jsonErr adds the line and column to a syntax error.
func jsonErr(err error, data []byte) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the file is empty or cut short")
	}
	return err
}

// lineCol is the 1-based position of the byte a SyntaxError stopped at:
// its Offset counts the bytes read, the bad one included.
func lineCol(data []byte, off int64) (int, int) {
	pos := min(max(off-1, 0), int64(len(data)))
	before := data[:pos]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(pos) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Load reads and checks the report at path (see Parse). Errors start with
// the path.
func Load(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError names the path already
	}
	defer f.Close()
	// Read one byte past the limit to tell "exactly at" from "beyond"
	// without trusting the size the file system reports (a pipe has none).
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxBytes {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w: %s is more than the %s a report may have", path, ErrTooLarge, size(fi.Size()), size(MaxBytes))
		}
		return nil, fmt.Errorf("%s: %w: more than the %s a report may have", path, ErrTooLarge, size(MaxBytes))
	}
	rep, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// Encode writes rep as indented JSON, after Normalize.
func Encode(w io.Writer, rep *Report) error {
	rep.Normalize()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Server text may hold <, > and &; escaping them as \u003c only makes
	// the file harder to read, and no consumer embeds it in HTML raw.
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// Marshal returns rep as it would be saved, checked against the schema: a
// producer bug shows up here rather than in the next run's baseline. The
// exact bytes returned are what the schema judges; the cross-references
// are checked on rep itself (Encode normalized it, as Parse would after
// decoding), so the bytes are not decoded into a Report a second time.
func Marshal(rep *Report) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, rep); err != nil {
		return nil, err
	}
	if err := rep.Validate(); err != nil {
		return nil, err
	}
	if err := checkBytes(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("report: refusing to write an invalid report (a bug in mcp-eval): %w", err)
	}
	return buf.Bytes(), nil
}
