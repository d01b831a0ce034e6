package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// COPY, OFFLOAD_STATUS and OFFLOAD_CANCEL (RFC 7862 sections 15.2, 15.9,
// 15.8). A synchronous COPY copies at most syncCopyMax and answers with
// the short count; an asynchronous one runs on its own goroutine
// (state_copy.go) and ends with CB_OFFLOAD.

// syncCopyMax caps the bytes one synchronous COPY copies, as knfsd's
// nfsd_copy_file_range caps each call at 4 MiB "to prevent indefinitely
// blocking an nfsd thread and client rpc slot"; the client gets the short
// count and asks for the rest (RFC 7862 section 15.2.3 lets the server copy
// less). Issue 21: one COPY of 1 GiB held a worker 5.75 s, and 8 COPYs of
// 150 MiB held another client's OPEN 2.74 s.
const syncCopyMax = 4 << 20

// copyRest is the part of COPY4args (RFC 7862 section 15.2.1) after
// copyArgs. The copy is always done in order (ca_consecutive); it is done
// at once, up to syncCopyMax, when ca_synchronous asks so or when the
// client cannot be told of its end (no back channel).
type copyRest struct {
	consecutive, synchronous bool
	sourceServers            int // netloc4 entries: an inter-server copy
}

// Netloc types (RFC 7862 section 3.3.1).
const (
	nl4Name    = 1
	nl4URL     = 2
	nl4Netaddr = 3
)

func decodeCopyRest(d *xdr.Decoder) copyRest {
	r := copyRest{consecutive: d.Bool(), synchronous: d.Bool(), sourceServers: d.ArrayLen(16, 4)}
	for i := 0; i < r.sourceServers; i++ {
		switch d.Uint32() {
		case nl4Name, nl4URL:
			d.String(nfs4.OpaqueLimit)
		case nl4Netaddr:
			d.String(nfs4.OpaqueLimit) // netid
			d.String(nfs4.OpaqueLimit) // uaddr
		default:
			d.Fail(xdr.ErrTooLong)
		}
	}
	return r
}

// copyOpArgs is COPY4args: copyArgs, then copyRest.
type copyOpArgs struct {
	args copyArgs
	rest copyRest
}

func decodeCopy(d *xdr.Decoder) copyOpArgs {
	return copyOpArgs{args: decodeCopyArgs(d), rest: decodeCopyRest(d)}
}

func opCopy(c *compound) nfs4.Status {
	all := decodeCopy(c.d)
	a, rest := all.args, all.rest
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if rest.sourceServers > 0 {
		return nfs4.ErrNotsupp // inter-server copy
	}
	src, dst, s := c.copyTargets(&a)
	if s != nfs4.OK {
		return s
	}
	if s := c.noLayoutOp(c.sfh, c.cfh); s != nfs4.OK {
		return s
	}
	if !rest.synchronous && c.sess != nil && c.s.callable(c.sess.client) != nil {
		return c.startAsyncCopy(&a, src, dst)
	}
	return c.syncCopy(&a, src, dst)
}

// syncCopy copies up to syncCopyMax bytes at once and encodes the result.
func (c *compound) syncCopy(a *copyArgs, src, dst int) nfs4.Status {
	want := min(a.count, syncCopyMax)
	var n int64
	err := c.asCallerIO(func() error {
		var err error
		n, err = c.s.io.CopyRange(src, int64(a.srcOff), dst, int64(a.dstOff), int64(want))
		return err
	})
	c.cfh.extent.changed()
	if n < 0 || n > int64(want) {
		n = 0 // a FileIO bug: never claim bytes not copied
		if err == nil {
			err = unix.EIO
		}
	}
	if err != nil && n == 0 {
		return errno(err)
	}
	encodeWriteResponse(c.e, nil, uint64(n), nfs4.Unstable4, c.s.bootVer[:])
	encodeCopyRequirements(c.e, true)
	return nfs4.OK
}

// encodeWriteResponse writes write_response4 (RFC 7862 section 15.2.2):
// the callback id of an asynchronous copy (none when id is nil), the
// count copied, how stable it is and the write verifier.
func encodeWriteResponse(e *xdr.Encoder, id *nfs4.Stateid, count uint64, committed uint32, verf []byte) {
	if id != nil {
		e.Uint32(1)
		id.Encode(e)
	} else {
		e.Uint32(0)
	}
	e.Uint64(count)
	e.Uint32(committed)
	e.Fixed(verf)
}

// encodeCopyRequirements writes copy_requirements4: always consecutive;
// synchronous as the copy was done.
func encodeCopyRequirements(e *xdr.Encoder, synchronous bool) {
	e.Bool(true)
	e.Bool(synchronous)
}

// opOffloadStatus is OFFLOAD_STATUS (RFC 7862 section 15.9): the bytes an
// asynchronous copy of the caller's has copied so far and, once it ended,
// how (osr_complete). A copy that ended is remembered a while
// (copyKeepTime) after its CB_OFFLOAD.
func opOffloadStatus(c *compound) nfs4.Status {
	cp, s := c.offloadTarget()
	if s != nfs4.OK {
		return s
	}
	count, status, ended := cp.progress()
	c.e.Uint64(count)
	if ended {
		c.e.Uint32(1)
		c.e.Uint32(uint32(status))
	} else {
		c.e.Uint32(0)
	}
	return nfs4.OK
}

// opOffloadCancel is OFFLOAD_CANCEL (RFC 7862 section 15.8): the copy stops
// after the chunk it is copying, before the reply, and sends no
// CB_OFFLOAD (as knfsd's nfsd4_offload_cancel stops the copy thread).
func opOffloadCancel(c *compound) nfs4.Status {
	cp, s := c.offloadTarget()
	if s != nfs4.OK {
		return s
	}
	c.s.copies.cancel(cp)
	return nfs4.OK
}

// offloadTarget reads OFFLOAD_STATUS4args or OFFLOAD_CANCEL4args, a copy
// stateid, and finds the caller's copy it names: another client's copy is
// as unknown as one never started (NFS4ERR_BAD_STATEID).
func (c *compound) offloadTarget() (*asyncCopy, nfs4.Status) {
	sid := decodeStateidArgs(c.d).stateid
	if c.d.Err() != nil {
		return nil, nfs4.ErrBadXDR
	}
	cp := c.s.copies.find(sid.Other)
	if cp == nil || c.sess == nil || cp.client != c.sess.client {
		return nil, nfs4.ErrBadStateid
	}
	return cp, nfs4.OK
}
