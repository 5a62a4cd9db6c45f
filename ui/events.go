package ui

import (
	"fmt"
	"time"
)

// eventLevel colours an event log line.
type eventLevel int

const (
	levelInfo eventLevel = iota
	levelOK
	levelWarn
	levelError
)

// event is one line of the event log: what sandtop did or saw happen.
type event struct {
	at    time.Time
	level eventLevel
	text  string
}

const maxEvents = 500

// eventLog is a bounded log, newest last.
type eventLog struct{ items []event }

func (l *eventLog) add(at time.Time, level eventLevel, format string, args ...any) {
	l.items = append(l.items, event{at: at, level: level, text: fmt.Sprintf(format, args...)})
	if over := len(l.items) - maxEvents; over > 0 {
		l.items = append([]event(nil), l.items[over:]...)
	}
}

// tail is the newest n events, oldest first.
func (l *eventLog) tail(n int) []event {
	if n >= len(l.items) {
		return l.items
	}
	return l.items[len(l.items)-n:]
}
