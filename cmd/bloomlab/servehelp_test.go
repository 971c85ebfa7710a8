package main

import (
	"strings"
	"testing"
)

// TestServeSummary: serve's help names every command family it serves
// (TOPK.* and TDIGEST.* were missing).
func TestServeSummary(t *testing.T) {
	s := lookup("serve").summary
	for _, fam := range []string{"BF.*", "CF.*", "CMS.*", "TOPK.*", "TDIGEST.*"} {
		if !strings.Contains(s, fam) {
			t.Errorf("serve's summary does not name %s: %s", fam, s)
		}
	}
}
