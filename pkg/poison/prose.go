package poison

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The prose rules match lower-cased NFKC text with hidden characters
// removed and runs of blanks collapsed, so that "ＩＧＮＯＲＥ previous"
// (full-width) or "ig\u200bnore previous" (a zero-width space inside the
// word) read as what the model reads. Each pattern is something a
// description of what a tool does has no reason to say; the exemptions
// are in the patterns (e.g. "call list_projects first" is an ordinary
// workflow hint and is not matched).

// overridePatterns: text that tries to replace the model's instructions,
// and markers that pose as a system or role boundary.
var overridePatterns = lazyAll(
	`\b(ignore|disregard|forget|override|bypass)\s+((all|any|the|your|every|of|these)\s+)*(previous|prior|preceding|above|earlier|former|original|existing|system|developer|safety|other)\s+(instructions?|prompts?|messages?|rules|directions|directives|guidelines|context|commands?)\b`,
	`\bforget\s+(everything|all)\s+(you|that|above|before)\b`,
	`\b(new|updated|real|actual|true|revised|secret)\s+(system\s+)?(instructions?|directives?|orders)\s*:`,
	`\byou\s+are\s+now\s+(a|an|in|the|no\s+longer|free|unrestricted)\b`,
	`\bfrom\s+now\s+on,?\s+(you|the\s+assistant|ignore|always|never)\b`,
	`\bdo\s+anything\s+now\b`,
	`(^|\n)\s*\[?(system|developer)\]?\s*(message|prompt|note|override|notice)?\s*:`,
	`<\|?\s*(im_start|im_end|system|endoftext)\s*\|?>`,
	`\[/?(inst|system|sys)\]|<<\s*/?sys\s*>>`,
	`</?\s*(system|important|instructions?|admin|secret|hidden|override|assistant)\s*>`,
	`</\s*(tool_description|description|tool|function|tools)\s*>`,
	`(^|\n)\s*#{1,4}\s*(system|instructions?)\b`,
	`\bbegin\s+(system|admin)\s+(prompt|message|instructions?)\b`,
)

// directivePatterns: instructions to the model that keep something from
// the user, go after secrets or the conversation, or coerce the use of
// other tools.
var directivePatterns = lazyAll(
	`\b(do\s+not|don'?t|never|must\s+not|should\s+not|shall\s+not)\s+(tell|inform|mention|reveal|show|notify|alert|warn|let)\s+((this|it|anything)\s+(to\s+)?)?(the\s+)?users?\b`,
	`\bwithout\s+(telling|informing|notifying|alerting|asking|warning|showing)\s+(the\s+)?users?\b`,
	`\b(hide|conceal|keep)\b[^.\n]{0,60}\b(from|secret\s+from)\s+(the\s+)?users?\b`,
	`\b(the\s+)?users?\s+(must|should|does|do|need|needs)\s+not\s+(know|see|be\s+(told|informed|aware))\b`,
	`\b(secretly|covertly|silently|quietly|discreetly|invisibly)\s+(send|call|forward|include|add|read|upload|append|pass|invoke|execute|run|copy|transmit|post|exfiltrate|bcc|cc|email)\b`,
	`\b(this|these)\s+instructions?\s+(is|are)\s+(confidential|secret|hidden|private)\b`,
	`\bdo\s+not\s+(mention|reveal|disclose|repeat)\s+(this|these|the)\s+(instructions?|note|message|text)\b`,
	// Files and data no tool description needs the model to touch.
	`\b(read|cat|open|load|send|include|append|attach|pass|upload|forward|copy|leak|exfiltrate|transmit|post|provide|insert|add|put|call|invoke)\b[^.\n]{0,80}(~/\.ssh|\.ssh/|\bid_rsa\b|\bid_ed25519\b|\.aws/credentials|/etc/passwd|/etc/shadow|\.env\b|\.npmrc|\.netrc|\.git-credentials|\bmcp\.json\b|claude_desktop_config|\b(conversation|chat)\s+history\b|\bprevious\s+messages\b|\bsystem\s+prompt\b|\ball\s+(prior\s+|previous\s+|earlier\s+)?messages\b)`,
	`\b(read|cat|send|append|attach|upload|forward|copy|leak|exfiltrate|transmit|post)\b[^.\n]{0,60}\b(private\s+keys?|ssh\s+keys?|api[\s_-]?keys?|access\s+tokens?|passwords?|credentials|secrets|session\s+cookies?)\b`,
	`\b(before|instead\s+of)\s+(using|calling|invoking)\s+any\s+other\s+tools?\b`,
)

