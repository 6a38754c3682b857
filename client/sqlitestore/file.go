package sqlitestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// reaper reads the SQLite file format itself, read-only, as the format's
// document describes it (https://www.sqlite.org/fileformat2.html): the
// database header, its table b-trees, the records in their cells, their
// overflow chains, and the WAL's frames. It never runs a statement the
// file holds (a view, a trigger, a generated column) and never writes: it
// is a reader of a file format, bounded in what it reads and how long it
// takes, and it links no SQLite engine (whose package initialisation cost
// every run of reaper some 3 ms and half its binary).

// fileError is a store whose bytes are not a database reaper can read.
type fileError struct{ msg string }

func (e *fileError) Error() string { return e.msg }

func corrupt(format string, args ...any) error {
	return &fileError{"not a database reaper can read: " + fmt.Sprintf(format, args...)}
}

// errDeadline: the read went past its Timeout.
var errDeadline = errors.New("deadline")

const (
	headerSize = 100
	// walFrameHeader is the size of a WAL frame's header.
	walFrameHeader = 24
	// maxPages bounds the pages one read visits, over all its tables
	// (4 GiB of 4 KiB pages): more is not an OpenClaw store.
	maxPages = 1 << 20
)

// pager serves a database's pages as of the last transaction its WAL
// committed when the read began: a page the WAL holds from the WAL, every
// other from the database file.
type pager struct {
	db       io.ReaderAt
	dbSize   int64
	wal      io.ReaderAt
	pageSize int
	usable   int              // pageSize less the reserved bytes at each page's end
	pages    uint32           // the database's size in pages
	frames   map[uint32]int64 // page number → offset of its newest committed frame's data
	deadline time.Time
	read     int // pages read so far
}

