package choices_test

import (
	"context"
	"fmt"

	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// A filter with two choices, filled online (000 §3.1).
func Example() {
	f, err := choices.New(choices.Config{M: 16_000, K: 13, C: 2, Scheme: hashing.Independent})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprint("key-", i))
	}
	fmt.Println(f.ContainsString("key-7"))
	fmt.Printf("predicted fill %.4f\n", theory.FillChoices(16, 13, 2))
	// Output:
	// true
	// predicted fill 0.5187
}

// Building offline from all keys (000 §3.2) sets fewer ones than adding
// them one by one.
func ExampleBuild() {
	var keys [][]byte
	for i := 0; i < 1000; i++ {
		keys = append(keys, []byte(fmt.Sprint("key-", i)))
	}
	cfg := choices.Config{M: 16_000, K: 14, C: 2, Scheme: hashing.Independent}
	online, _ := choices.Build(cfg, keys, 1) // one round: the online greedy
	offline, _ := choices.Build(cfg, keys, 10)
	fmt.Println(offline.Ones() < online.Ones(), offline.Contains(keys[999]))
	// Output: true true
}

// A KeyedFilter keeps its keys and re-optimises while lookups go on.
func ExampleKeyedFilter() {
	kf, _ := choices.NewKeyed(choices.Config{M: 16_000, K: 13, C: 2}, 10)
	for i := 0; i < 1000; i++ {
		kf.AddString(fmt.Sprint("key-", i))
	}
	done := make(chan bool)
	go func() {
		ok, _ := kf.Reoptimize(context.Background())
		done <- ok
	}()
	fmt.Println(kf.ContainsString("key-1")) // safe during the rebuild
	fmt.Println(<-done, kf.ContainsString("key-1"))
	// Output:
	// true
	// true true
}