// shadowPattern: a description that changes how another tool of the
// server is used ("when calling send_email, always bcc …": tool
// shadowing). Group 3 is the tool named; it must be another tool the
// server lists, so "before calling this tool, …" is not matched.
var shadowPattern = lazy(`\b(when|whenever|before|after|each\s+time|every\s+time)\s+(you\s+)?(?:call|calls|calling|use|uses|using|invoke|invokes|invoking)\s+(?:the\s+)?([a-z0-9_.-]+)\b[^.\n]{0,50}\b(always|must|also|instead)\b[^.\n]{0,60}\b(bcc|cc|send|forward|redirect|replace|change|add|include|set)\b`)

// prose applies the override, directive and exfiltration rules to one
// string, and again to the text its tag characters spell, if any.
// others are the server's other tool names, lower-cased.
func prose(fs *findings, tool, where, text, hidden string, others map[string]bool) {
	proseOnce(fs, tool, where, normalize(text), others)
	if hidden != "" {
		proseOnce(fs, tool, where+" (text hidden in tag characters)", normalize(hidden), others)
	}
}

func proseOnce(fs *findings, tool, where, s string, others map[string]bool) {
	if s == "" {
		return
	}
	if loc, ok := firstMatch(overridePatterns(), s); ok {
		fs.add(Finding{Rule: RuleOverride, Tool: tool, Where: where, Excerpt: excerpt(s, loc[0], loc[1]-loc[0]),
			Detail: "text that overrides the model's instructions or poses as a system message: " + quoteMatch(s, loc)})
	}
	if loc, ok := firstMatch(directivePatterns(), s); ok {
		fs.add(Finding{Rule: RuleDirective, Tool: tool, Where: where, Excerpt: excerpt(s, loc[0], loc[1]-loc[0]),
			Detail: "an instruction to the model that no tool description needs: " + quoteMatch(s, loc)})
	} else if m := shadowPattern().FindStringSubmatchIndex(s); m != nil && m[6] >= 0 {
		if other := s[m[6]:m[7]]; others[other] && other != strings.ToLower(tool) {
			fs.add(Finding{Rule: RuleDirective, Tool: tool, Where: where, Excerpt: excerpt(s, m[0], m[1]-m[0]),
				Detail: "changes how another tool (" + other + ") is used: " + quoteMatch(s, m[:2])})
		}
	}
	exfil(fs, tool, where, s)
}

func firstMatch(ps []*regexp.Regexp, s string) ([]int, bool) {
	best := []int(nil)
	for _, p := range ps {
		if loc := p.FindStringIndex(s); loc != nil && (best == nil || loc[0] < best[0]) {
			best = loc
		}
	}
	return best, best != nil
}

func quoteMatch(s string, loc []int) string {
	return `"` + visible(strings.TrimSpace(s[loc[0]:loc[1]]), 120) + `"`
}

// normalize is what the prose rules read: NFKC (full-width and other
// compatibility forms become ASCII), hidden characters removed, blanks
// collapsed to one space (newlines kept: role markers start a line),
// lower case.
func normalize(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	blank := false
	for _, r := range s {
		switch {
		case isTag(r), isInvisible(r), isBidiControl(r), isBidiMark(r), isJoiner(r), isVariationSelector(r):
			continue
		case r == '\n' || r == '\r':
			b.WriteByte('\n')
			blank = false
		case unicode.IsSpace(r):
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
		default:
			b.WriteRune(unicode.ToLower(r))
			blank = false
		}
	}
	return b.String()
}

// lazy and lazyAll compile their patterns when first used, not when the
// program starts: compiling all of them took 9 ms of each mcp-eval
// start-up (GODEBUG=inittrace=1), most of whose commands never scan.
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func lazyAll(exprs ...string) func() []*regexp.Regexp {
	return sync.OnceValue(func() []*regexp.Regexp {
		out := make([]*regexp.Regexp, len(exprs))
		for i, e := range exprs {
			out[i] = regexp.MustCompile(e)
		}
		return out
	})
}
