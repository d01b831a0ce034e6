package bench

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true},
		{"0", 0, true},
		{"64k", 64 << 10, true},
		{"64K", 64 << 10, true},
		{"64KiB", 64 << 10, true},
		{"64MiB", 64 << 20, true},
		{"64m", 64 << 20, true},
		{"1M", 1 << 20, true},
		{"1G", 1 << 30, true},
		{"1g", 1 << 30, true},
		{"2GiB", 2 << 30, true},
		{"3t", 3 << 40, true},
		{"3T", 3 << 40, true},
		{"3TiB", 3 << 40, true},
		{"", 0, false},
		{"M", 0, false},
		{"KiB", 0, false},
		{"64KB", 0, false},
		{"64mib", 0, false},
		{"64Mi", 0, false},
		{"64 MiB", 0, false},
		{" 64M", 0, false},
		{"1.5G", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"0x10", 0, false},
		{"64B", 0, false},
		{"1P", 0, false},
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false},
		{"8388608TiB", 0, false}, // 2^63: overflows
		{"8388607TiB", 8388607 << 40, true},
	} {
		got, err := ParseSize(c.in)
		if c.ok && (err != nil || got != c.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
		if !c.ok && err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", c.in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{64 << 20: "64MiB", 1 << 30: "1GiB", 4096: "4KiB", 1000: "1000", 3 << 40: "3TiB", 0: "0"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
		if back, err := ParseSize(FormatSize(in)); err != nil || back != in {
			t.Errorf("round trip %d: %d, %v", in, back, err)
		}
	}
}
