package vt

import "unicode/utf8"

// Parser states. The Scrollback scanner follows the same transitions so
// that the offsets it calls safe are ones where this parser is in ground.
const (
	stGround = iota
	stEsc
	stEscInter
	stCSI
	stStr
	stStrEsc
)

// maxStr bounds how much of an OSC string is kept (titles); the rest of
// a longer string is consumed and dropped.
const maxStr = 4096

// parser is the byte-level state of the pre-parser in front of vt10x.
type parser struct {
	state int

	utf  [4]byte // partial UTF-8 character
	nutf int
	need int

	prm      params
	cur      int32 // digits of the parameter being read; -1 if empty
	priv     byte  // '<', '=', '>' or '?' prefix
	inter    byte  // intermediate byte (0x20..0x2f)
	bad      bool  // malformed; consume and ignore
	started  bool  // any parameter byte seen
	escInter byte

	strType byte
	str     []byte
}

// feed runs the pre-parser over p, appending cleaned output to e.out.
func (e *VT10x) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		b := p[i]
		if e.p.state == stGround && e.p.need == 0 && b >= 0x20 && b < 0x7f && !e.g[e.shift] && !e.insert {
			// Fast path: a run of plain ASCII goes straight through.
			j := i + 1
			for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
				j++
			}
			e.usePen(e.penID)
			e.out = append(e.out, p[i:j]...)
			e.lastRune = rune(p[j-1])
			i = j - 1
			continue
		}
		e.step(b)
	}
}

func (e *VT10x) step(b byte) {
	ps := &e.p
	switch ps.state {
	case stGround:
		e.ground(b)
	case stEsc:
		e.escByte(b)
	case stEscInter:
		switch {
		case b < 0x20:
			e.controlInSeq(b)
		case b < 0x30:
			if ps.escInter == 0 {
				ps.escInter = b
			}
		case b < 0x7f:
			ps.state = stGround
			e.escDispatch(ps.escInter, b)
		default:
			ps.state = stGround
		}
	case stCSI:
		e.csiByte(b)
	case stStr:
		switch b {
		case 0x07:
			ps.state = stGround
			e.strDispatch()
		case 0x1b:
			ps.state = stStrEsc
		case 0x18, 0x1a:
			ps.state = stGround
		default:
			if ps.strType == ']' && len(ps.str) < maxStr {
				ps.str = append(ps.str, b)
			}
		}
	case stStrEsc:
		if b == '\\' {
			ps.state = stGround
			e.strDispatch()
			return
		}
		// ESC followed by anything else aborts the string and starts a
		// new escape sequence, as in xterm.
		ps.state = stEsc
		e.escByte(b)
	}
}

// ground handles a byte outside any escape sequence.
func (e *VT10x) ground(b byte) {
	ps := &e.p
	if ps.need > 0 {
		if b >= 0x80 && b < 0xc0 {
			ps.utf[ps.nutf] = b
			ps.nutf++
			if ps.nutf == ps.need {
				r, _ := utf8.DecodeRune(ps.utf[:ps.nutf])
				ps.need, ps.nutf = 0, 0
				e.print(r) // RuneError for overlongs and surrogates
			}
			return
		}
		// Truncated character: show a replacement and go on with b.
		ps.need, ps.nutf = 0, 0
		e.print(utf8.RuneError)
	}
	switch {
	case b < 0x20:
		e.control(b)
	case b < 0x7f:
		e.print(rune(b))
	case b == 0x7f:
	case b >= 0xc2 && b <= 0xf4:
		ps.utf[0], ps.nutf = b, 1
		switch {
		case b < 0xe0:
			ps.need = 2
		case b < 0xf0:
			ps.need = 3
		default:
			ps.need = 4
		}
	default:
		e.print(utf8.RuneError)
	}
}

// control executes a C0 control character.
func (e *VT10x) control(b byte) {
	switch b {
	case 0x1b:
		e.p.state = stEsc
		e.p.escInter = 0
	case '\n', '\v', '\f', '\r', '\b', '\t':
		e.out = append(e.out, b)
	case 0x0e: // SO
		e.shift = 1
	case 0x0f: // SI
		e.shift = 0
	}
	// BEL, NUL, CAN, SUB and the rest have no visible effect.
}

// controlInSeq handles a C0 byte that arrives inside an escape or control
// sequence: ESC restarts, CAN and SUB abort, the rest run immediately.
func (e *VT10x) controlInSeq(b byte) {
	switch b {
	case 0x1b:
		e.p.state = stEsc
		e.p.escInter = 0
	case 0x18, 0x1a:
		e.p.state = stGround
	default:
		e.control(b)
	}
}

func (e *VT10x) escByte(b byte) {
	ps := &e.p
	switch {
	case b < 0x20:
		e.controlInSeq(b)
		return
	case b < 0x30:
		ps.escInter = b
		ps.state = stEscInter
		return
	}
	ps.state = stGround
	switch b {
	case '[':
		ps.state = stCSI
		ps.prm.n, ps.cur, ps.priv, ps.inter, ps.bad, ps.started = 0, -1, 0, 0, false, false
		ps.prm.colon[0] = false
	case ']', 'P', '_', '^', 'X', 'k':
		ps.state = stStr
		ps.strType = b
		ps.str = ps.str[:0]
	default:
		e.escDispatch(0, b)
	}
}

func (e *VT10x) csiByte(b byte) {
	ps := &e.p
	switch {
	case b < 0x20:
		e.controlInSeq(b)
	case b >= '0' && b <= '9':
		if ps.inter != 0 {
			ps.bad = true
		}
		if ps.cur < 0 {
			ps.cur = 0
		}
		if ps.cur < 65535 {
			ps.cur = ps.cur*10 + int32(b-'0')
			if ps.cur > 65535 {
				ps.cur = 65535
			}
		}
		ps.started = true
	case b == ';' || b == ':':
		if ps.inter != 0 {
			ps.bad = true
		}
		e.endParam()
		if ps.prm.n < maxParams {
			ps.prm.colon[ps.prm.n] = b == ':'
		}
		ps.started = true
	case b >= 0x3c && b <= 0x3f:
		if ps.started || ps.priv != 0 || ps.inter != 0 {
			ps.bad = true
		}
		ps.priv = b
	case b < 0x30:
		ps.inter = b
	case b >= 0x40 && b < 0x7f:
		ps.state = stGround
		if ps.started {
			e.endParam()
		}
		if !ps.bad {
			e.csiDispatch(b)
		}
	case b == 0x7f:
	default:
		ps.bad = true
	}
}

// endParam stores the parameter being read.
func (e *VT10x) endParam() {
	ps := &e.p
	if ps.prm.n < maxParams {
		ps.prm.v[ps.prm.n] = ps.cur
		ps.prm.n++
	}
	ps.cur = -1
}

// inGround reports whether the parser is between sequences and characters.
func (e *VT10x) inGround() bool { return e.p.state == stGround && e.p.need == 0 }
