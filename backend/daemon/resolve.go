package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// CapResolve is advertised by daemons that answer Resolve.
const CapResolve = "resolve"

// CheckProgramHeader on a session-dir Start asks the daemon to refuse a
// program that exec would not find, as Resolve would, before it starts
// anything: the error is CodeNotFound with the header in its metadata. It
// spares a client the Resolve round trip before each Start. Without it
// such a program starts and exits 127 or 126, as through envd's shell.
// Clients send it only when Hello lists CapCheckProgram.
const (
	CheckProgramHeader = "Sandtop-Check-Program"
	CapCheckProgram    = "check-program"
)

// Resolve finds a program the way a session-dir Start's exec would, so a
// client can refuse a typo before it starts anything, without running a
// shell for command -v.
func (s supervisorService) Resolve(ctx context.Context, req *connect.Request[sandtopv1.ResolveRequest]) (*connect.Response[sandtopv1.ResolveResponse], error) {
	cmd, cwd := req.Msg.GetCommand(), req.Msg.GetCwd()
	switch {
	case cmd == "" || strings.ContainsRune(cmd, 0):
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("resolve: the command is empty or holds a NUL byte"))
	case !filepath.IsAbs(cwd):
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("resolve: cwd %q is not absolute", clip(cwd)))
	}
	path, err := lookPath(cmd, req.Msg.GetPath(), cwd)
	if err != nil {
		return nil, connect.NewError(connect.CodeNotFound, err)
	}
	return connect.NewResponse(&sandtopv1.ResolveResponse{Path: path}), nil
}
