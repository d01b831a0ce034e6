package nfs4

import "github.com/nfsd-uring/nfsd-uring/xdr"

// Stateid is stateid4.
type Stateid struct {
	Seqid uint32
	Other [OtherSize]byte
}

// Special stateids (RFC 8881 section 8.2.3).
var (
	AnonStateid    = Stateid{}
	BypassStateid  = Stateid{Seqid: 0xffffffff, Other: [12]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	CurrentStateid = Stateid{Seqid: 1}
	InvalidStateid = Stateid{Seqid: 0xffffffff}
)

// DecodeStateid reads a stateid4.
func DecodeStateid(d *xdr.Decoder) Stateid {
	var s Stateid
	s.Seqid = d.Uint32()
	copy(s.Other[:], d.Fixed(OtherSize))
	return s
}

// Encode writes s.
func (s Stateid) Encode(e *xdr.Encoder) {
	e.Uint32(s.Seqid)
	e.Fixed(s.Other[:])
}

// Bitmap is a bitmap4 limited to the attributes we know (three words cover
// every attribute through 4.2 extensions). Longer client bitmaps are read and
// the excess words ignored: a server need not report unknown attributes.
type Bitmap [3]uint32

// MaxBitmapWords bounds the words we accept on the wire: bitmap4 has no
// bound in the XDR, and pynfs' 4.0 suite sends long ones (words past the
// third are read and ignored); 1000 words is still a bounded 4 KB.
const MaxBitmapWords = 1000

// DecodeBitmap reads a bitmap4.
func DecodeBitmap(d *xdr.Decoder) Bitmap {
	var b Bitmap
	n := d.ArrayLen(MaxBitmapWords, 4)
	for i := 0; i < n; i++ {
		w := d.Uint32()
		if i < len(b) {
			b[i] = w
		}
	}
	return b
}

// Encode writes b with trailing zero words trimmed.
func (b Bitmap) Encode(e *xdr.Encoder) {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	e.Uint32(uint32(n))
	for i := 0; i < n; i++ {
		e.Uint32(b[i])
	}
}

// Has reports whether attribute a is set.
func (b Bitmap) Has(a int) bool {
	return a >= 0 && a/32 < len(b) && b[a/32]&(1<<(a%32)) != 0
}

// Set sets attribute a.
func (b *Bitmap) Set(a int) { b[a/32] |= 1 << (a % 32) }

// And returns the attributes set in both.
func (b Bitmap) And(o Bitmap) Bitmap {
	for i := range b {
		b[i] &= o[i]
	}
	return b
}

// Empty reports whether no bit is set.
func (b Bitmap) Empty() bool { return b == Bitmap{} }

// BitmapOf builds a bitmap from attribute numbers.
func BitmapOf(attrs ...int) Bitmap {
	var b Bitmap
	for _, a := range attrs {
		b.Set(a)
	}
	return b
}

// Or returns the attributes set in either.
func (b Bitmap) Or(o Bitmap) Bitmap {
	for i := range b {
		b[i] |= o[i]
	}
	return b
}
