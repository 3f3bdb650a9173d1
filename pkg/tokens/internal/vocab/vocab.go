// Package vocab is the file format of the vocabularies pkg/tokens embeds,
// shared by their writer (../vocabgen) and their reader, so that the hash
// table is built once at `go generate` time instead of at every run.
//
// Layout, little-endian uint32s: n (ranks), bits (the table has 1<<bits
// slots), n+1 offsets into the token bytes, 1<<bits slots (rank+1 of the
// token hashed there, linear probing, 0 = empty), then the token bytes in
// rank order; token r is bytes[off[r]:off[r+1]], empty for an unused rank.
package vocab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Hash is FNV-1a: fixed, so the table written at generate time is valid at
// run time.
func Hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Build writes the file for tokens (indexed by rank; nil for a rank not
// used).
func Build(tokens [][]byte) []byte {
	n := uint32(len(tokens))
	tb := uint32(bits.Len32(n * 2)) // load factor at most 1/2
	slots := make([]uint32, 1<<tb)
	mask := uint64(len(slots) - 1)
	for r, t := range tokens {
		if len(t) == 0 {
			continue
		}
		i := Hash(string(t)) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = uint32(r) + 1
	}
	out := binary.LittleEndian.AppendUint32(nil, n)
	out = binary.LittleEndian.AppendUint32(out, tb)
	off := uint32(0)
	for _, t := range tokens {
		out = binary.LittleEndian.AppendUint32(out, off)
		off += uint32(len(t))
	}
	out = binary.LittleEndian.AppendUint32(out, off)
	for _, s := range slots {
		out = binary.LittleEndian.AppendUint32(out, s)
	}
	for _, t := range tokens {
		out = append(out, t...)
	}
	return out
}

// Table reads a file Build wrote, without copying it: data is meant to be
// an embedded string, so its pages load only as lookups touch them.
type Table struct {
	n     uint32
	mask  uint64
	offs  string
	slots string
	toks  string
}

// Open checks the file's sizes and returns its table.
func Open(data string) (*Table, error) {
	if len(data) < 8 {
		return nil, errors.New("vocabulary file is truncated")
	}
	n, tb := le32(data, 0), le32(data, 4)
	if tb > 30 {
		return nil, fmt.Errorf("vocabulary file says 2^%d slots", tb)
	}
	offEnd := 8 + 4*(uint64(n)+1)
	slotEnd := offEnd + 4<<tb
	if uint64(len(data)) < slotEnd {
		return nil, errors.New("vocabulary file is truncated")
	}
	t := &Table{n: n, mask: 1<<tb - 1, offs: data[8:offEnd], slots: data[offEnd:slotEnd], toks: data[slotEnd:]}
	if last := t.off(n); uint64(last) != uint64(len(t.toks)) {
		return nil, fmt.Errorf("vocabulary file holds %d token bytes, its offsets say %d", len(t.toks), last)
	}
	return t, nil
}

// Len is the number of ranks.
func (t *Table) Len() uint32 { return t.n }

// Token is the bytes of rank r ("" for an unused rank).
func (t *Table) Token(r uint32) string { return t.toks[t.off(r):t.off(r+1)] }

// Rank is the rank of the token s, or false.
func (t *Table) Rank(s string) (uint32, bool) {
	i := Hash(s) & t.mask
	for {
		v := le32(t.slots, uint32(i)*4)
		if v == 0 {
			return 0, false
		}
		if t.Token(v-1) == s {
			return v - 1, true
		}
		i = (i + 1) & t.mask
	}
}

func (t *Table) off(r uint32) uint32 { return le32(t.offs, 4*r) }

func le32(s string, i uint32) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}
