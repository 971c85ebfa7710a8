package cuckoo_test

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/cuckoo"
)

// A filter for a million keys at 0.1%: add, query, count, delete.
func Example() {
	f, err := cuckoo.NewWithEstimates(1_000_000, 0.001, 0)
	if err != nil {
		panic(err)
	}
	_ = f.AddString("alice")
	_ = f.AddString("bob")
	_ = f.AddString("bob")
	fmt.Println(f.ContainsString("alice"), f.Count([]byte("bob")), f.N())
	f.Delete([]byte("bob"))
	fmt.Println(f.ContainsString("bob"), f.Count([]byte("bob")), f.N())
	fmt.Println(f.Delete([]byte("carol")))
	in := f.Info()
	fmt.Printf("%d buckets of %d × %d bits, %.1f bits per key at capacity\n",
		in.Buckets, in.BucketSize, in.FingerprintBits, float64(f.Bits())/float64(f.Capacity()))
	// Output:
	// true 2 3
	// true 1 2
	// false
	// 278528 buckets of 4 × 13 bits, 14.5 bits per key at capacity
}

// A full filter refuses a key and changes nothing: every key it took
// stays present.
func ExampleFilter_Add_full() {
	f, _ := cuckoo.New(cuckoo.Config{Buckets: 64, FingerprintBits: 16})
	n := 0
	var err error
	for ; err == nil; n++ {
		err = f.Add([]byte(fmt.Sprint("key-", n)))
	}
	n-- // the last one was refused
	all := true
	for i := 0; i < n; i++ {
		all = all && f.Contains([]byte(fmt.Sprint("key-", i)))
	}
	fmt.Println(errors.Is(err, cuckoo.ErrFull), f.N() == uint64(n), all, f.Info().LoadFactor > 0.9)
	// Output: true true true true
}

// RedisBloom's CF filter: CF.RESERVE, CF.ADD, CF.SCANDUMP and
// CF.LOADCHUNK, bit for bit.
func ExampleNewRedisBloom() {
	f, _ := cuckoo.NewRedisBloom(1000, 2, 20, 1) // CF.RESERVE cf 1000
	for i := 0; i < 50; i++ {
		_ = f.Add([]byte(fmt.Sprint("c", i))) // CF.ADD cf c<i>
	}
	info := f.Info() // CF.INFO
	fmt.Println(info.Size, info.Buckets, info.SubFilters, info.N)
	chunks, _ := f.Dump(0) // what CF.SCANDUMP returns
	var ld cuckoo.Loader   // what CF.LOADCHUNK rebuilds
	for _, c := range chunks {
		fmt.Println(c.Iter, len(c.Data))
		_ = ld.LoadChunk(c.Iter, c.Data)
	}
	g, _ := ld.Filter()
	fmt.Println(g.Equal(f), g.Contains([]byte("c7")))
	// Output:
	// 1080 512 1 50
	// 1 38
	// 1025 1024
	// true true
}
