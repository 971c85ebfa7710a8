package server

// Replies every family gives.

// errWrongType is Redis's reply to a command on a key of another type.
const errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// b2i is b as a RESP2 boolean (1 or 0).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
