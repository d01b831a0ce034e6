package ring

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenTCP listens on 127.0.0.1 on an ephemeral port.
func listenTCP(t testing.TB) (int, int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, sa.(*unix.SockaddrInet4).Port
}

// dialTCP connects a blocking socket; the listen backlog completes it.
func dialTCP(t testing.TB, port int) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}); err != nil {
		t.Fatal(err)
	}
	return fd
}

// tcpPair returns a connected (server, client) pair, accepted through the ring.
func tcpPair(t testing.TB, r *Ring) (int, int) {
	t.Helper()
	lfd, port := listenTCP(t)
	cfd := dialTCP(t, port)
	c := do(t, r, func(s *SQE) { s.PrepAccept(lfd, nil, nil, unix.SOCK_CLOEXEC) })
	mustRes(t, c, -1)
	sfd := int(c.Res)
	t.Cleanup(func() { unix.Close(sfd) })
	return sfd, cfd
}

// readFull reads exactly n bytes from a blocking fd.
func readFull(t testing.TB, fd, n int) []byte {
	t.Helper()
	out := make([]byte, 0, n)
	buf := make([]byte, n)
	for len(out) < n {
		m, err := unix.Read(fd, buf[:n-len(out)])
		if err != nil || m == 0 {
			t.Fatalf("read: %d, %v", m, err)
		}
		out = append(out, buf[:m]...)
	}
	return out
}

func TestAcceptWithAddress(t *testing.T) {
	r := newRing(t, Options{})
	lfd, port := listenTCP(t)
	dialTCP(t, port)
	addr := new(unix.RawSockaddrAny)
	addrLen := new(uint32)
	*addrLen = uint32(unix.SizeofSockaddrAny)
	c := do(t, r, func(s *SQE) { s.PrepAccept(lfd, addr, addrLen, unix.SOCK_CLOEXEC) })
	mustRes(t, c, -1)
	unix.Close(int(c.Res))
	if addr.Addr.Family != unix.AF_INET || *addrLen != unix.SizeofSockaddrInet4 {
		t.Fatalf("family %d len %d", addr.Addr.Family, *addrLen)
	}
}

func TestMultishotAcceptAndRecv(t *testing.T) {
	r := newRing(t, Options{})
	lfd, port := listenTCP(t)

	s := r.GetSQE()
	s.PrepMultishotAccept(lfd, unix.SOCK_CLOEXEC)
	s.UserData = 1
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	clients := []int{dialTCP(t, port), dialTCP(t, port)}
	var servers []int
	for range clients {
		c := reap(t, r)
		if c.UserData != 1 {
			t.Fatalf("unexpected CQE %+v", c)
		}
		if c.Res == -int32(unix.EINVAL) {
			t.Skip("multishot accept unsupported")
		}
		mustRes(t, c, -1)
		if !c.More() {
			t.Fatal("multishot accept CQE without CQEFMore")
		}
		servers = append(servers, int(c.Res))
		defer unix.Close(int(c.Res))
	}

	bufs, err := AllocBuffers(4, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	br, err := r.NewBufRing(4, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Free()
	for i := range bufs.Count() {
		br.Add(bufs.Buf(i), uint16(i), i)
	}
	br.Advance(bufs.Count())

	s = r.GetSQE()
	s.PrepRecvMultishot(servers[0], br.Bgid(), 0)
	s.UserData = 2
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	// More messages than buffers: each buffer is handed back after use.
	for i, msg := range []string{"one", "two", "three", "four", "five", "six"} {
		if _, err := unix.Write(clients[0], []byte(msg)); err != nil {
			t.Fatal(err)
		}
		c := reap(t, r)
		mustRes(t, c, int32(len(msg)))
		bid, ok := c.BufferID()
		if !ok || !c.More() {
			t.Fatalf("recv %d: flags %#x", i, c.Flags)
		}
		if got := string(bufs.Buf(int(bid))[:c.Res]); got != msg {
			t.Fatalf("recv %d: got %q want %q", i, got, msg)
		}
		br.Add(bufs.Buf(int(bid)), bid, 0)
		br.Advance(1)
	}
	// EOF ends the multishot recv.
	unix.Shutdown(clients[0], unix.SHUT_WR)
	c := reap(t, r)
	if c.UserData != 2 || c.Res != 0 || c.More() {
		t.Fatalf("EOF CQE %+v", c)
	}

	// Cancel the multishot accept.
	mustRes(t, do(t, r, func(s *SQE) { s.PrepCancel(1, 0) }), 0)
	c = reap(t, r)
	if c.UserData != 1 || errnoOf(c) != unix.ECANCELED || c.More() {
		t.Fatalf("cancelled accept CQE %+v", c)
	}
}

func TestRecvNoBuffers(t *testing.T) {
	r := newRing(t, Options{})
	sfd, cfd := tcpPair(t, r)
	br, err := r.NewBufRing(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Free()
	unix.Write(cfd, []byte("x"))
	c := do(t, r, func(s *SQE) {
		s.PrepRecv(sfd, nil, 0)
		s.SetBufferGroup(3)
	})
	if errnoOf(c) != unix.ENOBUFS {
		t.Fatalf("recv from empty group: Res %d, want -ENOBUFS", c.Res)
	}
}

func TestSendRecv(t *testing.T) {
	r := newRing(t, Options{})
	sfd, cfd := tcpPair(t, r)
	msg := []byte("plain send")
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSend(sfd, msg, 0) }), int32(len(msg)))
	if got := readFull(t, cfd, len(msg)); !bytes.Equal(got, msg) {
		t.Fatalf("got %q", got)
	}
	unix.Write(cfd, []byte("reply"))
	buf := make([]byte, 16)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepRecv(sfd, buf, 0) }), 5)
	if string(buf[:5]) != "reply" {
		t.Fatalf("got %q", buf[:5])
	}
}

