package refserver

import "encoding/json"

// logLevels in increasing severity (RFC 5424 order, schema LoggingLevel).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelRank returns the severity index of level, or -1 for an unknown level.
func levelRank(level string) int {
	for i, l := range logLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// log sends notifications/message for this request, but only when the
// request opted in with _meta logLevel (LOG-1) and only at or above that
// level (LOG-2). It travels on the request's own stream, never a listen stream.
func (r *request) log(level, logger string, data any) error {
	if r.meta.logLevel == "" || levelRank(level) < levelRank(r.meta.logLevel) {
		return nil
	}
	return r.notify(Notification{Method: "notifications/message", Params: map[string]any{
		"level": level, "logger": logger, "data": data,
	}})
}

// progress sends notifications/progress when, and only when, the request
// carried a progressToken; the token is echoed with its JSON type (PROG-1).
func (r *request) progress(progress, total int, message string) error {
	if r.meta.progressToken == nil {
		return nil
	}
	return r.notify(Notification{Method: "notifications/progress", Params: map[string]any{
		"progressToken": json.RawMessage(r.meta.progressToken),
		"progress":      progress,
		"total":         total,
		"message":       message,
	}})
}
