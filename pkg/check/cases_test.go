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
	t.Run("a case it cannot judge does not make a later run a skip", func(t *testing.T) {
		// Case 0 cannot be judged (a skip, or SendAgain), case 3 passes:
		// the sweep passes, and so must every run, which needs case 3 or
		// another good one, not only a good sample.
		for _, mark := range []string{"skip", "again"} {
			var mu sync.Mutex
			sent := map[int]int{}
			c := &Check{ID: "G-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
				judged := 0
				err := p.Cases("", 4, func(i int) error {
					mu.Lock()
					sent[i]++
					mu.Unlock()
					if i != 3 {
						if mark == "skip" {
							p.Skipf("case %d: nothing to judge", i)
						} else {
							p.SendAgain()
						}
						return nil
					}
					judged++
					p.Passf(nil, "case 3 judged")
					return nil
				})
				if judged == 0 {
					p.Skipf("nothing judged")
				}
				return err
			}}
			res, err := Execute(context.Background(), Registry{Families: []Family{{"G", "g"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{Runs: 5})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Verdict != Passed || res[0].Flaky {
				t.Fatalf("%s: got %s %v, want passed in every run", mark, res[0].Verdict, res[0].Counts)
			}
			if sent[0] != 5 || sent[3] != 5 {
				t.Errorf("%s: sent %v, want cases 0 (not judged) and 3 (the only good one) in every run", mark, sent)
			}
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
