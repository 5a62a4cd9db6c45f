package themes

import (
	"fmt"
	"reflect"
	"strconv"
)

// validate checks that every colour field holds "#rrggbb".
func (t Theme) validate() error {
	if t.Name == "" {
		return fmt.Errorf("missing name")
	}
	for i, c := range t.Palette.ANSI {
		if err := checkHex(c); err != nil {
			return fmt.Errorf("palette.ansi[%d]: %w", i, err)
		}
	}
	for _, f := range []struct {
		name, val string
	}{{"palette.foreground", t.Palette.Foreground}, {"palette.background", t.Palette.Background}, {"palette.cursor", t.Palette.Cursor}} {
		if err := checkHex(f.val); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	v := reflect.ValueOf(t.UI)
	for i := 0; i < v.NumField(); i++ {
		if err := checkHex(v.Field(i).String()); err != nil {
			return fmt.Errorf("ui.%s: %w", v.Type().Field(i).Tag.Get("toml"), err)
		}
	}
	return nil
}

func checkHex(c string) error {
	if len(c) != 7 || c[0] != '#' {
		return fmt.Errorf("%q is not #rrggbb", c)
	}
	if _, err := strconv.ParseUint(c[1:], 16, 32); err != nil {
		return fmt.Errorf("%q is not #rrggbb", c)
	}
	return nil
}

// RGB splits a validated "#rrggbb" into its components.
func RGB(c string) (r, g, b uint8) {
	n, _ := strconv.ParseUint(c[1:], 16, 32)
	return uint8(n >> 16), uint8(n >> 8), uint8(n)
}
