package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/flagx"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"github.com/bloomlab/bloomlab/internal/sysmem"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
)

// rdbImport are import's flags for -format rdb.
type rdbImport struct {
	key  *string
	db   *flagx.Count
	skip *bool
}

func rdbImportFlags(fs *flag.FlagSet) rdbImport {
	return rdbImport{
		key:  fs.String("key", "", "-format rdb: the key to import"),
		db:   flagx.NewCount(fs, "db", 0, math.MaxUint32, "-format rdb: the database of the key"),
		skip: fs.Bool("skip-unsupported", false, "-format rdb: pass over keys of types bloomlab does not load (lists, hashes, sets, sorted sets, streams, other modules' types) met before the key, instead of stopping"),
	}
}

// rdbKinds are the kinds import -format rdb makes, by module type name.
var rdbKinds = map[string]string{
	scalable.RDBTypeName:  "scalable",
	redisbloom.CFTypeName: "cuckoo",
	countmin.RDBTypeName:  "countmin",
}

// loadable reports whether bloomlab serve loads keys of e's type: strings
// and RedisBloom's five module types.
func loadable(e *rdb.Entry) bool {
	if e.Module != nil {
		_, ok := redisBloomFamily[e.Module.Name]
		return ok
	}
	return e.Type == rdb.TypeString
}

// importRDB reads key o.key of database o.db from the RDB file in and
// writes it to out as a bloomlab file. It streams the file: the keys
// before and after the key are passed over without being decoded, and
// the file is read to its end so that its checksum covers the key before
// anything is written.
func importRDB(e *env, in, out, kindName string, o rdbImport) error {
	if *o.key == "" {
		return usagef("-format rdb needs -key KEY")
	}
	key, db := []byte(*o.key), o.db.V
	name := sourceName(in)
	r, c, err := openRDB(e, in)
	if err != nil {
		return err
	}
	defer c.Close()
	fail := func(err error) error { return &rdbFileError{name, err} }
	var (
		f        bloomlab.Filter
		skipped  int64
		otherDBs []uint64
		held     int64
	)
	// The value's size is checked against the memory the process may use
	// before it is allocated: the kinds' readers call alloc with the bytes
	// each allocation adds.
	limit := sysmem.Limit()
	alloc := func(n int64) error {
		held += n
		if limit > 0 && held > 0 && uint64(held) > limit {
			return fmt.Errorf("key %s needs %s, more than this process may use (%s): %w", showKey(key), sysmem.FormatBytes(float64(held)), sysmem.FormatBytes(float64(limit)), bloomlab.ErrTooLarge)
		}
		return nil
	}
	if *o.skip {
		defer func() {
			fmt.Fprintf(e.stderr, "bloomlab import: passed over %d keys of types bloomlab does not load (-skip-unsupported)\n", skipped)
		}()
	}
	for {
		ent, err := r.Next()
		if err == io.EOF {
			break
		}
		var ute *rdb.UnsupportedTypeError
		if err != nil && !errors.As(err, &ute) {
			if f != nil {
				return fail(fmt.Errorf("%w (after key %s: the file is damaged, nothing written)", err, showKey(key)))
			}
			return fail(err)
		}
		if f != nil {
			// Past the key: read on only to verify the checksum.
			if ute != nil {
				if !rdb.CanSkip(ent.Type) {
					fmt.Fprintf(e.stderr, "bloomlab: warning: %s: key %s (db %d, %s) after %s cannot be passed over: the file's checksum is not verified\n", name, showKey(ent.Key), ent.DB, typeLabel(ent), showKey(key))
					break
				}
				if err := r.Skip(); err != nil {
					return fail(err)
				}
			}
			continue
		}
		if ent.DB == db && bytes.Equal(ent.Key, key) {
			if f, err = importEntry(ent, name, kindName, alloc); err != nil {
				return err
			}
			continue
		}
		if bytes.Equal(ent.Key, key) {
			otherDBs = append(otherDBs, ent.DB)
		}
		if ent.DB == db && !loadable(ent) {
			if !*o.skip {
				return fail(fmt.Errorf("key %s (db %d), before %s, is a %s, which bloomlab does not load; -skip-unsupported passes over such keys", showKey(ent.Key), ent.DB, showKey(key), typeLabel(ent)))
			}
			skipped++
		}
		if ute != nil {
			if err := r.Skip(); err != nil {
				return fail(fmt.Errorf("%w; %s was not reached", err, showKey(key)))
			}
		}
	}
	if f == nil {
		msg := fmt.Sprintf("no key %s in db %d", showKey(key), db)
		if len(otherDBs) > 0 {
			msg += fmt.Sprintf(" (there is one in db %d: give -db %d)", otherDBs[0], otherDBs[0])
		}
		return fail(errors.New(msg))
	}
	return e.writeOutput(out, f)
}

// importEntry decodes the value of the key import asked for.
func importEntry(ent *rdb.Entry, file, kindName string, alloc func(int64) error) (bloomlab.Filter, error) {
	k := showKey(ent.Key)
	fail := func(msg string) error {
		return &rdbFileError{file, fmt.Errorf("key %s (db %d) %s", k, ent.DB, msg)}
	}
	if ent.ExpireMs != -1 && ent.ExpireMs <= now().UnixMilli() {
		return nil, fail(fmt.Sprintf("expired at %s: Redis drops it when it loads the file, so it is not imported", time.UnixMilli(ent.ExpireMs).UTC().Format(time.RFC3339Nano)))
	}
	if ent.Module == nil {
		return nil, fail(fmt.Sprintf("is a %s, not a BF, CF or CMS key", typeLabel(ent)))
	}
	kn, ok := rdbKinds[ent.Module.Name]
	if !ok {
		if _, rb := redisBloomFamily[ent.Module.Name]; rb {
			return nil, fail(fmt.Sprintf("is a %s key, which is not a filter: bloomlab serve -load-rdb %s loads it with the rest of the file", typeLabel(ent), file))
		}
		return nil, fail(fmt.Sprintf("is a module value of type %s, not a BF, CF or CMS key", ent.Module.Name))
	}
	if kindName != "" && kindName != kn {
		return nil, usagef("key %s is a %s, which imports as -kind %s, not %s", k, typeLabel(ent), kn, kindName)
	}
	var (
		f   bloomlab.Filter
		err error
	)
	switch ent.Module.Name {
	case scalable.RDBTypeName:
		var x *scalable.Filter
		if x, err = scalable.ReadRedisBloomRDB(ent.Module, alloc); err == nil {
			f = x
		}
	case redisbloom.CFTypeName:
		var x *cuckoo.Filter
		if x, err = cuckoo.ReadRedisBloomRDB(ent.Module, alloc); err == nil {
			f = x
		}
	default:
		var x *countmin.Sketch
		if x, err = countmin.ReadRedisBloomRDB(ent.Module, alloc); err == nil {
			f = x
		}
	}
	if err != nil {
		var ve *rdb.ValueError
		if err = ent.Module.Err(err); errors.As(err, &ve) {
			return nil, &rdbFileError{file, fmt.Errorf("db %d: %w", ent.DB, err)}
		}
		return nil, &rdbFileError{file, fmt.Errorf("key %s (db %d): %w", k, ent.DB, err)}
	}
	return f, nil
}
