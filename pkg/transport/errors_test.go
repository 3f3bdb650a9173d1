package transport

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A request started after the run's deadline says so instead of a
// negative wait ("no answer within -2.249s").
func TestTimeoutAfterTheDeadlineSaysSo(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-2*time.Second))
	defer cancel()
	e := &Error{Kind: KindTimeout, Op: "tools/list", After: waited(ctx, time.Now())}
	if got := e.Error(); strings.Contains(got, "-") || !strings.Contains(got, "deadline had passed before it was sent") {
		t.Errorf("message %q", got)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	start := time.Now()
	<-ctx2.Done()
	e = &Error{Kind: KindTimeout, Op: "tools/list", After: waited(ctx2, start)}
	if got := e.Error(); !strings.Contains(got, "no answer within 10ms") {
		t.Errorf("message %q", got)
	}
}
