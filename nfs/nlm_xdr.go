package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The wire format of NLM version 4 (Open Group XNFS, "Protocols for
// Interworking: XNFS, Version 3W", chapter 14; Linux include/linux/lockd
// and fs/lockd/xdr4.c) and of NSM version 1 (XNFS chapter 11).

// Program numbers and versions served (the lead registers them with the
// host's rpcbind: LockPrograms).
const (
	NLMProgram = 100021
	NLMVersion = 4
	NSMProgram = 100024
	NSMVersion = 1
)

// NLM4 procedures.
const (
	nlmProcNull      = 0
	nlmProcTest      = 1
	nlmProcLock      = 2
	nlmProcCancel    = 3
	nlmProcUnlock    = 4
	nlmProcGranted   = 5
	nlmProcTestMsg   = 6
	nlmProcLockMsg   = 7
	nlmProcCancelMsg = 8
	nlmProcUnlockMsg = 9
	nlmProcGrantMsg  = 10
	nlmProcTestRes   = 11
	nlmProcLockRes   = 12
	nlmProcCancelRes = 13
	nlmProcUnlockRes = 14
	nlmProcGrantRes  = 15
	nlmProcNSMNotify = 16 // Linux's private upcall from the local statd (nlm_reboot)
	nlmProcShare     = 20
	nlmProcUnshare   = 21
	nlmProcNMLock    = 22
	nlmProcFreeAll   = 23
)

// nlm4_stats.
const (
	nlmGranted          = 0
	nlmDenied           = 1
	nlmDeniedNoLocks    = 2
	nlmBlocked          = 3
	nlmDeniedGrace      = 4
	nlmDeadlock         = 5
	nlmROFS             = 6
	nlmStaleFH          = 7
	nlmFBig             = 8
	nlmFailed           = 9
	nlmMaxNetobj        = 1024 // MAXNETOBJ_SZ
	nlmMaxName          = 1024 // LM_MAXSTRLEN
	nlmMaxFH            = 1024 // a netobj; our handles are far shorter
	nsmMaxName          = 1024 // SM_MAXSTRLEN
	nsmPrivSize         = 16
	nsmStatSucc         = 0
	nsmStatFail         = 1
	nsmProcNull         = 0
	nsmProcStat         = 1
	nsmProcMon          = 2
	nsmProcUnmon        = 3
	nsmProcUnmonAll     = 4
	nsmProcSimuCrash    = 5
	nsmProcNotify       = 6
	rpcbindProgram      = 100000
	rpcbindVersion      = 2
	rpcbindProcGetport  = 3
	ipprotoTCP          = 6
	ipprotoUDP          = 17
	defaultRPCBindPort  = 111
	nlmCallbackAttempts = 30 // GRANTED callbacks tried about every nlmTick before the lock is released
)

// nlmLock is nlm4_lock.
type nlmLock struct {
	callerName []byte // aliases the request
	fh         []byte
	oh         []byte
	svid       int32
	offset     uint64
	length     uint64
}

func decodeNLMLock(d *xdr.Decoder) nlmLock {
	return nlmLock{callerName: d.String(nlmMaxName), fh: d.Opaque(nlmMaxFH), oh: d.Opaque(nlmMaxNetobj),
		svid: d.Int32(), offset: d.Uint64(), length: d.Uint64()}
}

func (l *nlmLock) encode(e *xdr.Encoder) {
	e.Opaque(l.callerName)
	e.Opaque(l.fh)
	e.Opaque(l.oh)
	e.Int32(l.svid)
	e.Uint64(l.offset)
	e.Uint64(l.length)
}

// nlmRange is the byte range of an nlm4_lock: [start, end), end 2^64-1
// for "to the end of the file" (l_len 0, or a range past 2^64, as Linux's
// nlm4svc_set_file_lock_range takes it).
func nlmRange(off, length uint64) (uint64, uint64) {
	if length == 0 || off+length < off {
		return off, ^uint64(0)
	}
	return off, off + length
}

// nlmLen is the l_len of [start, end).
func nlmLen(start, end uint64) uint64 {
	if end == ^uint64(0) {
		return 0
	}
	return end - start
}

// nlmArgs holds the arguments of every NLM4 call that takes a lock: TEST
// (nlm4_testargs), LOCK and NM_LOCK (nlm4_lockargs), CANCEL
// (nlm4_cancargs), UNLOCK (nlm4_unlockargs) and GRANTED (nlm4_testargs).
type nlmArgs struct {
	cookie    []byte
	block     bool
	exclusive bool
	lock      nlmLock
	reclaim   bool
	state     int32
}

func decodeNLMArgs(proc uint32, d *xdr.Decoder) nlmArgs {
	var a nlmArgs
	a.cookie = d.Opaque(nlmMaxNetobj)
	switch proc {
	case nlmProcTest, nlmProcTestMsg, nlmProcGranted, nlmProcGrantMsg:
		a.exclusive = d.Bool()
		a.lock = decodeNLMLock(d)
	case nlmProcLock, nlmProcLockMsg, nlmProcNMLock:
		a.block = d.Bool()
		a.exclusive = d.Bool()
		a.lock = decodeNLMLock(d)
		a.reclaim = d.Bool()
		a.state = d.Int32()
	case nlmProcCancel, nlmProcCancelMsg:
		a.block = d.Bool()
		a.exclusive = d.Bool()
		a.lock = decodeNLMLock(d)
	case nlmProcUnlock, nlmProcUnlockMsg:
		a.lock = decodeNLMLock(d)
	}
	return a
}

// nlmHolder is nlm4_holder: who holds a lock TEST found in the way.
type nlmHolder struct {
	exclusive bool
	svid      int32
	oh        []byte
	offset    uint64
	length    uint64
}

// nlmShareArgs is nlm4_shareargs.
type nlmShareArgs struct {
	cookie     []byte
	callerName []byte
	fh         []byte
	oh         []byte
	mode       uint32 // fsh4_mode: what others are denied
	access     uint32 // fsh4_access
	reclaim    bool
}

func decodeNLMShare(d *xdr.Decoder) nlmShareArgs {
	return nlmShareArgs{cookie: d.Opaque(nlmMaxNetobj), callerName: d.String(nlmMaxName), fh: d.Opaque(nlmMaxFH),
		oh: d.Opaque(nlmMaxNetobj), mode: d.Uint32(), access: d.Uint32(), reclaim: d.Bool()}
}

// nlmNotify is nlm4_notify, FREE_ALL's argument.
type nlmNotify struct {
	name  []byte
	state int32
}

func decodeNLMNotify(d *xdr.Decoder) nlmNotify {
	return nlmNotify{name: d.String(nlmMaxName), state: d.Int32()}
}

// nsmMyID is my_id: whom statd calls back when a monitored host reboots.
type nsmMyID struct {
	name             string
	prog, vers, proc uint32
}

func decodeNSMMyID(d *xdr.Decoder) nsmMyID {
	return nsmMyID{name: string(d.String(nsmMaxName)), prog: d.Uint32(), vers: d.Uint32(), proc: d.Uint32()}
}

// nsmMon is mon: SM_MON's argument (mon_id and priv).
type nsmMon struct {
	monName string
	id      nsmMyID
	priv    [nsmPrivSize]byte
}

func decodeNSMMon(d *xdr.Decoder, withPriv bool) nsmMon {
	var m nsmMon
	m.monName = string(d.String(nsmMaxName))
	m.id = decodeNSMMyID(d)
	if withPriv {
		copy(m.priv[:], d.Fixed(nsmPrivSize))
	}
	return m
}

// nsmStatChge is stat_chge: SM_NOTIFY's argument.
type nsmStatChge struct {
	monName []byte
	state   int32
}

func decodeNSMNotify(d *xdr.Decoder) nsmStatChge {
	return nsmStatChge{monName: d.String(nsmMaxName), state: d.Int32()}
}

// nlmStatName names an nlm4_stats for the metrics.
func nlmStatName(st uint32) string {
	names := [...]string{"LCK_GRANTED", "LCK_DENIED", "LCK_DENIED_NOLOCKS", "LCK_BLOCKED", "LCK_DENIED_GRACE_PERIOD",
		"LCK_DEADLCK", "LCK_ROFS", "LCK_STALE_FH", "LCK_FBIG", "LCK_FAILED"}
	if st < uint32(len(names)) {
		return names[st]
	}
	return "LCK_UNKNOWN"
}

var (
	nlmProcNames = [...]string{"NULL", "TEST", "LOCK", "CANCEL", "UNLOCK", "GRANTED", "TEST_MSG", "LOCK_MSG",
		"CANCEL_MSG", "UNLOCK_MSG", "GRANTED_MSG", "TEST_RES", "LOCK_RES", "CANCEL_RES", "UNLOCK_RES", "GRANTED_RES",
		"NSM_NOTIFY", "", "", "", "SHARE", "UNSHARE", "NM_LOCK", "FREE_ALL"}
	nsmProcNames = [...]string{"NULL", "SM_STAT", "SM_MON", "SM_UNMON", "SM_UNMON_ALL", "SM_SIMU_CRASH", "SM_NOTIFY"}
)

// lockProcName names an NLM 4 or NSM 1 procedure for the metrics ("" when
// unknown).
func lockProcName(prog, vers, proc uint32) string {
	switch {
	case prog == NLMProgram && vers == NLMVersion && proc < uint32(len(nlmProcNames)):
		return nlmProcNames[proc]
	case prog == NSMProgram && vers == NSMVersion && proc < uint32(len(nsmProcNames)):
		return nsmProcNames[proc]
	}
	return ""
}
