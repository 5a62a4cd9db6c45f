package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandtop/backend/procscan"
	"sandtop/outlog"
	"sandtop/wrapper"
)

// The standalone supervisor is the shim for stock envd, where no sandtop
// daemon runs: envd starts it (one process) and it starts the program (the
// second), so a group costs two processes instead of the bash wrapper's
// eight. It speaks the wrapper's protocol on envd's process stream, so the
// seam reads both alike:
//
//   - stdin begins with "<n>\n" and n bytes of StandaloneSpec as JSON (the
//     argv and environment never show in /proc/<pid>/cmdline or environ);
//     the rest of stdin is the program's when the spec forwards it;
//   - once the group is published, "sandtop-published <pgid>\n" on stdout
//     and on stderr, before any byte of the program's;
//   - then the program's output, spilled (capped) as well when asked;
//   - its own end carries the program's: the same exit code, or death by
//     the same signal.
//
// It publishes the group in the wrapper's layout (pid, argv, tag, spills,
// then signal, core and exit-code), leads a session of its own and is the
// child subreaper of what the program starts while the program runs. The
// program leads its own session and group (pid = pgid = sid), so a signal
// to the group never reaches the supervisor.

// StandaloneSpec is what the standalone supervisor runs.
type StandaloneSpec struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// ForwardStdin gives the program the rest of the supervisor's stdin;
	// otherwise it reads /dev/null.
	ForwardStdin bool `json:"forward_stdin,omitempty"`
	// StdoutSpill/StderrSpill cap the spill files; negative: no spill.
	StdoutSpill int64  `json:"stdout_spill"`
	StderrSpill int64  `json:"stderr_spill"`
	Tag         string `json:"tag,omitempty"`
}

// maxStandaloneSpec bounds the spec a supervisor reads from stdin.
const maxStandaloneSpec = 16 << 20

// StandalonePayload frames spec as the head of the supervisor's stdin.
func StandalonePayload(spec StandaloneSpec) ([]byte, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if len(b) > maxStandaloneSpec {
		return nil, fmt.Errorf("the program's argv and environment take %d bytes, more than %d", len(b), maxStandaloneSpec)
	}
	return append([]byte(strconv.Itoa(len(b))+"\n"), b...), nil
}

// ProbeSubcommand makes the executable print ProbeAnswer and exit: the test
// that the sandbox can execute an uploaded supervisor at all.
const (
	ProbeSubcommand = "__sandtop-probe"
	ProbeAnswer     = "sandtop-supervisor " + runtime.GOOS + "/" + runtime.GOARCH
)

// standaloneSubcommand runs the standalone supervisor, or answers the
// probe, when the executable was started as one; see RunIfSubcommand.
func standaloneSubcommand() {
	switch {
	case len(os.Args) == 3 && os.Args[1] == wrapper.SuperviseSubcommand:
		os.Exit(StandaloneMain(os.Args[2]))
	case len(os.Args) == 2 && os.Args[1] == ProbeSubcommand:
		fmt.Println(ProbeAnswer)
		os.Exit(0)
	case len(os.Args) == 2 && os.Args[1] == procscan.TableSubcommand:
		debug.SetGCPercent(-1) // short-lived, and its garbage is small
		os.Exit(scanExit(procscan.WriteTable(os.Stdout)))
	case len(os.Args) == 3 && os.Args[1] == procscan.StatesSubcommand:
		debug.SetGCPercent(-1)
		os.Exit(scanExit(procscan.WriteStates(os.Stdout, os.Args[2])))
	}
}

// scanExit ends a read-only scan (the listing's table or states on stock
// envd, read by the uploaded supervisor) with its error on stderr.
func scanExit(err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandtop: %v\n", err)
		return 1
	}
	return 0
}

// standaloneFail is the exit code of a supervisor that could not start
// the program, as the wrapper's 125.
const standaloneFail = 125

// StandaloneMain runs the standalone supervisor for the state directory
// stateDir and returns its exit code (when the program was not killed by
// a signal, which the supervisor then dies of instead).
func StandaloneMain(stateDir string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "sandtop-supervisor: %s\n", describe(err))
		return standaloneFail
	}
	// Its own session: out of envd's process group, so what is sent to
	// that group does not end the supervisor (envd starts every process in
	// its own group; setsid fails harmlessly where it already leads one).
	_, _ = unix.Setsid()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("become child subreaper: %w", err))
	}
	// Caught, not ignored: the supervisor outlives them (SIGPIPE included,
	// should envd stop reading), and the program, on exec, gets each back
	// at its default, where an ignored one would stay ignored.
	signal.Notify(make(chan os.Signal, 1), caughtSignals...)
	spec, err := readStandaloneSpec(os.Stdin)
	if err != nil {
		return fail(err)
	}
	s := &standalone{spec: spec}
	if err := s.prepare(stateDir); err != nil {
		return fail(err)
	}
	if err := s.start(); err != nil {
		s.abandon()
		return fail(err)
	}
	s.pumpAll()
	ws := s.reapProgram()
	s.publishExit(ws)
	s.pumps.Wait()
	// The supervisor leaves once the program has ended and its output
	// reached envd. Whatever the program left running stays in its group,
	// where a group signal still reaches it, and is reparented.
	return exitLike(ws)
}

var caughtSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGPIPE, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}

// readStandaloneSpec reads "<n>\n" and the n bytes of spec, and never a
// byte more: the rest of stdin belongs to the program.
func readStandaloneSpec(r io.Reader) (StandaloneSpec, error) {
	var spec StandaloneSpec
	var head []byte
	var one [1]byte
	for {
		if _, err := io.ReadFull(r, one[:]); err != nil {
			return spec, fmt.Errorf("read the spec's length from stdin: %w", err)
		}
		if one[0] == '\n' {
			break
		}
		if one[0] < '0' || one[0] > '9' || len(head) > 9 {
			return spec, errors.New("malformed spec header on stdin")
		}
		head = append(head, one[0])
	}
	n, err := strconv.Atoi(string(head))
	if err != nil || n > maxStandaloneSpec {
		return spec, errors.New("malformed spec header on stdin")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return spec, fmt.Errorf("read the spec from stdin: %w", err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return spec, fmt.Errorf("bad spec: %w", err)
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return spec, errors.New("bad spec: no program")
	}
	return spec, nil
}

// standalone is the state of one standalone supervisor.
type standalone struct {
	spec    StandaloneSpec
	dir     *StateDir
	pid     int
	readers [2]*os.File
	spills  [2]*spill
	pumps   sync.WaitGroup
	pidFile *os.File
}

// prepare makes the state directory and what describes the group before
// the program runs; a failure here fails the spawn.
func (s *standalone) prepare(stateDir string) error {
	if !path.IsAbs(stateDir) || !strings.Contains(stateDir, "/"+wrapper.ProcessesDir+"/") {
		return fmt.Errorf("state directory %q is not a process state directory", stateDir)
	}
	if err := os.MkdirAll(path.Dir(stateDir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		return err
	}
	dir, err := OpenStateDir(stateDir)
	if err != nil {
		return err
	}
	s.dir = dir
	if err := dir.CreateFile(wrapper.ArgvFile, nulTerminated(s.spec.Argv)); err != nil {
		return err
	}
	if s.spec.Tag != "" {
		if err := dir.CreateFile(wrapper.TagFile, []byte(s.spec.Tag+"\n")); err != nil {
			return err
		}
	}
	if err := dir.CreateFile(reservedProblem, make([]byte, 512)); err != nil {
		return err
	}
	if s.pidFile, err = dir.CreateReserved(wrapper.PidFile, 32); err != nil {
		return err
	}
	if wd, err := os.Getwd(); err == nil {
		_ = dir.CreateFile(wrapper.CwdFile, []byte(wd+"\n")) // for describe; the group runs without it
	}
	var marks *outlog.Writer // arrival marks, made before the spills (see supervisor.createMarks)
	if s.spec.StdoutSpill >= 0 || s.spec.StderrSpill >= 0 {
		if marks, err = newMarks(dir); err != nil {
			return err
		}
	}
	for i, c := range []int64{s.spec.StdoutSpill, s.spec.StderrSpill} {
		if c < 0 {
			continue
		}
		f, err := dir.Create([]string{wrapper.StdoutSpillFile, wrapper.StderrSpillFile}[i])
		if err != nil {
			return err
		}
		s.spills[i] = &spill{f: f, left: c, marks: marks, stream: outlog.Stream(i + 1)}
	}
	return nil
}

// start runs the program, publishes its pid and says so on both streams.
func (s *standalone) start() error {
	var files [3]*os.File
	files[0] = os.Stdin
	if !s.spec.ForwardStdin {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		defer null.Close()
		files[0] = null
	}
	var writers []*os.File
	for i := range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("output pipe: %w", err)
		}
		s.readers[i], files[i+1] = r, w
		writers = append(writers, w)
	}
	attr := procAttr("", s.spec.Env, files[:], &syscall.SysProcAttr{Setsid: true})
	if attr.Env == nil {
		attr.Env = []string{}
	}
	prog, err := lookPath(s.spec.Argv[0], s.spec.Env)
	pid := 0
	if err == nil {
		pid, err = startProcess(prog, s.spec.Argv, attr)
	}
	if err != nil {
		// As under the wrapper: the group exists, and ends as a shell's
		// would, 127 for no such program, 126 for one that cannot run.
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		msg := "sandtop: " + s.spec.Argv[0] + ": " + unwrapPathErr(err).Error()
		pid, err = startProcess("/proc/self/exe", []string{"sandtop-exec-failed", execFailedSubcommand, strconv.Itoa(code), msg}, attr)
	}
	runtime.KeepAlive(files)
	for _, w := range writers {
		_ = w.Close()
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", s.spec.Argv[0], err)
	}
	s.pid = pid
	_, err = s.pidFile.Write([]byte(strconv.Itoa(pid) + "\n"))
	if cerr := s.pidFile.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Kill(-pid, unix.SIGKILL)
		return fmt.Errorf("write %s/%s: %w", s.dir.Path(), wrapper.PidFile, unwrapPathErr(err))
	}
	line := []byte(wrapper.PublishedPrefix + strconv.Itoa(pid) + "\n")
	_, _ = os.Stdout.Write(line)
	_, _ = os.Stderr.Write(line)
	return nil
}

