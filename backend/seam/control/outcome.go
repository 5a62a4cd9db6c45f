package control

import (
	"fmt"
	"syscall"
)

// Outcome is how the direct command ended: ExitCode for a normal exit, or
// Signal ("SIGTERM", …) when a signal ended it. Exactly one is set. It
// carries no output and no timeout classification.
type Outcome struct {
	ExitCode *int
	Signal   string
}

func (o Outcome) String() string {
	if o.ExitCode != nil {
		return fmt.Sprintf("exit code %d", *o.ExitCode)
	}
	if o.Signal != "" {
		return "killed by " + o.Signal
	}
	return "no outcome"
}

// ExitOutcome is a normal exit with code.
func ExitOutcome(code int) Outcome { return Outcome{ExitCode: &code} }

// SignalOutcome is an end by sig.
func SignalOutcome(sig syscall.Signal) Outcome { return Outcome{Signal: SignalName(sig)} }
