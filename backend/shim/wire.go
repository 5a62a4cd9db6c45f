package shim

import (
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
)

// The daemon and a shim talk over one unix stream socket: at spawn the
// daemon's end of a socketpair (the shim's fd 3); after a daemon restart a
// connection to the shim's socket in the state directory. Each frame is a
// kind byte, a big-endian uint32 length and the payload.
const (
	// daemon → shim, once, at spawn: the Spec as JSON.
	FrameSpec byte = 1
	// shim → daemon: first frame on every connection, a Hello as JSON.
	FrameHello byte = 2
	// shim → daemon: the spawn failed before the program ran; a message.
	FrameFailed byte = 3
	// shim → daemon: program output.
	FrameStdout byte = 4
	FrameStderr byte = 5
	// shim → daemon: that stream reached EOF (empty payload).
	FrameStdoutEOF byte = 6
	FrameStderrEOF byte = 7
	// shim → daemon: the program was reaped; payload is its raw wait status
	// as a decimal.
	FrameExit byte = 8
	// shim → daemon: something the daemon should log (publication failed).
	FrameLog byte = 9
	// daemon → shim: first frame on a reconnection, the daemon's key (the
	// Spec's Key); a shim drops a connection without it.
	FrameAuth byte = 10
)

// maxFrame bounds a frame: output frames carry one pipe read (64 KiB); a
// spec carries argv and env.
const maxFrame = 8 << 20

// Spec is what the shim needs to run one program. It travels over the
// socket, never through argv or the environment, where /proc would show
// the program's environment to anyone.
type Spec struct {
	StateDir string   `json:"state_dir"`
	Path     string   `json:"path"` // resolved executable
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"`
	// Uid/Gid/Groups are the program's user when SetUser; the shim itself
	// keeps the daemon's user.
	SetUser bool     `json:"set_user,omitempty"`
	Uid     uint32   `json:"uid,omitempty"`
	Gid     uint32   `json:"gid,omitempty"`
	Groups  []uint32 `json:"groups,omitempty"`
	// StdoutSpill/StderrSpill cap the spill files; negative: no spill.
	StdoutSpill int64  `json:"stdout_spill"`
	StderrSpill int64  `json:"stderr_spill"`
	Tag         string `json:"tag,omitempty"`
	// ExecError, when set, says why Path cannot be executed; the program
	// then ends at once with ExecCode (127: not found, 126: not
	// executable), as under a shell.
	ExecError string `json:"exec_error,omitempty"`
	ExecCode  int    `json:"exec_code,omitempty"`
	// RingBytes bounds the output kept while no daemon reads.
	RingBytes int64 `json:"ring_bytes"`
	// Key is the daemon's secret: a daemon that reconnects must send it
	// (FrameAuth), so no other process of the user can take the group
	// from its daemon. Empty: any connection of the user is taken.
	Key string `json:"key,omitempty"`
}

// ReadAuth reads the FrameAuth that must open a reconnection and says
// whether it carries key. Anything else, or a frame of another size, is
// refused before its payload is read.
func ReadAuth(r io.Reader, key string) bool {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return false
	}
	if hdr[0] != FrameAuth || binary.BigEndian.Uint32(hdr[1:]) != uint32(len(key)) {
		return false
	}
	got := make([]byte, len(key))
	if _, err := io.ReadFull(r, got); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, []byte(key)) == 1
}

// Hello describes the group to a (re)connecting daemon.
type Hello struct {
	ShimPid       int      `json:"shim_pid"`
	Pid           int      `json:"pid"` // the program: leader of the group
	StartedUnixMs int64    `json:"started_unix_ms"`
	Argv          []string `json:"argv"`
	Tag           string   `json:"tag,omitempty"`
	// Exited is set once the program was reaped; Status is its raw wait
	// status then.
	Exited    bool `json:"exited,omitempty"`
	Status    int  `json:"status,omitempty"`
	StdoutEOF bool `json:"stdout_eof,omitempty"`
	StderrEOF bool `json:"stderr_eof,omitempty"`
}

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, kind byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if len(payload) <= 4096 {
		// One write keeps small frames whole on the socket.
		_, err := w.Write(append(hdr[:], payload...))
		return err
	}
	// On a socket, header and payload leave in one writev.
	bufs := net.Buffers{hdr[:], payload}
	_, err := bufs.WriteTo(w)
	return err
}

// WriteJSON writes v as one frame.
func WriteJSON(w io.Writer, kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteFrame(w, kind, b)
}

// ReadFrame reads one frame; io.EOF at a frame boundary.
func ReadFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("shim frame of %d bytes exceeds %d", n, maxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], b, nil
}
