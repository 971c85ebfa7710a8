//go:build race

package scalable

// raceEnabled: the statistical tests, which run without -race in CI's
// go test ./..., are skipped under the race detector (TestTargetMet took
// 100 s of CI's -race -short run).
const raceEnabled = true
