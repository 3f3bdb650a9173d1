package behavior

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
)

// Cache is one directory holding run results and judge verdicts, so a
// workflow can hand it to actions/cache whole:
//
//	DIR/results/ab/abcdef….json      one Layer 1 run: its trajectory and usage
//	DIR/resilience/ab/abcdef….json   one Layer 2 run: trajectory and verdict
//	DIR/judge/ab/abcdef….json        one verdict
//
// Keys are SHA-256 over everything the stored value depends on that the
// harness knows before running (see Prepare and Judge): a changed case,
// tool surface, model or parameter is a different key. What the server
// answers is not known before: a stored run keeps the calls it made on
// the server (ServerCall), and is reused only when a Revalidator finds
// that the server still answers them the same way. Entries are written
// atomically (temporary file, then rename), so concurrent runs and a
// killed run never leave a half-written entry; an unreadable entry is a
// miss. Nothing is ever deleted: prune the directory by age if it grows.
type Cache struct {
	Dir string
	// Label names the directory in notes (relative to the workspace: a
	// note reaches the PR comment); Dir when empty.
	Label string
	// Now stamps entries (default time.Now).
	Now func() time.Time
}

// Entry kinds, each a subdirectory.
const (
	kindResult = "results"
	kindJudge  = "judge"
	// KindResilience holds Layer 2 runs (pkg/resilience).
	KindResilience = "resilience"
)

// maxEntryBytes bounds one entry read back: a trajectory is bounded well
// below it, so anything larger is not ours.
const maxEntryBytes = 4 << 20

// OpenCache creates dir if needed and returns the cache in it.
func OpenCache(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache: no directory given (eval.cache-dir)")
	}
	if err := atomicfile.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("cache: creating %s: %w (set eval.cache-dir to a writable directory)", dir, err)
	}
	return &Cache{Dir: dir}, nil
}

type envelope struct {
	Version  int             `json:"version"`
	Key      string          `json:"key"`
	StoredAt time.Time       `json:"storedAt"`
	Value    json.RawMessage `json:"value"`
}

// cacheFormat 2: runs keep the server calls they made (ServerCall); a
// format-1 run has none and would be reused without asking the server.
const cacheFormat = 2

func (c *Cache) path(kind, key string) string {
	return filepath.Join(c.Dir, kind, key[:2], key+".json")
}

// get reads an entry into v; ok is false on a miss or an unusable entry.
func (c *Cache) get(kind, key string, v any) (storedAt time.Time, ok bool) {
	f, err := os.Open(c.path(kind, key))
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEntryBytes+1))
	if err != nil || len(b) > maxEntryBytes {
		return time.Time{}, false
	}
	var e envelope
	if json.Unmarshal(b, &e) != nil || e.Version != cacheFormat || e.Key != key || json.Unmarshal(e.Value, v) != nil {
		return time.Time{}, false
	}
	return e.StoredAt, true
}

// put writes an entry, replacing any.
func (c *Cache) put(kind, key string, v any) error {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache: encoding %s entry: %w", kind, err)
	}
	b, err := json.Marshal(envelope{Version: cacheFormat, Key: key, StoredAt: now().UTC(), Value: val})
	if err != nil {
		return fmt.Errorf("cache: encoding %s entry: %w", kind, err)
	}
	if err := atomicfile.WriteBytes(c.path(kind, key), b); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// Load reads an entry of kind stored under key into v (another layer's
// runs); ok is false on a miss or an unusable entry.
func (c *Cache) Load(kind, key string, v any) (storedAt time.Time, ok bool) {
	return c.get(kind, key, v)
}

// Store writes an entry of kind under key, replacing any.
func (c *Cache) Store(kind, key string, v any) error { return c.put(kind, key, v) }

// CacheKey is the key of a value depending on parts (see cacheKey).
func CacheKey(parts ...string) string { return cacheKey(parts...) }

// cacheKey hashes its parts, each length-prefixed so that no two part
// lists give the same bytes.
func cacheKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Reuse says which stored results a run may use.
type Reuse int

const (
	// ReuseAll reuses results and verdicts: the CLI's default and pull
	// requests. An unchanged suite makes no provider call.
	ReuseAll Reuse = iota
	// ReuseVerdicts makes every run anew but reuses judge verdicts of
	// identical trajectories: scheduled runs, whose point is to see the
	// model change under you.
	ReuseVerdicts
	// ReuseNothing forces new calls for everything (--fresh). Results
	// are still stored.
	ReuseNothing
)

func (r Reuse) String() string {
	switch r {
	case ReuseAll:
		return "results and verdicts"
	case ReuseVerdicts:
		return "judge verdicts only"
	}
	return "nothing (fresh)"
}

// ParseReuse reads "all", "verdicts" or "none".
func ParseReuse(s string) (Reuse, error) {
	switch strings.ToLower(s) {
	case "", "all":
		return ReuseAll, nil
	case "verdicts", "judge":
		return ReuseVerdicts, nil
	case "none", "fresh":
		return ReuseNothing, nil
	}
	return 0, fmt.Errorf("cache reuse %q: use all, verdicts or none", s)
}
