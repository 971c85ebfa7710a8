package redisblocked_test

import (
	"io"
	"os"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
)

// TestExample runs Example against a redis-server started on a free port
// (Example has no Output, since go test alone has no Redis) and checks what
// it prints.
func TestExample(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	t.Setenv("REDIS_ADDR", s.Addr)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	func() {
		defer func() { os.Stdout = stdout; w.Close() }()
		Example()
	}()
	got := string(<-done)
	const want = "alice true\nbob true\ncarol false\n1933 blocks in 1 shard\n"
	if got != want {
		t.Errorf("Example printed\n%s\nwant\n%s", got, want)
	}
}
