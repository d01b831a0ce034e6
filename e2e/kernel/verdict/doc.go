// Package verdict judges a run of the kernel-client e2e (e2e/kernel): it
// reads what the guest printed and what the host recorded, and lists every
// check that failed, each with the line it failed on. The shell harness
// boots qemu, runs the servers and records; this package decides. run.sh
// calls it as
//
//	go test -count=1 -v -run '^TestVerdict$' ./e2e/kernel/verdict -args -dir DIR
//
// (or E2E_VERDICT_DIR=DIR), and it can be run again on the files of an
// earlier run. Without a directory TestVerdict is skipped, so `go test
// ./...` needs no qemu.
//
// # The run directory
//
//	results.txt   the guest's records (its second serial port)
//	host.txt      the host's records (below)
//	server.log    the server's log (restart, deleg: lines it must hold)
//	*.manifest    the host's listings (lib.sh: e2e_manifest, e2e_rw_manifest)
//	open-ok-vV    deleg: the second client's OPEN for writing succeeded
//	host.log      deleg: the second client's output
//
// Records are lines "TAG FIELD...". A manifest line is
//
//	D ./p [MODE UID:GID] | F ./p [SIZE MODE NLINK UID:GID] SHA256 |
//	L ./p -> TARGET | P ./p MODE UID:GID | C ./p MAJ:MIN MODE UID:GID |
//	O ./p | T ./p MTIME
//
// (the bracketed fields in the write checks' listings only).
//
// # The host's records (host.txt, written by run.sh)
//
//	PHASE nfs|fs|exports|restart|deleg|pnfs|probe
//	VERS V...                       NFS versions, in order
//	RWFLAGS off | on[,punch][,alloc][,copy][,clone][,locks]
//	FSEXPORTS NAME:PATH,...         fs: the exports the guest mounts
//	PNFSSTAGE write|read|dsfail     pnfs: the stage this boot ran
//	START EPOCH | NOW EPOCH         when the guest started; when the host recorded
//	QEMU RC ELAPSED TIMEOUT         qemu's exit status (124/137: killed at TIMEOUT)
//	SERVERDIED HH:MM:SS             the server went away during the run
//	HSEEK V FILE OFF hole|data RES  lseek on the export's rw/vV/FILE
//	HXATTR V FILE NAME VALUE        getxattr on the export
//	HXATTRS V FILE NAME...          its user.* xattr names
//	HMTIME V FILE EPOCH             its mtime
//
// # The guest's records (results.txt)
//
// Every phase: ERR TEXT (a failure), DONE (the guest finished).
//
//	probe:   PROBE REPLY
//	nfs:     MOUNT V ok|fail DETAIL; M V MANIFEST-LINE; STAT V OP OPS ERRORS
//	         (mountstats after the read checks); the write checks
//	         (guest-rw.sh): STEP V NAME; WERR V NAME mirror|nfs rc=N MSG;
//	         SKIP V NAME WHY; INFO V NAME TEXT; SEEK V FILE OFF hole|data RES;
//	         RM V LINE (tmpfs mirror) | RW V LINE (NFS read-back);
//	         RWLISTED V; STAT2 V OP OPS ERRORS; STATU0|STATU1 V OP OPS ERRORS
//	         (around the expected refusals); READY V; HB V LINE | HA V LINE
//	         (host-written files before / after the host's change);
//	         HC V FILE SHA256 (re-opened after the change); RWDONE V
//	fs:      FSMOUNT NAME ok|fail DETAIL; FSM0|FSM1 NAME LINE; FSDEV NAME
//	         ROOT_DEV PROJ_DEV yes|no; FSINO NAME REL FILEID; FSW NAME ./REL
//	         SHA256; FSERR NAME STEP rc=N MSG; FILL rc=N MSG; FILLSIZE BYTES;
//	         FILLKEEP GOT WANT; FILLAFTER rc=N MSG; FSDONE
//	exports: EXMOUNT NAME ok|fail DETAIL; EXR STEP pass|FAIL DETAIL;
//	         EXLS NAMES (EXNOPSEUDO instead on vers=3); EXDONE
//	restart: HOLDING V; RESTART V ok
//	deleg:   DELEG_HELD V; DELEG V ok delegreturn=N
//	pnfs:    PW V NAME SIZE SHA256 (written, hashed from the guest's tmpfs
//	         copy); PR V NAME SIZE SHA256 (read back after drop_caches;
//	         READ-ERROR:... for a failed read); PSTAT STAGE V OP OPS ERRORS
//	         (the MDS mount's mountstats); PTIME STAGE V SECONDS;
//	         DSFAIL_WRITTEN V; PNFS STAGE V ok
package verdict
