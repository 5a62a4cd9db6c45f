// Package outlog keeps, beside a group's spill files, when each piece of
// its output arrived and on which stream, so that its output can be read
// back as "kubectl logs" and "docker logs" print it: stdout and stderr in
// arrival order, with arrival times, the last N lines, or those since a
// time.
//
// The spill files (stdout.log, stderr.log) stay exactly the bytes the
// program wrote. The marks go to a third file, output.marks, written by the
// group's supervisor after each piece it spills:
//
//	header  16 bytes: "sandtop-marks" NUL, then version 1 as a big-endian uint16
//	mark    16 bytes each:
//	          byte  0     stream: 1 stdout, 2 stderr
//	          bytes 1-3   zero
//	          bytes 4-7   length: how many bytes of that stream's spill it covers (big-endian uint32)
//	          bytes 8-15  arrival: Unix nanoseconds, when the supervisor read the piece (big-endian int64)
//
// A stream's marks cover its spill from offset 0 in order, so offsets need
// no room: they are the running sums of the lengths. Marks are in arrival
// order across both streams (each is taken under one lock). A piece of
// the spill beyond its stream's marks (the marks file full at MaxMarksSize,
// or a supervisor that died between the two writes) has no known time and
// is read after everything marked. A spill with no marks file (written
// before marks existed, or by the bash wrapper on stock envd) reads as
// before: all of stdout, then all of stderr, without times.
//
// Arrival is when the supervisor's read of the stream's pipe returned. Two
// writes to different streams closer together than the supervisor is
// scheduled may be read in either order; writes a scheduler tick apart are
// ordered as they were made.
package outlog

import (
	"encoding/binary"
	"errors"
	"time"
)

// File is the marks file's name in a group's state directory
// (wrapper.MarksFile, which the layout lists).
const File = "output.marks"

// Size of the header and of each mark.
const (
	HeaderSize = 16
	MarkSize   = 16
)

// MaxMarksSize bounds the marks file: one mark a write is 16 bytes, so a
// program that writes a byte at a time would otherwise make it 16 times
// its spill. Past it, the rest of the spill is read without times.
const MaxMarksSize = 8 << 20

const version = 1

var magic = [14]byte{'s', 'a', 'n', 'd', 't', 'o', 'p', '-', 'm', 'a', 'r', 'k', 's', 0}

// Stream says which output a mark covers.
type Stream byte

const (
	Stdout Stream = 1
	Stderr Stream = 2
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "stream?"
}

// Mark is one piece of one stream's spill and when it arrived.
type Mark struct {
	Stream Stream
	Len    uint32
	At     time.Time
}

// header is the marks file's first 16 bytes.
func header() []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	binary.BigEndian.PutUint16(b[14:], version)
	return b
}

// checkHeader refuses a file that is not marks of this version.
func checkHeader(b []byte) error {
	if len(b) < HeaderSize || [14]byte(b[:14]) != magic {
		return errors.New("not a sandtop marks file")
	}
	if v := binary.BigEndian.Uint16(b[14:]); v != version {
		return errors.New("marks file of an unknown version")
	}
	return nil
}

// appendMark encodes m after b.
func appendMark(b []byte, m Mark) []byte {
	var r [MarkSize]byte
	r[0] = byte(m.Stream)
	binary.BigEndian.PutUint32(r[4:], m.Len)
	binary.BigEndian.PutUint64(r[8:], uint64(m.At.UnixNano()))
	return append(b, r[:]...)
}

// decodeMarks reads whole marks from b; a torn last one is left out, and
// reading stops at one that is not a mark (a damaged file).
func decodeMarks(b []byte) ([]Mark, error) {
	out := make([]Mark, 0, len(b)/MarkSize)
	for ; len(b) >= MarkSize; b = b[MarkSize:] {
		s := Stream(b[0])
		if s != Stdout && s != Stderr || b[1]|b[2]|b[3] != 0 {
			return out, errors.New("damaged mark in the marks file")
		}
		out = append(out, Mark{Stream: s, Len: binary.BigEndian.Uint32(b[4:]),
			At: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:])))})
	}
	return out, nil
}
