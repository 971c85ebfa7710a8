package lab

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Plot is a line chart: one polyline per series, optional error bars.
type Plot struct {
	// Name is the file's base name (without .svg), e.g. "figure1-c4".
	Name string

	title, xLabel, yLabel string
	series                []series
}

// series is one line of a Plot.
type series struct {
	Name   string
	Dashed bool // drawn dashed and without markers (e.g. a theory line)
	Points []point
}

// point is one (x, y) value with an optional interval [Lo, Hi] (drawn when
// Lo < Hi).
type point struct {
	X, Y, Lo, Hi float64
}

var palette = []string{"#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"}

// WriteSVG renders p as a standalone SVG document using only the standard
// library. The output is deterministic.
func WriteSVG(w io.Writer, p Plot) error {
	const (
		width                = 640.0
		left, right, top, ph = 90.0, 20.0, 40.0, 270.0
	)
	// The legend takes rows of three below the plot: 110 pixels hold
	// three rows, each further row adds 18.
	bott := 110.0 + 18*float64(max(0, (len(p.series)+2)/3-3))
	height := top + ph + bott
	pw := width - left - right
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range p.series {
		for _, pt := range s.Points {
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
			lo, hi := pt.Y, pt.Y
			if pt.Lo < pt.Hi {
				lo, hi = math.Min(lo, pt.Lo), math.Max(hi, pt.Hi)
			}
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
		}
	}
	if math.IsInf(xmin, 0) || math.IsNaN(xmin+ymin+xmax+ymax) {
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	if ymax == ymin {
		d := math.Max(math.Abs(ymin)*0.01, 1e-12)
		ymin, ymax = ymin-d, ymax+d
	}
	pad := (ymax - ymin) * 0.05
	ymin, ymax = ymin-pad, ymax+pad
	xt, yt := ticks(xmin, xmax, 10), ticks(ymin, ymax, 8)
	sx := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	sy := func(y float64) float64 { return top + (ymax-y)/(ymax-ymin)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="24" text-anchor="middle" font-size="14">%s</text>`+"\n", left+pw/2, html.EscapeString(p.title))
	// Grid and ticks.
	for _, x := range xt {
		fmt.Fprintf(&b, `<line x1="%.2f" y1="%g" x2="%.2f" y2="%g" stroke="#ddd"/>`+"\n", sx(x), top, sx(x), top+ph)
		fmt.Fprintf(&b, `<text x="%.2f" y="%g" text-anchor="middle">%s</text>`+"\n", sx(x), top+ph+16, tickLabel(x))
	}
	for _, y := range yt {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.2f" x2="%g" y2="%.2f" stroke="#ddd"/>`+"\n", left, sy(y), left+pw, sy(y))
		fmt.Fprintf(&b, `<text x="%g" y="%.2f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, sy(y), tickLabel(y))
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="black"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", left+pw/2, top+ph+36, html.EscapeString(p.xLabel))
	fmt.Fprintf(&b, `<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">%s</text>`+"\n", top+ph/2, top+ph/2, html.EscapeString(p.yLabel))
	// Series.
	for i, s := range p.series {
		col := palette[i%len(palette)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		var pts []string
		for _, pt := range s.Points {
			pts = append(pts, fmt.Sprintf("%.2f,%.2f", sx(pt.X), sy(pt.Y)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`+"\n", col, dash, strings.Join(pts, " "))
		if s.Dashed {
			continue
		}
		for _, pt := range s.Points {
			if pt.Lo < pt.Hi {
				fmt.Fprintf(&b, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s"/>`+"\n", sx(pt.X), sy(pt.Lo), sx(pt.X), sy(pt.Hi), col)
			}
			fmt.Fprintf(&b, `<circle cx="%.2f" cy="%.2f" r="2.5" fill="%s"/>`+"\n", sx(pt.X), sy(pt.Y), col)
		}
	}
	// Legend below the plot, two columns.
	for i, s := range p.series {
		col := palette[i%len(palette)]
		x := left + float64(i%3)*pw/3
		y := top + ph + 58 + float64(i/3)*18
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="1.5"%s/>`+"\n", x, y, x+24, y, col, dash)
		fmt.Fprintf(&b, `<text x="%g" y="%g" dominant-baseline="middle">%s</text>`+"\n", x+30, y, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// ticks returns about n round values covering [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	span := hi - lo
	// A span below the float spacing at this magnitude (or none at all)
	// would give a step that x += step cannot advance by: widen it.
	if floor := 1e-9 * math.Max(math.Abs(lo), math.Abs(hi)); !(span > floor) {
		mid := (lo + hi) / 2
		half := math.Max(floor, 1e-300)
		lo, hi, span = mid-half, mid+half, 2*half
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	start := math.Ceil(lo / step)
	for i := 0.0; i <= 4*float64(n)+4; i++ { // bounded: at most ~n ticks fit
		x := (start + i) * step
		if x > hi+step*1e-9 {
			break
		}
		out = append(out, x)
	}
	return out
}

func tickLabel(x float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.6g", x), ".")
}
