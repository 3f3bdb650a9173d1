package conformance

import (
	"fmt"
	"regexp"
	"strings"
)

// W3C Trace Context (traceparent, tracestate) and W3C Baggage value
// validation for OTEL-2.

var otelTraceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

// otelTraceparent says what is wrong with a traceparent value ("" if fine).
func otelTraceparent(v string) string {
	m := otelTraceparentRE.FindStringSubmatch(v)
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

var (
	otelStateKeyRE   = regexp.MustCompile(`^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$`)
	otelStateValueRE = regexp.MustCompile(`^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$`)
)

// otelTracestate says what is wrong with a tracestate value ("" if fine):
// comma-separated key=value list-members, at most 32, keys unique.
func otelTracestate(v string) string {
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
			return fmt.Sprintf("member %q has no '='", otelClip(member, 40))
		}
		if !otelStateKeyRE.MatchString(key) {
			return fmt.Sprintf("member key %q is not a valid tracestate key", otelClip(key, 40))
		}
		if !otelStateValueRE.MatchString(value) {
			return fmt.Sprintf("member value %q is not a valid tracestate value", otelClip(value, 40))
		}
		if seen[key] {
			return fmt.Sprintf("key %q appears twice", otelClip(key, 40))
		}
		seen[key] = true
	}
	if n > 32 {
		return fmt.Sprintf("has %d list-members, at most 32 are allowed", n)
	}
	return ""
}

// otelToken is an RFC 7230 token (a baggage key).
var otelToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// otelBaggageOctets are the characters a baggage value may hold unescaped
// (W3C Baggage: baggage-octet), besides percent-encoding.
func otelBaggageValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '%':
			if i+2 >= len(v) || !otelIsHex(v[i+1]) || !otelIsHex(v[i+2]) {
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

func otelIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// otelBaggage says what is wrong with a baggage value ("" if fine):
// comma-separated key=value members with optional ;properties.
func otelBaggage(v string) string {
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
		if !ok || !otelToken.MatchString(key) {
			return fmt.Sprintf("member %q has no valid key=value", otelClip(member, 40))
		}
		if !otelBaggageValue(value) {
			return fmt.Sprintf("member %q has a value with characters that must be percent-encoded", otelClip(key, 40))
		}
		for _, prop := range strings.Split(props, ";") {
			prop = strings.Trim(prop, " \t")
			if prop == "" {
				continue
			}
			pk, pv, hasValue := strings.Cut(prop, "=")
			if !otelToken.MatchString(strings.Trim(pk, " \t")) || (hasValue && !otelBaggageValue(strings.Trim(pv, " \t"))) {
				return fmt.Sprintf("member %q has an invalid property %q", otelClip(key, 40), otelClip(prop, 40))
			}
		}
	}
	return ""
}

func otelClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
