package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// FuzzSSEReader runs the event-stream parser over arbitrary bytes, whole and
// one byte at a time. It must never panic, must end, must keep every line
// and event within its bound, and must not depend on how the network split
// the stream.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		": keep-alive\n: keep-alive\n\n",
		"event: message\r\nid: 7\r\ndata: a\r\ndata: b\r\n\r\n",
		"data: x\r\rdata: y\n\n",
		"data:no-space\n\nretry: 10\nunknown: field\n\n",
		"id: a\x00b\ndata: z\n\n",
		"data: " + strings.Repeat("x", 100) + "\n\n",
		"data: cut inside an event",
		"event: only-a-name\n",
		"\xff\xfe data: \xc3\x28\n\n",
	} {
		f.Add([]byte(s), uint8(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		max := int(limit) + 1
		whole := drainSSE(t, bytes.NewReader(data), max)
		split := drainSSE(t, iotest.OneByteReader(bytes.NewReader(data)), max)
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("events depend on read sizes:\nwhole %+v\nsplit %+v", whole, split)
		}
	})
}

type sseResult struct {
	Events   []Event
	Err      string
	Comments int
}

func drainSSE(t *testing.T, r io.Reader, max int) sseResult {
	sr := newSSEReader(r, max)
	var out sseResult
	// Every event consumes at least one byte, so more events than bytes
	// plus one means the reader is stuck.
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("the SSE reader does not end")
		}
		ev, err := sr.Next()
		if err != nil {
			switch {
			case err == io.EOF, err == io.ErrUnexpectedEOF, errors.Is(err, errLineTooLong), errors.Is(err, errEventTooLarge):
			default:
				t.Fatalf("unexpected error %v", err)
			}
			out.Err = err.Error()
			out.Comments = sr.comments
			return out
		}
		if len(ev.Data) > max {
			t.Fatalf("event of %d bytes passed the %d-byte bound", len(ev.Data), max)
		}
		if strings.ContainsRune(ev.ID, 0) {
			t.Fatalf("event id with NUL kept: %q", ev.ID)
		}
		out.Events = append(out.Events, ev)
	}
}

// FuzzStdioLines runs the stdio reader path, readBoundedLine into
// handleLine, over arbitrary stdout bytes with one request in flight. It
// must never panic, keep every line within the bound, frame lines the same
// whatever the read sizes, and answer the pending request at most once.
func FuzzStdioLines(f *testing.F) {
	for _, s := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
		"Server started\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\"}\r\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\"}}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n",
		"\n\n\r\n",
		strings.Repeat("a", 200) + "\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"id\":1}\n",
		"\xff\xfe\n",
	} {
		f.Add([]byte(s), uint8(100))
	}
	for _, s := range []string{
		// Keys of nested objects and arrays are apart from their parent's;
		// an escaped key is the same key as its plain spelling; past 16
		// keys an object's are kept as a set.
		`{"jsonrpc":"2.0","id":1,"result":{"a":{"b":1},"b":[{"a":1},{"a":2}],"c":{"d":{"d":1}}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"a":{"b":1,"b":2}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"a":1,"\u0061":2}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"k01":1,"k02":1,"k03":1,"k04":1,"k05":1,"k06":1,"k07":1,"k08":1,"k09":1,"k10":1,"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":{"k01":1},"k18":1,"k01":2}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"k01":1,"k02":1,"k03":1,"k04":1,"k05":1,"k06":1,"k07":1,"k08":1,"k09":1,"k10":1,"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":{"k01":1},"k18":1,"k18":2}}` + "\n",
	} {
		f.Add([]byte(s), uint8(255))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		max := int(limit) + 1
		whole := framedLines(t, bufio.NewReaderSize(bytes.NewReader(data), 16), max)
		split := framedLines(t, bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(data)), 16), max)
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("framing depends on read sizes:\nwhole %+v\nsplit %+v", whole, split)
		}
		if ref := refFramed(data, max); !reflect.DeepEqual(whole, ref) {
			t.Fatalf("framing differs from whole lines cut at %d bytes:\ngot  %+v\nwant %+v", max, whole, ref)
		}
		tr := &StdioTransport{pending: map[string]*pendingReq{}, abandoned: map[string]bool{"n:3": true}, taps: map[int]chan Inbound{}, cfg: StdioConfig{MaxMessageBytes: max}}
		p := &pendingReq{id: json.RawMessage("1"), method: "tools/list", progress: json.RawMessage(`"t"`), ch: make(chan *jsonrpc.Message, 1), ex: &Exchange{}}
		tr.pending["n:1"] = p
		tap := make(chan Inbound, 4)
		tr.taps[0] = tap
		for _, l := range whole {
			if l.tooLong {
				tr.handleTooLong(l.line)
				continue
			}
			tr.handleLine(l.line)
			// decode rejects duplicate keys with a scanner of its own;
			// it must agree with the standard library's tokenizer.
			if _, err := jsonrpc.Decode(l.line); err == nil {
				key, dup := duplicateKey(l.line)
				if want := refDuplicate(l.line); dup != want {
					t.Fatalf("duplicateKey(%q) = %q, %v; the tokenizer says %v", l.line, key, dup, want)
				}
			}
		}
		if len(tr.anomalies) > maxKept+1 || len(tr.unattributed) > maxKept || len(p.ex.Notifications) > maxKept {
			t.Fatalf("%d anomalies, %d unattributed and %d notifications kept, bound %d", len(tr.anomalies), len(tr.unattributed), len(p.ex.Notifications), maxKept)
		}
		for _, a := range tr.anomalies {
			if strings.ContainsAny(a.Excerpt, "\r\x1b") {
				t.Fatalf("control characters kept in an excerpt: %q", a.Excerpt)
			}
		}
	})
}

type framed struct {
	line    []byte
	tooLong bool
}

func framedLines(t *testing.T, r *bufio.Reader, max int) []framed {
	var out []framed
	for {
		line, tooLong, err := readBoundedLine(r, max)
		if len(line) > max {
			t.Fatalf("line of %d bytes passed the %d-byte bound", len(line), max)
		}
		if tooLong || len(line) > 0 || err == nil {
			out = append(out, framed{append([]byte(nil), line...), tooLong})
		}
		if err != nil {
			return out
		}
	}
}

// refFramed frames data the obvious way: each whole line, cut to max
// bytes (tooLong when it was longer), then stripped of its line ending.
func refFramed(data []byte, max int) []framed {
	var out []framed
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		full, err := r.ReadBytes('\n')
		kept, tooLong := full, len(full) > max
		if tooLong {
			kept = full[:max]
		}
		kept = bytes.TrimRight(kept, "\r\n")
		if tooLong || len(kept) > 0 || err == nil {
			out = append(out, framed{append([]byte(nil), kept...), tooLong})
		}
		if err != nil {
			return out
		}
	}
}

// refDuplicate finds a duplicate key with encoding/json's tokenizer: the
// slow, obviously right version of duplicateKey.
func refDuplicate(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
			if top != nil && top.obj {
				top.key = true
			}
		default:
			if top != nil && top.obj {
				top.key = true
			}
		}
	}
}
