package sqlitestore

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

const (
	// maxDepth bounds a b-tree's depth, as SQLite's own cursor does
	// (BTCURSOR_MAX_DEPTH).
	maxDepth = 20
	// maxRecord bounds one row's record: SQLite's default limit on a
	// string or blob is 1e9 bytes, an OpenClaw row holds a few KiB, and
	// reaper takes at most 64 KiB of a value. A longer row fails the read.
	maxRecord = 16 << 20
)

// The b-tree page types reaper reads: a table's interior and leaf pages.
const (
	tableInterior = 5
	tableLeaf     = 13
)

// walk calls fn with each row of the table b-tree rooted at root, in
// rowid order: its rowid and its record, valid until fn returns. A page
// met twice, a tree deeper than maxDepth, a cell outside its page or an
// overflow chain longer than its payload needs is a corrupt file: the
// walk stops there, never loops.
func (p *pager) walk(root uint32, fn func(rowid int64, record []byte) error) error {
	return p.walkPage(root, 0, map[uint32]bool{}, fn)
}

func (p *pager) walkPage(n uint32, depth int, seen map[uint32]bool, fn func(int64, []byte) error) error {
	if depth > maxDepth {
		return corrupt("a b-tree deeper than %d", maxDepth)
	}
	if seen[n] {
		return corrupt("page %d twice in one b-tree", n)
	}
	seen[n] = true
	b, err := p.page(n)
	if err != nil {
		return err
	}
	b = b[:p.usable]
	h := 0
	if n == 1 {
		h = headerSize
	}
	typ, cells := b[h], int(binary.BigEndian.Uint16(b[h+3:]))
	ptrs := h + 8
	if typ == tableInterior {
		ptrs = h + 12
	}
	if ptrs+2*cells > len(b) {
		return corrupt("page %d: %d cells", n, cells)
	}
	switch typ {
	case tableInterior:
		children := make([]uint32, 0, cells+1)
		for i := range cells {
			off := int(binary.BigEndian.Uint16(b[ptrs+2*i:]))
			if off < ptrs || off+4 > len(b) {
				return corrupt("page %d: a cell at %d", n, off)
			}
			children = append(children, binary.BigEndian.Uint32(b[off:]))
		}
		children = append(children, binary.BigEndian.Uint32(b[h+8:]))
		for _, c := range children {
			if err := p.walkPage(c, depth+1, seen, fn); err != nil {
				return err
			}
		}
		return nil
	case tableLeaf:
		for i := range cells {
			off := int(binary.BigEndian.Uint16(b[ptrs+2*i:]))
			if off < ptrs || off >= len(b) {
				return corrupt("page %d: a cell at %d", n, off)
			}
			rowid, record, err := p.cell(b, off)
			if err != nil {
				return err
			}
			if err := fn(rowid, record); err != nil {
				return err
			}
		}
		return nil
	}
	return corrupt("page %d is of type %d, not a table's", n, typ)
}

// cell reads the table leaf cell at off in page b: its rowid and its
// whole record, the part on the page and the rest from its overflow pages.
func (p *pager) cell(b []byte, off int) (int64, []byte, error) {
	size, k := varint(b[off:])
	if k == 0 {
		return 0, nil, corrupt("a cell cut short")
	}
	off += k
	rowid, k := varint(b[off:])
	if k == 0 {
		return 0, nil, corrupt("a cell cut short")
	}
	off += k
	if size > maxRecord {
		return 0, nil, corrupt("a row of %d bytes, more than %d MiB", size, maxRecord>>20)
	}
	total := int(size)
	local := p.localSize(total)
	if off+local > len(b) || (local < total && off+local+4 > len(b)) {
		return 0, nil, corrupt("a cell past its page's end")
	}
	if local == total {
		return int64(rowid), b[off : off+local], nil
	}
	record := make([]byte, local, total)
	copy(record, b[off:off+local])
	next := binary.BigEndian.Uint32(b[off+local:])
	for hops := 0; len(record) < total; hops++ {
		if next == 0 || hops > total/(p.usable-4)+1 {
			return 0, nil, corrupt("an overflow chain cut short")
		}
		o, err := p.page(next)
		if err != nil {
			return 0, nil, err
		}
		next = binary.BigEndian.Uint32(o)
		record = append(record, o[4:min(p.usable, 4+total-len(record))]...)
	}
	return int64(rowid), record, nil
}

