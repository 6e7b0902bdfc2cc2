package store

import (
	"context"
	"io"
)

// Backuper is a Store that can write a consistent snapshot of everything it holds while
// it keeps serving reads and writes. It is an optional capability, found by a type
// assertion (payments.Service.Backup does so), not part of Store: a driver whose database
// has its own backup tooling (pg_dump, say) need not offer it.
//
// Backup writes one snapshot, as of one committed state, to w, and returns once it is all
// written, or with the first error (ctx ending included). What the bytes are is the
// driver's: each driver documents its format and how to open a snapshot again
// (store/bolt writes a bbolt file that bolt.Open opens; store/memory writes a stream that
// memory.Restore reads).
type Backuper interface {
	Backup(ctx context.Context, w io.Writer) error
}

// ContextWriter is w that fails with ctx's error once ctx ends, for drivers whose snapshot
// write cannot take a context itself.
func ContextWriter(ctx context.Context, w io.Writer) io.Writer { return ctxWriter{ctx, w} }

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
