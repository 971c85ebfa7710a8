package flagx

import "testing"

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"1000000", 1000000, true}, {"1_000_000", 1000000, true},
		{"1e15", 1000000000000000, true}, {"1000000000000000", 1000000000000000, true},
		{"2.5e3", 2500, true}, {"1E6", 1000000, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"1e19", 10000000000000000000, true}, {"1e20", 0, false}, {"18446744073709551616", 0, false}, {"-5", 0, false}, {"-0", 0, false},
		{"1.5", 0, false}, {"1e-3", 0, false}, {"abc", 0, false}, {"", 0, false}, {"inf", 0, false},
		{"NaN", 0, false}, {"0x10", 0, false}, {"1__0", 0, false}, {"_1", 0, false},
		{"1e-1000000000", 0, false}, {"1e1000000000", 0, false}, {"1e99999999999999999999", 0, false},
		{"1e-99999999999999999999", 0, false}, {"0e-1000000000", 0, true}, {"0e5", 0, true}, {"1e+6", 1000000, true},
	} {
		got, err := ParseCount(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestCountMax(t *testing.T) {
	c := Count{Max: 10}
	if err := c.Set("11"); err == nil {
		t.Error("accepted a value above Max")
	}
	if err := c.Set("1e1"); err != nil || c.V != 10 || !c.Given {
		t.Errorf("Set(1e1) = %v, %d", err, c.V)
	}
}
