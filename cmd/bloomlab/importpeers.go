package main

import (
	"fmt"
	"io"
	"os"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/bloom"
)

// peerImports are import's formats of other Go libraries' filters: the
// kind each makes and its reader (hash is -hash, for the formats that do
// not record their hash).
var peerImports = map[string]struct {
	kind, summary string
	read          func(r io.Reader, hash string) (*bloom.Filter, error)
}{
	"boom-classic": {"bloom", "tylertreat/BoomFilters BloomFilter, WriteTo/GobEncode bytes (default FNV-1 64 hash only)",
		func(r io.Reader, _ string) (*bloom.Filter, error) { return bloom.ReadBoomFilters(r) }},
	"boom-partitioned": {"partitioned", "tylertreat/BoomFilters PartitionedBloomFilter, WriteTo/GobEncode bytes (default FNV-1 64 hash only)",
		func(r io.Reader, _ string) (*bloom.Filter, error) { return bloom.ReadBoomPartitioned(r) }},
	"blobloom": {"bloom", "greatroar/blobloom Dump/DumpSync bytes; -hash names the hash the program gave Add (xxhash64)",
		bloom.ReadBlobloom},
}

// importPeer runs import for a format of peerImports.
func importPeer(e *env, format, in, out, kindName, hash string) error {
	p := peerImports[format]
	if kindName != "" && kindName != p.kind {
		return usagef("-format %s imports as kind %s, not %s", format, p.kind, kindName)
	}
	if format == "blobloom" && hash == "" {
		return usagef("-format blobloom needs -hash: a blobloom dump does not record the 64-bit hash your program passed to Add, and import does not guess it (supported: %v)", bloom.BlobloomHashes())
	}
	if format != "blobloom" && hash != "" {
		return usagef("-hash goes with -format blobloom")
	}
	var r io.Reader = e.stdin
	if in != "-" {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			return usagef("%s is a directory (IN is a dump file)", in)
		}
		fh, err := os.Open(in)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	f, err := p.read(r, hash)
	if err != nil {
		return &fileError{sourceName(in), err}
	}
	return e.writeOutput(out, bloomlab.Filter(f))
}

// peerFormatsHelp lists peerImports in import's help.
func peerFormatsHelp(w io.Writer) {
	for _, name := range []string{"boom-classic", "boom-partitioned", "blobloom"} {
		p := peerImports[name]
		fmt.Fprintf(w, "  -kind %s -format %s (import only): %s\n", p.kind, name, p.summary)
	}
}
