package bench

import (
	"fmt"
	"math"
	"strconv"
)

// sizeUnits are the suffixes ParseSize takes, all powers of 2 as in ior and
// fio: k, K and KiB are 1024.
var sizeUnits = map[string]int64{
	"":  1,
	"k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10,
	"m": 1 << 20, "M": 1 << 20, "MiB": 1 << 20,
	"g": 1 << 30, "G": 1 << 30, "GiB": 1 << 30,
	"t": 1 << 40, "T": 1 << 40, "TiB": 1 << 40,
}

// ParseSize parses a byte count: plain digits, or digits followed by one of
// k/K/KiB, m/M/MiB, g/G/GiB, t/T/TiB (powers of 2). Anything else (a
// fraction, a sign, spaces, "KB", "mib", an overflow) is an error, so a
// typo cannot quietly become a different size.
func ParseSize(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits, unit := s[:i], s[i:]
	mult, ok := sizeUnits[unit]
	if digits == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally followed by k, m, g, t (or K, M, G, T, KiB, MiB, GiB, TiB)", s)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mult, nil
}

// FormatSize is the inverse of ParseSize for round sizes (64MiB), for
// messages; other sizes print as bytes.
func FormatSize(n int64) string {
	for _, u := range []string{"TiB", "GiB", "MiB", "KiB"} {
		if m := sizeUnits[u]; n >= m && n%m == 0 {
			return strconv.FormatInt(n/m, 10) + u
		}
	}
	return strconv.FormatInt(n, 10)
}
