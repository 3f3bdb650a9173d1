package migrate

import (
	"strconv"
	"strings"
	"testing"
)

// scanLines scans dir and names each finding "path:line rule".
func scanLines(t *testing.T, dir string) ([]Finding, []string) {
	t.Helper()
	got, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Path+":"+strconv.Itoa(f.Line)+" "+f.Rule)
	}
	return got, lines
}

func TestScanFindsWhat2026RemovesAndOnlyThat(t *testing.T) {
	got, lines := scanLines(t, "testdata/legacy-server")
	want := []string{
		"testdata/legacy-server/src/server.ts:2 MIG-initialize",
		"testdata/legacy-server/src/server.ts:3 MIG-initialized",
		"testdata/legacy-server/src/server.ts:4 MIG-session",
		"testdata/legacy-server/src/server.ts:5 MIG-32002",
		"testdata/legacy-server/src/server.ts:6 MIG-setLevel",
		"testdata/legacy-server/src/server.ts:7 MIG-subscribe",
		"testdata/legacy-server/src/server_test.py:2 MIG-ping",
		"testdata/legacy-server/src/server_test.py:3 MIG-32001",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if s := got[0].String(); !strings.HasPrefix(s, "testdata/legacy-server/src/server.ts:2: the initialize handshake is removed [MIG-initialize]; fix: ") {
		t.Errorf("finding format: %s", s)
	}
}

// SDKs name the removed methods rather than spell them: the TypeScript
// SDK 1.x registers handlers by request schema, the Python SDK by
// decorator. A params schema and a method of the same name elsewhere are
// not findings.
func TestScanFindsTheSDKsNamesOfRemovedMethods(t *testing.T) {
	_, lines := scanLines(t, "testdata/sdk-server")
	want := []string{
		"testdata/sdk-server/server.py:3 MIG-setLevel",
		"testdata/sdk-server/server.py:5 MIG-subscribe",
		"testdata/sdk-server/server.ts:2 MIG-setLevel", // the import names all three
		"testdata/sdk-server/server.ts:2 MIG-subscribe",
		"testdata/sdk-server/server.ts:2 MIG-unsubscribe",
		"testdata/sdk-server/server.ts:4 MIG-setLevel",
		"testdata/sdk-server/server.ts:5 MIG-subscribe",
		"testdata/sdk-server/server.ts:6 MIG-unsubscribe",
		"testdata/sdk-server/server.ts:7 MIG-roots-changed",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestScanRejectsAFile(t *testing.T) {
	if _, err := Scan("migrate.go"); err == nil {
		t.Fatal("scanning a file should fail with a clear error")
	}
}
