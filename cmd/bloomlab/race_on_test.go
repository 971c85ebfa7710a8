//go:build race

package main

// raceEnabled: TestRestartPeakRSS measures a serve process's resident
// memory, which the race detector's shadow memory multiplies; it runs in
// CI's go test ./..., without -race.
const raceEnabled = true
