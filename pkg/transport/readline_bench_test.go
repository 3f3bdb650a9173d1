package transport

import (
	"bufio"
	"bytes"
	"testing"
)

// BenchmarkReadBoundedLine reads a tools/list answer of a server with
// 1,000 tools (about 370 KB on one line) as the stdio reader does.
func BenchmarkReadBoundedLine(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for buf.Len() < 370<<10 {
		buf.WriteString(`{"name":"lookup_0001","description":"Look a record up by key and region.","inputSchema":{"type":"object","properties":{"key":{"type":"string"},"region":{"type":"string"}}}},`)
	}
	buf.WriteString("{}]}}\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
		line, tooLong, err := readBoundedLine(r, 4<<20)
		if err != nil || tooLong || len(line) != len(data)-1 {
			b.Fatalf("read %d bytes, tooLong %v, err %v", len(line), tooLong, err)
		}
	}
}
