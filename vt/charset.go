package vt

// decGraphics maps 0x5f..0x7e in the DEC Special Graphics set (ESC ( 0),
// which ncurses uses for line drawing, to Unicode.
var decGraphics = [32]rune{
	' ',                                    // _ blank
	'◆', '▒', '␉', '␌', '␍', '␊', '°', '±', // ` a b c d e f g
	'␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', // h i j k l m n o
	'⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', // p q r s t u v w
	'│', '≤', '≥', 'π', '≠', '£', '·', // x y z { | } ~
}

// mapCharset translates r when the active character set is DEC graphics.
func mapCharset(r rune, graphics bool) rune {
	if graphics && r >= 0x5f && r <= 0x7e {
		return decGraphics[r-0x5f]
	}
	return r
}
