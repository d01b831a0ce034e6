package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
)

// Example mounts an NFSv4.2 server's root the way a program would: one
// Dial (EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE), then path lookups
// and whole-file reads with READ_PLUS. It needs a server, so it has no
// Output comment and is compiled, not run, by go test.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "127.0.0.1:2049", client.Options{UID: 1000, GID: 1000})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	root, err := c.RootFH(ctx)
	if err != nil {
		log.Fatal(err)
	}
	entries, err := c.Readdir(ctx, root)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name)
	}
	data, err := c.ReadFilePlus(ctx, "/hello.txt", 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes\n", len(data))
}
