package daemon_test

import (
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
)

const benchChunk = 8 << 20

// BenchmarkStdoutThroughput compares bytes read from a Start stream with the
// same bytes read from a plain local pipe, in the same run.
func BenchmarkStdoutThroughput(b *testing.B) {
	file := randomFile(b, benchChunk)
	const times = 8 // 64 MiB per op
	b.Run("pipe", func(b *testing.B) {
		b.SetBytes(benchChunk * times)
		for range b.N {
			cmd := exec.Command("sh", "-c", catTimes(file, times).Process.Args[1])
			// Dies with the test binary, even when go test's timeout kills it.
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, out)
			if err != nil || n != benchChunk*times {
				b.Fatalf("pipe read %d bytes: %v", n, err)
			}
			_ = cmd.Wait()
		}
	})
	// The default client first, used as sandtop uses it.
	for _, tr := range append([]transport{{name: "default-unix", recycle: true}}, transports...) {
		b.Run("daemon-"+tr.name, func(b *testing.B) {
			var env *daemontest.Env
			if tr.tcp {
				env = daemontest.StartTCP(b, daemon.Config{})
			} else {
				env = daemontest.Start(b, daemon.Config{})
			}
			c := env.Dial(tr.opts...)
			b.SetBytes(benchChunk * times)
			b.ResetTimer()
			for range b.N {
				s, err := c.Process.Start(b.Context(), connect.NewRequest(catTimes(file, times)))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for s.Receive() {
					out := s.Msg().GetEvent().GetData().GetStdout()
					n += len(out)
					if tr.recycle {
						envd.RecycleOutput(out) // as the seam does once it wrote them
					}
				}
				if s.Err() != nil || n != benchChunk*times {
					b.Fatalf("stream read %d bytes: %v", n, s.Err())
				}
				s.Close()
			}
		})
	}
}

var _ = time.Second
var _ = process.Signal_SIGNAL_SIGKILL
