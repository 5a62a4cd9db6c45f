package control

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"connectrpc.com/connect"

	fspb "sandtop/backend/gen/filesystem"
	"sandtop/backend/gen/filesystem/filesystemconnect"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/wrapper"
)

// Extension implements Plane with sandtop's Supervisor extension. Removal
// goes through envd's filesystem service, which sandtop's daemon also
// serves.
type Extension struct {
	Supervisor sandtopv1connect.SupervisorClient
	Files      filesystemconnect.FilesystemClient // nil: remove through rm
	Runner     Runner
}

func (c Extension) Kind() string { return "extension" }

func (c Extension) groups(ctx context.Context, req *sandtopv1.ListGroupsRequest) ([]ProcessEntry, error) {
	resp, err := c.Supervisor.ListGroups(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, fmt.Errorf("list process groups: %w", err)
	}
	return entriesOf(resp.Msg), nil
}

// entriesOf flattens a grouped table into process entries.
func entriesOf(table *sandtopv1.ListGroupsResponse) []ProcessEntry {
	var rows []ProcessEntry
	for _, g := range table.GetGroups() {
		for _, m := range g.GetMembers() {
			// A member's row is under the group it is listed in: the same
			// pgid, except in a plain Start's unit, whose members share the
			// daemon's group and are listed under the unit's root pid.
			rows = append(rows, ProcessEntry{Pid: int(m.GetPid()), Pgid: int(g.GetPgid()), Sid: int(m.GetSid()), State: m.GetState()})
		}
		for _, m := range g.GetEscapees() {
			rows = append(rows, ProcessEntry{Pid: int(m.GetPid()), Pgid: int(m.GetPgid()), Sid: int(m.GetSid()), State: m.GetState(), EscapeeOf: int(g.GetPgid())})
		}
	}
	return rows
}

func (c Extension) AgentStateDirs(ctx context.Context) ([]string, error) {
	table, err := c.FullTable(ctx)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, g := range table.GetGroups() {
		if g.GetOrigin() == "agent" && g.GetStateDir() != "" {
			dirs = append(dirs, g.GetStateDir())
		}
	}
	return sortedUnique(dirs), nil
}

func (c Extension) Processes(ctx context.Context) ([]ProcessEntry, error) {
	table, err := c.FullTable(ctx)
	if err != nil {
		return nil, err
	}
	return entriesOf(table), nil
}

func (c Extension) GroupAlive(ctx context.Context, pgid int) (bool, error) {
	if pgid <= 0 {
		return false, nil
	}
	rows, err := c.groups(ctx, &sandtopv1.ListGroupsRequest{Pgid: uint32(pgid)})
	if err != nil {
		return false, err
	}
	return GroupLiveIn(rows, pgid), nil
}

// GroupAliveAfter is GroupAlive asked of a daemon that waits up to wait for
// the group to empty before it answers.
func (c Extension) GroupAliveAfter(ctx context.Context, pgid int, wait time.Duration) (bool, error) {
	if pgid <= 0 {
		return false, nil
	}
	ms := uint32(min(wait, 10*time.Second) / time.Millisecond)
	rows, err := c.groups(ctx, &sandtopv1.ListGroupsRequest{Pgid: uint32(pgid), WaitEmptyMs: ms})
	if err != nil {
		return false, err
	}
	return GroupLiveIn(rows, pgid), nil
}

func (c Extension) SessionGroups(ctx context.Context, sid int) ([]int, error) {
	if sid <= 0 {
		return nil, nil
	}
	rows, err := c.groups(ctx, &sandtopv1.ListGroupsRequest{Sid: uint32(sid)})
	if err != nil {
		return nil, err
	}
	return sessionGroupsIn(rows, sid), nil
}

func (c Extension) SignalGroup(ctx context.Context, pgid int, sig syscall.Signal) (bool, error) {
	if err := CheckGroupID(pgid); err != nil {
		return false, err
	}
	resp, err := c.Supervisor.SignalGroup(ctx, connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: uint32(pgid), Signal: int32(sig)}))
	if err != nil {
		return false, fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return resp.Msg.GetDelivered(), nil
}

// SignalTree signals group pgid and every escapee of it (a teardown), and
// returns the escapees it reached.
func (c Extension) SignalTree(ctx context.Context, pgid int, sig syscall.Signal) (bool, []Escapee, error) {
	if err := CheckGroupID(pgid); err != nil {
		return false, nil, err
	}
	resp, err := c.Supervisor.SignalGroup(ctx, connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: uint32(pgid), Signal: int32(sig), Escapees: true}))
	if err != nil {
		return false, nil, fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	var esc []Escapee
	for _, m := range resp.Msg.GetEscapees() {
		esc = append(esc, Escapee{Pid: int(m.GetPid()), Argv: m.GetArgv(), Comm: m.GetComm()})
	}
	return resp.Msg.GetDelivered(), esc, nil
}

func (c Extension) ForegroundGroup(ctx context.Context, pid int) (int, bool, bool, error) {
	resp, err := c.Supervisor.Foreground(ctx, connect.NewRequest(&sandtopv1.ForegroundRequest{Pid: uint32(pid)}))
	if err != nil {
		if connect.CodeOf(err) == connect.CodeNotFound {
			return 0, false, false, nil
		}
		return 0, false, false, fmt.Errorf("foreground of %d: %w", pid, err)
	}
	m := resp.Msg
	if !m.GetKnown() || m.GetPgid() == 0 {
		return 0, false, false, nil
	}
	return int(m.GetPgid()), m.GetInputWaiting(), true, nil
}

