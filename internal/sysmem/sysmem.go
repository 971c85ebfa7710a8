// Package sysmem reports the machine's physical memory, so that the
// command and the lab can refuse an allocation larger than the machine
// instead of ending the process with Go's fatal out-of-memory error (which
// no recover catches).
package sysmem

import (
	"fmt"
	"strconv"
)

// FormatBytes renders a size in bytes with binary units, three significant
// digits: "512 B", "1.5 KiB", "23.4 GiB", "16 EiB".
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', -1, 64) + " B"
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}
