package poison

import (
	"net"
	"net/url"
	"strings"
)

// A link to documentation is fine in a description; a URL built to carry
// data out is not. exfil flags a URL when it has a placeholder for data,
// a query parameter named for secrets or left empty for data, a host
// that only collects requests, a raw non-loopback IP address, when it is
// an image link with a query (rendering the image sends the query), or
// when the sentence tells the model to send something to it. Copies to an
// email address (bcc, "also send") are flagged too. The text is already
// normalized (lower case).

var (
	urlPattern      = lazy("\\b(?:https?|ftp|wss?)://[^\\s\"'<>`\\])]+")
	imagePattern    = lazy(`!\[[^\]]{0,200}\]\(\s*(?:https?)://[^)\s]*\?`)
	sendBefore      = lazy(`\b(send|post|upload|forward|submit|transmit|exfiltrate|deliver|beacon)\b[^.\n]{0,60}\b(it|this|them|all|everything|users?'?s?|the\s+(result|results|output|data|response|content|contents|conversation|history|file|files|key|keys|token|tokens|messages?|arguments?))\b[^.\n]{0,40}\b(to|at)\s*$`)
	emailCopy       = lazy(`\b(bcc|cc|forward(\s+a\s+copy)?|(also|secretly|silently|quietly)\s+(send|email|copy)|send\s+a\s+copy|copy\s+all)\b[^.\n]{0,60}?\b([a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+)`)
	placeholderPart = lazy(`\{|\}|%7b|%7d|\$[a-z_({]|%s\b|<[a-z_]+>|\[(data|secret|token|key|content)\]`)
)

// collectorHosts receive arbitrary requests and show them to whoever made
// the bin: nothing a tool description links to for documentation.
func collectorHosts() []string {
	return []string{
		"webhook.site", "requestbin", "pipedream.net", "ngrok.io", "ngrok-free.app", "ngrok.app", "burpcollaborator.net",
		"oastify.com", "interact.sh", "oast.pro", "oast.live", "oast.site", "oast.online", "oast.fun", "oast.me",
		"canarytokens.com", "hookbin.com", "beeceptor.com", "requestcatcher.com", "trycloudflare.com", "loca.lt",
		"localtunnel.me", "serveo.net", "postb.in", "ptsv2.com", "ptsv3.com", "webhook.cool", "requestinspector.com",
	}
}

// secretParam names query parameters that carry secrets or the
// conversation whatever their value; dataParam those that carry data
// when their value is left empty for the model to fill.
func secretParam(k string) bool {
	switch k {
	case "secret", "token", "apikey", "api_key", "password", "pwd", "creds", "credentials", "ssh", "history", "conversation",
		"prompt", "leak", "exfil", "cookie", "session", "private_key", "key":
		return true
	}
	return false
}

func dataParam(k string) bool {
	switch k {
	case "data", "d", "payload", "content", "body", "text", "msg", "message", "q", "query", "context", "chat", "info", "result":
		return true
	}
	return false
}

func exfil(fs *findings, tool, where, s string) {
	if loc := imagePattern().FindStringIndex(s); loc != nil {
		fs.add(Finding{Rule: RuleExfilURL, Tool: tool, Where: where, Excerpt: excerpt(s, loc[0], loc[1]-loc[0]),
			Detail: "an image link with a query string: a host that renders it sends the query out"})
		return
	}
	for _, loc := range urlPattern().FindAllStringIndex(s, 20) {
		u := s[loc[0]:loc[1]]
		if why := suspiciousURL(u, s[:loc[0]]); why != "" {
			fs.add(Finding{Rule: RuleExfilURL, Tool: tool, Where: where, Excerpt: excerpt(s, loc[0], loc[1]-loc[0]),
				Detail: why + ": " + quoteMatch(s, loc)})
			return
		}
	}
	if m := emailCopy().FindStringSubmatchIndex(s); m != nil {
		addr := s[m[10]:m[11]]
		if !exampleDomain(addr) {
			fs.add(Finding{Rule: RuleExfilURL, Tool: tool, Where: where, Excerpt: excerpt(s, m[0], m[1]-m[0]),
				Detail: "copies to an email address: " + quoteMatch(s, m[:2])})
		}
	}
}

// suspiciousURL says why a URL looks built to carry data out ("" when it
// looks like a plain link). before is the text up to the URL.
func suspiciousURL(raw, before string) string {
	if placeholderPart().MatchString(raw) {
		return "a URL with a placeholder for data"
	}
	u, err := url.Parse(strings.TrimRight(raw, ".,;:!?"))
	if err != nil || u.Host == "" {
		return ""
	}
	host := u.Hostname()
	for _, c := range collectorHosts() {
		if host == c || strings.HasSuffix(host, "."+c) || strings.Contains(host, c) {
			return "a URL on a request-collector host (" + c + ")"
		}
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
		return "a URL to a raw IP address"
	}
	for k, vs := range u.Query() {
		if secretParam(k) {
			return "a URL whose query carries " + k
		}
		if dataParam(k) && (len(vs) == 0 || strings.TrimSpace(vs[0]) == "") {
			return "a URL with an empty " + k + " parameter for the model to fill"
		}
	}
	if sendBefore().MatchString(before) {
		return "a URL the text tells the model to send something to"
	}
	return ""
}

// exampleDomain reports the documentation domains of RFC 2606 / 6761.
func exampleDomain(addr string) bool {
	_, domain, _ := strings.Cut(addr, "@")
	for _, d := range []string{"example.com", "example.org", "example.net"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return strings.HasSuffix(domain, ".example") || strings.HasSuffix(domain, ".test") || strings.HasSuffix(domain, ".invalid")
}
