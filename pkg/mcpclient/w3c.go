package mcpclient

import (
	"fmt"
	"regexp"
	"strings"
)

// W3C Trace Context (traceparent, tracestate) and W3C Baggage syntax: the
// conformance layer judges a server's propagation with it (OTEL-2), and
// ParseParent the context the harness is started in.

var w3cTraceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

// TraceparentProblem says what is wrong with a traceparent value ("" if fine).
func TraceparentProblem(v string) string {
	m := w3cTraceparentRE.FindStringSubmatch(v)
	if m == nil {
		return "is not version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)"
	}
	switch {
	case m[1] == "ff":
		return "has the invalid version ff"
	case m[2] == strings.Repeat("0", 32):
		return "has an all-zero trace-id"
	case m[3] == strings.Repeat("0", 16):
		return "has an all-zero parent-id"
	}
	return ""
}

// stateKey is a tracestate key: [a-z0-9] then up to 255 of [_0-9a-z*/-],
// or a multi-tenant key, [a-z0-9] and up to 240 of them, '@', [a-z] and up
// to 13 more. (Loops, not regexps: bounded repetitions of 255 compile to
// programs of as many copies, milliseconds at every start of mcp-eval.)
func stateKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return stateKeyPart(k, 256, false)
	}
	return stateKeyPart(tenant, 241, false) && stateKeyPart(system, 14, true)
}

func stateKeyPart(s string, most int, alphaFirst bool) bool {
	if s == "" || len(s) > most {
		return false
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || !alphaFirst && c >= '0' && c <= '9') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/') {
			return false
		}
	}
	return true
}

// stateValue is a tracestate value: 1 to 256 printable ASCII characters
// but ',' and '=', the last not a space.
func stateValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// TracestateProblem says what is wrong with a tracestate value ("" if fine):
// comma-separated key=value list-members, at most 32, keys unique.
func TracestateProblem(v string) string {
	seen := map[string]bool{}
	n := 0
	for _, member := range strings.Split(v, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			continue // empty list-members are allowed
		}
		n++
		key, value, ok := strings.Cut(member, "=")
		if !ok {
			return fmt.Sprintf("member %q has no '='", w3cClip(member, 40))
		}
		if !stateKey(key) {
			return fmt.Sprintf("member key %q is not a valid tracestate key", w3cClip(key, 40))
		}
		if !stateValue(value) {
			return fmt.Sprintf("member value %q is not a valid tracestate value", w3cClip(value, 40))
		}
		if seen[key] {
			return fmt.Sprintf("key %q appears twice", w3cClip(key, 40))
		}
		seen[key] = true
	}
	if n > 32 {
		return fmt.Sprintf("has %d list-members, at most 32 are allowed", n)
	}
	return ""
}

// w3cToken is an RFC 7230 token (a baggage key).
var w3cToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// baggageValue are the characters a baggage value may hold unescaped
// (W3C Baggage: baggage-octet), besides percent-encoding.
func baggageValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '%':
			if i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2]) {
				return false
			}
			i += 2
		case c == 0x21, c >= 0x23 && c <= 0x2b, c >= 0x2d && c <= 0x3a, c >= 0x3c && c <= 0x5b, c >= 0x5d && c <= 0x7e:
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// BaggageProblem says what is wrong with a baggage value ("" if fine):
// comma-separated key=value members with optional ;properties.
func BaggageProblem(v string) string {
	if strings.TrimSpace(v) == "" {
		return "is empty"
	}
	for _, member := range strings.Split(v, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			return "has an empty list-member"
		}
		kv, props, _ := strings.Cut(member, ";")
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.Trim(key, " \t"), strings.Trim(value, " \t")
		if !ok || !w3cToken.MatchString(key) {
			return fmt.Sprintf("member %q has no valid key=value", w3cClip(member, 40))
		}
		if !baggageValue(value) {
			return fmt.Sprintf("member %q has a value with characters that must be percent-encoded", w3cClip(key, 40))
		}
		for _, prop := range strings.Split(props, ";") {
			prop = strings.Trim(prop, " \t")
			if prop == "" {
				continue
			}
			pk, pv, hasValue := strings.Cut(prop, "=")
			if !w3cToken.MatchString(strings.Trim(pk, " \t")) || (hasValue && !baggageValue(strings.Trim(pv, " \t"))) {
				return fmt.Sprintf("member %q has an invalid property %q", w3cClip(key, 40), w3cClip(prop, 40))
			}
		}
	}
	return ""
}

func w3cClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Bounds of inherited context: W3C Trace Context asks propagators to keep
// at least 512 characters of tracestate, W3C Baggage at least 8192 bytes
// of baggage; more is refused rather than passed to every request.
const (
	MaxTraceState = 512
	MaxBaggage    = 8192
)

// ParseParent reads the context the harness was started in (the values
// of TRACEPARENT, TRACESTATE and BAGGAGE). An invalid traceparent gives
// no Parent; an invalid or oversized tracestate or baggage is left out.
// Each value left out is a warning, naming the variable and what is wrong
// (never the value: baggage may hold anything). No traceparent means no
// Parent and no warning: tracestate and baggage only travel with one.
func ParseParent(traceparent, tracestate, baggage string) (p *Parent, warnings []string) {
	traceparent = strings.TrimSpace(traceparent)
	if traceparent == "" {
		if tracestate != "" || baggage != "" {
			warnings = append(warnings, "TRACESTATE or BAGGAGE is set without TRACEPARENT: they were ignored")
		}
		return nil, warnings
	}
	if why := TraceparentProblem(traceparent); why != "" {
		w := "TRACEPARENT " + why + ": it was ignored, and the run makes traces of its own"
		if tracestate != "" || baggage != "" {
			w += " (TRACESTATE and BAGGAGE belong to it, so they were ignored too)"
		}
		return nil, append(warnings, w)
	}
	m := w3cTraceparentRE.FindStringSubmatch(traceparent)
	p = &Parent{TraceID: m[2], SpanID: m[3]}
	if tracestate = strings.TrimSpace(tracestate); tracestate != "" {
		switch why := TracestateProblem(tracestate); {
		case len(tracestate) > MaxTraceState:
			warnings = append(warnings, fmt.Sprintf("TRACESTATE is %d characters, over the %d propagated: it was ignored", len(tracestate), MaxTraceState))
		case why != "":
			// The reason names the member; the environment's values are
			// never printed (baggage in particular may carry user data).
			warnings = append(warnings, "TRACESTATE is not W3C tracestate syntax (comma-separated key=value members; https://www.w3.org/TR/trace-context/#tracestate-header): it was ignored")
		default:
			p.TraceState = tracestate
		}
	}
	if baggage = strings.TrimSpace(baggage); baggage != "" {
		switch why := BaggageProblem(baggage); {
		case len(baggage) > MaxBaggage:
			warnings = append(warnings, fmt.Sprintf("BAGGAGE is %d bytes, over the %d propagated: it was ignored", len(baggage), MaxBaggage))
		case why != "":
			warnings = append(warnings, "BAGGAGE is not W3C baggage syntax (comma-separated key=value members, values percent-encoded; https://www.w3.org/TR/baggage/): it was ignored")
		default:
			p.Baggage = baggage
		}
	}
	return p, warnings
}
