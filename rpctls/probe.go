// Package rpctls implements RPC-with-TLS (RFC 9289) for the server: a
// listener that tells an AUTH_TLS probe from a plaintext connection by its
// first RPC record, answers the probe with the STARTTLS verifier, runs the
// TLS 1.3 handshake (ALPN "sunrpc") on the same connection and then hands
// the record layer to the kernel (kTLS), so the engines keep using the
// socket's descriptor; where the kernel has no TLS, a goroutine pair pumps
// between the TLS connection and a socketpair the engine uses instead.
//
// It imports only the standard library and golang.org/x/sys.
package rpctls

import "encoding/binary"

// AuthTLS is the AUTH_TLS credential flavor (RFC 9289 section 4.1).
const AuthTLS = 7

// probeHead is how many bytes of a connection's first record decide
// whether it is an AUTH_TLS probe: the record mark and the call header up
// to the credential's flavor.
const probeHead = 4 + 7*4

// maxProbe bounds the record a probe may be: a NULL call with an AUTH_TLS
// credential (empty body) and an AUTH_NONE verifier is 40 bytes; some room
// for a verifier body.
const maxProbe = 512

// Probe looks at the first bytes of a connection (b, as many as have
// arrived) and says whether its first record is an AUTH_TLS probe: an RPC
// NULL call (RFC 5531, procedure 0, any program) whose credential flavor is
// AUTH_TLS, in one last fragment of at most maxProbe bytes. need is how
// many bytes in all it wants to decide (more than len(b): wait for them,
// if they may still come); when it has decided, recLen is the whole
// record's length with its mark (the bytes to consume for a probe) and xid
// the call's transaction id.
func Probe(b []byte) (probe bool, need int, recLen int, xid uint32) {
	if len(b) < 4 {
		return false, 4, 0, 0
	}
	mark := binary.BigEndian.Uint32(b)
	frag := int(mark & 0x7fffffff)
	if mark&0x80000000 == 0 || frag < probeHead-4 || frag > maxProbe {
		return false, 0, 0, 0
	}
	if len(b) < probeHead {
		return false, probeHead, 0, 0
	}
	w := func(i int) uint32 { return binary.BigEndian.Uint32(b[4+4*i:]) }
	// xid, CALL, rpcvers 2, prog, vers, proc 0, cred flavor.
	if w(1) != 0 || w(2) != 2 || w(5) != 0 || w(6) != AuthTLS {
		return false, 0, 0, 0
	}
	return true, 0, 4 + frag, w(0)
}

// startTLSReply is the answer to a probe with transaction id xid: an
// accepted reply, SUCCESS, whose verifier is AUTH_NONE with the body
// "STARTTLS" (RFC 9289 section 4.1), record-marked.
func startTLSReply(xid uint32) []byte {
	b := make([]byte, 0, 36)
	b = binary.BigEndian.AppendUint32(b, 0x80000000|32)
	b = binary.BigEndian.AppendUint32(b, xid)
	b = binary.BigEndian.AppendUint32(b, 1) // REPLY
	b = binary.BigEndian.AppendUint32(b, 0) // MSG_ACCEPTED
	b = binary.BigEndian.AppendUint32(b, 0) // verifier AUTH_NONE
	b = binary.BigEndian.AppendUint32(b, 8)
	b = append(b, "STARTTLS"...)
	b = binary.BigEndian.AppendUint32(b, 0) // SUCCESS; NULL has no results
	return b
}
