package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/internal/flagx"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/bloomlab/bloomlab/server"
	"github.com/bloomlab/bloomlab/tdigest"
	"github.com/bloomlab/bloomlab/topk"
)

func init() {
	register(&command{
		name: "rdb",
		summary: "Redis RDB files (versions 10 to 12: Redis 7.0 to 8.x). info lists the keys of DUMP.rdb, streaming it: database, " +
			"type (RedisBloom's module types with their family: MBbloom-- (BF), MBbloomCF (CF), CMSk-TYPE (CMS), TopK-TYPE (TOPK), " +
			"TDIS-TYPE (TDIGEST)), the value's size in the file, expiry and key, then the RDB version, the AUX fields and the keys per " +
			"type; keys of database 0 unless -db N or -all-dbs. write writes the dataset of a stopped server's -dir (its snapshot and " +
			"log replayed, under the directory's lock) as an RDB file that Redis 7.0 to 8.x with RedisBloom loads; keys of bloomlab's own " +
			"kinds, which Redis cannot load, are refused by name unless -skip-unsupported. 'bloomlab import -format rdb -key KEY' turns " +
			"one BF, CF or CMS key into a bloomlab file, 'bloomlab serve -load-rdb' loads a whole file (docs/RDB.md).",
		usage: "bloomlab rdb info [-db N|-all-dbs] [-json] DUMP.rdb | rdb write [-dialect 8|2.4] [-rdb-version 10|11|12] [-skip-unsupported] [-no-compress] -dir DIR -o DUMP.rdb",
		run:   runRDB,
	})
}

func runRDB(e *env, args []string) error {
	if len(args) == 0 || args[0] != "info" && args[0] != "write" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return &helpRequest{fs: flagSet("rdb")}
		}
		return usagef("want info or write")
	}
	if args[0] == "info" {
		return runRDBInfo(e, args[1:])
	}
	return runRDBWrite(e, args[1:])
}

// now is the clock that says whether a key has expired (tests set it).
var now = time.Now

// redisBloomFamily names the command family of RedisBloom's module types.
var redisBloomFamily = map[string]string{
	scalable.RDBTypeName:  "BF",
	redisbloom.CFTypeName: "CF",
	countmin.RDBTypeName:  "CMS",
	topk.RDBTypeName:      "TOPK",
	tdigest.RDBTypeName:   "TDIGEST",
}

// typeLabel names the type of e's value: "string", a RedisBloom type
// with its family ("MBbloom-- (BF)"), another module's 9-character type
// name, or Redis's name of the type and its encoding ("hash (listpack)").
func typeLabel(e *rdb.Entry) string {
	switch {
	case e.Module != nil:
		if f, ok := redisBloomFamily[e.Module.Name]; ok {
			return e.Module.Name + " (" + f + ")"
		}
		return e.Module.Name
	case e.Type == rdb.TypeString:
		return "string"
	}
	return rdb.TypeName(e.Type)
}

// showKey returns a key as it can be printed on one line: as it is when
// it is printable UTF-8 without blanks, quotes or backslashes, otherwise
// quoted with Go's escapes ("a b", "\x00\xff").
func showKey(k []byte) string {
	if len(k) > 0 && utf8.Valid(k) {
		plain := true
		for _, r := range string(k) {
			if !strconv.IsGraphic(r) || r == ' ' || r == '"' || r == '\\' || r == '\'' || r == '\u00a0' {
				plain = false
				break
			}
		}
		if plain {
			return string(k)
		}
	}
	return strconv.Quote(string(k))
}

// lenSize is the bytes of an RDB length encoding of n.
func lenSize(n uint64) int64 {
	switch {
	case n < 1<<6:
		return 1
	case n < 1<<14:
		return 2
	case n <= math.MaxUint32:
		return 5
	}
	return 9
}

// rdbFileError is an error about an RDB file: "FILE: at byte N: …".
type rdbFileError struct {
	file string
	err  error
}

