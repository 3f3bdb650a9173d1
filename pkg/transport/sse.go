package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// Event is one server-sent event.
type Event struct {
	Name string `json:"event,omitempty"`
	ID   string `json:"id,omitempty"`
	Data string `json:"data"`
}

// errLineTooLong and errEventTooLarge are turned into KindTooLarge by callers.
var (
	errLineTooLong   = errors.New("line longer than the limit")
	errEventTooLarge = errors.New("event larger than the limit")
)

// sseReader parses text/event-stream as the HTML Living Standard defines it
// (§9.2.6): lines end in LF, CR LF or CR; ":" starts a comment; "data" lines
// are joined with LF; a blank line dispatches the event. Every line and event
// is bounded, because the stream comes from the server under test.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	comments int
	pendCR   bool // the last line ended in CR; a following LF belongs to it
	read     int64
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent}
}

// readLine returns one line without its terminator.
func (s *sseReader) readLine() (string, error) {
	var buf bytes.Buffer
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && buf.Len() > 0 {
				return buf.String(), nil
			}
			return "", err
		}
		s.read++
		if s.pendCR {
			s.pendCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return buf.String(), nil
		case '\r':
			s.pendCR = true
			return buf.String(), nil
		}
		if buf.Len() >= s.maxEvent {
			return "", errLineTooLong
		}
		buf.WriteByte(b)
	}
}

// Next returns the next event. io.EOF means the stream ended cleanly between
// events; io.ErrUnexpectedEOF means it ended inside one.
func (s *sseReader) Next() (Event, error) {
	var ev Event
	var data strings.Builder
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && (hasData || ev.Name != "") {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		if line == "" {
			if !hasData {
				ev = Event{} // an event without data is not dispatched
				continue
			}
			ev.Data = data.String()
			return ev, nil
		}
		if line[0] == ':' {
			s.comments++
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			hasData = true
			if data.Len()+len(value) > s.maxEvent {
				return ev, errEventTooLarge
			}
			data.WriteString(value)
		case "event":
			ev.Name = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID = value
			}
		}
		// "retry" and unknown fields are ignored, as the standard says.
	}
}
