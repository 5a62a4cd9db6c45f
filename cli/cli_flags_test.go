package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/backend/kube"
	"sandtop/backend/kube/kubetest"
	"sandtop/testwait"
)

// The shipped binary, every target flag, every command that takes them: each
// way of naming a sandbox must act on that sandbox. Four real daemons stand
// for four sandboxes (a unix socket, an envd on loopback with a token, a
// config target, an E2B sandbox behind the fake control plane), each with
// its own WHO in its base environment, so a program tells where it ran. The
// config's default target is a fifth daemon, the decoy (no WHO): a flag
// that is silently ignored lands there and fails the checks.

const flagsSandboxID = "sbxflags"

type flagWay struct {
	name  string   // the subtest
	args  []string // the target flags
	env   []string // extra environment
	want  string   // the sandbox's name, as ls -o json's "target" gives it
	who   string   // its WHO
	isE2B bool
	// nameArgs are the flags SANDBOX/PGID needs to reach it by name.
	nameArgs []string
}

type flagBench struct {
	env  []string
	ways []flagWay
}

func newFlagBench(t *testing.T) *flagBench {
	t.Helper()
	base := func(who string) []string {
		return []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C.UTF-8", "WHO=" + who}
	}
	sock := daemontest.Start(t, daemon.Config{Env: base("sock")})
	envd := daemontest.StartTCP(t, daemon.Config{Env: base("envd"), Token: "flags-envd-token"})
	cfgbox := daemontest.Start(t, daemon.Config{Env: base("cfg")})
	// The decoy is a daemon process of its own, so a signal or kill sent
	// there fails rather than reaching a group of this process's daemons.
	decoy := startServe(t, nil)
	e2bd := daemontest.StartTCP(t, daemon.Config{Compat: true, Env: base("e2b"), Token: "flags-e2b-token"})
	fake := e2bfake.New(t, compatKey)
	fake.Add(e2bfake.Sandbox{ID: flagsSandboxID, Alias: "flags", TemplateID: "tplf", EnvdURL: e2bd.Addr, Token: e2bd.Token,
		Metadata: map[string]string{"suite": "flags"}})

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "envd.token")
	if err := os.WriteFile(tokenFile, []byte(envd.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "config.toml")
	cfg := fmt.Sprintf("target = \"decoy\"\n[targets.decoy]\nsocket = %q\n[targets.cfgbox]\nsocket = %q\n", decoy, cfgbox.Socket)
	if err := os.WriteFile(configPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	// An E2B sandbox's layout defaults to /home/user; here it is this machine.
	layout := []string{"--user", me.Username, "--runtime-root", filepath.Join(dir, "e2b-state"), "--agent-workspace", work}
	envdHost := strings.TrimPrefix(envd.Addr, "http://")
	b := &flagBench{
		env: append(append([]string{}, testEnv...), "SANDTOP_CONFIG="+configPath, "SANDTOP_TARGET=",
			"E2B_API_KEY="+compatKey, "E2B_API_URL="+fake.URL, "E2B_SANDBOX_URL="+e2bd.Addr),
		ways: []flagWay{
			{name: "target", args: []string{"--target", "cfgbox"}, want: "cfgbox", who: "cfg"},
			{name: "SANDTOP_TARGET", env: []string{"SANDTOP_TARGET=cfgbox"}, want: "cfgbox", who: "cfg"},
			{name: "socket", args: []string{"--socket", sock.Socket}, want: "socket:" + sock.Socket, who: "sock"},
			{name: "envd", args: []string{"--envd", envd.Addr, "--token-file", tokenFile}, want: "envd:" + envdHost, who: "envd",
				nameArgs: []string{"--envd", envd.Addr, "--token-file", tokenFile}},
			{name: "e2b", args: append([]string{"--e2b"}, layout...), want: "e2b:" + flagsSandboxID, who: "e2b", isE2B: true, nameArgs: layout},
			{name: "e2b=ID", args: append([]string{"--e2b=" + flagsSandboxID}, layout...), want: "e2b:" + flagsSandboxID, who: "e2b", isE2B: true, nameArgs: layout},
			{name: "e2b-metadata", args: append([]string{"--e2b-metadata", "suite=flags"}, layout...), want: "e2b:" + flagsSandboxID, who: "e2b", isE2B: true, nameArgs: layout},
		},
	}
	b.addKube(t, base("kube"))
	return b
}

// addKube adds a pod behind a real API server's pod proxy, when one runs
// (scripts/kube-testenv), as a fifth sandbox: --kube, --kube=POD,
// --selector, --kube-context, --all-namespaces and a config kube target.
func (b *flagBench) addKube(t *testing.T, env []string) {
	t.Helper()
	if !kubetest.Available() {
		t.Logf("NOT TESTED: the kube target flags: $%s is not set (scripts/kube-testenv)", kubetest.EnvRun)
		return
	}
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	d := daemontest.StartAt(t, daemon.Config{Env: env, Token: "flags-kube-token"}, kubetest.HostIP(t)+":0")
	port, _ := strconv.Atoi(d.Addr[strings.LastIndexByte(d.Addr, ':')+1:])
	kc.Secret(t, ns, "flags-token", d.Token, true)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "flags", IP: kubetest.HostIP(t), Port: port,
		Labels:      map[string]string{"suite": ns},
		Annotations: map[string]string{kube.TokenSecretAnnotation: "flags-token"}})
	// The config gains a kube target; its file is rewritten in place.
	cfgPath := ""
	for _, kv := range b.env {
		if p, ok := strings.CutPrefix(kv, "SANDTOP_CONFIG="); ok {
			cfgPath = p
		}
	}
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[targets.kpods]\nkube = { namespace = %q, selector = \"suite=%s\" }\n", ns, ns)
	f.Close()
	b.env = append(b.env, "KUBECONFIG="+kc.Kubeconfig)
	want := "kube:" + ns + "/flags"
	for _, w := range []flagWay{
		{name: "kube", args: []string{"--kube", "--namespace", ns}},
		{name: "kube=POD", args: []string{"--kube=flags", "--namespace", ns}},
		{name: "kube=NS/POD", args: []string{"--kube=" + ns + "/flags"}},
		{name: "selector", args: []string{"--selector", "suite=" + ns, "--namespace", ns}},
		{name: "kube-context", args: []string{"--kube-context", kc.Context, "--namespace", ns}},
		{name: "all-namespaces", args: []string{"--all-namespaces", "--selector", "suite=" + ns}},
		{name: "kube-target", args: []string{"--target", "kpods"}},
	} {
		w.want, w.who = want, "kube"
		b.ways = append(b.ways, w)
	}
}