// lookPath finds argv0 as execvp would in the program's environment: a
// name with a slash as it is, any other on the PATH the program gets (or
// the default one).
func lookPath(argv0 string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		return argv0, nil
	}
	dirs := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = v
		}
	}
	denied := false
	for _, d := range strings.Split(dirs, ":") {
		if d == "" {
			d = "."
		}
		p := path.Join(d, argv0)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if unix.Access(p, unix.X_OK) == nil {
			return p, nil
		}
		denied = true
	}
	if denied {
		return "", &os.PathError{Op: "exec", Path: argv0, Err: os.ErrPermission}
	}
	return "", &os.PathError{Op: "exec", Path: argv0, Err: os.ErrNotExist}
}

// abandon reaps whatever a failed start left.
func (s *standalone) abandon() {
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); err != unix.EINTR && err != nil {
			return
		}
	}
}

// pumpAll forwards each stream to the supervisor's own, spilling it too.
func (s *standalone) pumpAll() {
	outs := [2]*os.File{os.Stdout, os.Stderr}
	for i := range 2 {
		s.pumps.Add(1)
		go func() {
			defer s.pumps.Done()
			s.pump(s.readers[i], s.spills[i], outs[i])
		}()
	}
}

func (s *standalone) pump(r *os.File, sp *spill, out *os.File) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if sp != nil {
				_ = sp.write(buf[:n]) // a full disk costs the spill, not the stream
			}
			// envd gone: the output is lost, the spill and the exit facts
			// are not.
			_, _ = out.Write(buf[:n])
		}
		if n == len(buf) && len(buf) < FastReadSize {
			GrowPipe(r)
			buf = make([]byte, FastReadSize)
		}
		if err != nil {
			break
		}
	}
	if sp != nil {
		_ = sp.f.Close()
	}
	_ = r.Close()
}

// reapProgram reaps children (orphans the subreaper inherits among them)
// until the program itself is reaped.
func (s *standalone) reapProgram() unix.WaitStatus {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			// Cannot happen while the program is our child; say so.
			return unix.WaitStatus(255 << 8)
		case pid == s.pid:
			return ws
		}
	}
}

// publishExit writes the exact facts, exit-code last (readers take it as
// the end), or why they could not be written.
func (s *standalone) publishExit(ws unix.WaitStatus) {
	var b strings.Builder
	for _, d := range Descendants(os.Getpid()) {
		fmt.Fprintf(&b, "%d %d %s\n", d.Pid, d.Pgid, d.Comm)
	}
	if b.Len() > 0 {
		_ = s.dir.WriteFile(wrapper.OutlivedFile, []byte(b.String()))
	}
	var err error
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
		err = s.dir.WriteLine(wrapper.SignalFile, strconv.Itoa(int(ws.Signal())))
		if err == nil && ws.CoreDump() {
			err = s.dir.WriteLine(wrapper.CoreFile, "1")
		}
	}
	if err == nil {
		err = s.dir.WriteLine(wrapper.ExitCodeFile, strconv.Itoa(code))
	}
	if err != nil {
		reason := "exit unknown: could not publish the exit status: " + describe(err)
		fmt.Fprintf(os.Stderr, "sandtop-supervisor: %s\n", reason)
		if s.dir.Rename(reservedProblem, wrapper.ProblemFile) == nil {
			overwrite(s.dir, wrapper.ProblemFile, reason)
		}
		return
	}
	_ = s.dir.Remove(reservedProblem)
}

// exitLike ends the supervisor as the program ended: by the same signal
// (its default action, without a core), or with the same code.
func exitLike(ws unix.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	signal.Reset(sig)
	// The runtime's own handler would turn SIGSEGV and the like into a
	// crash report: the default action it is, for this thread's signal.
	runtime.LockOSThread()
	defaultAction(sig)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	return 128 + int(sig) // a signal whose default is to carry on
}

// defaultAction sets sig's disposition to SIG_DFL with rt_sigaction (the
// kernel's struct sigaction: handler, flags, restorer, mask; all zero is
// SIG_DFL with nothing blocked).
func defaultAction(sig syscall.Signal) {
	var act [4]uint64
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set [1]uint64
	set[0] = 1 << (uint(sig) - 1)
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
}
