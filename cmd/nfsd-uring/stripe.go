package main

import (
	"fmt"
	"strconv"
	"strings"
)

// stripeUnit is --stripe-unit: a byte count with an optional k, m or g
// suffix (powers of 2; KiB, MiB, GiB too). 0: no striping.
type stripeUnit uint64

func (s *stripeUnit) String() string { return strconv.FormatUint(uint64(*s), 10) }

func (s *stripeUnit) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = stripeUnit(n)
	return nil
}

func parseSize(v string) (uint64, error) {
	num := strings.TrimRight(v, "kKmMgGiB")
	mult := uint64(1)
	switch strings.TrimPrefix(v, num) {
	case "":
	case "k", "K", "KiB":
		mult = 1 << 10
	case "m", "M", "MiB":
		mult = 1 << 20
	case "g", "G", "GiB":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("size %q: unknown unit", v)
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", v, err)
	}
	return n * mult, nil
}
