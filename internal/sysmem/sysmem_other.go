//go:build !linux

package sysmem

// Physical returns the machine's RAM in bytes, or 0 if unknown (always
// unknown off Linux).
func Physical() uint64 { return 0 }

// Limit returns the memory this process may use, or 0 if unknown (always
// unknown off Linux).
func Limit() uint64 { return 0 }

// HeapLimit is Limit (always unknown off Linux).
func HeapLimit() uint64 { return 0 }