func TestSendmsg(t *testing.T) {
	r := newRing(t, Options{})
	sfd, cfd := tcpPair(t, r)
	head, body := []byte("header|"), pattern(3000)
	iovs := []unix.Iovec{iov(head), iov(body)}
	msg := &unix.Msghdr{Iov: &iovs[0]}
	msg.SetIovlen(len(iovs))
	n := len(head) + len(body)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSendmsg(sfd, msg, 0) }), int32(n))
	got := readFull(t, cfd, n)
	if !bytes.Equal(got, append(append([]byte{}, head...), body...)) {
		t.Fatal("sendmsg data differs")
	}
}

func TestSendZC(t *testing.T) {
	r := newRing(t, Options{})
	requireOp(t, r, OpSendZC, "IORING_OP_SEND_ZC")
	sfd, cfd := tcpPair(t, r)
	bufs, err := AllocBuffers(1, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	data := bufs.Buf(0)
	copy(data, pattern(len(data)))
	s := r.GetSQE()
	s.PrepSendZC(sfd, data, 0, 0)
	s.UserData = 9
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	got := readFull(t, cfd, len(data))
	if !bytes.Equal(got, data) {
		t.Fatal("zero-copy data differs")
	}
	sent := 0
	for notified := false; !notified; {
		c := reap(t, r)
		if c.UserData != 9 {
			t.Fatalf("unexpected CQE %+v", c)
		}
		switch {
		case c.Notif():
			notified = true
		default:
			mustRes(t, c, -1)
			sent += int(c.Res)
			if !c.More() {
				t.Fatal("send CQE without CQEFMore: no notification will follow")
			}
		}
	}
	if sent != len(data) {
		t.Fatalf("sent %d of %d", sent, len(data))
	}
}

func TestSendmsgZC(t *testing.T) {
	r := newRing(t, Options{})
	requireOp(t, r, OpSendmsgZC, "IORING_OP_SENDMSG_ZC")
	sfd, cfd := tcpPair(t, r)
	a, b := []byte("zero"), []byte("copy")
	iovs := []unix.Iovec{iov(a), iov(b)}
	msg := &unix.Msghdr{Iov: &iovs[0]}
	msg.SetIovlen(len(iovs))
	c := do(t, r, func(s *SQE) { s.PrepSendmsgZC(sfd, msg, 0) })
	mustRes(t, c, 8)
	if c.More() {
		if n := reap(t, r); !n.Notif() {
			t.Fatalf("expected notification, got %+v", n)
		}
	}
	if got := readFull(t, cfd, 8); string(got) != "zerocopy" {
		t.Fatalf("got %q", got)
	}
}

func TestRecvTimeoutLinked(t *testing.T) {
	r := newRing(t, Options{})
	sfd, _ := tcpPair(t, r)
	buf := make([]byte, 8)
	ts := &unix.Timespec{Nsec: int64(5 * time.Millisecond)}
	s := r.GetSQE()
	s.PrepRecv(sfd, buf, 0)
	s.Flags |= SQEIOLink
	s.UserData = 1
	s = r.GetSQE()
	s.PrepLinkTimeout(ts, 0)
	s.UserData = 2
	if _, err := r.SubmitAndWait(2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c := reap(t, r)
		if c.UserData == 1 && errnoOf(c) != unix.ECANCELED {
			t.Fatalf("recv Res %d, want -ECANCELED", c.Res)
		}
	}
}

// TestDeferTaskrunRecv waits for network data on a DEFER_TASKRUN ring, whose
// completions are posted only when the ring's own thread enters the kernel.
func TestDeferTaskrunRecv(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := NewBest(Options{Entries: 16, Flags: SetupSingleIssuer | SetupDeferTaskrun})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Flags()&SetupDeferTaskrun == 0 {
		t.Skip("DEFER_TASKRUN not accepted")
	}
	sfd, cfd := tcpPair(t, r)
	buf := make([]byte, 16)
	s := r.GetSQE()
	s.PrepRecv(sfd, buf, 0)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		unix.Write(cfd, []byte("late"))
	}()
	c := reap(t, r)
	mustRes(t, c, 4)
	if string(buf[:4]) != "late" {
		t.Fatalf("got %q", buf[:4])
	}
}
