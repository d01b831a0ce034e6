package client

import "context"

type credKey struct{}

// WithCred returns a context under which the client's COMPOUNDs carry
// cred instead of the client's own AUTH_SYS credential. A pNFS client
// reaches a loosely coupled data server with the synthetic uid and gid of
// each layout (RFC 8435 section 2.2), which differ from file to file, over
// one connection per data server.
func WithCred(ctx context.Context, cred Cred) context.Context {
	return context.WithValue(ctx, credKey{}, &cred)
}

// credFor is the credential a COMPOUND under ctx carries.
func (c *Client) credFor(ctx context.Context) *Cred {
	if cr, ok := ctx.Value(credKey{}).(*Cred); ok {
		return cr
	}
	return &c.cred
}

// ExchangeFlags returns the eir_flags of the server's EXCHANGE_ID reply:
// EXCHGID4_FLAG_USE_PNFS_MDS says it is a pNFS metadata server.
func (c *Client) ExchangeFlags() uint32 { return c.exFlags.Load() }
