package client

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The wire bytes below are written by hand from the XDR of RFC 8881,
// RFC 8435 and RFC 7862, field by field, independently of the encoders.

var (
	devA = DeviceID{'d', 'e', 'v', 'A', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	devB = DeviceID{'d', 'e', 'v', 'B', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	lsid = nfs4.Stateid{Seqid: 1, Other: [12]byte{'l', 'a', 'y', 'o', 'u', 't', 0, 0, 0, 0, 0, 7}}
)

// ffDataServerWire is one ff_data_server4: deviceid, efficiency, stateid
// (the anonymous one), one fh version, user and group.
func ffDataServerWire(dev DeviceID, fh, user, group string) w {
	return w{}.raw(string(dev[:])).u32(1).u32(0).raw(string(make([]byte, 12))).
		u32(1).opaque(fh).opaque(user).opaque(group)
}

// ffLayoutWire: stripe unit 64 KiB, two mirrors of one data server each,
// flags NO_LAYOUTCOMMIT|NO_IO_THRU_MDS, stats hint 30.
func ffLayoutWire() w {
	return w{}.u64(64 << 10).u32(2).
		u32(1).raw(string(ffDataServerWire(devA, "fh-on-A", "1001", "2001"))).
		u32(1).raw(string(ffDataServerWire(devB, "fh-on-B", "1001", "2001"))).
		u32(FFFlagNoLayoutcommit | FFFlagNoIOThruMDS).u32(30)
}

func wantFFLayout() FFLayout {
	ds := func(dev DeviceID, fh string) FFDataServer {
		return FFDataServer{Device: dev, Efficiency: 1, FHs: [][]byte{[]byte(fh)}, User: "1001", Group: "2001"}
	}
	return FFLayout{StripeUnit: 64 << 10, Mirrors: []FFMirror{{Servers: []FFDataServer{ds(devA, "fh-on-A")}}, {Servers: []FFDataServer{ds(devB, "fh-on-B")}}},
		Flags: FFFlagNoLayoutcommit | FFFlagNoIOThruMDS, StatsHint: 30}
}

func TestDecodeFFLayoutWire(t *testing.T) {
	got, err := DecodeFFLayout(ffLayoutWire())
	if err != nil {
		t.Fatal(err)
	}
	if want := wantFFLayout(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	e := xdr.NewEncoder(0)
	EncodeFFLayout(e, &got)
	if !bytes.Equal(e.AppendTo(nil), ffLayoutWire()) {
		t.Fatal("EncodeFFLayout differs from the hand-written ff_layout4")
	}
}

func TestDecodeFFLayoutRejects(t *testing.T) {
	good := ffLayoutWire()
	for n := 0; n < len(good); n++ {
		if _, err := DecodeFFLayout(good[:n]); err == nil {
			t.Fatalf("truncated at %d of %d: no error", n, len(good))
		}
	}
	if _, err := DecodeFFLayout(append(good, 0, 0, 0, 0)); err == nil {
		t.Fatal("trailing bytes accepted")
	}
	// A mirror count far beyond the limit fails before allocating.
	if _, err := DecodeFFLayout(w{}.u64(0).u32(1 << 30)); err == nil {
		t.Fatal("huge mirror count accepted")
	}
	// A file handle longer than NFS4_FHSIZE.
	long := w{}.u64(0).u32(1).u32(1).raw(string(devA[:])).u32(1).raw(string(make([]byte, 16))).
		u32(1).opaque(string(make([]byte, 129))).opaque("1").opaque("1").u32(0).u32(0)
	if _, err := DecodeFFLayout(long); err == nil {
		t.Fatal("129-byte fh accepted")
	}
}

func TestLayoutgetWire(t *testing.T) {
	open := nfs4.Stateid{Seqid: 1, Other: [12]byte{'o', 'p', 'e', 'n'}}
	e := xdr.NewEncoder(0)
	EncodeLayoutget(e, &LayoutGetArgs{Type: LayoutFlexFiles, IOMode: IOModeRW, Offset: 4096, Length: LengthAll, MinLength: 1, Stateid: open, MaxCount: 65536})
	want := w{}.u32(nfs4.OpLayoutget, 0, 4, 2).u64(4096, ^uint64(0), 1).u32(1).raw(string(open.Other[:])).u32(65536)
	if !bytes.Equal(e.AppendTo(nil), want) {
		t.Fatalf("LAYOUTGET args\n got %x\nwant %x", e.AppendTo(nil), want)
	}
	body := ffLayoutWire()
	res := w{}.u32(1).u32(lsid.Seqid).raw(string(lsid.Other[:])).u32(1).
		u64(0, ^uint64(0)).u32(IOModeRW, LayoutFlexFiles).opaque(string(body))
	got, err := DecodeLayoutgetRes(xdr.NewDecoder(res))
	if err != nil {
		t.Fatal(err)
	}
	if !got.ReturnOnClose || got.Stateid != lsid || len(got.Segments) != 1 {
		t.Fatalf("%+v", got)
	}
	s := got.Segments[0]
	if s.Offset != 0 || s.Length != LengthAll || s.IOMode != IOModeRW || s.Type != LayoutFlexFiles || !bytes.Equal(s.Body, body) {
		t.Fatalf("segment %+v", s)
	}
	for n := 0; n < len(res); n++ {
		if _, err := DecodeLayoutgetRes(xdr.NewDecoder(res[:n])); err == nil {
			t.Fatalf("truncated at %d: no error", n)
		}
	}
}

func deviceAddrWire() w {
	return w{}.u32(2).opaque("tcp").opaque("10.0.0.2.8.1").opaque("tcp6").opaque("fe80::1.8.1").
		u32(2).u32(3, 0, 65536, 65536, 0).u32(4, 1, 1<<20, 1<<20, 0)
}

func TestDeviceAddrWire(t *testing.T) {
	got, err := DecodeFFDeviceAddr(deviceAddrWire())
	if err != nil {
		t.Fatal(err)
	}
	want := FFDeviceAddr{
		Addrs:    []NetAddr{{"tcp", "10.0.0.2.8.1"}, {"tcp6", "fe80::1.8.1"}},
		Versions: []FFDeviceVersion{{3, 0, 65536, 65536, false}, {4, 1, 1 << 20, 1 << 20, false}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	e := xdr.NewEncoder(0)
	EncodeFFDeviceAddr(e, &got)
	if !bytes.Equal(e.AppendTo(nil), deviceAddrWire()) {
		t.Fatal("EncodeFFDeviceAddr differs")
	}
	d, err := deviceOf(got)
	if err != nil || d.minor != 1 || d.rsize != 1<<20 || !reflect.DeepEqual(d.addrs, []string{"10.0.0.2:2049", "[fe80::1]:2049"}) {
		t.Fatalf("deviceOf: %+v %v", d, err)
	}
	if _, err := deviceOf(FFDeviceAddr{Addrs: want.Addrs, Versions: want.Versions[:1]}); err == nil {
		t.Fatal("an NFSv3-only device accepted")
	}
	// GETDEVICEINFO args and result.
	e = xdr.NewEncoder(0)
	EncodeGetdeviceinfo(e, devA, LayoutFlexFiles, 4096)
	if want := (w{}).u32(nfs4.OpGetdeviceinfo).raw(string(devA[:])).u32(4, 4096, 0); !bytes.Equal(e.AppendTo(nil), want) {
		t.Fatalf("GETDEVICEINFO args %x", e.AppendTo(nil))
	}
	typ, body, notify, err := DecodeGetdeviceinfoRes(xdr.NewDecoder(w{}.u32(4).opaque(string(deviceAddrWire())).u32(1, 0)))
	if err != nil || typ != 4 || !bytes.Equal(body, deviceAddrWire()) || notify != (nfs4.Bitmap{}) {
		t.Fatalf("GETDEVICEINFO result %d %x %v %v", typ, body, notify, err)
	}
}

func TestGetdevicelistWire(t *testing.T) {
	e := xdr.NewEncoder(0)
	EncodeGetdevicelist(e, LayoutFlexFiles, 64, 7, [8]byte{'v', 'e', 'r', 'f'})
	if want := (w{}).u32(nfs4.OpGetdevicelist, 4, 64).u64(7).raw("verf\x00\x00\x00\x00"); !bytes.Equal(e.AppendTo(nil), want) {
		t.Fatalf("GETDEVICELIST args %x", e.AppendTo(nil))
	}
	res := w{}.u64(9).raw("verf2\x00\x00\x00").u32(2).raw(string(devA[:])).raw(string(devB[:])).u32(1)
	r, err := DecodeGetdevicelistRes(xdr.NewDecoder(res))
	if err != nil || r.Cookie != 9 || string(r.Verf[:5]) != "verf2" || !reflect.DeepEqual(r.Devices, []DeviceID{devA, devB}) || !r.EOF {
		t.Fatalf("%+v %v", r, err)
	}
	for n := 0; n < len(res); n++ {
		if _, err := DecodeGetdevicelistRes(xdr.NewDecoder(res[:n])); err == nil {
			t.Fatalf("truncated at %d: no error", n)
		}
	}
}

func TestUaddr(t *testing.T) {
	for _, c := range []struct{ ua, hp string }{
		{"127.0.0.1.8.1", "127.0.0.1:2049"},
		{"10.1.2.3.0.20", "10.1.2.3:20"},
		{"::1.78.33", "[::1]:20001"},
	} {
		hp, err := UaddrToHostPort(c.ua)
		if err != nil || hp != c.hp {
			t.Errorf("%s: %s %v", c.ua, hp, err)
		}
		ua, err := HostPortToUaddr(c.hp)
		if err != nil || ua != c.ua {
			t.Errorf("%s: %s %v", c.hp, ua, err)
		}
	}
	for _, bad := range []string{"", "1.2", "host", "1.2.3.4.256.1", "1.2.3.4.x.1", ".1.2"} {
		if hp, err := UaddrToHostPort(bad); err == nil {
			t.Errorf("%q accepted as %s", bad, hp)
		}
	}
}

// reportWire is an ff_layoutreturn4 with one ff_ioerr4 (one device_error4)
// and one ff_iostats4.
func reportWire() w {
	zeroLat := w{}.u64(0, 0, 0, 0, 0).u64(0).u32(0).u64(0).u32(0)
	return w{}.u32(1).u64(0, ^uint64(0)).u32(lsid.Seqid).raw(string(lsid.Other[:])).
		u32(1).raw(string(devA[:])).u32(uint32(nfs4.ErrNxio), nfs4.OpWrite).
		u32(1).u64(0, 8192).u32(lsid.Seqid).raw(string(lsid.Other[:])).
		u64(2, 8192, 3, 12288).raw(string(devB[:])).
		opaque("tcp").opaque("10.0.0.3.8.1").opaque("fh").
		u64(2, 8192, 2, 8192, 0).u64(1).u32(500).u64(0).u32(7).raw(string(zeroLat)).
		u64(5).u32(0).u32(1)
}

func wantReport() FFLayoutReturn {
	return FFLayoutReturn{
		IOErrs: []FFIOErr{{Length: LengthAll, Stateid: lsid, Errors: []DeviceError{{devA, nfs4.ErrNxio, nfs4.OpWrite}}}},
		IOStats: []FFIOStats{{Length: 8192, Stateid: lsid, Read: IOInfo{2, 8192}, Write: IOInfo{3, 12288}, Device: devB,
			Update: FFLayoutUpdate{Addr: NetAddr{"tcp", "10.0.0.3.8.1"}, FH: []byte("fh"),
				Read:     FFIOLatency{OpsRequested: 2, BytesRequested: 8192, OpsCompleted: 2, BytesCompleted: 8192, TotalBusyTime: Time{1, 500}, AggregateComplete: Time{0, 7}},
				Duration: Time{5, 0}, Local: true}}},
	}
}

func TestLayoutreturnWire(t *testing.T) {
	r := wantReport()
	e := xdr.NewEncoder(0)
	EncodeLayoutreturn(e, &LayoutReturnArgs{Type: LayoutFlexFiles, IOMode: IOModeAny, Length: LengthAll, Stateid: lsid, Report: &r})
	body := reportWire()
	want := w{}.u32(nfs4.OpLayoutreturn, 0, 4, 3, 1).u64(0, ^uint64(0)).u32(lsid.Seqid).raw(string(lsid.Other[:])).opaque(string(body))
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("LAYOUTRETURN\n got %x\nwant %x", got, want)
	}
	back, err := DecodeFFLayoutReturn(body)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("decode: %+v %v", back, err)
	}
	// Without a report: an empty ff_layoutreturn4 (two empty arrays).
	e = xdr.NewEncoder(0)
	EncodeLayoutreturn(e, &LayoutReturnArgs{Type: LayoutFlexFiles, IOMode: IOModeRead, Length: LengthAll, Stateid: lsid})
	want = w{}.u32(nfs4.OpLayoutreturn, 0, 4, 1, 1).u64(0, ^uint64(0)).u32(lsid.Seqid).raw(string(lsid.Other[:])).u32(8, 0, 0)
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("empty LAYOUTRETURN\n got %x\nwant %x", got, want)
	}
	// LAYOUTRETURN4_ALL has no body.
	e = xdr.NewEncoder(0)
	EncodeLayoutreturn(e, &LayoutReturnArgs{Type: LayoutFlexFiles, IOMode: IOModeAny, Kind: LayoutReturnAll})
	if got, want := e.AppendTo(nil), (w{}).u32(nfs4.OpLayoutreturn, 0, 4, 3, 3); !bytes.Equal(got, want) {
		t.Fatalf("ALL %x", got)
	}
	sid, present, err := DecodeLayoutreturnRes(xdr.NewDecoder(w{}.u32(1, 2).raw(string(lsid.Other[:]))))
	if err != nil || !present || sid.Seqid != 2 || sid.Other != lsid.Other {
		t.Fatalf("result %v %v %v", sid, present, err)
	}
	if _, present, err = DecodeLayoutreturnRes(xdr.NewDecoder(w{}.u32(0))); err != nil || present {
		t.Fatal("no stateid")
	}
	for n := 0; n < len(body); n++ {
		if _, err := DecodeFFLayoutReturn(body[:n]); err == nil {
			t.Fatalf("report truncated at %d: no error", n)
		}
	}
}

func TestLayoutcommitWire(t *testing.T) {
	e := xdr.NewEncoder(0)
	EncodeLayoutcommit(e, &LayoutCommitArgs{Length: LengthAll, Stateid: lsid, HasLastWrite: true, LastWrite: 1<<20 - 1, Type: LayoutFlexFiles})
	want := w{}.u32(nfs4.OpLayoutcommit).u64(0, ^uint64(0)).u32(0).u32(lsid.Seqid).raw(string(lsid.Other[:])).
		u32(1).u64(1<<20 - 1).u32(0).u32(4).u32(0)
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("LAYOUTCOMMIT\n got %x\nwant %x", got, want)
	}
	e = xdr.NewEncoder(0)
	EncodeLayoutcommit(e, &LayoutCommitArgs{Offset: 8, Length: 16, Reclaim: true, Stateid: lsid, Mtime: &Time{3, 4}, Type: LayoutFlexFiles})
	want = w{}.u32(nfs4.OpLayoutcommit).u64(8, 16).u32(1).u32(lsid.Seqid).raw(string(lsid.Other[:])).
		u32(0).u32(1).u64(3).u32(4).u32(4).u32(0)
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("LAYOUTCOMMIT with mtime\n got %x\nwant %x", got, want)
	}
	size, changed, err := DecodeLayoutcommitRes(xdr.NewDecoder(w{}.u32(1).u64(12345)))
	if err != nil || !changed || size != 12345 {
		t.Fatalf("%d %v %v", size, changed, err)
	}
	if _, _, err := DecodeLayoutcommitRes(xdr.NewDecoder(w{}.u32(1).u32(0))); err == nil {
		t.Fatal("short newsize accepted")
	}
}

