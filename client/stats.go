package client

import "sync/atomic"

// Stats are running totals for one client.
type Stats struct {
	BytesSent     uint64 // bytes written to the socket, record marks included
	Writes        uint64 // system calls that wrote them
	BytesReceived uint64 // bytes of reply records received
	Delays        uint64 // NFS4ERR_DELAY retries
	GraceWaits    uint64 // calls that waited out NFS4ERR_GRACE (Options.GraceWait)
	Dropped       uint64 // replies nobody waited for

	ReadBytes         uint64 // data delivered by READ
	ReadsPlaced       uint64 // READ replies read straight into the caller's buffer (ReadInto)
	ReadPlusCalls     uint64
	ReadPlusDataBytes uint64 // DATA segment payload on the wire
	ReadPlusHoleBytes uint64 // bytes zero-filled from HOLE segments
	ReadPlusSegments  uint64
	ReadPlusDelivered uint64 // bytes delivered to callers (data + holes)

	WriteBytes uint64 // data the server acknowledged writing
}

type counters struct {
	delays            atomic.Uint64
	graceWaits        atomic.Uint64
	readBytes         atomic.Uint64
	readPlusCalls     atomic.Uint64
	readPlusData      atomic.Uint64
	readPlusHole      atomic.Uint64
	readPlusSegs      atomic.Uint64
	readPlusDelivered atomic.Uint64
	writeBytes        atomic.Uint64
}

// Stats returns the client's totals so far.
func (c *Client) Stats() Stats {
	return Stats{
		BytesSent:         c.t.bytesOut.Load(),
		Writes:            c.t.writes.Load(),
		BytesReceived:     c.t.bytesIn.Load(),
		Delays:            c.stats.delays.Load(),
		GraceWaits:        c.stats.graceWaits.Load(),
		Dropped:           c.t.dropped.Load(),
		ReadBytes:         c.stats.readBytes.Load(),
		ReadsPlaced:       c.t.sunk.Load(),
		ReadPlusCalls:     c.stats.readPlusCalls.Load(),
		ReadPlusDataBytes: c.stats.readPlusData.Load(),
		ReadPlusHoleBytes: c.stats.readPlusHole.Load(),
		ReadPlusSegments:  c.stats.readPlusSegs.Load(),
		ReadPlusDelivered: c.stats.readPlusDelivered.Load(),
		WriteBytes:        c.stats.writeBytes.Load(),
	}
}
