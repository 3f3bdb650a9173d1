package golden

import (
	"sort"
	"strings"
)

// Error is one problem in a golden file: where, what, and how to fix it.
// Error() reads "tasks.yaml:12:5: unknown key "expect_tools" in case
// "weather-1" (did you mean expect_tool?)".
type Error struct {
	Pos  Position
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	s := e.Pos.String() + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Errors are all the problems found in a set, in file order; Load returns
// them together so a user fixes a file in one pass.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// maxErrors bounds what one load reports: past it the file is probably
// not a golden set at all.
const maxErrors = 50

// errorSink collects errors up to maxErrors.
type errorSink struct {
	list Errors
	full bool
}

func (s *errorSink) add(pos Position, msg, hint string) {
	if len(s.list) >= maxErrors {
		s.full = true
		return
	}
	s.list = append(s.list, &Error{Pos: pos, Msg: msg, Hint: hint})
}

// err returns the sorted list, or nil.
func (s *errorSink) err() error {
	if len(s.list) == 0 {
		return nil
	}
	sort.SliceStable(s.list, func(i, j int) bool {
		a, b := s.list[i].Pos, s.list[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if s.full {
		last := s.list[len(s.list)-1].Pos
		s.list = append(s.list, &Error{Pos: Position{File: last.File}, Msg: "too many errors, stopped"})
	}
	return s.list
}
