package engine

import (
	"golang.org/x/sys/unix"

	"net"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// tlsConn is a connection a securing listener (package rpctls) returns
// once its RPC-with-TLS handshake is done: mutual says the client showed a
// verified certificate, kernel that the kernel holds the record layer
// (kTLS: the descriptor carries plaintext, but sends must not use
// MSG_WAITALL nor zero copy, which the kernel's TLS refuses).
type tlsConn interface {
	RPCTLS() (mutual, kernel bool)
}

// xprtInfo is what the engine keeps of a connection's transport security.
type xprtInfo struct {
	sec  nfs.XprtSec // zero: plaintext
	ktls bool
}

func xprtOf(nc net.Conn) xprtInfo {
	t, ok := nc.(tlsConn)
	if !ok {
		return xprtInfo{}
	}
	mutual, kernel := t.RPCTLS()
	x := xprtInfo{sec: nfs.XprtTLS, ktls: kernel}
	if mutual {
		x.sec = nfs.XprtMTLS
	}
	return x
}

// sendFlags are the io_uring engine's SENDMSG flags: MSG_WAITALL lets
// io_uring retry a partial send itself, but kernel TLS refuses it
// (EOPNOTSUPP), so a kTLS connection's short sends are resent by onSend.
func sendFlags(ktls bool) int {
	if ktls {
		return unix.MSG_NOSIGNAL
	}
	return unix.MSG_NOSIGNAL | unix.MSG_WAITALL
}
