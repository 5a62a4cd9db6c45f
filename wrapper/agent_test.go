package wrapper

import "testing"

func TestAgentStateDir(t *testing.T) {
	dir := "/home/user/workspace/.dsh-e2b/processes/0b1c2d3e-aaaa-bbbb-cccc-1234567890ab"
	cases := []struct {
		argv []string
		want string
	}{
		// The state dir as a positional parameter, and inside the script.
		{[]string{"bash", "-c", "inner", "dsh-e2b", dir, "sleep 1"}, dir},
		{[]string{"/usr/bin/bash", "-c", "d='" + dir + "'; printf x > \"$d/pid\"", "dsh-e2b", "/usr/bin/env", "--", "sleep", "1"}, dir},
		// ps joins argv with spaces.
		{[]string{"/bin/bash -c inner dsh-e2b " + dir + " sleep 1"}, dir},
		// The login shell before the exec chain, another marker, no dir.
		{[]string{"/bin/bash", "-l", "-c", "exec setsid --wait -- bash -c x dsh-e2b " + dir}, ""},
		{[]string{"bash", "-c", "inner", "other", dir}, ""},
		{[]string{"bash", "-c", "inner", "dsh-e2b", "/tmp/x"}, ""},
		{[]string{"sleep", "-c", "dsh-e2b", dir}, ""},
	}
	for _, c := range cases {
		got, ok := AgentStateDir(c.argv)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("AgentStateDir(%q) = %q, %v; want %q", c.argv, got, ok, c.want)
		}
	}
	if r := AgentRoot(dir); r != "/home/user/workspace/.dsh-e2b" {
		t.Errorf("AgentRoot = %q", r)
	}
}
