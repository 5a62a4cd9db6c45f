// Package procscan reads a sandbox's process table and sandtop's state
// directories in one process, for the supervisor sandtop uploads to stock
// envd: a listing then costs one small exec instead of ps, find, xargs and
// grep. It prints exactly what those tools print for the control plane's
// scripts (one row of ps's columns per process; the states scan's
// NUL-terminated records), so one parser reads either.
package procscan

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The hidden subcommands of sandtop's executable that print the table and
// the states scan.
const (
	TableSubcommand  = "__sandtop-table"
	StatesSubcommand = "__sandtop-states"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every architecture Linux exports to user space.
const clockTicks = 100

// maxArgs bounds one process's args as the table's reader bounds a row.
const maxArgs = 64 << 10

// WriteTable prints every process but the caller as the control plane's
// ps prints it: pid ppid pgid sid tpgid stat etimes pcpu rss tty args, one
// line each. A process that ends while it is read is left out, as ps does.
func WriteTable(w io.Writer) error {
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	up, err := uptime()
	if err != nil {
		return err
	}
	pageKiB := uint64(os.Getpagesize() / 1024)
	self := strconv.Itoa(os.Getpid())
	out := bufio.NewWriterSize(w, 64<<10)
	statBuf, argBuf := make([]byte, 1024), make([]byte, 4096)
	var line []byte
	for _, name := range names {
		if name == self || name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, ok := readInto(&statBuf, "/proc/"+name+"/stat", 0)
		if !ok {
			continue
		}
		p, ok := parseStat(stat)
		if !ok {
			continue
		}
		line = line[:0]
		line = append(line, name...)
		for _, v := range []int64{p.ppid, p.pgid, p.sid, p.tpgid} {
			line = append(line, ' ')
			line = strconv.AppendInt(line, v, 10)
		}
		line = append(line, ' ', p.state, ' ')
		elapsed := max(up-float64(p.start)/clockTicks, 0)
		line = strconv.AppendUint(line, uint64(elapsed), 10)
		line = append(line, ' ')
		line = appendPcpu(line, p.utime+p.stime, elapsed)
		line = append(line, ' ')
		line = strconv.AppendUint(line, p.rssPages*pageKiB, 10)
		line = append(line, ' ')
		line = append(line, ttyName(p.tty)...)
		line = append(line, ' ')
		cmdline, ok := readInto(&argBuf, "/proc/"+name+"/cmdline", maxArgs)
		if !ok {
			continue
		}
		line = appendArgs(line, cmdline, p)
		line = append(line, '\n')
		if _, err := out.Write(line); err != nil {
			return err
		}
	}
	return out.Flush()
}

// proc is what the table takes from /proc/PID/stat.
type proc struct {
	comm                   string
	state                  byte
	ppid, pgid, sid, tpgid int64
	tty                    uint64
	utime, stime, start    uint64
	rssPages               uint64
}

// parseStat reads /proc/PID/stat; comm may hold blanks and parentheses,
// so the fields are counted from its last ')'.
func parseStat(b []byte) (proc, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	// state(0) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime(11) stime cutime cstime priority nice num_threads
	// itrealvalue starttime(19) vsize rss(21)
	if len(f) < 22 || f[0] == "" {
		return proc{}, false
	}
	p := proc{comm: string(b[open+1 : end]), state: f[0][0]}
	ints := []*int64{&p.ppid, &p.pgid, &p.sid, nil, &p.tpgid}
	for i, dst := range ints {
		if dst == nil {
			continue
		}
		v, err := strconv.ParseInt(f[1+i], 10, 64)
		if err != nil {
			return proc{}, false
		}
		*dst = v
	}
	uints := [...]struct {
		i   int
		dst *uint64
	}{{4, &p.tty}, {11, &p.utime}, {12, &p.stime}, {19, &p.start}, {21, &p.rssPages}}
	for _, u := range uints {
		v, err := strconv.ParseInt(f[u.i], 10, 64)
		if err != nil {
			return proc{}, false
		}
		*u.dst = uint64(max(v, 0))
	}
	return p, true
}

// appendPcpu renders ps's %CPU: CPU time over the time since the start
// (not cut to whole seconds), in tenths of a percent, truncated, with no
// decimal past 99.9.
func appendPcpu(b []byte, ticks uint64, elapsed float64) []byte {
	var permille uint64
	if elapsed > 0 {
		permille = uint64(float64(ticks*1000/clockTicks) / elapsed)
	}
	if permille > 999 {
		return strconv.AppendUint(b, permille/10, 10)
	}
	b = strconv.AppendUint(b, permille/10, 10)
	b = append(b, '.')
	return strconv.AppendUint(b, permille%10, 10)
}

// ttyName names a controlling terminal as ps's tty column does: "?"
// without one. Terminals other than pseudo-terminals, virtual consoles and
// serial lines show as major,minor.
func ttyName(nr uint64) string {
	if nr == 0 {
		return "?"
	}
	major := (nr >> 8) & 0xfff
	minor := (nr & 0xff) | ((nr >> 12) & 0xfff00)
	switch {
	case major >= 136 && major <= 143:
		return "pts/" + strconv.FormatUint((major-136)<<8+minor, 10)
	case major == 4 && minor < 64:
		return "tty" + strconv.FormatUint(minor, 10)
	case major == 4:
		return "ttyS" + strconv.FormatUint(minor-64, 10)
	case major == 5 && minor == 1:
		return "console"
	}
	return strconv.FormatUint(major, 10) + "," + strconv.FormatUint(minor, 10)
}

// appendArgs renders the command line as ps's args column in the C
// locale: arguments joined by blanks, newlines as blanks too, other
// control characters as '.' and bytes beyond ASCII as '?'; without one (a kernel thread, a zombie), "[comm]", and a zombie
// " <defunct>".
func appendArgs(b, cmdline []byte, p proc) []byte {
	cmdline = bytes.TrimRight(cmdline, "\x00")
	if len(cmdline) == 0 {
		b = append(b, '[')
		b = appendPrintable(b, []byte(p.comm), false)
		b = append(b, ']')
		if p.state == 'Z' {
			b = append(b, " <defunct>"...)
		}
		return b
	}
	return appendPrintable(b, cmdline, true)
}

func appendPrintable(b, s []byte, nulIsBlank bool) []byte {
	for _, c := range s {
		switch {
		case (c == 0 || c == '\n') && nulIsBlank:
			c = ' '
		case c < 0x20 || c == 0x7f:
			c = '.'
		case c > 0x7f:
			c = '?'
		}
		b = append(b, c)
	}
	return b
}

// uptime is the seconds since boot, as ages are counted from.
func uptime() (float64, error) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(f[0], 64)
}

// readInto reads a file into *buf (grown as needed), up to limit bytes
// when limit > 0; false when it cannot be read (the process ended). Plain
// system calls: os.File's poller costs more than the read on a /proc file,
// and the table reads thousands.
func readInto(buf *[]byte, name string, limit int) ([]byte, bool) {
	return readFlags(buf, name, limit, 0)
}

func readFlags(buf *[]byte, name string, limit, flags int) ([]byte, bool) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			if limit > 0 && len(b) > limit {
				break
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		b = b[:len(b)+n]
		// A short read is the end: /proc files and small state files are
		// read whole when the buffer has room.
		if n == 0 || len(b) < cap(b) {
			break
		}
	}
	*buf = b
	if limit > 0 && len(b) > limit {
		b = b[:limit]
	}
	return b, true
}
