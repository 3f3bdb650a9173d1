package didyoumean

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	tools := []string{"get_weather", "send_email", "search_invoices"}
	for _, tc := range []struct {
		got   string
		known []string
		want  string
	}{
		{"send_emial", tools, "send_email"}, // a transposition is two edits
		{"send_mail", tools, "send_email"},
		{"SEND_EMAIL", tools, "send_email"},
		{"Send_Mail", []string{"Send_Email"}, "Send_Email"},
		{"delete_everything", tools, ""},
		{"ab", []string{"xy"}, ""}, // two edits rewrite all of a short name
		{"", tools, ""},
		{"http_501", []string{"http_500", "http_502"}, "http_500"}, // the first of equals
	} {
		got, ok := Nearest(tc.got, tc.known)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Nearest(%q) = %q %v, want %q", tc.got, got, ok, tc.want)
		}
	}
}

// A name far longer than the one asked about is never compared: a server
// listing huge names must not make a suggestion quadratic in their size.
func TestNearestSkipsFarLongerNames(t *testing.T) {
	huge := strings.Repeat("é", 1<<20)
	if got, ok := Nearest("send_emial", []string{huge, "send_email"}); !ok || got != "send_email" {
		t.Fatalf("Nearest = %q %v", got, ok)
	}
	if n := testing.AllocsPerRun(10, func() { Nearest("send_emial", []string{huge}) }); n > 2 {
		t.Errorf("Nearest allocated %v times for one name out of reach", n)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"émail", "email", 1}} {
		if d := Distance(tc.a, tc.b); d != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.want)
		}
	}
}