func (e *rdbFileError) Error() string {
	return e.file + ": " + strings.TrimPrefix(e.err.Error(), "rdb: ")
}

func (e *rdbFileError) Unwrap() error { return e.err }

// openRDB opens the RDB file path ("-": standard input) and reads its
// header. The caller closes the returned closer.
func openRDB(e *env, path string) (*rdb.Reader, io.Closer, error) {
	var in io.Reader = e.stdin
	var c io.Closer = io.NopCloser(nil)
	// Neither rdb info nor import needs a string's bytes: a string of
	// the file is passed over (its length kept), never held whole.
	lim := rdb.Limits{SkipStrings: true}
	if path != "-" {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return nil, nil, usagef("%s is a directory (want an RDB file)", path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if st.Mode().IsRegular() {
			lim.InputSize = st.Size()
		}
		in, c = f, f
	}
	r, err := rdb.NewReader(in, lim)
	if err != nil {
		c.Close()
		return nil, nil, &rdbFileError{sourceName(path), err}
	}
	return r, c, nil
}

// rdbKeyInfo is one key of rdb info; its JSON form is documented in
// docs/RDB.md.
type rdbKeyInfo struct {
	DB       uint64  `json:"db"`
	Key      string  `json:"key"`
	KeyHex   string  `json:"key_hex,omitempty"`
	Type     string  `json:"type"`
	Module   string  `json:"module,omitempty"`
	EncVer   *int    `json:"encver,omitempty"`
	Size     int64   `json:"size"`
	Expire   *string `json:"expire"`
	ExpireMs *int64  `json:"expire_ms,omitempty"`
	Expired  bool    `json:"expired,omitempty"`
}

// rdbAux is one AUX field in rdb info's JSON.
type rdbAux struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func runRDBInfo(e *env, args []string) error {
	fs := flagSet("rdb info")
	db := flagx.NewCount(fs, "db", 0, math.MaxUint32, "list the keys of database `N`")
	all := fs.Bool("all-dbs", false, "list the keys of every database")
	asJSON := fs.Bool("json", false, "print JSON (docs/RDB.md)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one DUMP.rdb (\"-\": standard input)")
	}
	if *all && db.Given {
		return usagef("-db N and -all-dbs go separately")
	}
	r, c, err := openRDB(e, pos[0])
	if err != nil {
		return err
	}
	defer c.Close()

	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	counts := map[string]int64{}
	other := map[uint64]int64{}
	var keys, expired, bytes int64
	at := now().UnixMilli()
	first := true
	if *asJSON {
		fmt.Fprintf(out, "{\n  \"file\": %s,\n  \"rdb_version\": %d,\n  \"keys\": [", jsonLine(sourceName(pos[0])), r.Version())
	} else {
		fmt.Fprintf(out, "%-3s %-20s %12s  %-32s %s\n", "DB", "TYPE", "SIZE", "EXPIRY", "KEY")
	}
	list := func(k rdbKeyInfo) {
		if *asJSON {
			if !first {
				out.WriteByte(',')
			}
			fmt.Fprintf(out, "\n    %s", jsonLine(k))
		} else {
			exp := "none"
			if k.Expire != nil {
				exp = *k.Expire
				if k.Expired {
					exp += " expired"
				}
			}
			size := strconv.FormatInt(k.Size, 10)
			if k.Size < 0 {
				size = "?"
			}
			fmt.Fprintf(out, "%-3d %-20s %12s  %-32s %s\n", k.DB, k.Type, size, exp, showKey([]byte(k.Key)))
		}
		first = false
	}
	var fault error
	for {
		ent, err := r.Next()
		if err == io.EOF {
			break
		}
		var ute *rdb.UnsupportedTypeError
		if err != nil && !errors.As(err, &ute) {
			fault = err
			break
		}
		if !*all && ent.DB != db.V {
			other[ent.DB]++
			if ute != nil {
				if err := r.Skip(); err != nil {
					fault = notListed(err, ent.Type)
					break
				}
			}
			continue
		}
		k := rdbKeyInfo{DB: ent.DB, Key: string(ent.Key), Type: typeLabel(ent)}
		if !utf8.Valid(ent.Key) {
			k.KeyHex = hex.EncodeToString(ent.Key)
		}
		if ent.ExpireMs != -1 { // -1: none, as in Redis; a negative time has passed
			s := time.UnixMilli(ent.ExpireMs).UTC().Format("2006-01-02T15:04:05.000Z07:00")
			ms := ent.ExpireMs
			k.Expire, k.ExpireMs = &s, &ms
			if ent.ExpireMs <= at {
				k.Expired = true
				expired++
			}
		}
		switch {
		case ent.Module != nil:
			k.Module = ent.Module.Name
			v := ent.Module.EncVer
			k.EncVer = &v
			begin := r.Offset() - lenSize(ent.Module.ID)
			if err := ent.Module.Skip(); err != nil {
				k.Size = -1
				list(k)
				fault = err
				break
			}
			k.Size = r.Offset() - begin
		case ute != nil:
			begin := r.Offset()
			if err := r.Skip(); err != nil {
				k.Size = -1
				list(k)
				fault = notListed(err, ent.Type)
				break
			}
			k.Size = r.Offset() - begin
		default: // a string: its length
			k.Size = ent.StringLen
		}
		if fault != nil {
			break
		}
		list(k)
		keys++
		bytes += k.Size
		counts[k.Type]++
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	dbs := make([]uint64, 0, len(other))
	for d := range other {
		dbs = append(dbs, d)
	}
	sort.Slice(dbs, func(i, j int) bool { return dbs[i] < dbs[j] })
	where := "every database"
	if !*all {
		where = "db " + strconv.FormatUint(db.V, 10)
	}
	if *asJSON {
		aux := make([]rdbAux, 0, len(r.Aux()))
		for _, a := range r.Aux() {
			aux = append(aux, rdbAux{a.Key, a.Value})
		}
		ob := map[string]int64{}
		for d, n := range other {
			ob[strconv.FormatUint(d, 10)] = n
		}
		tail := struct {
			Aux     []rdbAux         `json:"aux"`
			Keys    int64            `json:"key_count"`
			Bytes   int64            `json:"value_bytes"`
			Counts  map[string]int64 `json:"types"`
			Expired int64            `json:"expired"`
			Other   map[string]int64 `json:"other_dbs,omitempty"`
			Error   string           `json:"error,omitempty"`
		}{aux, keys, bytes, counts, expired, ob, ""}
		if fault != nil {
			tail.Error = (&rdbFileError{sourceName(pos[0]), fault}).Error()
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(tail)
		// The tail's fields follow "keys" in the same object.
		fields := strings.TrimSuffix(strings.TrimPrefix(b.String(), "{\n"), "\n}\n")
		if !first {
			out.WriteString("\n  ")
		}
		fmt.Fprintf(out, "],\n%s\n}\n", fields)
	} else {
		fmt.Fprintf(out, "\nRDB version %d", r.Version())
		for _, a := range r.Aux() {
			fmt.Fprintf(out, ", %s %s", a.Key, showKey([]byte(a.Value)))
		}
		fmt.Fprintf(out, "\n%d keys in %s (values %d bytes)", keys, where, bytes)
		for i, t := range types {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			fmt.Fprintf(out, "%s%d %s", sep, counts[t], t)
		}
		fmt.Fprintln(out)
		if expired > 0 {
			fmt.Fprintf(out, "%d of them expired (Redis drops them when it loads the file)\n", expired)
		}
		if len(dbs) > 0 {
			var parts []string
			var n int64
			for _, d := range dbs {
				parts = append(parts, fmt.Sprintf("db %d: %d", d, other[d]))
				n += other[d]
			}
			fmt.Fprintf(out, "%d keys in other databases (%s), not listed: -db N or -all-dbs lists them\n", n, strings.Join(parts, ", "))
		}
	}
	if fault != nil {
		out.Flush()
		return &rdbFileError{sourceName(pos[0]), fault}
	}
	return nil
}

// jsonLine is v as JSON on one line, without escaping <, > and &.
func jsonLine(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// notListed says, of a value that cannot be passed over, that the keys
// after it are not listed.
func notListed(err error, typ byte) error {
	if rdb.CanSkip(typ) {
		return err
	}
	return fmt.Errorf("%w; the keys after it are not listed", err)
}

func runRDBWrite(e *env, args []string) error {
	fs := flagSet("rdb write")
	dialect := fs.String("dialect", "8", "module encoding versions and AUX fields of this RedisBloom: 8 (8.6.2, Redis 8) or 2.4 (2.4.23, Redis 7.0)")
	version := fs.Int("rdb-version", 10, "RDB version: 10 (Redis 7.0 and later load it), 11 (7.2 and later) or 12 (7.4 and later)")
	skip := fs.Bool("skip-unsupported", false, "leave out the keys of bloomlab's own kinds (blocked-layout BF keys included), which Redis cannot load, instead of refusing the whole file")
	noCompress := fs.Bool("no-compress", false, "write strings without LZF compression (Redis's rdbcompression no)")
	dir := fs.String("dir", "", "the directory of a stopped bloomlab serve (its snapshot and log)")
	out := fs.String("o", "", "the RDB file to write (\"-\": standard output)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q (write takes -dir DIR -o DUMP.rdb)", pos[0])
	}
	if *dir == "" || *out == "" {
		return usagef("-dir DIR and -o DUMP.rdb are required")
	}
	dia, err := server.ParseDialect(*dialect)
	if err != nil {
		return usagef("-dialect: %v", err)
	}
	if *version < rdb.MinVersion || *version > rdb.MaxVersion {
		return usagef("-rdb-version %d: want 10, 11 or 12", *version)
	}
	st, err := os.Stat(*dir)
	if err != nil {
		return err
	} else if !st.IsDir() {
		return usagef("-dir %s is not a directory", *dir)
	}
	if *out != "-" {
		// The file, its temporary and its lock would go into the
		// server's directory (-o DIR/bloomlab.snap would replace the
		// snapshot with the RDB file).
		if pst, err := os.Stat(filepath.Dir(*out)); err == nil && os.SameFile(pst, st) {
			return usagef("-o %s is in -dir %s, which rdb write writes nothing into (its snapshot and log are the dataset): write the file elsewhere", *out, *dir)
		}
	}
	opt := server.RDBWriteOptions{Version: *version, Dialect: dia, SkipUnsupported: *skip, NoCompress: *noCompress}
	var stats server.RDBStats
	write := func(w io.Writer) error {
		var err error
		stats, err = server.WriteRDB(*dir, w, opt)
		return err
	}
	name := *out
	if *out == "-" {
		if isTerminal(e.stdout) {
			return usagef("-o - writes a binary RDB file to standard output, which is a terminal; redirect it or give a file")
		}
		bw := bufio.NewWriterSize(e.stdout, 1<<20)
		if err := write(bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		name = "standard output"
	} else {
		l, err := lockPath(*out, false)
		if err != nil {
			return err
		}
		defer l.unlock()
		if err := writeFileAtomic(*out, write); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "bloomlab rdb write: %d keys written to %s (RDB version %d, dialect %s)%s\n", stats.Keys, name, *version, dia, skippedText(stats.Skipped))
	if stats.Expired > 0 {
		fmt.Fprintf(e.stderr, "bloomlab rdb write: %d expired keys left out\n", stats.Expired)
	}
	return nil
}

// skippedText lists keys left out by kind: "; skipped 2 keys: 1 blocked, 1 dleft".
func skippedText(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	var names []string
	var n int64
	for k, v := range m {
		names = append(names, k)
		n += v
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return fmt.Sprintf("; skipped %d keys Redis cannot load: %s", n, strings.Join(parts, ", "))
}
