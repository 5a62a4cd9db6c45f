package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	rbacv1 "k8s.io/api/rbac/v1"

	"sandtop/backend/kube"
	"sandtop/backend/kube/kubetest"
	"sandtop/backend/target"
	"sandtop/config"
	"sandtop/testwait"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
)

// The shipped binary against a real Kubernetes API server: two pods, each
// a real "sandtop serve" on this machine's address, found through the API
// server and reached only through its pod proxy.

// serveAt starts "sandtop serve" on ip (port chosen by the kernel) with
// token, and returns its port; it is stopped when the test ends.
func serveAt(t *testing.T, ip, token string) int {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return serveTCP(t, nil, "--listen", ip+":0", "--token-file", tokenFile)
}

// serveTCP starts "sandtop serve" with args (a TCP --listen with port 0)
// and extra environment, and returns the port it says it listens on.
func serveTCP(t *testing.T, env []string, args ...string) int {
	t.Helper()
	dir := t.TempDir()
	serve := exec.Command(sandtopBin, append([]string{"serve", "--state-dir", filepath.Join(dir, "state"), "--kill-on-exit"}, args...)...)
	serve.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8"}, env...)
	serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	ready := make(chan int, 1)
	said := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on [^ ]+:(\d+),`)
		sc := bufio.NewScanner(stderr)
		var all []string
		for sc.Scan() {
			all = append(all, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				p, _ := strconv.Atoi(m[1])
				ready <- p
			}
		}
		said <- strings.Join(all, "\n")
	}()
	select {
	case p := <-ready:
		return p
	case out := <-said:
		t.Fatalf("sandtop serve %v ended: %s", args, out)
	case <-time.After(30 * time.Second):
		t.Fatal("sandtop serve did not say where it listens")
	}
	return 0
}

type kubeBench struct {
	kc  *kubetest.Cluster
	ns  string
	env []string
}

func (b *kubeBench) run(t *testing.T, args ...string) result {
	t.Helper()
	return sandtopEnv(t, b.env, args...)
}

func (b *kubeBench) must(t *testing.T, args ...string) string {
	t.Helper()
	r := b.run(t, args...)
	if r.code != 0 {
		t.Fatalf("sandtop %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (b *kubeBench) start(t *testing.T, pod string, argv ...string) int {
	t.Helper()
	out := b.must(t, append([]string{"run", "--kube=" + pod, "--namespace", b.ns, "--"}, argv...)...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	return pgid
}

// kubeBenchToken is the bench's daemons' token, in its Secret.
const kubeBenchToken = "kube-bench-token"

// newKubeBench makes a namespace with the two agent pods, their daemons
// and the token Secret their annotation names.
func newKubeBench(t *testing.T) *kubeBench {
	kc := kubetest.Start(t)
	ip := kubetest.HostIP(t)
	ns := kc.Namespace(t)
	kc.Secret(t, ns, "sandtop-token", kubeBenchToken, true)
	for _, name := range []string{"agent-1", "agent-2"} {
		port := serveAt(t, ip, kubeBenchToken)
		kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: name, IP: ip, Port: port,
			Labels:      map[string]string{"app": "agent"},
			Annotations: map[string]string{kube.TokenSecretAnnotation: "sandtop-token"}})
	}
	env := append(append([]string{}, testEnv...), "KUBECONFIG="+kc.Kubeconfig, "SANDTOP_TARGET=")
	return &kubeBench{kc: kc, ns: ns, env: env}
}

func TestKubePodsThroughTheAPIServer(t *testing.T) {
	b := newKubeBench(t)
	ns := b.ns
	one := b.start(t, "agent-1", "sh", "-c", "echo from-one; exec sleep 300")
	two := b.start(t, "agent-2", "sh", "-c", "echo from-two; exec sleep 300")

	// ls -A: both pods' groups, the pod in the SANDBOX column.
	out := b.must(t, "ls", "-A", "--kube", "--selector", "app=agent")
	for _, want := range []string{
		fmt.Sprintf(`(?m)^kube:%s/agent-1 +%d +running `, ns, one),
		fmt.Sprintf(`(?m)^kube:%s/agent-2 +%d +running `, ns, two),
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("ls -A --kube --selector app=agent lacks %s:\n%s", want, out)
		}
	}
	// Then the pods, as kubectl get pods shows them.
	if !regexp.MustCompile(`(?m)^SANDBOX +NAMESPACE +POD +PHASE +NODE +AGE\n(.*\n)*kube:` + ns + `/agent-2 +` + ns + ` +agent-2 +Running +node-a +\d+s$`).MatchString(out) {
		t.Fatalf("ls -A lacks the pods' table:\n%s", out)
	}
	var all allListDoc
	if err := json.Unmarshal([]byte(b.must(t, "ls", "-A", "--kube", "--selector", "app=agent", "-o", "json")), &all); err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, sb := range all.Sandboxes {
		if sb.Kube != nil && sb.Kube.Namespace == ns {
			pods++
			if sb.State != sandboxListed || sb.Kube.Phase != "Running" || sb.Kube.Node != "node-a" || sb.Sandbox != "kube:"+ns+"/"+sb.Kube.Pod {
				t.Fatalf("pod row %+v %+v", sb, *sb.Kube)
			}
		}
	}
	if pods != 2 {
		t.Fatalf("ls -A -o json lists %d pods of %s: %+v", pods, ns, all.Sandboxes)
	}

	// A pod that is not running yet is a row of its own, not a failure.
	b.kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "agent-3", Port: 49983, Phase: "Pending", Labels: map[string]string{"app": "agent"}})
	out = b.must(t, "ls", "-A", "--kube", "--namespace", ns)
	if !regexp.MustCompile(`(?m)^kube:` + ns + `/agent-3 +- +pending `).MatchString(out) {
		t.Fatalf("ls -A with a pending pod:\n%s", out)
	}
	b.kc.DeletePod(t, ns, "agent-3")
	// Inside the cluster, --kube-direct dials the pod itself.
	doc := decodeList(t, b.must(t, "ls", "--kube=agent-1", "--namespace", ns, "--kube-direct", "-o", "json"))
	if _, ok := findGroup(doc, one); !ok {
		t.Fatalf("--kube-direct lists %+v", doc.Groups)
	}

	// The TUI would open both pods.
	var ctxs contextsDoc
	if err := json.Unmarshal([]byte(b.must(t, "--kube", "--namespace", ns, "--print-contexts")), &ctxs); err != nil {
		t.Fatal(err)
	}
	if len(ctxs.Contexts) != 2 || ctxs.Contexts[0].Name != "kube:"+ns+"/agent-1" || ctxs.Contexts[1].Kind != "kube" {
		t.Fatalf("--print-contexts: %+v", ctxs)
	}

	// logs -f follows a group's output through the proxy to its end.
	ticks := b.start(t, "agent-2", "sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.3; done")
	if out := b.must(t, "logs", "-f", "--kube=agent-2", "--namespace", ns, strconv.Itoa(ticks)); out != "tick 1\ntick 2\ntick 3\n" {
		t.Fatalf("logs -f printed %q", out)
	}
	// A terminal, attached to through the proxy.
	out = b.must(t, "term", "--kube=agent-1", "--namespace", ns, "--", "sh", "-c", "echo in-the-pod; sleep 2")
	var tpid int
	if _, err := fmt.Sscanf(out, "terminal pid %d", &tpid); err != nil {
		t.Fatalf("term printed %q", out)
	}
	if out := b.must(t, "attach", "--kube=agent-1", "--namespace", ns, strconv.Itoa(tpid)); !strings.Contains(out, "in-the-pod") {
		t.Fatalf("attach printed %q", out)
	}

	// kill POD/PGID ends the group in that pod only.
	b.must(t, "kill", "--kube", "--namespace", ns, "--selector", "app=agent", "--grace", "2s", "agent-1/"+strconv.Itoa(one))
	doc = decodeList(t, b.must(t, "ls", "--kube=agent-1", "--namespace", ns, "-o", "json"))
	if g, ok := findGroup(doc, one); !ok || g.State != "settled" {
		t.Fatalf("after kill agent-1/%d: %+v", one, doc.Groups)
	}
	doc = decodeList(t, b.must(t, "ls", "--kube=agent-2", "--namespace", ns, "-o", "json"))
	if g, ok := findGroup(doc, two); !ok || g.State != "running" {
		t.Fatalf("agent-2's group after killing agent-1's: %+v", doc.Groups)
	}
	// The same by the name ls -A prints, with no kube flag at all.
	if out := b.must(t, "logs", fmt.Sprintf("kube:%s/agent-2/%d", ns, two)); !strings.Contains(out, "from-two") {
		t.Fatalf("logs kube:NS/POD/PGID printed %q", out)
	}

	// More than one pod is not a target for a command that works on one.
	if r := b.run(t, "run", "--kube", "--namespace", ns, "--", "true"); r.code != exitUsage || !strings.Contains(r.stderr, "agent-1") {
		t.Fatalf("run on two pods: exit %d %s", r.code, r.stderr)
	}
	if r := b.run(t, "ls", "--kube", "--namespace", ns, "--selector", "app=nothing"); r.code != 1 || !strings.Contains(r.stderr, "no pod in namespace "+ns+" with labels app=nothing runs sandtop's daemon") {
		t.Fatalf("ls on no pod: exit %d %s", r.code, r.stderr)
	}
	if r := b.run(t, "ls", "--kube=agent-1", "--namespace", ns, "--user", "root"); r.code != exitUsage || !strings.Contains(r.stderr, "--user does not go with --kube") {
		t.Fatalf("--user with --kube: exit %d %s", r.code, r.stderr)
	}

	// A pod that is deleted is gone: ls -A no longer lists it, and naming
	// it says so.
	b.kc.DeletePod(t, ns, "agent-2")
	testwait.For(t, 20*time.Second, "agent-2 to leave ls -A", func() bool {
		r := b.run(t, "ls", "-A", "--kube", "--namespace", ns, "-o", "json")
		return r.code == 0 && !strings.Contains(r.stdout, "agent-2")
	})
	r := b.run(t, "logs", fmt.Sprintf("kube:%s/agent-2/%d", ns, two))
	if r.code == 0 || !strings.Contains(r.stderr, "pod is gone") {
		t.Fatalf("logs in a deleted pod: exit %d %s", r.code, r.stderr)
	}
}

// A user who may list pods and read the token, but not use the pod
// proxy, is told which permission is missing.
func TestKubeWithoutPodsProxyTheErrorSaysSo(t *testing.T) {
	b := newKubeBench(t)
	viewer := b.kc.User(t, b.ns, "viewer", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	})
	env := append(append([]string{}, b.env...), "KUBECONFIG="+viewer)
	r := sandtopEnv(t, env, "ls", "--kube=agent-1")
	if r.code == 0 || !strings.Contains(r.stderr, "pods/proxy") || !strings.Contains(r.stderr, b.ns+"/agent-1") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("ls without pods/proxy: exit %d\n%s", r.code, r.stderr)
	}
	// Without the Secret's grant, that is what it says.
	noSecret := b.kc.User(t, b.ns, "nosecret", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/proxy"}, Verbs: []string{"get", "create"}},
	})
	env = append(append([]string{}, b.env...), "KUBECONFIG="+noSecret)
	r = sandtopEnv(t, env, "ls", "-A", "--kube", "--namespace", b.ns, "-o", "json")
	if r.code != 1 || !strings.Contains(r.stdout, "read secret sandtop-token") || !strings.Contains(r.stdout, "forbidden by RBAC") {
		t.Fatalf("ls -A without get on secrets: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The TUI opened on the pods: the fleet view lists both with their
// counts, without visiting either; a pod created while it runs joins
// them with its counts, a deleted pod turns gone, and one re-created
// under its name is shown running again, with the new daemon's counts.
func TestKubeFleetShowsPodsWithCounts(t *testing.T) {
	b := newKubeBench(t)
	ns := b.ns
	b.start(t, "agent-1", "sleep", "300")
	b.start(t, "agent-2", "sleep", "300")
	b.start(t, "agent-2", "sleep", "301")

	// What "sandtop --kube --namespace NS --selector app=agent" selects.
	sel := selection{name: "kube", expands: true, cfg: target.Config{Kube: &kube.Options{
		Kubeconfig: b.kc.Kubeconfig, Namespace: ns, Selector: "app=agent"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := &tuiOpener{cfg: config.Defaults()}
	defer o.closeAll()
	contexts, _ := o.specs(ctx, []selection{sel}, 0)
	if len(contexts) != 2 || contexts[0].Name != "kube:"+ns+"/agent-1" || contexts[1].Summary == nil || contexts[1].Provider == nil {
		t.Fatalf("contexts: %+v", contexts)
	}
	if info := contexts[0].ProviderInfo; info.State != "running" || info.Metadata["node"] != "node-a" || info.Metadata["namespace"] != ns {
		t.Fatalf("agent-1's plane info: %+v", info)
	}
	m := ui.NewModel(ui.Options{Sandboxes: contexts, Arrivals: o.announced(), Theme: themes.MustLoad("dark"), ProviderRefresh: 300 * time.Millisecond})
	defer m.Close()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 30))
	tm.Send(tea.KeyPressMsg{Code: 'c', Text: "c"})
	row := func(pod, state string, groups int) *regexp.Regexp {
		return regexp.MustCompile(`kube:` + ns + `/` + pod + ` +` + state + ` +- +- +- +` + strconv.Itoa(groups) + ` `)
	}
	screen := screentest.New(tm.Output(), 160, 30)
	shown := screen.WaitFunc(t, "both pods with their counts", 60*time.Second, func(s string) bool {
		return row("agent-1", "running", 1).MatchString(s) && row("agent-2", "running", 2).MatchString(s)
	})
	// A pod has no end time: the header counts nothing down.
	if strings.Contains(shown, "expired") || strings.Contains(shown, " left") {
		t.Fatalf("the header gives a pod a time left:\n%s", shown)
	}

	// A third pod, with its own daemon, created while the TUI runs.
	ip := kubetest.HostIP(t)
	newPod := func(name string) {
		b.kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: name, IP: ip, Port: serveAt(t, ip, kubeBenchToken),
			Labels:      map[string]string{"app": "agent"},
			Annotations: map[string]string{kube.TokenSecretAnnotation: "sandtop-token"}})
	}
	newPod("agent-3")
	for i := range 3 {
		b.start(t, "agent-3", "sleep", strconv.Itoa(310+i))
	}
	screen.WaitFunc(t, "agent-3 with its counts", 60*time.Second, func(s string) bool {
		return row("agent-3", "running", 3).MatchString(s)
	})

	b.kc.DeletePod(t, ns, "agent-2")
	gone := regexp.MustCompile(`kube:` + ns + `/agent-2 +gone `)
	screen.WaitFunc(t, "agent-2 gone", 30*time.Second, gone.MatchString)
	newPod("agent-2")
	b.start(t, "agent-2", "sleep", "320")
	screen.WaitFunc(t, "agent-2 back, with the new daemon's counts", 60*time.Second, func(s string) bool {
		return row("agent-2", "running", 1).MatchString(s) && !gone.MatchString(s)
	})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// Mistakes with the kube flags are one clear line each, with no cluster
// needed to find them.
func TestKubeFlagsSayWhatIsWrong(t *testing.T) {
	home := t.TempDir()
	env := append(append([]string{}, testEnv...), "HOME="+home, "KUBECONFIG=", "KUBERNETES_SERVICE_HOST=", "SANDTOP_TARGET=")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls", "--kube"}, 1, "no kubeconfig: set KUBECONFIG"},
		{[]string{"ls", "--kubeconfig", filepath.Join(home, "missing")}, 1, "missing"},
		{[]string{"ls", "--namespace", "a", "--all-namespaces"}, exitUsage, "give only one"},
		{[]string{"ls", "--kube="}, exitUsage, "--kube= needs a pod name"},
		{[]string{"ls", "--kube=p", "--selector", "app=a"}, exitUsage, "--kube=POD names one pod"},
		{[]string{"ls", "--kube", "--user", "root"}, exitUsage, "--user does not go with --kube"},
		{[]string{"ls", "--kube", "--selector", "a in (("}, exitUsage, `--selector "a in (("`},
	}
	for _, c := range cases {
		r := sandtopEnv(t, env, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("sandtop %s: exit %d, want %d and %q:\n%s", strings.Join(c.args, " "), r.code, c.code, c.want, r.stderr)
		}
	}
}

// A daemon serving TLS (sandtop.dev/scheme: https): the API server speaks
// TLS to it through the proxy, and --kube-direct with --ca-file dials it.
func TestKubeTLSDaemon(t *testing.T) {
	kc := kubetest.Start(t)
	ip := kubetest.HostIP(t)
	ns := kc.Namespace(t)
	dir := t.TempDir()
	ca, cert, key := writeTLS(t, dir, ip)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("tls-kube-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := serveTCP(t, nil, "--listen", ip+":0", "--token-file", tokenFile, "--tls-cert", cert, "--tls-key", key)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "tls", IP: ip, Port: port, Annotations: map[string]string{kube.SchemeAnnotation: "https"}})
	env := append(append([]string{}, testEnv...), "KUBECONFIG="+kc.Kubeconfig, "SANDTOP_TARGET=")
	for _, extra := range [][]string{nil, {"--kube-direct", "--ca-file", ca}} {
		args := append([]string{"run", "--wait", "--kube=tls", "--namespace", ns, "--token-file", tokenFile}, extra...)
		r := sandtopEnv(t, env, append(args, "--", "echo", "tls-pod")...)
		if r.code != 0 || r.stdout != "tls-pod\n" {
			t.Fatalf("sandtop %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// The shipped binary's TUI, in tmux, opened with --kube: c shows both
// pods in the fleet view with their counts.
func TestKubeTUIInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("SKIPPED: tmux is not installed")
	}
	b := newKubeBench(t)
	ns := b.ns
	b.start(t, "agent-1", "sleep", "300")
	b.start(t, "agent-2", "sleep", "300")
	b.start(t, "agent-2", "sleep", "301")
	server := fmt.Sprintf("sandtop-kube-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", server}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", server, "kill-server").Run() })
	line := "env -i"
	for _, kv := range b.env {
		line += " '" + strings.ReplaceAll(kv, "'", `'\''`) + "'"
	}
	line += " " + sandtopBin + " --kube --namespace " + ns + " --selector app=agent"
	tmux("new-session", "-d", "-x", "150", "-y", "20", "-s", "k", line)
	screen := func() string { return tmux("capture-pane", "-p", "-t", "k") }
	testwait.For(t, 30*time.Second, "the TUI on agent-1", func() bool { return strings.Contains(screen(), "kube:"+ns+"/agent-1") })
	tmux("send-keys", "-t", "k", "c")
	rows := regexp.MustCompile(`kube:` + ns + `/agent-1 +running +- +- +- +1 [\s\S]*kube:` + ns + `/agent-2 +running +- +- +- +2 `)
	testwait.NoError(t, 60*time.Second, func() error {
		if s := screen(); !rows.MatchString(s) {
			return fmt.Errorf("the fleet view does not show both pods with their counts:\n%s", s)
		}
		return nil
	})
	tmux("send-keys", "-t", "k", "q")
	testwait.For(t, 10*time.Second, "the TUI to exit", func() bool {
		return exec.Command("tmux", "-L", server, "has-session", "-t", "k").Run() != nil
	})
}

// The TUI on a selection that matches no pod says so, where it looked,
// instead of blaming an E2B team.
func TestKubeTUIWithNoPodSaysWhere(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	env := append(append([]string{}, testEnv...), "KUBECONFIG="+kc.Kubeconfig, "SANDTOP_TARGET=")
	r := sandtopEnv(t, env, "--kube", "--namespace", ns, "--selector", "app=agent")
	want := "no pod in namespace " + ns + " with labels app=agent runs sandtop's daemon"
	if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "E2B") {
		t.Fatalf("sandtop --kube on an empty namespace: exit %d, want %q\nstdout: %s\nstderr: %s", r.code, want, r.stdout, r.stderr)
	}
}
