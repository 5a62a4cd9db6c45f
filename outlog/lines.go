package outlog

import (
	"bytes"
	"time"
)

// Line is one line of one stream, with the arrival of its first byte;
// Text ends with its newline, except a last line that has none.
type Line struct {
	Stream Stream
	At     time.Time
	Text   []byte
}

// Liner splits segments into lines, each stream on its own: a line that
// arrives in pieces is one line, with its first piece's time, even when
// the other stream wrote in between.
type Liner struct {
	part   [2][]byte
	partAt [2]time.Time
}

// Add splits seg and calls each for every line it completes, in order.
func (l *Liner) Add(seg Segment, each func(Line)) {
	i := int(seg.Stream) - 1
	data := seg.Data
	for len(data) > 0 {
		if len(l.part[i]) == 0 {
			l.partAt[i] = seg.At
		}
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			l.part[i] = append(l.part[i], data...)
			return
		}
		text := append(l.part[i], data[:nl+1]...)
		l.part[i] = nil
		each(Line{Stream: seg.Stream, At: l.partAt[i], Text: text})
		data = data[nl+1:]
	}
}

// Flush hands out the unfinished last lines, stdout's first.
func (l *Liner) Flush(each func(Line)) {
	for i := range 2 {
		if len(l.part[i]) > 0 {
			each(Line{Stream: Stream(i + 1), At: l.partAt[i], Text: l.part[i]})
			l.part[i] = nil
		}
	}
}
