package daemon_test

import (
	"bytes"
	"testing"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
)

func TestStartStreamsStdoutStderrAndExitCode(t *testing.T) {
	forEachTransport(t, daemon.Config{}, func(t *testing.T, env *daemontest.Env, c *envd.Client) {
		r := run(t, c, startReq("sh", "-c", "printf out1; printf err1 >&2; printf out2; exit 3"))
		if got := r.stdout.String(); got != "out1out2" {
			t.Errorf("stdout = %q, want out1out2", got)
		}
		if got := r.stderr.String(); got != "err1" {
			t.Errorf("stderr = %q, want err1", got)
		}
		if r.end.GetExitCode() != 3 || !r.end.GetExited() || r.end.GetStatus() != "exit status 3" {
			t.Errorf("end = %v, want exit 3", r.end)
		}
		if r.starts != 1 || r.pid == 0 {
			t.Errorf("start events = %d, pid %d", r.starts, r.pid)
		}
	})
}

func TestStartAllByteValuesRoundTrip(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	forEachTransport(t, daemon.Config{}, func(t *testing.T, env *daemontest.Env, c *envd.Client) {
		// printf with octal escapes writes every byte value, NUL included.
		var script bytes.Buffer
		script.WriteString("printf '")
		for i := 0; i < 256; i++ {
			script.WriteString("\\")
			script.WriteString(octal(i))
		}
		script.WriteString("'; printf '")
		for i := 255; i >= 0; i-- {
			script.WriteString("\\")
			script.WriteString(octal(i))
		}
		script.WriteString("' >&2")
		r := run(t, c, startReq("sh", "-c", script.String()))
		if !bytes.Equal(r.stdout.Bytes(), all) {
			t.Errorf("stdout: got %d bytes %x, want all 256 values", r.stdout.Len(), r.stdout.Bytes())
		}
		rev := make([]byte, 256)
		for i := range rev {
			rev[i] = byte(255 - i)
		}
		if !bytes.Equal(r.stderr.Bytes(), rev) {
			t.Errorf("stderr: got %d bytes, want 256 values reversed", r.stderr.Len())
		}
	})
}

func octal(i int) string {
	return string([]byte{'0' + byte(i>>6), '0' + byte(i>>3&7), '0' + byte(i&7)})
}