func TestLayouterrorAndStatsWire(t *testing.T) {
	e := xdr.NewEncoder(0)
	EncodeLayouterror(e, 4096, 8192, lsid, []DeviceError{{devA, nfs4.ErrIO, nfs4.OpRead}, {devB, nfs4.ErrNxio, nfs4.OpWrite}})
	want := w{}.u32(nfs4.OpLayouterror).u64(4096, 8192).u32(lsid.Seqid).raw(string(lsid.Other[:])).u32(2).
		raw(string(devA[:])).u32(uint32(nfs4.ErrIO), nfs4.OpRead).raw(string(devB[:])).u32(uint32(nfs4.ErrNxio), nfs4.OpWrite)
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("LAYOUTERROR\n got %x\nwant %x", got, want)
	}
	r := wantReport()
	s := r.IOStats[0]
	e = xdr.NewEncoder(0)
	EncodeLayoutstats(e, &LayoutStatsArgs{Offset: s.Offset, Length: s.Length, Stateid: s.Stateid, Read: s.Read, Write: s.Write, Device: s.Device, Update: s.Update})
	// The ff_iostats4 in reportWire, after its counts, is the same field
	// sequence as LAYOUTSTATS4args with lou_type and lou_body around the
	// ff_layoutupdate4.
	full := reportWire()
	iostats := full[4+8+8+16+4+16+4+4+4 : len(full)]
	head := iostats[:8+8+16+32+16]
	update := iostats[len(head):]
	want = w{}.u32(nfs4.OpLayoutstats).raw(string(head)).u32(4).opaque(string(update))
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("LAYOUTSTATS\n got %x\nwant %x", got, want)
	}
}

