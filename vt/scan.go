package vt

// scanner follows the byte stream with the same state transitions as the
// adapter's parser, without interpreting anything, so the Scrollback can
// tell which offsets are safe places to start a replay (ground state, not
// inside a UTF-8 character) and where the screen was cleared.
type scanner struct {
	state int
	need  int // UTF-8 continuation bytes still expected

	seqStart int64   // offset of the ESC that began the current sequence
	priv     byte    // CSI private marker
	arg      [8]byte // first bytes of the CSI parameters
	narg     int
	inter    bool

	lastCUPStart, lastCUPEnd int64 // the last "CSI … H", to anchor "CSI H CSI 2J"
}

// scanEvents receives what the scanner finds.
type scanEvents interface {
	safePoint(off int64, lineStart bool)
	anchor(off int64)
}

// scan processes p, which starts at absolute offset base.
func (s *scanner) scan(p []byte, base int64, ev scanEvents) {
	for i := 0; i < len(p); i++ {
		b := p[i]
		off := base + int64(i)
		switch s.state {
		case stGround:
			if s.need > 0 {
				if b >= 0x80 && b < 0xc0 {
					s.need--
					if s.need == 0 {
						ev.safePoint(off+1, false)
					}
					continue
				}
				s.need = 0
			}
			switch {
			case b == 0x1b:
				ev.safePoint(off, false)
				s.state, s.seqStart = stEsc, off
			case b == '\n':
				ev.safePoint(off+1, true)
			case b >= 0xc2 && b <= 0xf4:
				ev.safePoint(off, false)
				switch {
				case b < 0xe0:
					s.need = 1
				case b < 0xf0:
					s.need = 2
				default:
					s.need = 3
				}
			}
		case stEsc:
			s.escByte(b, off, ev)
		case stEscInter:
			switch {
			case b < 0x20:
				s.control(b, off)
			case b >= 0x30:
				s.state = stGround
			}
		case stCSI:
			switch {
			case b < 0x20:
				s.control(b, off)
			case b >= 0x40 && b < 0x7f:
				s.state = stGround
				s.csiEnd(b, off, ev)
			case b >= 0x3c && b <= 0x3f:
				s.priv = b
			case b < 0x30:
				s.inter = true
			case b < 0x3c:
				if s.narg < len(s.arg) {
					s.arg[s.narg] = b
				}
				s.narg++
			}
		case stStr:
			switch b {
			case 0x07, 0x18, 0x1a:
				s.state = stGround
			case 0x1b:
				s.state = stStrEsc
			}
		case stStrEsc:
			if b == '\\' {
				s.state = stGround
			} else {
				s.state, s.seqStart = stEsc, off-1
				s.escByte(b, off, ev)
			}
		}
	}
}

// control handles a C0 byte inside a sequence (see VT10x.controlInSeq).
func (s *scanner) control(b byte, off int64) {
	switch b {
	case 0x1b:
		s.state, s.seqStart = stEsc, off
	case 0x18, 0x1a:
		s.state = stGround
	}
}

func (s *scanner) escByte(b byte, off int64, ev scanEvents) {
	switch {
	case b < 0x20:
		s.control(b, off)
	case b < 0x30:
		s.state = stEscInter
	case b == '[':
		s.state, s.priv, s.narg, s.inter = stCSI, 0, 0, false
	case b == ']' || b == 'P' || b == '_' || b == '^' || b == 'X' || b == 'k':
		s.state = stStr
	default:
		s.state = stGround
		if b == 'c' { // RIS
			ev.anchor(s.seqStart)
		}
	}
}

// csiEnd spots the sequences after which the screen no longer depends on
// what came before: ED 2 and alternate-screen switches.
func (s *scanner) csiEnd(final byte, off int64, ev scanEvents) {
	if s.inter {
		return
	}
	arg := string(s.arg[:min(s.narg, len(s.arg))])
	switch {
	case final == 'H' && s.priv == 0:
		s.lastCUPStart, s.lastCUPEnd = s.seqStart, off+1
	case final == 'J' && s.priv == 0 && arg == "2":
		start := s.seqStart
		if s.lastCUPEnd == start {
			start = s.lastCUPStart // keep the cursor home that usually precedes it
		}
		ev.anchor(start)
	case (final == 'h' || final == 'l') && s.priv == '?' && (arg == "1049" || arg == "1047" || arg == "47"):
		ev.anchor(s.seqStart)
	}
}
