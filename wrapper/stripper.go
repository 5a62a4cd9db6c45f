package wrapper

import "bytes"

// MaxPublishedLine bounds the published line: a head longer than this
// without a newline is the program's, not ours.
const MaxPublishedLine = 128

// The inner half writes its published line to both output streams, stdout
// first, before the program can write a byte. A reader of either stream
// drops everything up to and including it: on stderr that is the
// wrapper's own start-up noise, and the daemon may deliver the two
// streams in either order, so neither can wait for the other.

// CutPublished finds a complete published line at the start of b or of one
// of its lines. before is what precedes it, after what follows its newline.
func CutPublished(b []byte) (before, after []byte, found bool) {
	prefix := []byte(PublishedPrefix)
	for at := 0; at < len(b); {
		if bytes.HasPrefix(b[at:], prefix) {
			if nl := bytes.IndexByte(b[at:], '\n'); nl >= 0 {
				return b[:at], b[at+nl+1:], true
			}
			return nil, nil, false
		}
		nl := bytes.IndexByte(b[at:], '\n')
		if nl < 0 {
			break
		}
		at += nl + 1
	}
	return nil, nil, false
}

// Stripper drops the published line from the head of one stream of a
// wrapped group, as a subscriber's replay starts with it. A stream that
// does not start with it (a replay that lost its head, a group sandtop did
// not wrap) passes unchanged.
type Stripper struct {
	done bool
	head []byte
}

// Strip returns what of b follows the published line; it holds bytes back
// only while they could still be the start of that line.
func (s *Stripper) Strip(b []byte) []byte {
	if s.done {
		return b
	}
	s.head = append(s.head, b...)
	prefix := []byte(PublishedPrefix)
	n := min(len(s.head), len(prefix))
	if !bytes.Equal(s.head[:n], prefix[:n]) {
		s.done = true
		return s.head
	}
	if i := bytes.IndexByte(s.head, '\n'); i >= 0 {
		s.done = true
		return s.head[i+1:]
	}
	if len(s.head) > MaxPublishedLine {
		s.done = true
		return s.head
	}
	return nil
}
