package shimclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/shim"
)

// startTimeout bounds how long a shim may take to report the program
// started (or why not); generous, for a loaded machine.
const startTimeout = 30 * time.Second

// HandOver gives a started shim the program's stdin (nil: none) and its
// spec, and returns the shim's hello once the program runs. A shim that
// could not start the program answers FailedPrecondition with its reason.
func HandOver(conn *net.UnixConn, stdin *os.File, spec *shim.Spec) (shim.Hello, error) {
	if err := shim.SendStdin(conn, stdin); err != nil {
		return shim.Hello{}, connect.NewError(connect.CodeInternal, fmt.Errorf("hand stdin to the shim: %w", err))
	}
	_ = conn.SetDeadline(time.Now().Add(startTimeout))
	defer conn.SetDeadline(time.Time{})
	if err := shim.WriteJSON(conn, shim.FrameSpec, spec); err != nil {
		return shim.Hello{}, connect.NewError(connect.CodeInternal, fmt.Errorf("send the spec to the shim: %w", err))
	}
	return readHello(conn)
}

// Reconnect connects to the running shim pid through its socket, proves
// the runtime root's key, and returns the connection with the shim's
// hello: the group it runs, before its ring and live output.
func Reconnect(socket, key string, pid int) (*net.UnixConn, shim.Hello, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, shim.Hello{}, err
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	err = shim.WriteFrame(conn, shim.FrameAuth, []byte(key))
	var hello shim.Hello
	if err == nil {
		hello, err = readHello(conn)
	}
	_ = conn.SetDeadline(time.Time{})
	if err != nil || hello.ShimPid != pid {
		_ = conn.Close()
		return nil, shim.Hello{}, fmt.Errorf("hello from shim %d: %v", pid, err)
	}
	return conn, hello, nil
}

func readHello(conn net.Conn) (shim.Hello, error) {
	var h shim.Hello
	kind, b, err := shim.ReadFrame(conn)
	switch {
	case err != nil:
		return h, connect.NewError(connect.CodeInternal, fmt.Errorf("the shim ended without starting the program: %w", err))
	case kind == shim.FrameFailed:
		return h, connect.NewError(connect.CodeFailedPrecondition, errors.New(string(b)))
	case kind != shim.FrameHello:
		return h, connect.NewError(connect.CodeInternal, fmt.Errorf("the shim answered with frame %d", kind))
	}
	if err := json.Unmarshal(b, &h); err != nil || h.Pid <= 1 {
		return h, connect.NewError(connect.CodeInternal, fmt.Errorf("the shim sent a bad hello %q", b))
	}
	return h, nil
}