// localSize is how much of a table leaf cell's payload of size bytes
// lies on its page (the file format's X, M and K).
func (p *pager) localSize(size int) int {
	u := p.usable
	x := u - 35
	if size <= x {
		return size
	}
	m := (u-12)*32/255 - 23
	if k := m + (size-m)%(u-4); k <= x {
		return k
	}
	return m
}

// varint decodes SQLite's big-endian variable-length integer; k is 0 when
// b is too short to hold it.
func varint(b []byte) (v uint64, k int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// The storage classes of a value.
const (
	Null byte = iota
	Integer
	Float
	Text
	Blob
)

// Value is one column's value in a row. Bytes (text and blob) points into
// the record: valid until the row's callback returns.
type Value struct {
	Class byte
	Int   int64
	Float float64
	Bytes []byte
}

// record decodes the fields at idx of a record into out (len(idx)); a
// field the record does not hold (a column added after the row was
// written) is Null, and missing reports it.
func decodeRecord(rec []byte, idx []int, out []Value) (missing []bool, err error) {
	hsize, k := varint(rec)
	if k == 0 || hsize > uint64(len(rec)) || int(hsize) < k {
		return nil, corrupt("a record's header")
	}
	// Each field's serial type and start, in order, as far as the
	// highest field wanted.
	want := 0
	for _, i := range idx {
		want = max(want, i+1)
	}
	types := make([]uint64, 0, want)
	starts := make([]int, 0, want)
	pos, body := k, int(hsize)
	for pos < int(hsize) && len(types) < want {
		t, k := varint(rec[pos:int(hsize)])
		if k == 0 {
			return nil, corrupt("a record's header")
		}
		pos += k
		types, starts = append(types, t), append(starts, body)
		n := fieldSize(t)
		if n < 0 || body+n > len(rec) {
			return nil, corrupt("a record's field past its end")
		}
		body += n
	}
	missing = make([]bool, len(idx))
	for j, i := range idx {
		if i >= len(types) {
			out[j], missing[j] = Value{}, true
			continue
		}
		out[j] = fieldValue(types[i], rec[starts[i]:starts[i]+fieldSize(types[i])])
	}
	return missing, nil
}

// fieldSize is the size in a record's body of a field of serial type t;
// -1 for the two reserved types.
func fieldSize(t uint64) int {
	switch {
	case t <= 4:
		return int(t)
	case t == 5:
		return 6
	case t == 6 || t == 7:
		return 8
	case t == 8 || t == 9:
		return 0
	case t == 10 || t == 11:
		return -1
	case t > 2*maxRecord+13:
		return -1
	}
	return int(t-12) / 2
}

func fieldValue(t uint64, b []byte) Value {
	switch {
	case t == 0:
		return Value{}
	case t <= 6:
		v := int64(int8(b[0])) // sign from the first byte
		for _, c := range b[1:] {
			v = v<<8 | int64(c)
		}
		return Value{Class: Integer, Int: v}
	case t == 7:
		return Value{Class: Float, Float: math.Float64frombits(binary.BigEndian.Uint64(b))}
	case t == 8 || t == 9:
		return Value{Class: Integer, Int: int64(t - 8)}
	case t%2 == 0:
		return Value{Class: Blob, Bytes: b}
	}
	return Value{Class: Text, Bytes: b}
}

// Is reports whether v is the text s, as a TEXT column's `= 's'` does.
func (v Value) Is(s string) bool { return v.Class == Text && string(v.Bytes) == s }

// String is v as `substr(v, 1, n)` scanned into a Go string: text cut to
// n characters, a blob to n bytes, a number in decimal; ok is false for
// NULL, which a string cannot hold.
func (v Value) String(n int) (s string, ok bool) {
	switch v.Class {
	case Text:
		b := v.Bytes
		for i, c := 0, 0; i < len(b); c++ {
			if c == n {
				b = b[:i]
				break
			}
			_, k := utf8.DecodeRune(b[i:])
			i += k
		}
		return string(b), true
	case Blob:
		return string(v.Bytes[:min(n, len(v.Bytes))]), true
	case Integer:
		return strconv.FormatInt(v.Int, 10), true
	case Float:
		return strconv.FormatFloat(v.Float, 'g', 15, 64), true
	}
	return "", false
}

// Int64 is v scanned into an int64: an integer, a text that is one in
// decimal, or a whole float; ok is false for anything else.
func (v Value) Int64() (int64, bool) {
	switch v.Class {
	case Integer:
		return v.Int, true
	case Text:
		n, err := strconv.ParseInt(string(v.Bytes), 10, 64)
		return n, err == nil
	case Float:
		if v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<63 {
			return int64(v.Float), true
		}
	}
	return 0, false
}
