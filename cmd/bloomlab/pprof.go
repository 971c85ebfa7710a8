package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
)

// servePprof serves Go's runtime profiles (CPU, heap, goroutines, and the
// mutex and block profiles, which it switches on) on addr for `serve
// -pprof`: `go tool pprof http://ADDR/debug/pprof/profile?seconds=10`
// while a load runs. It returns a function that stops serving them.
func servePprof(addr string, stderr io.Writer) (func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	runtime.SetMutexProfileFraction(100)
	runtime.SetBlockProfileRate(10000) // one blocking event in each 10 µs blocked
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	fmt.Fprintf(stderr, "bloomlab serve: profiles on http://%s/debug/pprof/\n", l.Addr())
	return func() {
		srv.Close()
		runtime.SetMutexProfileFraction(0)
		runtime.SetBlockProfileRate(0)
	}, nil
}
