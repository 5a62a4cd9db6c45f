package ui

import (
	"charm.land/bubbles/v2/textinput"
)

// newInput is a one-line field (bubbles/textinput): cursor movement, word
// deletion, paste. The cursor does not blink, so an open prompt costs no
// redraws.
func newInput(prompt, value string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.SetValue(value)
	ti.CursorEnd()
	st := ti.Styles()
	st.Cursor.Blink = false
	ti.SetStyles(st)
	ti.Focus()
	return ti
}
