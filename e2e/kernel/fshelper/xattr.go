package main

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// xattrCmd runs the xattr subcommands (busybox has no setfattr/getfattr):
//
//	fshelper setxattr FILE NAME VALUE [create|replace]   setxattr(2)         (SETXATTR)
//	fshelper getxattr FILE NAME                         prints the value     (GETXATTR)
//	fshelper listxattr FILE                             prints the names     (LISTXATTRS)
//	fshelper removexattr FILE NAME                      removexattr(2)       (REMOVEXATTR)
func xattrCmd(op string, a []string) {
	switch {
	case op == "setxattr" && (len(a) == 3 || len(a) == 4):
		flags := 0
		if len(a) == 4 {
			switch a[3] {
			case "create":
				flags = unix.XATTR_CREATE
			case "replace":
				flags = unix.XATTR_REPLACE
			default:
				usage()
			}
		}
		if err := unix.Setxattr(a[0], a[1], []byte(a[2]), flags); err != nil {
			die("setxattr "+a[1], err)
		}
	case op == "getxattr" && len(a) == 2:
		fmt.Println(string(sized("getxattr "+a[1], func(b []byte) (int, error) { return unix.Getxattr(a[0], a[1], b) })))
	case op == "listxattr" && len(a) == 1:
		list := sized("listxattr", func(b []byte) (int, error) { return unix.Listxattr(a[0], b) })
		for _, n := range bytes.Split(list, []byte{0}) {
			if len(n) > 0 {
				fmt.Println(string(n))
			}
		}
	case op == "removexattr" && len(a) == 2:
		if err := unix.Removexattr(a[0], a[1]); err != nil {
			die("removexattr "+a[1], err)
		}
	default:
		usage()
	}
	os.Exit(0)
}

// sized calls call with an empty buffer for the size, then with one that
// big.
func sized(what string, call func([]byte) (int, error)) []byte {
	n, err := call(nil)
	if err != nil {
		die(what, err)
	}
	buf := make([]byte, n)
	if n, err = call(buf); err != nil {
		die(what, err)
	}
	return buf[:n]
}
