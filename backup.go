package payments

import (
	"context"
	"fmt"
	"io"

	"github.com/pixfoundry/payments/store"
)

// Backup writes a consistent snapshot of the whole store (every company) to w while the
// Service keeps running: the state of one commit, with nothing half-written. It needs a
// store that offers online backup (store.Backuper):
//
//   - store/bolt (what Open uses) writes a bbolt file: save it, and Open it (or bolt.Open
//     it) to restore.
//   - store/memory writes its own snapshot stream: memory.Restore reads it back into a
//     store to pass to New.
//
// Any other store answers ENOTIMPLEMENTED, saying it has no online backup: back that
// database up with its own tools. An error while writing (w failing, ctx ending) leaves a
// snapshot that must not be used.
func (s *Service) Backup(ctx context.Context, w io.Writer) error {
	if w == nil {
		return invalid("w", "w is required: the writer the snapshot is written to")
	}
	b, ok := s.core.store.(store.Backuper)
	if !ok {
		return &Error{Code: ENOTIMPLEMENTED, Message: fmt.Sprintf("the store (%T) has no online backup: back it up with its database's own tools", s.core.store)}
	}
	if err := b.Backup(ctx, w); err != nil {
		return s.finish(err)
	}
	return nil
}
