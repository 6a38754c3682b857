package platform

import (
	"errors"
	"testing"
)

func TestParseFdinfoTTYIndex(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		ok   bool
	}{
		{"ptmx master", "pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t91\ntty-index:\t7\n", 7, true},
		{"regular file", "pos:\t0\nflags:\t0100000\nmnt_id:\t25\nino:\t1234\n", 0, false},
		{"eventfd", "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\neventfd-count:\t0\n", 0, false},
		{"garbage index", "tty-index:\tx\n", 0, false},
		{"negative index", "tty-index:\t-3\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		n, ok := ParseFdinfoTTYIndex([]byte(tt.in))
		if n != tt.n || ok != tt.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", tt.name, n, ok, tt.n, tt.ok)
		}
	}
}

func TestParseIO(t *testing.T) {
	in := "rchar: 1698569\nwchar: 2411\nsyscr: 1168\nsyscw: 54\nread_bytes: 5214208\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n"
	got, err := ParseIO([]byte(in))
	want := IOCounters{RChar: 1698569, WChar: 2411, SyscR: 1168, SyscW: 54, ReadBytes: 5214208, WriteBytes: 4096}
	if err != nil || got != want {
		t.Fatalf("ParseIO = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "nothing here\n", "wchar: lots\n", "rchar: -1\n"} {
		if _, err := ParseIO([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseIO(%q) = %v, want ErrMalformed", bad, err)
		}
	}
	if c, err := ParseIO([]byte("wchar: 5\nfuture_field: 9\n")); err != nil || c.WChar != 5 {
		t.Errorf("unknown lines: %+v %v", c, err)
	}
}

func FuzzParseFdinfoAndIO(f *testing.F) {
	f.Add([]byte("pos:\t0\nflags:\t02100002\ntty-index:\t7\n"))
	f.Add([]byte("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 7\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, ok := ParseFdinfoTTYIndex(b); ok && n < 0 {
			t.Fatalf("negative tty index %d", n)
		}
		if _, err := ParseIO(b); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}
