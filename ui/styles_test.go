package ui

import (
	"io"
	"reflect"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"sandtop/themes"
)

// TestProfileColorsDrawLikeHex: a theme colour resolved to the terminal's
// palette ahead of time draws exactly as lipgloss draws the hex itself.
func TestProfileColorsDrawLikeHex(t *testing.T) {
	for _, prof := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI, termenv.Ascii} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(prof)
		for _, name := range themes.Names() {
			th := themes.MustLoad(name)
			for _, part := range []any{th.UI, th.Palette} {
				v := reflect.ValueOf(part)
				for i := 0; i < v.NumField(); i++ {
					hex, ok := v.Field(i).Interface().(string)
					if !ok || hex == "" {
						continue
					}
					c := profileColor(prof, hex)
					want := r.NewStyle().Foreground(lipgloss.Color(hex)).Background(lipgloss.Color(hex)).Render("x")
					if got := r.NewStyle().Foreground(c).Background(c).Render("x"); got != want {
						t.Errorf("profile %v, theme %s, %s: %q draws %q, want %q", prof, name, hex, c, got, want)
					}
				}
			}
		}
	}
}
