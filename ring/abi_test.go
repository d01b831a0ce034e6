package ring

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sizes and offsets from include/uapi/linux/io_uring.h on x86_64.
func TestABILayout(t *testing.T) {
	sizes := []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_sqe", unsafe.Sizeof(SQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(CQE{}), 16},
		{"io_uring_params", unsafe.Sizeof(Params{}), 120},
		{"io_sqring_offsets", unsafe.Sizeof(SQRingOffsets{}), 40},
		{"io_cqring_offsets", unsafe.Sizeof(CQRingOffsets{}), 40},
		{"io_uring_buf", unsafe.Sizeof(bufEntry{}), 16},
		{"io_uring_buf_reg", unsafe.Sizeof(bufReg{}), 40},
		{"io_uring_probe", unsafe.Sizeof(probeHeader{}), 16},
		{"io_uring_probe_op", unsafe.Sizeof(probeOp{}), 8},
		{"io_uring_rsrc_register", unsafe.Sizeof(rsrcRegister{}), 32},
		{"io_uring_rsrc_update", unsafe.Sizeof(rsrcUpdate{}), 16},
		{"io_uring_getevents_arg", unsafe.Sizeof(geteventsArg{}), 24},
		{"struct statx", unsafe.Sizeof(unix.Statx_t{}), 256},
		{"__kernel_timespec", unsafe.Sizeof(unix.Timespec{}), 16},
	}
	for _, s := range sizes {
		if s.got != s.want {
			t.Errorf("sizeof(%s) = %d, want %d", s.name, s.got, s.want)
		}
	}
	var sqe SQE
	offsets := []struct {
		name      string
		got, want uintptr
	}{
		{"sqe.fd", unsafe.Offsetof(sqe.Fd), 4},
		{"sqe.off", unsafe.Offsetof(sqe.Off), 8},
		{"sqe.addr", unsafe.Offsetof(sqe.Addr), 16},
		{"sqe.len", unsafe.Offsetof(sqe.Len), 24},
		{"sqe.rw_flags", unsafe.Offsetof(sqe.OpFlags), 28},
		{"sqe.user_data", unsafe.Offsetof(sqe.UserData), 32},
		{"sqe.buf_index", unsafe.Offsetof(sqe.BufIndex), 40},
		{"sqe.personality", unsafe.Offsetof(sqe.Personality), 42},
		{"sqe.file_index", unsafe.Offsetof(sqe.FileIndex), 44},
		{"sqe.addr3", unsafe.Offsetof(sqe.Addr3), 48},
		{"params.sq_off", unsafe.Offsetof(Params{}.SQOff), 40},
		{"params.cq_off", unsafe.Offsetof(Params{}.CQOff), 80},
		{"buf.bid", unsafe.Offsetof(bufEntry{}.Bid), 12},
		{"buf_ring.tail", unsafe.Offsetof(bufEntry{}.Resv), 14},
	}
	for _, o := range offsets {
		if o.got != o.want {
			t.Errorf("offsetof(%s) = %d, want %d", o.name, o.got, o.want)
		}
	}
}
