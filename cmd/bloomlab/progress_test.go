package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bloomlab/bloomlab/cmd/bloomlab/internal/lab"
)

// fakeClock is a clock the test advances by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgressThrottle: nothing is drawn during the first interval, then at
// most one redraw per interval, each starting with a carriage return and an
// erase; clear erases the line only if one was drawn.
func TestProgressThrottle(t *testing.T) {
	var b bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := newProgressLine(&b, "x/y", clk.now)
	r := lab.RunProgress{Done: 10, Total: 100, Row: 0, Rows: 4, Params: "n=5"}
	p.update(r)
	clk.advance(progressInterval - time.Millisecond)
	p.update(r)
	if b.Len() != 0 {
		t.Fatalf("drew %q within the first interval", b.String())
	}
	p.clear()
	if b.Len() != 0 {
		t.Fatalf("clear without a drawn line wrote %q", b.String())
	}
	clk.advance(time.Millisecond)
	p.update(r)
	if got := strings.Count(b.String(), "\r\033[K"); got != 1 {
		t.Fatalf("%d redraws at the interval, want 1: %q", got, b.String())
	}
	for range 10 { // 10 updates within 0.45 s: no redraw
		clk.advance(45 * time.Millisecond)
		p.update(r)
	}
	if got := strings.Count(b.String(), "\r\033[K"); got != 1 {
		t.Fatalf("%d redraws, want 1 (throttled): %q", got, b.String())
	}
	clk.advance(50 * time.Millisecond)
	r.Done, r.Row = 50, 2
	p.update(r)
	want := "\r\033[Kx/y 10% 10/100 trials, 500ms, ~4.5s left, row 1/4 n=5" +
		"\r\033[Kx/y 50% 50/100 trials, 1s, ~1s left, row 3/4 n=5"
	if b.String() != want {
		t.Fatalf("output\n%q\nwant\n%q", b.String(), want)
	}
	p.clear()
	if !strings.HasSuffix(b.String(), "n=5\r\033[K") {
		t.Fatalf("clear did not erase the line: %q", b.String())
	}
}

// TestProgressText: the estimate of the time left, no estimate at the end,
// and a long line cut to progressWidth runes.
func TestProgressText(t *testing.T) {
	for _, tc := range []struct {
		r       lab.RunProgress
		elapsed time.Duration
		want    string
	}{
		{lab.RunProgress{Done: 1, Total: 4, Row: 0, Rows: 1}, 30 * time.Second,
			"e 25% 1/4 trials, 30s, ~1m30s left, row 1/1"},
		{lab.RunProgress{Done: 4, Total: 4, Row: 0, Rows: 1}, 2 * time.Minute,
			"e 100% 4/4 trials, 2m0s, row 1/1"},
		{lab.RunProgress{Done: 0, Total: 4, Row: 0, Rows: 1}, time.Second,
			"e 0% 0/4 trials, 1s, row 1/1"},
	} {
		if got := progressText("e", tc.r, tc.elapsed); got != tc.want {
			t.Errorf("progressText(%+v, %v) = %q, want %q", tc.r, tc.elapsed, got, tc.want)
		}
	}
	long := progressText("less-hashing/figure1 [12/19]", lab.RunProgress{Done: 820000, Total: 2000000, Row: 82, Rows: 200,
		Params: "c=8 n=20000 m=160000 k=6 scheme=extended-square queries=463 ü"}, 130*time.Second)
	if n := utf8.RuneCountInString(long); n != progressWidth {
		t.Errorf("long line has %d runes, want %d: %q", n, progressWidth, long)
	}
	if !strings.HasPrefix(long, "less-hashing/figure1 [12/19] 41% 820000/2000000 trials, 2m10s, ~3m7s left, row") {
		t.Errorf("long line %q", long)
	}
}

// TestProgressQuietOffTerminal: reproduce writes nothing to a standard error
// that is not a terminal (here a buffer).
func TestProgressQuietOffTerminal(t *testing.T) {
	_, e, code := invoke([]string{"reproduce", "notes/example"}, "")
	if code != 0 || e != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, e)
	}
}
