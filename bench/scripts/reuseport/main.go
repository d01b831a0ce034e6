// Command reuseport measures how evenly SO_REUSEPORT spreads connections
// over listeners, the alternative to the io_uring engine's single acceptor
// handing connections round-robin to its loops. NFS clients hold a few
// long-lived connections, so what matters is balance, not accept cost.
//
//	go run ./bench/scripts/reuseport -listeners 2 -conns 16 -trials 200
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	listeners := flag.Int("listeners", 2, "listeners (event loops) sharing the port")
	conns := flag.Int("conns", 16, "client connections per trial")
	trials := flag.Int("trials", 200, "trials")
	flag.Parse()
	worst := make([]int, 0, *trials)
	for t := 0; t < *trials; t++ {
		counts, err := trial(*listeners, *conns)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		sort.Ints(counts)
		worst = append(worst, counts[len(counts)-1])
	}
	sort.Ints(worst)
	fair := (*conns + *listeners - 1) / *listeners
	balanced := 0
	for _, w := range worst {
		if w == fair {
			balanced++
		}
	}
	fmt.Printf("SO_REUSEPORT, %d listeners, %d connections, %d trials: busiest listener got %d (median), %d (p90), %d (max) connections; round-robin gives %d; balanced in %d%% of trials\n",
		*listeners, *conns, *trials, worst[len(worst)/2], worst[len(worst)*9/10], worst[len(worst)-1], fair, 100*balanced / *trials)
}

// trial opens listeners with SO_REUSEPORT on one port, connects conns
// clients, and returns how many each listener accepted.
func trial(listeners, conns int) ([]int, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		return serr
	}}
	lc.SetMultipathTCP(false)
	first, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lns := []net.Listener{first}
	for len(lns) < listeners {
		ln, err := lc.Listen(context.Background(), "tcp", first.Addr().String())
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
	}
	counts := make([]int, listeners)
	done := make(chan int, conns)
	for i, ln := range lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
				done <- i
			}
		}()
	}
	var clients []net.Conn
	for range conns {
		c, err := net.Dial("tcp", first.Addr().String())
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
	}
	for range conns {
		counts[<-done]++
	}
	for _, c := range clients {
		c.Close()
	}
	for _, ln := range lns {
		ln.Close()
	}
	return counts, nil
}