// run runs the binary: args, then the way's flags, in the way's environment.
func (b *flagBench) run(t *testing.T, w flagWay, args ...string) result {
	t.Helper()
	full := append(append([]string{}, args...), w.args...)
	if i := indexOf(args, "--"); i >= 0 { // flags go before "--"
		full = append(append(append([]string{}, args[:i]...), w.args...), args[i:]...)
	}
	return sandtopEnv(t, append(append([]string{}, b.env...), w.env...), full...)
}

func (b *flagBench) must(t *testing.T, w flagWay, args ...string) string {
	t.Helper()
	r := b.run(t, w, args...)
	if r.code != 0 {
		t.Fatalf("sandtop %s %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), strings.Join(w.args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// list is ls -o json on the way's sandbox; it must say which one it is.
// On a loaded machine a stock envd's ps can time out: that is tried again.
func (b *flagBench) list(t *testing.T, w flagWay) listDoc {
	t.Helper()
	var doc listDoc
	testwait.For(t, time.Minute, "ls "+strings.Join(w.args, " "), func() bool {
		var ok bool
		doc, ok = b.tryList(t, w)
		return ok
	})
	return doc
}

// tryList is list for a poll: a failed ls (a slow sandbox under load) is
// tried again, but one that names another sandbox fails at once.
func (b *flagBench) tryList(t *testing.T, w flagWay) (listDoc, bool) {
	t.Helper()
	r := b.run(t, w, "ls", "-o", "json")
	if r.code != 0 {
		t.Logf("ls %v: exit %d: %s", w.args, r.code, r.stderr)
		return listDoc{}, false
	}
	doc := decodeList(t, r.stdout)
	if doc.Target != w.want {
		t.Fatalf("ls %v listed %q; want %q", w.args, doc.Target, w.want)
	}
	return doc, true
}

func TestEveryTargetFlagOnEveryCommand(t *testing.T) {
	b := newFlagBench(t)
	// One sandbox at a time per sandbox (demo replaces its previous run
	// there), the sandboxes in parallel.
	for _, who := range []string{"cfg", "sock", "envd", "e2b", "kube"} {
		t.Run(who, func(t *testing.T) {
			t.Parallel()
			for _, w := range b.ways {
				if w.who == who {
					t.Run(w.name, func(t *testing.T) { checkWay(t, b, w) })
				}
			}
		})
	}
}

func checkWay(t *testing.T, b *flagBench, w flagWay) {
	// ls: the document names the sandbox.
	b.list(t, w)

	// The TUI would open exactly that sandbox.
	var ctxs contextsDoc
	out := b.must(t, w, "--print-contexts")
	if err := json.Unmarshal([]byte(out), &ctxs); err != nil {
		t.Fatalf("--print-contexts: %v\n%s", err, out)
	}
	if len(ctxs.Contexts) != 1 || ctxs.Contexts[0].Name != w.want || ctxs.Initial != w.want {
		t.Fatalf("the TUI with %v %v would open %+v; want only %s", w.args, w.env, ctxs, w.want)
	}

	// run --wait: the program sees that sandbox's environment.
	if out := b.must(t, w, "run", "--wait", "--", "sh", "-c", "echo who=$WHO"); !strings.Contains(out, "who="+w.who) {
		t.Fatalf("run --wait printed %q; want who=%s", out, w.who)
	}

	// run (detached), then logs, signal, kill and prune on its group.
	out = b.must(t, w, "run", "--", "sh", "-c", "echo who=$WHO; exec sleep 300")
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	if _, ok := findGroup(b.list(t, w), pgid); !ok {
		t.Fatalf("group %d is not in %s", pgid, w.want)
	}
	testwait.For(t, 20*time.Second, "logs of the group", func() bool {
		r := b.run(t, w, "logs", strconv.Itoa(pgid))
		return r.code == 0 && strings.Contains(r.stdout, "who="+w.who)
	})
	// The same group as SANDBOX/PGID, as ls -A names its sandbox, with the
	// config's default (the decoy) selected: only what reaching it needs
	// (the envd's token file, E2B's layout) is given.
	named := flagWay{args: w.nameArgs}
	if r := b.run(t, named, "logs", w.want+"/"+strconv.Itoa(pgid)); r.code != 0 || !strings.Contains(r.stdout, "who="+w.who) {
		t.Fatalf("logs %s/%d %v: exit %d\n%s%s", w.want, pgid, w.nameArgs, r.code, r.stdout, r.stderr)
	}
	if out := b.must(t, w, "describe", strconv.Itoa(pgid)); !strings.Contains(out, "who=$WHO") || !strings.Contains(out, "Sandbox:") {
		t.Fatalf("describe %d in %s:\n%s", pgid, w.want, out)
	}
	b.must(t, w, "signal", "STOP", strconv.Itoa(pgid))
	testwait.For(t, 30*time.Second, "the group stopped", func() bool {
		doc, ok := b.tryList(t, w)
		g, found := findGroup(doc, pgid)
		return ok && found && g.State == "stopped"
	})
	b.must(t, w, "signal", "CONT", strconv.Itoa(pgid))
	b.must(t, w, "kill", "--grace", "2s", strconv.Itoa(pgid))
	if g, ok := findGroup(b.list(t, w), pgid); ok && g.State != "settled" {
		t.Fatalf("after kill, group %d is %s", pgid, g.State)
	}
	testwait.For(t, 30*time.Second, "prune --dry-run to offer the group", func() bool {
		r := b.run(t, w, "prune", "--dry-run")
		return r.code == 0 && strings.Contains(r.stdout, fmt.Sprintf("would remove pgid %d ", pgid))
	})

	// term, then attach to it: the terminal runs in that sandbox.
	out = b.must(t, w, "term", "--", "sh", "-c", "echo who=$WHO; sleep 8")
	var tpid int
	if _, err := fmt.Sscanf(out, "terminal pid %d", &tpid); err != nil {
		t.Fatalf("term printed %q: %v", out, err)
	}
	if out := b.must(t, w, "attach", strconv.Itoa(tpid)); !strings.Contains(out, "who="+w.who) {
		t.Fatalf("attach %d printed %q; want who=%s", tpid, out, w.who)
	}

	// demo starts its workload there, and its TUI would open that sandbox.
	out = b.must(t, w, "demo", "--print-contexts")
	var build int
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "started" && f[1] == "build" {
			build, _ = strconv.Atoi(f[3])
		}
	}
	ctxs = contextsDoc{}
	if i := strings.Index(out, "{"); i < 0 || json.Unmarshal([]byte(out[i:]), &ctxs) != nil ||
		len(ctxs.Contexts) != 1 || ctxs.Contexts[0].Name != w.want {
		t.Fatalf("demo's TUI would not open %s alone:\n%s", w.want, out)
	}
	g, ok := findGroup(b.list(t, w), build)
	if !ok || !strings.HasPrefix(g.Tag, "demo") {
		t.Fatalf("demo's build (pgid %d) is not in %s: %q", build, w.want, out)
	}

	// The e2b commands: E2B selections are honoured, others refused.
	r := b.run(t, w, "e2b", "ls", "-o", "json")
	switch {
	case w.isE2B:
		if r.code != 0 || !strings.Contains(r.stdout, `"id": "`+flagsSandboxID+`"`) {
			t.Fatalf("e2b ls %v: exit %d\n%s%s", w.args, r.code, r.stdout, r.stderr)
		}
	case len(w.args) > 0: // a target flag naming no E2B sandbox
		if r.code != exitUsage || !strings.Contains(r.stderr, "not an E2B target") {
			t.Fatalf("e2b ls %v: exit %d\n%s%s", w.args, r.code, r.stdout, r.stderr)
		}
	default: // $SANDTOP_TARGET is a default, passed over
		if r.code != 0 {
			t.Fatalf("e2b ls with %v: exit %d\n%s", w.env, r.code, r.stderr)
		}
	}
}
