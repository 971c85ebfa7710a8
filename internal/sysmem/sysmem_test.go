package sysmem

import "testing"

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1536, "1.5 KiB"}, {1 << 30, "1 GiB"},
		{23.4 * (1 << 30), "23.4 GiB"}, {1 << 50, "1 PiB"},
	} {
		if got := FormatBytes(c.b); got != c.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}
