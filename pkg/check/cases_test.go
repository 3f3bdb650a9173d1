package check

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// casesRun runs one MUST check of n cases five times through Execute;
// bad(run, i) says whether case i goes wrong when sent by that run (the
// sweeping run counts as the first send). It returns the result and how
// often each case was sent.
func casesRun(t *testing.T, n int, bad func(send, i int) bool) (Result, []int) {
	t.Helper()
	var mu sync.Mutex
	sent := make([]int, n)
	c := &Check{ID: "C-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		return p.Cases("", n, func(i int) error {
			mu.Lock()
			sent[i]++
			k := sent[i]
			mu.Unlock()
			if bad(k, i) {
				p.Failf(nil, "case %d went wrong", i)
			}
			return nil
		})
	}}
	reg := Registry{Families: []Family{{"C", "c"}}, Checks: []*Check{c}}
	res, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 5})
	if err != nil {
		t.Fatal(err)
	}
	return res[0], sent
}

func TestCasesSweepOnceAndResendWhatWentWrong(t *testing.T) {
	t.Run("a correct server", func(t *testing.T) {
		res, sent := casesRun(t, 12, func(int, int) bool { return false })
		if res.Verdict != Passed || res.Flaky || res.Counts[Passed] != 5 {
			t.Fatalf("got %s %v", res.Verdict, res.Counts)
		}
		total := 0
		for _, k := range sent {
			total += k
		}
		// 12 in the sweep, one in each of the four other runs.
		if total != 12+4 {
			t.Errorf("sent %d cases (%v), want 16", total, sent)
		}
	})
	t.Run("a case that always goes wrong fails every run", func(t *testing.T) {
		res, sent := casesRun(t, 12, func(_, i int) bool { return i == 7 })
		if res.Verdict != Failed || res.Flaky || res.Counts[Failed] != 5 {
			t.Fatalf("got %s flaky=%v %v, want failed 5/5", res.Verdict, res.Flaky, res.Counts)
		}
		if sent[7] != 5 {
			t.Errorf("case 7 was sent %d times, want 5", sent[7])
		}
	})
	t.Run("a case that goes wrong once is flaky", func(t *testing.T) {
		res, _ := casesRun(t, 12, func(k, i int) bool { return i == 3 && k == 1 })
		if res.Verdict != Failed || !res.Flaky || res.Counts[Failed] != 1 || res.Counts[Passed] != 4 {
			t.Fatalf("got %s flaky=%v %v, want flaky 1 failed, 4 passed", res.Verdict, res.Flaky, res.Counts)
		}
	})
	t.Run("a check run once sends every case", func(t *testing.T) {
		var sent int
		c := &Check{ID: "D-1", Level: Should, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
			return p.Cases("", 9, func(int) error { sent++; return nil })
		}}
		if _, err := Execute(context.Background(), Registry{Families: []Family{{"D", "d"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{Runs: 5}); err != nil {
			t.Fatal(err)
		}
		if sent != 9 {
			t.Errorf("sent %d, want 9", sent)
		}
	})
	t.Run("a sweep cut short by an error is not trusted", func(t *testing.T) {
		var mu sync.Mutex
		sends, sweeps := 0, 0
		c := &Check{ID: "E-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
			return p.Cases("", 6, func(i int) error {
				mu.Lock()
				defer mu.Unlock()
				sends++
				if i == 2 && sweeps == 0 {
					sweeps++
					return errors.New("connection reset")
				}
				return nil
			})
		}}
		res, err := Execute(context.Background(), Registry{Families: []Family{{"E", "e"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{Runs: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Counts[Errored] != 1 || res[0].Counts[Passed] != 4 {
			t.Fatalf("got %v, want 1 errored and 4 passed", res[0].Counts)
		}
		// The sweep sent 3; each other run sent all 6 itself.
		if sends != 3+4*6 {
			t.Errorf("sent %d cases, want %d", sends, 3+4*6)
		}
	})
}
