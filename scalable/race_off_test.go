//go:build !race

package scalable

const raceEnabled = false
