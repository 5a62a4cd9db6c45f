package seam

import (
	"regexp"
	"testing"
)

// The hand-written ASCII match of the credential heuristic agrees with the
// case-insensitive regexp it replaces, and non-ASCII names still fold as
// Unicode does.
func TestScrubbedNameMatchesTheHeuristic(t *testing.T) {
	re := regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN`)
	names := []string{
		"", "K", "KE", "KEY", "key", "kEy", "API_KEY", "MONKEY", "KEYS", "KE_Y", "K3Y",
		"PASSWORD", "my_password", "PassWord1", "PASSWOR", "SECRET", "client_secret", "SECRE",
		"TOKEN", "npm_token", "TOKE", "PATH", "HOME", "LANG", "{EY", "[EY", "kEY\x00",
		"\u212aEY",    // KELVIN SIGN folds to K
		"\u017fECRET", // LONG S folds to S
		"CAFÉ_KEY", "CAFÉ", "ÉTOKEN",
		"DSH_STALE", "dsh_lower",
	}
	for _, n := range names {
		want := len(n) >= 4 && n[:4] == "DSH_" || re.MatchString(n)
		if got := ScrubbedName(n); got != want {
			t.Errorf("ScrubbedName(%q) = %v, want %v", n, got, want)
		}
	}
}
