// Command nlmpmap is a private, read-only portmapper (rpcbind version 2,
// TCP) for the kernel e2e's NLM phase (e2e-nlm.sh). The guest's lockd asks
// the server's rpcbind, at the address it mounted (10.0.2.100:111, a
// guestfwd rule to this process), for the NLM port; the host's own rpcbind
// is shared by every process on the host (and may not run at all), so the
// phase answers from a fixed table instead:
//
//	nlmpmap -listen 127.0.0.1:0 -map 100021:4:6=PORT -map ...
//
// prints "listening ADDR" on stdout and answers PMAPPROC_NULL and
// PMAPPROC_GETPORT (port 0 for what the table lacks); every other call
// gets PROC_UNAVAIL. Each GETPORT is logged on stderr.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
)

type key struct{ prog, vers, prot uint32 }

type maps map[key]uint32

func (m maps) String() string { return fmt.Sprint(map[key]uint32(m)) }

func (m maps) Set(s string) error {
	var k key
	var port uint32
	if _, err := fmt.Sscanf(strings.Replace(s, "=", " ", 1), "%d:%d:%d %d", &k.prog, &k.vers, &k.prot, &port); err != nil {
		return fmt.Errorf("want PROG:VERS:PROTO=PORT: %w", err)
	}
	m[k] = port
	return nil
}

func main() {
	table := maps{}
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to answer on")
	flag.Var(table, "map", "PROG:VERS:PROTO=PORT (PROTO 6: TCP, 17: UDP), repeatable")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	os.Stdout.Sync()
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, table)
	}
}

func serve(c net.Conn, table maps) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		var hdr [4]byte
		var msg []byte
		for last := false; !last; {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			h := binary.BigEndian.Uint32(hdr[:])
			last = h&0x80000000 != 0
			n := h & 0x7fffffff
			if n > 4096 || len(msg)+int(n) > 4096 {
				log.Printf("%s: record too long", c.RemoteAddr())
				return
			}
			frag := make([]byte, n)
			if _, err := io.ReadFull(r, frag); err != nil {
				return
			}
			msg = append(msg, frag...)
		}
		rep, err := answer(msg, table)
		if err != nil {
			log.Printf("%s: %v", c.RemoteAddr(), err)
			return
		}
		out := binary.BigEndian.AppendUint32(nil, 0x80000000|uint32(len(rep)))
		if _, err := c.Write(append(out, rep...)); err != nil {
			return
		}
	}
}

func u32(b []byte, off int) (uint32, error) {
	if off+4 > len(b) {
		return 0, errors.New("short call")
	}
	return binary.BigEndian.Uint32(b[off:]), nil
}

// answer decodes one RPC call and returns the reply.
func answer(msg []byte, table maps) ([]byte, error) {
	var w [6]uint32 // xid, mtype, rpcvers, prog, vers, proc
	for i := range w {
		v, err := u32(msg, 4*i)
		if err != nil {
			return nil, err
		}
		w[i] = v
	}
	if w[1] != 0 || w[2] != 2 {
		return nil, errors.New("not an RPC v2 call")
	}
	off := 24
	for range 2 { // credential, verifier
		if _, err := u32(msg, off); err != nil {
			return nil, err
		}
		n, err := u32(msg, off+4)
		if err != nil || n > 400 {
			return nil, errors.New("bad opaque_auth")
		}
		off += 8 + int((n+3)&^3)
	}
	rep := []uint32{w[0], 1, 0, 0, 0} // xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier
	switch {
	case w[3] != 100000:
		rep = append(rep, 1) // PROG_UNAVAIL
	case w[4] != 2:
		rep = append(rep, 2, 2, 2) // PROG_MISMATCH 2..2
	case w[5] == 0:
		rep = append(rep, 0)
	case w[5] == 3:
		var k key
		var err error
		for i, p := range []*uint32{&k.prog, &k.vers, &k.prot} {
			if *p, err = u32(msg, off+4*i); err != nil {
				return nil, err
			}
		}
		port := table[k]
		log.Printf("GETPORT prog %d vers %d proto %d -> %d", k.prog, k.vers, k.prot, port)
		rep = append(rep, 0, port)
	default:
		rep = append(rep, 3) // PROC_UNAVAIL
	}
	b := make([]byte, 0, 4*len(rep))
	for _, v := range rep {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b, nil
}
