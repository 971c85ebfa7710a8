package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/bloomlab/bloomlab/cmd/bloomlab/internal/lab"
)

// progressInterval is the least time between two redraws of the progress
// line.
const progressInterval = 500 * time.Millisecond

// progressWidth bounds the progress line, so that it never wraps on an
// 80-column terminal (a wrapped line would not be redrawn in place).
const progressWidth = 79

// progressLine draws a run's progress on one terminal line, redrawn in
// place (carriage return and erase to the end of the line) at most every
// progressInterval:
//
//	less-hashing/figure1 [12/19] 41% 820000/2000000 trials, 2m10s, ~3m7s left, row 83/200 c=8 n=20000 scheme=double
//
// cut to progressWidth characters. The command uses it only when standard
// error is a terminal; the clock is a field so that tests can drive it.
type progressLine struct {
	w     io.Writer
	label string
	now   func() time.Time

	mu    sync.Mutex
	start time.Time
	last  time.Time // of the last redraw; zero before the first
	drawn bool      // a line is on the screen
}

// newProgressLine returns a progressLine for the run labelled label,
// starting now.
func newProgressLine(w io.Writer, label string, now func() time.Time) *progressLine {
	return &progressLine{w: w, label: label, now: now, start: now()}
}

// update is the lab.Config.Progress callback: it redraws the line if
// progressInterval has passed since the last redraw.
func (p *progressLine) update(r lab.RunProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.drawn && now.Sub(p.last) < progressInterval {
		return
	}
	if !p.drawn && now.Sub(p.start) < progressInterval {
		return // a run shorter than the interval draws nothing
	}
	p.last, p.drawn = now, true
	setDrawn(p, true)
	fmt.Fprint(p.w, "\r\033[K"+progressText(p.label, r, now.Sub(p.start)))
}

// clear erases the line if one was drawn.
func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
		setDrawn(p, false)
	}
}

// drawnLines are the progress lines on the screen, which an interruption
// erases (eraseProgress) before its message. Lock order: a line's mu, then
// drawnMu; eraseProgress never holds drawnMu while it takes a line's mu.
var (
	drawnMu    sync.Mutex
	drawnLines = map[*progressLine]bool{}
)

func setDrawn(p *progressLine, on bool) {
	drawnMu.Lock()
	defer drawnMu.Unlock()
	if on {
		drawnLines[p] = true
	} else {
		delete(drawnLines, p)
	}
}

// eraseProgress erases every progress line on the screen.
func eraseProgress() {
	drawnMu.Lock()
	lines := make([]*progressLine, 0, len(drawnLines))
	for p := range drawnLines {
		lines = append(lines, p)
	}
	drawnMu.Unlock()
	for _, p := range lines {
		p.clear()
	}
}

// progressText is the text of the progress line: label, percentage, trials,
// elapsed time, the estimate of the time left (elapsed·(total − done)/done)
// and the current row, cut to progressWidth runes.
func progressText(label string, r lab.RunProgress, elapsed time.Duration) string {
	s := fmt.Sprintf("%s %d%% %d/%d trials, %s", label, percent(r.Done, r.Total), r.Done, r.Total, roundDuration(elapsed))
	if r.Done > 0 && r.Done < r.Total {
		left := time.Duration(float64(elapsed) * float64(r.Total-r.Done) / float64(r.Done))
		s += ", ~" + roundDuration(left).String() + " left"
	}
	s += fmt.Sprintf(", row %d/%d", r.Row+1, r.Rows)
	if r.Params != "" {
		s += " " + r.Params
	}
	if rs := []rune(s); len(rs) > progressWidth {
		s = string(rs[:progressWidth])
	}
	return s
}

func percent(done, total int) int {
	if total <= 0 {
		return 0
	}
	return int(int64(done) * 100 / int64(total))
}

// roundDuration rounds d to seconds (tenths under ten seconds).
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
