package gate

import "testing"

// A suite reason says which way the score moved in words, never as a
// signed "drop": a paired drop is positive when the score got worse in its
// own direction (a rise of a lower-is-better score), and no rate moves by
// more than 100 points, whatever a t bound on few cases says.
func TestWorseWordsTheDirection(t *testing.T) {
	for _, tt := range []struct {
		drop float64
		want string
	}{
		{0.133, "13.3 pts worse"},
		{-0.2, "20.0 pts better"},
		{0.0004, "no change"},
		{-0.0004, "no change"},
		{-1.745, "100.0 pts better"},
		{2.5, "100.0 pts worse"},
	} {
		if got := worse(tt.drop); got != tt.want {
			t.Errorf("worse(%v) = %q, want %q", tt.drop, got, tt.want)
		}
	}
}
