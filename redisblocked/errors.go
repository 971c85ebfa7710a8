package redisblocked

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: an invalid argument (a name, a shard count); it is
	// bloomlab.ErrParam.
	ErrParam = kind.ErrParam
	// ErrNotFound: no key of that name.
	ErrNotFound = errors.New("no such filter")
	// ErrNotFilter: the key holds something other than a bloomlab filter
	// of this layout (another type, another kind, damaged metadata). It
	// wraps bloomlab.ErrFormat.
	ErrNotFilter = fmt.Errorf("not a bloomlab filter in Redis: %w", format.ErrFormat)
	// ErrVersion: the key holds bloomlab metadata of a layout version
	// this build does not read. It wraps ErrNotFilter.
	ErrVersion = fmt.Errorf("unsupported layout version: %w", ErrNotFilter)
	// ErrExists: an upload found a filter of that name and was not told
	// to replace it.
	ErrExists = errors.New("filter exists")
	// ErrRetired: a shard of the generation the metadata names is missing
	// or retired, and stayed so while the operation retried (an upload
	// interrupted between retiring the old generation and switching the
	// metadata, or shard keys deleted or evicted behind the filter's
	// back). The operation did not happen; nothing is answered "absent".
	ErrRetired = errors.New("shard missing or retired")
	// ErrChanged: another writer replaced or deleted the filter while an
	// upload, a delete or a download ran; this one's work was discarded.
	ErrChanged = errors.New("filter changed concurrently")
)

// BatchError is the error of a batch operation some of whose keys failed
// (their shard's node down, a timeout, …). The operation succeeded for
// every key not in Failed: AddBatch's other keys are added,
// ContainsBatch's other answers are valid.
type BatchError struct {
	// Failed lists the indices (in the batch) of the keys whose operation
	// failed, in increasing order. ContainsBatch answers them true (may
	// be present), never false.
	Failed []int
	// Err is the first failure.
	Err error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("redisblocked: %d keys of the batch failed: %v", len(e.Failed), strings.TrimPrefix(e.Err.Error(), "redisblocked: "))
}

func (e *BatchError) Unwrap() error { return e.Err }