func TestDecodeLayoutRecallWire(t *testing.T) {
	file := w{}.u32(4, IOModeAny, 1, LayoutReturnFile).opaque("the-fh").u64(0, ^uint64(0)).u32(lsid.Seqid).raw(string(lsid.Other[:]))
	r, ok := DecodeLayoutRecall(xdr.NewDecoder(file))
	if !ok || r.Type != 4 || r.IOMode != IOModeAny || !r.Changed || string(r.FH) != "the-fh" || r.Length != LengthAll || r.Stateid != lsid {
		t.Fatalf("FILE: %+v %v", r, ok)
	}
	r, ok = DecodeLayoutRecall(xdr.NewDecoder(w{}.u32(4, IOModeRW, 0, LayoutReturnFsid).u64(7, 9)))
	if !ok || r.Kind != LayoutReturnFsid || r.Fsid != (Fsid{7, 9}) {
		t.Fatalf("FSID: %+v", r)
	}
	if r, ok = DecodeLayoutRecall(xdr.NewDecoder(w{}.u32(4, IOModeRead, 0, LayoutReturnAll))); !ok || r.Kind != LayoutReturnAll {
		t.Fatalf("ALL: %+v", r)
	}
	if _, ok = DecodeLayoutRecall(xdr.NewDecoder(w{}.u32(4, 1, 0, 9))); ok {
		t.Fatal("recall type 9 accepted")
	}
	for n := 0; n < len(file); n++ {
		if _, ok := DecodeLayoutRecall(xdr.NewDecoder(file[:n])); ok {
			t.Fatalf("truncated at %d accepted", n)
		}
	}
}

