package rdb

// Offset returns the number of bytes of the input consumed so far (the
// header included). After Next it is the end of what Next read: a string
// key's value, a module value's id, an unsupported value's key; after a
// module value is read to its EOF opcode or skipped, or after Skip, the
// end of the value. `bloomlab rdb info` takes values' sizes from it.
func (r *Reader) Offset() int64 { return r.in.off }
