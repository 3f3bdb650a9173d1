package cli

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// explain turns a harness error into a message with what to do next.
func explain(err error) string {
	msg := err.Error()
	if ue := (*target.UnreachableError)(nil); errors.As(err, &ue) {
		return msg // it names both fixes; "is the command right?" would mislead
	}
	switch transport.KindOf(err) {
	case transport.KindConnect:
		if te := (*transport.Error)(nil); errors.As(err, &te) && strings.HasPrefix(te.Op, "start ") {
			msg += "\nhint: is the command right, and does it start the server when run by hand from the same directory?"
		} else {
			msg += "\nhint: is the server running, and is the URL right?"
		}
	case transport.KindTimeout:
		msg += "\nhint: the server did not answer in time; raise --request-timeout or --timeout if it is just slow"
	case transport.KindProcessExited:
		msg += "\nhint: the server process ended; whatever it wrote to stderr is shown above (if nothing is, it exited without a word: run the command by hand to see why)"
	case transport.KindHTTPStatus:
		// A 404 to the modern probe and to initialize alike is more often
		// a wrong path than a server that speaks neither era.
		if te := (*transport.Error)(nil); errors.As(err, &te) && te.Status == http.StatusNotFound {
			msg += "\nhint: HTTP 404: is the URL's path right? Many servers serve MCP at /mcp, not at /"
		}
	case transport.KindMalformed, transport.KindBadID:
		msg += "\nhint: the server's answer is not valid JSON-RPC for this request"
	}
	return msg
}