func FuzzDecodeFFLayout(f *testing.F) {
	f.Add([]byte(ffLayoutWire()))
	f.Add([]byte(w{}.u64(0).u32(0).u32(0, 0)))
	f.Add([]byte(w{}.u64(1<<20).u32(1).u32(2).raw(string(ffDataServerWire(devA, "a", "1", "1"))).raw(string(ffDataServerWire(devB, "b", "2", "2"))).u32(8, 0)))
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := DecodeFFLayout(in)
		if err != nil {
			return
		}
		e := xdr.NewEncoder(0)
		EncodeFFLayout(e, &l)
		again, err := DecodeFFLayout(e.AppendTo(nil))
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, l, again)
		}
	})
}

func FuzzDecodeFFDeviceAddr(f *testing.F) {
	f.Add([]byte(deviceAddrWire()))
	f.Add([]byte(w{}.u32(0, 0)))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := DecodeFFDeviceAddr(in)
		if err != nil {
			return
		}
		deviceOf(a)
		e := xdr.NewEncoder(0)
		EncodeFFDeviceAddr(e, &a)
		again, err := DecodeFFDeviceAddr(e.AppendTo(nil))
		if err != nil || !reflect.DeepEqual(again, a) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecodeFFLayoutReturn(f *testing.F) {
	f.Add([]byte(reportWire()))
	f.Add([]byte(w{}.u32(0, 0)))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := DecodeFFLayoutReturn(in)
		if err != nil {
			return
		}
		e := xdr.NewEncoder(0)
		EncodeFFLayoutReturn(e, &r)
		again, err := DecodeFFLayoutReturn(e.AppendTo(nil))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecodeLayoutResults(f *testing.F) {
	f.Add([]byte(w{}.u32(1).u32(1).raw(string(lsid.Other[:])).u32(1).u64(0, ^uint64(0)).u32(2, 4).opaque(string(ffLayoutWire()))))
	f.Add([]byte(w{}.u32(4, 3, 1, 1).opaque("fh").u64(0, 1).u32(1).raw(string(lsid.Other[:]))))
	f.Add([]byte(w{}.u32(4).opaque(string(deviceAddrWire())).u32(0)))
	f.Fuzz(func(t *testing.T, in []byte) {
		DecodeLayoutgetRes(xdr.NewDecoder(in))
		DecodeLayoutRecall(xdr.NewDecoder(in))
		DecodeGetdeviceinfoRes(xdr.NewDecoder(in))
		DecodeLayoutcommitRes(xdr.NewDecoder(in))
		DecodeLayoutreturnRes(xdr.NewDecoder(in))
		DecodeGetdevicelistRes(xdr.NewDecoder(in))
		UaddrToHostPort(string(in))
	})
}