// openPager reads the database header and replays the WAL's committed
// frames (walSize 0: no WAL).
func openPager(db io.ReaderAt, dbSize int64, wal io.ReaderAt, walSize int64, deadline time.Time) (*pager, error) {
	p := &pager{db: db, dbSize: dbSize, wal: wal, deadline: deadline}
	var h [headerSize]byte
	if dbSize < headerSize {
		if dbSize == 0 && walSize > 0 {
			// A database created in WAL mode whose first transaction
			// lives only in the WAL: its page 1 is a frame.
			return p, p.replayWAL(walSize, true)
		}
		return nil, corrupt("%d bytes, shorter than its header", dbSize)
	}
	if _, err := db.ReadAt(h[:], 0); err != nil {
		return nil, err
	}
	if err := p.header(h[:]); err != nil {
		return nil, err
	}
	// The header's page count is valid when its change counter matches
	// the version-valid-for number; else the file's size says it.
	if n := binary.BigEndian.Uint32(h[28:]); n != 0 && binary.BigEndian.Uint32(h[24:]) == binary.BigEndian.Uint32(h[92:]) {
		p.pages = n
	} else {
		p.pages = uint32(dbSize / int64(p.pageSize))
	}
	if walSize > 0 {
		if err := p.replayWAL(walSize, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// header checks the database header h: the magic string, a page size the
// format allows, UTF-8 text.
func (p *pager) header(h []byte) error {
	if string(h[:16]) != "SQLite format 3\x00" {
		return corrupt("no SQLite header")
	}
	size := int(binary.BigEndian.Uint16(h[16:]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size > 65536 || size&(size-1) != 0 {
		return corrupt("page size %d", size)
	}
	if p.pageSize != 0 && p.pageSize != size {
		return corrupt("page size %d, its WAL's %d", size, p.pageSize)
	}
	p.pageSize = size
	p.usable = size - int(h[20])
	if p.usable < 480 {
		return corrupt("%d reserved bytes a page", h[20])
	}
	if enc := binary.BigEndian.Uint32(h[56:]); enc > 1 {
		return corrupt("text encoding %d, not UTF-8", enc)
	}
	return nil
}

// replayWAL indexes the WAL's frames up to its last valid commit: a frame
// is valid while its salts are the header's and its checksum follows the
// one before it (https://www.sqlite.org/fileformat2.html#walformat), as
// SQLite's own recovery reads a WAL without its shared-memory index.
// Frames after the last commit are a transaction in progress: not read.
func (p *pager) replayWAL(walSize int64, headerFromWAL bool) error {
	var wh [walHeader]byte
	if walSize < walHeader {
		return nil // no header yet: no frame
	}
	if _, err := p.wal.ReadAt(wh[:], 0); err != nil {
		return err
	}
	magic := binary.BigEndian.Uint32(wh[0:])
	if magic&^1 != 0x377f0682 {
		return corrupt("WAL magic %#x", magic)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if magic&1 == 1 {
		order = binary.BigEndian
	}
	size := int(binary.BigEndian.Uint32(wh[8:]))
	if size < 512 || size > 65536 || size&(size-1) != 0 || (p.pageSize != 0 && size != p.pageSize) {
		return corrupt("WAL page size %d", size)
	}
	s0, s1 := walChecksum(order, wh[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(wh[24:]) || s1 != binary.BigEndian.Uint32(wh[28:]) {
		return nil // a header that does not check: SQLite reads no frame of it
	}
	salt := wh[16:24]
	frame := make([]byte, walFrameHeader+size)
	pending := map[uint32]int64{}
	committed := map[uint32]int64{}
	var pages uint32
	for off := int64(walHeader); off+int64(len(frame)) <= walSize; off += int64(len(frame)) {
		if err := p.checkDeadline(); err != nil {
			return err
		}
		if _, err := p.wal.ReadAt(frame, off); err != nil {
			return err
		}
		if string(frame[8:16]) != string(salt) {
			break
		}
		s0, s1 = walChecksum(order, frame[:8], s0, s1)
		s0, s1 = walChecksum(order, frame[walFrameHeader:], s0, s1)
		if s0 != binary.BigEndian.Uint32(frame[16:]) || s1 != binary.BigEndian.Uint32(frame[20:]) {
			break
		}
		pgno := binary.BigEndian.Uint32(frame[0:])
		if pgno == 0 {
			break
		}
		pending[pgno] = off + walFrameHeader
		if commit := binary.BigEndian.Uint32(frame[4:]); commit != 0 {
			for k, v := range pending {
				committed[k] = v
			}
			clear(pending)
			pages = commit
		}
	}
	if pages == 0 {
		if headerFromWAL {
			return corrupt("an empty database whose WAL commits nothing")
		}
		return nil
	}
	p.frames, p.pages = committed, pages
	if p.pageSize == 0 {
		p.pageSize = size
		one, err := p.page(1)
		if err != nil {
			return err
		}
		p.pageSize = 0
		return p.header(one[:headerSize])
	}
	return nil
}

// walChecksum extends the WAL's running checksum (s0, s1) over b, whose
// length is a multiple of 8, in the byte order the WAL's magic names.
func walChecksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

func (p *pager) checkDeadline() error {
	if !p.deadline.IsZero() && time.Now().After(p.deadline) {
		return errDeadline
	}
	return nil
}

// page returns page n, a slice of its own.
func (p *pager) page(n uint32) ([]byte, error) {
	if n == 0 || n > p.pages {
		return nil, corrupt("page %d of %d", n, p.pages)
	}
	if p.read++; p.read > maxPages {
		return nil, corrupt("more than %d pages read", maxPages)
	}
	if p.read%256 == 0 {
		if err := p.checkDeadline(); err != nil {
			return nil, err
		}
	}
	b := make([]byte, p.pageSize)
	if off, ok := p.frames[n]; ok {
		_, err := p.wal.ReadAt(b, off)
		return b, err
	}
	off := int64(n-1) * int64(p.pageSize)
	if off+int64(p.pageSize) > p.dbSize {
		return nil, corrupt("page %d past the file's end", n)
	}
	_, err := p.db.ReadAt(b, off)
	return b, err
}