// readChunk is how much one ReadFile RPC asks for.
const readChunk = 1 << 20

func (c Extension) ReadFile(ctx context.Context, path string) ([]byte, error) {
	var out []byte
	for {
		resp, err := c.Supervisor.ReadFile(ctx, connect.NewRequest(&sandtopv1.ReadFileRequest{Path: path, Offset: uint64(len(out)), Length: readChunk}))
		if err != nil {
			if connect.CodeOf(err) == connect.CodeNotFound {
				return nil, fmt.Errorf("read %s: %w", path, ErrFileNotFound)
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		out = append(out, resp.Msg.GetData()...)
		if resp.Msg.GetEof() || len(resp.Msg.GetData()) == 0 {
			return out, nil
		}
		if len(out) > sandboxCommandLimit {
			return nil, fmt.Errorf("read %s: larger than %d bytes", path, sandboxCommandLimit)
		}
	}
}

func (c Extension) ReadRange(ctx context.Context, path string, offset int64, length int) ([]byte, int64, error) {
	if err := checkRange(path, offset, length); err != nil {
		return nil, 0, err
	}
	var out []byte
	var size int64
	for len(out) < length {
		resp, err := c.Supervisor.ReadFile(ctx, connect.NewRequest(&sandtopv1.ReadFileRequest{Path: path,
			Offset: uint64(offset) + uint64(len(out)), Length: uint64(length - len(out))}))
		if err != nil {
			if connect.CodeOf(err) == connect.CodeNotFound {
				return nil, 0, fmt.Errorf("read %s: %w", path, ErrFileNotFound)
			}
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		out = append(out, resp.Msg.GetData()...)
		size = int64(resp.Msg.GetSize())
		if resp.Msg.GetEof() || len(resp.Msg.GetData()) == 0 {
			break
		}
	}
	return out, size, nil
}

func (c Extension) ListDir(ctx context.Context, path string) ([]DirEntry, error) {
	resp, err := c.Supervisor.ListDir(ctx, connect.NewRequest(&sandtopv1.ListDirRequest{Path: path}))
	if err != nil {
		if connect.CodeOf(err) == connect.CodeNotFound {
			return nil, fmt.Errorf("list %s: %w", path, ErrFileNotFound)
		}
		return nil, fmt.Errorf("list %s: %w", path, err)
	}
	var out []DirEntry
	for _, e := range resp.Msg.GetEntries() {
		de := DirEntry{Name: e.GetName(), Dir: e.GetDir(), Size: int64(e.GetSize())}
		if ms := e.GetMtimeUnixMs(); ms != 0 {
			de.ModTime = time.UnixMilli(ms)
		}
		out = append(out, de)
	}
	return out, nil
}

// ReadAllStates reads every state directory of the runtime root with one
// ReadStates call.
func (c Extension) ReadAllStates(ctx context.Context, _ string) ([]StateFiles, error) {
	resp, err := c.Supervisor.ReadStates(ctx, connect.NewRequest(&sandtopv1.ReadStatesRequest{}))
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		return nil, ErrUnsupported
	}
	if err != nil {
		return nil, fmt.Errorf("read the state directories: %w", err)
	}
	out := make([]StateFiles, 0, len(resp.Msg.GetDirs()))
	for _, d := range resp.Msg.GetDirs() {
		entries := make([]DirEntry, 0, len(d.GetEntries()))
		for _, e := range d.GetEntries() {
			de := DirEntry{Name: e.GetName(), Dir: e.GetDir(), Size: int64(e.GetSize())}
			if ms := e.GetMtimeUnixMs(); ms != 0 {
				de.ModTime = time.UnixMilli(ms) // the spills' last write: when the group last spoke
			}
			entries = append(entries, de)
		}
		files := d.GetFiles()
		f := StateFilesFrom(d.GetId(), entries, func(name string) *string {
			b, ok := files[name]
			if !ok {
				return nil
			}
			s := string(b)
			return &s
		})
		if ms := d.GetMtimeUnixMs(); ms != 0 {
			f.ModTime = time.UnixMilli(ms)
		}
		// The daemon sends the argv once the group is empty (or has
		// ended), whatever else its directory holds: a group whose shim
		// was killed has its command only here.
		if f.SupervisorRunning = d.GetSupervisorRunning(); f.Argv == nil {
			if b, ok := files[wrapper.ArgvFile]; ok {
				s := string(b)
				f.Argv = &s
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// Remove uses the daemon's filesystem service, so withdrawing a spill does
// not start an rm process (which, next to a spawn, competes with it).
func (c Extension) Remove(ctx context.Context, paths ...string) error {
	if c.Files == nil {
		return Compat{Runner: c.Runner}.Remove(ctx, paths...)
	}
	var errs []error
	for _, p := range paths {
		if _, err := c.Files.Remove(ctx, connect.NewRequest(&fspb.RemoveRequest{Path: p})); err != nil && connect.CodeOf(err) != connect.CodeNotFound {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Escapee is a process that left its group (setsid, a double fork) and was
// ended with it.
type Escapee struct {
	Pid  int
	Argv []string
	Comm string
}
