package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// lineInput is a minimal one-line text field: type, paste, backspace,
// ctrl+u to clear, ctrl+w to delete a word. The cursor stays at the end
// and never blinks, so an open prompt costs no redraws.
type lineInput struct {
	prompt string
	value  []rune
}

func newInput(prompt, value string) lineInput {
	return lineInput{prompt: prompt, value: []rune(value)}
}

func (l lineInput) Value() string { return string(l.value) }

func (l *lineInput) SetValue(s string) { l.value = []rune(s) }

func (l *lineInput) Update(msg tea.KeyMsg) {
	switch msg.Type {
	case tea.KeyRunes:
		for _, r := range msg.Runes {
			if r >= ' ' && r != 0x7f {
				l.value = append(l.value, r)
			}
		}
	case tea.KeySpace:
		l.value = append(l.value, ' ')
	case tea.KeyBackspace:
		if len(l.value) > 0 {
			l.value = l.value[:len(l.value)-1]
		}
	case tea.KeyCtrlU:
		l.value = nil
	case tea.KeyCtrlW:
		s := strings.TrimRight(string(l.value), " ")
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			l.value = []rune(s[:i+1])
		} else {
			l.value = nil
		}
	}
}

func (l lineInput) View() string { return l.prompt + string(l.value) + "█" }
