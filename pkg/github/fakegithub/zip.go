package fakegithub

import (
	"archive/zip"
	"bytes"
	"sort"
)

// Zip builds an artifact zip from name → content, entries in name order.
func Zip(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			panic(err) // only bad names, a bug in the test
		}
		_, _ = w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// ReportZip is Zip with report.json only.
func ReportZip(report string) []byte {
	return Zip(map[string][]byte{"report.json": []byte(report)})
}
