package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/bloom"
)

// peerImport is a filter format of another Go library that import reads
// (import only: bloomlab does not write these formats).
type peerImport struct {
	format, kind, summary string
	flags                 []string // the import flags that go with this format
	read                  func(r io.Reader, o peerOptions) (bloomlab.Filter, error)
}

// peerOptions are import's flags for the peers' formats.
type peerOptions struct {
	endian, base64, hash *string
}

func peerImportFlags(fs *flag.FlagSet) peerOptions {
	return peerOptions{
		endian: fs.String("endian", "big", "-format bitsandblooms: the bitset's byte order, big (bitset's default) or little (written after bitset.LittleEndian())"),
		hash:   fs.String("hash", "", "-format blobloom: the 64-bit hash the program passed to blobloom's Add: "+strings.Join(bloom.BlobloomHashes(), ", ")+" (a blobloom dump does not record it; import does not guess)"),
		base64: fs.String("base64", "url", "-format bitsandblooms, JSON form: the bitset's base64 alphabet, url (bitset's default) or std (written after bitset.Base64StdEncoding())"),
	}
}

// peerImports are the peers' formats, one row each.
var peerImports = []peerImport{
	{
		format: "bitsandblooms", kind: "bloom",
		summary: "a github.com/bits-and-blooms/bloom/v3 filter: the bytes of WriteTo, MarshalBinary or GobEncode, or its MarshalJSON; " +
			"-endian little if written after bitset.LittleEndian(), -base64 std (JSON) after bitset.Base64StdEncoding() (import only)",
		flags: []string{"endian", "base64"},
		read: func(r io.Reader, o peerOptions) (bloomlab.Filter, error) {
			var bo bloom.BitsAndBloomsOptions
			switch *o.endian {
			case "big":
			case "little":
				bo.LittleEndian = true
			default:
				return nil, usagef("-endian %q: want big or little", *o.endian)
			}
			switch *o.base64 {
			case "url":
			case "std":
				bo.Base64Std = true
			default:
				return nil, usagef("-base64 %q: want url or std", *o.base64)
			}
			return bloom.ReadBitsAndBlooms(r, bo)
		},
	},
	{
		format: "boom-classic", kind: "bloom",
		summary: "a github.com/tylertreat/BoomFilters BloomFilter: the bytes of its WriteTo or GobEncode; only with its default hash, " +
			"FNV-1 64 (a filter given SetHash cannot be imported: the bytes do not record it) (import only)",
		read: func(r io.Reader, _ peerOptions) (bloomlab.Filter, error) { return bloom.ReadBoomFilters(r) },
	},
	{
		format: "boom-partitioned", kind: "partitioned",
		summary: "a github.com/tylertreat/BoomFilters PartitionedBloomFilter: the bytes of its WriteTo or GobEncode; " +
			"default hash only, as boom-classic (import only)",
		read: func(r io.Reader, _ peerOptions) (bloomlab.Filter, error) { return bloom.ReadBoomPartitioned(r) },
	},
	{
		format: "blobloom", kind: "bloom",
		summary: "a github.com/greatroar/blobloom Filter or SyncFilter: the bytes of Dump or DumpSync; -hash names the 64-bit hash " +
			"the program passed to Add (" + strings.Join(bloom.BlobloomHashes(), ", ") + ": cespare/xxhash/v2 Sum64), which the dump does not record (import only)",
		flags: []string{"hash"},
		read: func(r io.Reader, o peerOptions) (bloomlab.Filter, error) {
			if *o.hash == "" {
				return nil, usagef("-format blobloom needs -hash: a blobloom dump does not record the 64-bit hash your program passed to Add, and import does not guess it (one of: %s)", strings.Join(bloom.BlobloomHashes(), ", "))
			}
			if !slices.Contains(bloom.BlobloomHashes(), *o.hash) {
				return nil, usagef("-hash %q is not supported (one of: %s)", *o.hash, strings.Join(bloom.BlobloomHashes(), ", "))
			}
			return bloom.ReadBlobloom(r, *o.hash)
		},
	},
}

func findPeer(format string) *peerImport {
	for i := range peerImports {
		if peerImports[i].format == format {
			return &peerImports[i]
		}
	}
	return nil
}

// checkPeerFlags refuses a peer format's flag given with another format.
func checkPeerFlags(fs *flag.FlagSet, p *peerImport) error {
	for _, q := range peerImports {
		for _, f := range q.flags {
			if isSet(fs, f) && (p == nil || !contains(p.flags, f)) {
				return usagef("-%s goes with -format %s", f, q.format)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// importPeer reads in (a file, or "-": standard input) in the peer format
// p and writes it to out in the bloomlab format.
func importPeer(e *env, p *peerImport, in, out, kindName string, o peerOptions) error {
	if kindName != "" && kindName != p.kind {
		return usagef("-format %s imports as -kind %s, not %s", p.format, p.kind, kindName)
	}
	var r io.Reader = e.stdin
	if in != "-" {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			return usagef("%s is a directory (IN is a %s filter's bytes)", in, p.format)
		}
		fh, err := os.Open(in)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	// IN holds one filter: what follows it (a second filter, a gob
	// stream's framing, another format) is refused. The readers buffer
	// through bufio.NewReader, which takes this reader as it is, so what
	// they leave unread is still here.
	br := bufio.NewReaderSize(r, 64<<10)
	f, err := p.read(br, o)
	if err == nil {
		if _, perr := br.Peek(1); perr == nil {
			err = fmt.Errorf("bytes after the filter: IN must hold one %s filter and nothing else (a stream of encoding/gob frames the bytes: decode it first)", p.format)
		} else if perr != io.EOF {
			err = perr
		}
	}
	if err != nil {
		if _, ok := err.(*usageError); ok {
			return err
		}
		return &fileError{sourceName(in), fmt.Errorf("-format %s: %w", p.format, err)}
	}
	return e.writeOutput(out, f)
}
