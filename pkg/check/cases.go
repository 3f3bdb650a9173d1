package check

import (
	"sync/atomic"
)

// A check that sends many variants of one rule (every header edit, every
// Mcp-Name variant on every kind of request) would send all of them in
// each of a MUST check's N repetitions. The variants are what is covered;
// the repetitions are there to see whether the server answers the same
// way each time. So one repetition sends every variant (the sweep), and
// each other repetition sends again every variant that went wrong in the
// sweep (or was not judged: Pass.SendAgain), plus one that went right, a
// different one per repetition:
//
//   - a variant the server gets wrong every time fails in every
//     repetition, so the check fails at N/N, not flaky;
//   - a variant that went wrong in the sweep and right later makes the
//     check flaky, as before;
//   - a variant that went right in the sweep and goes wrong only
//     sometimes is seen only in the repetitions that send it again: the
//     price of sending about n + N instead of n × N requests.
//
// README.md says so beside the repetitions.

// casesKey names one check's sweep in the run's Memo.
type casesKey struct {
	check, name string
}

// sweep is what the repetition that swept every case found.
type sweep struct {
	claimed atomic.Bool
	done    chan struct{}
	// complete is false when the sweep stopped early (an error): the
	// other repetitions then send every case themselves.
	complete bool
	bad      map[int]bool
}

// Cases sends n cases of one rule through send (i is the case's index,
// stable across repetitions: the same case must get the same index). A
// case is bad when send reported a failure, a warning, a note or a skip
// on p, called SendAgain, or returned an error; Cases returns the first error, after which no later
// case of this repetition is sent. name tells apart sweeps of one check.
func (p *Pass) Cases(name string, n int, send func(i int) error) error {
	if n <= 0 {
		return nil
	}
	all := func(record *sweep) error {
		for i := range n {
			before := p.findings
			err := send(i)
			if record != nil && (err != nil || p.findings > before) {
				record.bad[i] = true
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if p.Env.Memo == nil {
		return all(nil)
	}
	s, _ := p.Env.Memo.Do(casesKey{p.Check.ID, name}, func() any { return &sweep{done: make(chan struct{})} }).(*sweep)
	if s == nil {
		return all(nil)
	}
	if s.claimed.CompareAndSwap(false, true) {
		s.bad = map[int]bool{}
		defer close(s.done)
		err := all(s)
		s.complete = err == nil
		return err
	}
	select {
	case <-s.done:
	case <-p.Ctx.Done():
		return p.Ctx.Err()
	}
	if !s.complete {
		return all(nil)
	}
	// The sample is one of the cases that went right, so that a check
	// whose verdict needs a good case (a pass, not a skip, when one case
	// was judgeable) sees one in every repetition, as the sweep did.
	var good []int
	for i := range n {
		if !s.bad[i] {
			good = append(good, i)
		}
	}
	sample := -1
	if len(good) > 0 {
		sample = good[p.Run%len(good)]
	}
	for i := range n {
		if !s.bad[i] && i != sample {
			continue
		}
		if err := send(i); err != nil {
			return err
		}
	}
	return nil
}

// SendAgain marks the case being sent by Cases as one every repetition
// sends again, although it reported nothing: a case the check could not
// judge (an error another check judges), whose absence from a repetition
// would change what that repetition can conclude.
func (p *Pass) SendAgain() { p.findings++ }
