package ui

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
)

// newInput is a one-line field (bubbles/textinput): cursor movement, word
// deletion, paste. The cursor does not blink, so an open prompt costs no
// redraws.
func newInput(prompt, value string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.SetValue(value)
	ti.CursorEnd()
	ti.Cursor.SetMode(cursor.CursorStatic)
	ti.Focus()
	return ti
}
