package client

import (
	"encoding/binary"
)

// w builds XDR bytes by hand, independently of package xdr's encoder.
type w []byte

func (b w) u32(vs ...uint32) w {
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

func (b w) u64(vs ...uint64) w {
	for _, v := range vs {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// opaque appends a length, the bytes and zero padding to 4.
func (b w) opaque(s string) w {
	b = b.u32(uint32(len(s)))
	b = append(b, s...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (b w) raw(s string) w { return append(b, s...) }
