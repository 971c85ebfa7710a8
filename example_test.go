package bloomlab_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/bloom"
)

// Reading a file without knowing its kind: ReadFrom returns whatever the
// file holds as a bloomlab.Filter; a type assertion gives the kind's own
// API. A file that is not a bloomlab filter is an error wrapping
// ErrFormat.
func ExampleReadFrom() {
	b, err := bloom.NewWithEstimates(1000, 0.01)
	if err != nil {
		panic(err)
	}
	b.AddString("alice")
	var file bytes.Buffer // a file written by bloomlab build, WriteTo, …
	if _, err := b.WriteTo(&file); err != nil {
		panic(err)
	}

	f, err := bloomlab.ReadFrom(&file)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Kind(), f.N(), f.Capacity(), f.Contains([]byte("alice")), f.Contains([]byte("bob")))
	if bf, ok := f.(*bloom.Filter); ok {
		fmt.Println("m =", bf.M(), "k =", bf.K())
	}

	_, err = bloomlab.ReadFrom(strings.NewReader("not a filter"))
	fmt.Println(errors.Is(err, bloomlab.ErrFormat))
	// Output:
	// bloom 1 1000 true false
	// m = 9601 k = 7
	// true
}
