package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/topk"
)

// TestKill9TopK: one client adds batches of items to a decaying TOPK key
// (width 8, so that buckets decay on nearly every add) with -appendfsync
// always while another asks for snapshots all along; the server is
// killed with SIGKILL mid-load and started again. TOPK.LIST WITHCOUNT and
// TOPK.COUNT of every item are then exactly those of package topk fed the
// acknowledged batches (or one more: the batch in flight may have been
// logged before its reply was lost), computed here in the test: the
// decay's generator state travels in the snapshot and replay advances
// it as the commands did.
func TestKill9TopK(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "-appendfsync", "always", "-save", "0")
	ctx := context.Background()
	setup := client(p.addr)
	if err := setup.Do(ctx, "TOPK.RESERVE", "tk", 5, 8, 7, 0.9).Err(); err != nil {
		t.Fatal(err)
	}
	setup.Close()
	batch := func(b int) []string {
		out := make([]string, 9)
		for j := range out {
			out[j] = fmt.Sprint("i", (b*7+j*j+b*j)%23)
		}
		return out
	}
	acked := 0
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		rdb := client(p.addr)
		defer rdb.Close()
		for b := 0; ; b++ {
			select {
			case <-stop:
				return
			default:
			}
			args := []any{"TOPK.ADD", "tk"}
			for _, it := range batch(b) {
				args = append(args, it)
			}
			if err := rdb.Do(ctx, args...).Err(); err != nil {
				return
			}
			acked++
		}
	}()
	var snapshots int
	bgsaves(p.addr, stop, &wg, 5*time.Millisecond, &snapshots)
	killMidLoad(t, p, stop, &wg)
	if acked < 200 {
		t.Fatalf("only %d batches acknowledged before the kill: the test proves little", acked)
	}
	q := startServe(t, dir, "-appendfsync", "always", "-save", "0")
	rdb := client(q.addr)
	defer rdb.Close()
	state := func(list []topk.Entry, count func(string) uint32) string {
		s := fmt.Sprint(len(list))
		for _, e := range list {
			s += fmt.Sprintf(" %s:%d", e.Item, e.Count)
		}
		for i := 0; i < 23; i++ {
			s += fmt.Sprintf(" c%d", count(fmt.Sprint("i", i)))
		}
		return s
	}
	lst, err := rdb.Do(ctx, "TOPK.LIST", "tk", "WITHCOUNT").Slice()
	if err != nil {
		t.Fatal(err)
	}
	var got []topk.Entry
	for i := 0; i+1 < len(lst); i += 2 {
		got = append(got, topk.Entry{Item: []byte(lst[i].(string)), Count: uint32(lst[i+1].(int64))})
	}
	items := []any{"TOPK.COUNT", "tk"}
	for i := 0; i < 23; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	counts, err := rdb.Do(ctx, items...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	have := state(got, func(it string) uint32 {
		var i int
		fmt.Sscan(it[1:], &i)
		return uint32(counts[i])
	})
	sk, err := topk.New(topk.Config{K: 5, Width: 8, Depth: 7, Decay: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b <= acked; b++ {
		want := state(sk.List(nil), func(it string) uint32 { return sk.Count([]byte(it)) })
		if b >= acked && want == have {
			t.Logf("%d batches acknowledged, %d snapshots started; after restart the sketch of %d batches", acked, snapshots, b)
			return
		}
		for _, it := range batch(b) {
			sk.Add([]byte(it))
		}
	}
	want := state(sk.List(nil), func(it string) uint32 { return sk.Count([]byte(it)) })
	if want != have {
		t.Fatalf("after kill -9 and restart: %s\nwant (%d or %d batches) the library's %s", have, acked, acked+1, want)
	}
	t.Logf("%d batches acknowledged, %d snapshots started; after restart the sketch of %d batches", acked, snapshots, acked+1)
}
