//go:build !race

package redisblocked

const raceEnabled = false
