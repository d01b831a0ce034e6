// Package ring is a thin io_uring binding on golang.org/x/sys/unix, shaped
// after liburing: set up a Ring, take SQEs with GetSQE, fill them with the
// Prep* helpers, Submit, and reap CQEs with PeekCQE/PeekBatch/WaitCQE and
// CQESeen/Advance. Register buffers, files and provided-buffer rings with the
// Register*/NewBufRing methods. There is no policy here: no goroutines, no
// pools, no callbacks.
//
// # Threads
//
// A Ring is used by one goroutine at a time. A ring set up with
// SetupSingleIssuer (required by SetupDeferTaskrun) only accepts submissions
// from the OS thread that created it, so that goroutine must call
// runtime.LockOSThread before New and stay locked. With SetupDeferTaskrun,
// completions appear in the CQ ring only when that thread enters the kernel
// (SubmitAndWait, WaitCQE, GetEvents); PeekCQE alone does not make progress.
//
// # Memory
//
// The kernel reads and writes memory named in SQEs after the prep call, and
// often after Submit returns. That memory must neither move nor be freed
// until the kernel is done with it:
//   - data buffers (read into, written or sent from), statx results and
//     accept address outputs: until the request's CQE; for zero-copy sends,
//     until its notification CQE (CQEFNotif);
//   - argument structures (iovec arrays, msghdr, timespec, paths): until
//     Submit returns (FeatSubmitStable), or the CQE with SQPOLL;
//   - registered buffers and provided-buffer rings: until unregistered.
//
// Data buffers belong outside the Go heap: AllocBuffers gives page-aligned
// (O_DIRECT-capable) memory from mmap, which the collector ignores. Go
// objects passed to Prep* helpers are forced onto the heap, where the
// collector does not move them, but the caller must keep them reachable (for
// instance in the per-request struct) until completion; a Go object that
// holds pointers to other Go objects the kernel follows (msghdr -> iovec ->
// buffer) can additionally be pinned with runtime.Pinner. Never free
// AllocBuffers memory, or Close a ring, while requests using it are in flight.
package ring
