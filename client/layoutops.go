package client

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// pNFS operations on the metadata server (RFC 8881 sections 18.40-18.44,
// RFC 7862 sections 15.6-15.7). Each is PUTFH plus the operation.

// DefaultLayoutMaxCount is the loga_maxcount and gdia_maxcount the client
// sends when given 0: room for a layout of several mirrors and stripes.
const DefaultLayoutMaxCount = 64 << 10

// LayoutGet asks for a layout of the file fh.
func (c *Client) LayoutGet(ctx context.Context, fh []byte, a *LayoutGetArgs) (LayoutGetRes, error) {
	if a.MaxCount == 0 {
		a.MaxCount = DefaultLayoutMaxCount
	}
	var res LayoutGetRes
	err := c.fhOp(ctx, fh, nfs4.OpLayoutget, func(e *xdr.Encoder) { EncodeLayoutget(e, a) }, func(d *xdr.Decoder) (err error) {
		res, err = DecodeLayoutgetRes(d)
		return err
	})
	return res, err
}

// FFLayoutGet asks for a flexible-files layout of fh over the whole file
// and decodes it: the layout stateid, the return-on-close flag and the
// first segment's ff_layout4 (the MDS of issue 23 hands out one segment
// for the whole file; more are refused here rather than half-used).
func (c *Client) FFLayoutGet(ctx context.Context, fh []byte, iomode uint32, sid nfs4.Stateid) (LayoutGetRes, FFLayout, error) {
	res, err := c.LayoutGet(ctx, fh, &LayoutGetArgs{Type: LayoutFlexFiles, IOMode: iomode, Length: LengthAll, Stateid: sid})
	if err != nil {
		return res, FFLayout{}, err
	}
	if len(res.Segments) != 1 {
		return res, FFLayout{}, fmt.Errorf("LAYOUTGET: %d layout segments, want 1", len(res.Segments))
	}
	s := res.Segments[0]
	if s.Type != LayoutFlexFiles {
		return res, FFLayout{}, fmt.Errorf("LAYOUTGET: layout type %d, asked for %d", s.Type, LayoutFlexFiles)
	}
	l, err := DecodeFFLayout(s.Body)
	return res, l, err
}

// GetDeviceInfo returns the device_addr4 body of device id for layoutType.
func (c *Client) GetDeviceInfo(ctx context.Context, id DeviceID, layoutType uint32) ([]byte, error) {
	var body []byte
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodeGetdeviceinfo(e, id, layoutType, DefaultLayoutMaxCount)
		return 1
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpGetdeviceinfo); err != nil {
			return err
		}
		t, b, _, err := DecodeGetdeviceinfoRes(r.D)
		if err == nil && t != layoutType {
			err = fmt.Errorf("GETDEVICEINFO: device of layout type %d, asked for %d", t, layoutType)
		}
		body = b
		return err
	})
	return body, err
}

// GetDeviceList returns every device of layoutType on fh's file system,
// following the cookie until the server says eof (RFC 8881 section 18.41).
func (c *Client) GetDeviceList(ctx context.Context, fh []byte, layoutType uint32) ([]DeviceID, error) {
	var out []DeviceID
	var cookie uint64
	var verf [nfs4.VerifierSize]byte
	for range 1000 {
		var r DeviceList
		err := c.fhOp(ctx, fh, nfs4.OpGetdevicelist, func(e *xdr.Encoder) { EncodeGetdevicelist(e, layoutType, 64, cookie, verf) }, func(d *xdr.Decoder) (err error) {
			r, err = DecodeGetdevicelistRes(d)
			return err
		})
		if err != nil {
			return out, err
		}
		out = append(out, r.Devices...)
		if r.EOF {
			return out, nil
		}
		if len(r.Devices) == 0 {
			return out, fmt.Errorf("GETDEVICELIST: no devices and no eof at cookie %d", cookie)
		}
		cookie, verf = r.Cookie, r.Verf
	}
	return out, fmt.Errorf("GETDEVICELIST: no eof after 1000 calls")
}

// FFDeviceInfo is GetDeviceInfo for a flexible-files device, decoded.
func (c *Client) FFDeviceInfo(ctx context.Context, id DeviceID) (FFDeviceAddr, error) {
	body, err := c.GetDeviceInfo(ctx, id, LayoutFlexFiles)
	if err != nil {
		return FFDeviceAddr{}, err
	}
	return DecodeFFDeviceAddr(body)
}

// LayoutReturn returns layouts (a range of fh's, or all of the file
// system's or the client's, by a.Kind) and gives back the new layout
// stateid when the server says the client still holds some.
func (c *Client) LayoutReturn(ctx context.Context, fh []byte, a *LayoutReturnArgs) (nfs4.Stateid, bool, error) {
	var sid nfs4.Stateid
	var present bool
	err := c.fhOp(ctx, fh, nfs4.OpLayoutreturn, func(e *xdr.Encoder) { EncodeLayoutreturn(e, a) }, func(d *xdr.Decoder) (err error) {
		sid, present, err = DecodeLayoutreturnRes(d)
		return err
	})
	return sid, present, err
}

// LayoutCommit commits what was written through a layout (RFC 8881
// section 18.42) and returns the file's new size, if the server reports one.
func (c *Client) LayoutCommit(ctx context.Context, fh []byte, a *LayoutCommitArgs) (size uint64, changed bool, err error) {
	err = c.fhOp(ctx, fh, nfs4.OpLayoutcommit, func(e *xdr.Encoder) { EncodeLayoutcommit(e, a) }, func(d *xdr.Decoder) (err error) {
		size, changed, err = DecodeLayoutcommitRes(d)
		return err
	})
	return size, changed, err
}

// LayoutError reports errors the client met on data servers for a range
// of fh (RFC 7862 section 15.6).
func (c *Client) LayoutError(ctx context.Context, fh []byte, off, length uint64, sid nfs4.Stateid, errs []DeviceError) error {
	return c.fhOp(ctx, fh, nfs4.OpLayouterror, func(e *xdr.Encoder) { EncodeLayouterror(e, off, length, sid, errs) }, nil)
}

// LayoutStats reports I/O statistics for one data server (RFC 7862
// section 15.7).
func (c *Client) LayoutStats(ctx context.Context, fh []byte, a *LayoutStatsArgs) error {
	return c.fhOp(ctx, fh, nfs4.OpLayoutstats, func(e *xdr.Encoder) { EncodeLayoutstats(e, a) }, nil)
}

// fhOp sends SEQUENCE, PUTFH fh (none when fh is nil), op; decode, if set,
// reads op's result body.
func (c *Client) fhOp(ctx context.Context, fh []byte, op uint32, encode func(e *xdr.Encoder), decode func(d *xdr.Decoder) error) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		if fh == nil {
			encode(e)
			return 1
		}
		EncodePutfh(e, fh)
		encode(e)
		return 2
	}, func(r *Reply) error {
		if fh != nil {
			if err := r.Op(nfs4.OpPutfh); err != nil {
				return err
			}
		}
		if err := r.Op(op); err != nil {
			return err
		}
		if decode == nil {
			return nil
		}
		return decode(r.D)
	})
}
