package stuck

import (
	"strings"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	r := Default()
	quiet := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tc := range []struct {
		name string
		f    Facts
		want string
	}{
		{"waiting for input wins", Facts{WaitingInput: true, CPU: 50, CPUKnown: true, QuietSince: quiet(time.Second)}, WaitingInput},
		{"leader gone", Facts{LeaderGone: true}, LeaderGone},
		{"idle long enough", Facts{CPU: 0.5, CPUKnown: true, QuietSince: quiet(12 * time.Minute)}, "idle 12m"},
		{"idle not long enough", Facts{CPU: 0.5, CPUKnown: true, QuietSince: quiet(9 * time.Minute)}, ""},
		{"exactly the threshold counts", Facts{CPU: 0, CPUKnown: true, QuietSince: quiet(10 * time.Minute)}, "idle 10m"},
		{"idle at 1% is not idle", Facts{CPU: 1, CPUKnown: true, QuietSince: quiet(time.Hour)}, ""},
		{"spinning", Facts{CPU: 99, CPUKnown: true, QuietSince: quiet(2 * time.Hour)}, "spinning 2h"},
		{"spinning at 95%", Facts{CPU: 95, CPUKnown: true, QuietSince: quiet(11 * time.Minute)}, "spinning 11m"},
		{"busy but writing", Facts{CPU: 99, CPUKnown: true, QuietSince: quiet(time.Second)}, ""},
		{"working between the thresholds", Facts{CPU: 40, CPUKnown: true, QuietSince: quiet(time.Hour)}, ""},
		{"no output time known", Facts{CPU: 0, CPUKnown: true}, ""},
		{"no cpu known", Facts{QuietSince: quiet(time.Hour)}, ""},
	} {
		if got := r.Judge(tc.f, now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	off := r
	off.Off = true
	if got := off.Judge(Facts{WaitingInput: true}, now); got != "" {
		t.Errorf("off still flags: %q", got)
	}
	if got := (Rules{}).Judge(Facts{CPU: 50, CPUKnown: true, QuietSince: quiet(time.Hour)}, now); got != "" {
		t.Errorf("the zero rules judge by the defaults; got %q", got)
	}
	custom := Rules{After: time.Minute, IdleCPU: 5, SpinCPU: 80}
	if got := custom.Judge(Facts{CPU: 4, CPUKnown: true, QuietSince: quiet(90 * time.Second)}, now); got != "idle 1m" {
		t.Errorf("custom rules: %q", got)
	}
	if got := custom.Judge(Facts{CPU: 85, CPUKnown: true, QuietSince: quiet(90 * time.Second)}, now); got != "spinning 1m" {
		t.Errorf("custom rules, spinning: %q", got)
	}
}

func TestCheck(t *testing.T) {
	if err := Default().Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    Rules
		want string
	}{
		{Rules{After: 0, IdleCPU: 1, SpinCPU: 95}, "after must be a positive duration"},
		{Rules{After: time.Minute, IdleCPU: -1, SpinCPU: 95}, "idle_cpu must be a percentage"},
		{Rules{After: time.Minute, IdleCPU: 1, SpinCPU: 0}, "spin_cpu must be a positive percentage"},
		{Rules{After: time.Minute, IdleCPU: 50, SpinCPU: 40}, "idle_cpu must be below spin_cpu"},
	} {
		err := tc.r.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
	if err := (Rules{Off: true}).Check(); err != nil {
		t.Errorf("off needs no thresholds: %v", err)
	}
}
