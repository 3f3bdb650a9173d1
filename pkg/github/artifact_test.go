package github

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

func TestExtractReport(t *testing.T) {
	zeros := bytes.Repeat([]byte{0}, 3<<20) // 3 MiB that deflate to a few KiB
	tests := []struct {
		name   string
		zip    []byte
		limits Limits
		want   error // nil: success
	}{
		{name: "report at the root", zip: fakegithub.Zip(map[string][]byte{"report.json": []byte(`{}`), "report.html": []byte("<p>")})},
		{name: "not a zip", zip: []byte("hello"), want: ErrCorruptArtifact},
		{name: "empty", zip: nil, want: ErrCorruptArtifact},
		{name: "missing", zip: fakegithub.Zip(map[string][]byte{"other.json": []byte(`{}`)}), want: ErrCorruptArtifact},
		{name: "parent segment", zip: fakegithub.Zip(map[string][]byte{"../report.json": []byte(`{}`), "report.json": []byte(`{}`)}), want: ErrCorruptArtifact},
		{name: "absolute", zip: fakegithub.Zip(map[string][]byte{"/etc/report.json": []byte(`{}`), "report.json": []byte(`{}`)}), want: ErrCorruptArtifact},
		{name: "backslash", zip: fakegithub.Zip(map[string][]byte{`..\report.json`: []byte(`{}`), "report.json": []byte(`{}`)}), want: ErrCorruptArtifact},
		{name: "drive letter", zip: fakegithub.Zip(map[string][]byte{`C:report.json`: []byte(`{}`), "report.json": []byte(`{}`)}), want: ErrCorruptArtifact},
		{name: "duplicate", zip: rawZip(t, []rawEntry{{name: "report.json", data: []byte("{}")}, {name: "report.json", data: []byte("[]")}}), want: ErrCorruptArtifact},
		{name: "bomb by declared size", zip: fakegithub.Zip(map[string][]byte{"report.json": zeros}), limits: Limits{MaxReportBytes: 1 << 20}, want: ErrTooLarge},
		{name: "bomb in another entry", zip: fakegithub.Zip(map[string][]byte{"report.json": []byte("{}"), "trace.bin": zeros}), limits: Limits{MaxReportBytes: 1 << 20}, want: ErrTooLarge},
		{name: "report over its limit", zip: fakegithub.ReportZip(strings.Repeat("x", 2000)), limits: Limits{MaxReportBytes: 1000}, want: ErrTooLarge},
		{name: "too many entries", zip: manyEntries(20), limits: Limits{MaxEntries: 10}, want: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := extractReport(tt.zip, tt.limits)
			if tt.want == nil {
				if err != nil || string(got) != "{}" {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want kind %v", err, tt.want)
			}
		})
	}
}

// A header that lies about the size must not let inflation run unbounded.
func TestExtractReportLyingHeader(t *testing.T) {
	big := bytes.Repeat([]byte{'a'}, 3<<20)
	z := rawZip(t, []rawEntry{{name: "report.json", data: big, declare: 10}})
	_, err := extractReport(z, Limits{MaxReportBytes: 1 << 20})
	if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorruptArtifact) {
		t.Fatalf("err = %v, want too large or corrupt", err)
	}
}

type rawEntry struct {
	name    string
	data    []byte
	declare uint64 // declared uncompressed size; 0: the real one
}

// rawZip writes entries with hand-made headers, which zip.Writer.Create
// would not allow (duplicates, lying sizes).
func rawZip(t *testing.T, entries []rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.BestCompression)
		_, _ = fw.Write(e.data)
		_ = fw.Close()
		size := e.declare
		if size == 0 {
			size = uint64(len(e.data))
		}
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name: e.name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(e.data),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: size,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(comp.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func manyEntries(n int) []byte {
	files := map[string][]byte{"report.json": []byte("{}")}
	for i := range n {
		files[string(rune('a'+i))+".txt"] = nil
	}
	return fakegithub.Zip(files)
}
