package ui

import (
	"fmt"
	"time"

	"sandtop/safetext"
)

// eventLevel colours an event log line.
type eventLevel int

const (
	levelInfo eventLevel = iota
	levelOK
	levelWarn
	levelError
)

// event is one line of the event log: what sandtop did or saw happen, and
// in which sandbox (tag).
type event struct {
	at    time.Time
	level eventLevel
	tag   string
	text  string
}

const maxEvents = 500

// eventLog is a bounded log, newest last, shared by every context.
type eventLog struct{ items []event }

func (l *eventLog) add(at time.Time, level eventLevel, tag, format string, args ...any) {
	l.items = append(l.items, event{at: at, level: level, tag: tag, text: safetext.Line(fmt.Sprintf(format, args...))})
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

// eventSink is one sandbox's pen on the shared log: what it writes is
// tagged with the sandbox's name, so a teardown in sandbox A is logged
// under A whichever sandbox is on screen.
type eventSink struct {
	log *eventLog
	tag string
}

func (s eventSink) add(at time.Time, level eventLevel, format string, args ...any) {
	s.log.add(at, level, s.tag, format, args...)
}

func (s eventSink) tail(n int) []event { return s.log.tail(n) }
