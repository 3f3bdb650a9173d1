package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// When the run's own stdio process exits in the middle of the run, every
// check after it errors with the same cause, and the cause names what the
// process was serving then: several requests, as checks share it. Which of
// them ends the server is what its author needs, so after the checks each
// is sent again, alone (after server/discover, as the run's own process
// had it), to a new process, until one ends that process too. A server
// that crashes on one request is then named with that request; one whose
// exit needs more than one request is said to be so.

// lostReplayWait bounds the wait for one request sent again: a request
// that ends a process does so when it is read, not seconds later.
const lostReplayWait = 3 * time.Second

// lostNamed bounds the distinct requests named; lostReplays the requests
// sent again (each a process start, on a run that has already lost one).
const (
	lostNamed   = 4
	lostReplays = 6
)

// lostProcess sends again, one by one, the requests the run's own process
// was serving when it exited, and says which one ends a new process too
// (nil when the process did not exit with requests in flight). open starts
// a new process as the run's checks get one.
func lostProcess(ctx context.Context, own *transport.StdioTransport, open func(context.Context) (*mcpclient.Client, error)) *report.LostProcess {
	code, lost := own.Lost()
	if len(lost) == 0 {
		return nil
	}
	lp := &report.LostProcess{ExitCode: code, Serving: []string{}}
	// One request of each name first, then the others: a call of one
	// tool with other arguments may be the one that crashes it.
	var first, rest [][]byte
	more := 0
	for _, b := range lost {
		n := lostName(b)
		switch {
		case !slices.Contains(lp.Serving, n) && len(lp.Serving) < lostNamed:
			lp.Serving = append(lp.Serving, n)
			first = append(first, b)
		case slices.Contains(lp.Serving, n):
			rest = append(rest, b)
		default:
			more++ // a fifth name: not named, not sent again
		}
	}
	replays := append(first, rest...)
	if len(replays) > lostReplays {
		more += len(replays) - lostReplays
		replays = replays[:lostReplays]
	}
	if ctx.Err() != nil {
		lp.Replay = "not sent again: the run had ended (its deadline, or it was cancelled)"
		return lp
	}
	for _, body := range replays {
		ended, c, err := replayAlone(ctx, open, body)
		if err != nil {
			lp.Replay = "sending them again, one to a new process each, failed: " + jsonrpc.Clip(err.Error(), 400)
			return lp
		}
		if ended {
			lp.Culprit, lp.CulpritExitCode = lostName(body), c
			return lp
		}
	}
	switch {
	case len(replays) == 1 && more == 0:
		lp.Replay = "sent again alone to a new process (after server/discover), it did not end it: the exit needs what came before it"
	case more > 0:
		lp.Replay = fmt.Sprintf("sent again, each alone to a new process (after server/discover), none of the %d sent ended it (%d more in flight were not sent again): the exit needs one of those, more than one request, or what came before", len(replays), more)
	default:
		lp.Replay = "sent again, each alone to a new process (after server/discover), none ended it: the exit needs more than one of them, or what came before"
	}
	return lp
}

// lostNote says it in a sentence, what it names first.
func lostNote(lp *report.LostProcess) string {
	serving := joinAnd(lp.Serving)
	if lp.Culprit != "" {
		return fmt.Sprintf("the server exits on %s: sent again alone to a new process (after server/discover), it ended it with code %d, as the run's own process ended (code %d) while serving %s; the checks after that on the run's own process were not judged",
			lp.Culprit, lp.CulpritExitCode, lp.ExitCode, serving)
	}
	return fmt.Sprintf("the run's own server process exited with code %d while serving %s; %s; the checks after that on it were not judged", lp.ExitCode, serving, lp.Replay)
}

// replayAlone writes body to a new process and waits for its answer or the
// process's exit, whichever comes first (within lostReplayWait of the
// write). The process lives under ctx, the run's, so that only the server
// ends it within the wait: an exit once ctx is done is the harness's.
func replayAlone(ctx context.Context, open func(context.Context) (*mcpclient.Client, error), body []byte) (ended bool, code int, err error) {
	c, err := open(ctx)
	if err != nil || c == nil {
		if c != nil {
			c.Close()
		}
		if err == nil {
			err = errors.New("no connection")
		}
		return false, 0, err
	}
	defer c.Close()
	st, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		return false, 0, nil
	}
	exited := func() (bool, int, error) {
		if ctx.Err() != nil {
			return false, 0, nil
		}
		code, _ := st.ExitCode()
		return true, code, nil
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &req)
	tap, stop := st.Tap(64)
	defer stop()
	if err := st.WriteLine(ctx, body); err != nil {
		if _, gone := st.ExitCode(); gone {
			return exited()
		}
		return false, 0, err
	}
	wait := time.NewTimer(lostReplayWait)
	defer wait.Stop()
	var grace <-chan time.Time
	for {
		select {
		case in := <-tap:
			if grace == nil && in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, req.ID) {
				// A process that exits right after its answer is
				// still ended by the request.
				grace = time.After(stdioQuiet)
			}
		case <-st.Exited():
			return exited()
		case <-grace:
			return false, 0, nil
		case <-wait.C:
			return false, 0, nil
		case <-ctx.Done():
			return false, 0, nil
		}
	}
}

// lostName names a request as the transport's errors do: its method, and
// the tool, prompt or resource it is about.
func lostName(body []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	if m.Method == "" {
		return "a request that is not a JSON-RPC request"
	}
	// Clipped after quoting: a control character quotes to four, and
	// the report's schema bounds each name at 200.
	name := jsonrpc.Clip(m.Method, 60)
	switch {
	case m.Params.Name != "":
		name += " " + jsonrpc.Clip(strconv.Quote(m.Params.Name), 120)
	case m.Params.URI != "":
		name += " " + jsonrpc.Clip(strconv.Quote(m.Params.URI), 120)
	}
	return name
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
