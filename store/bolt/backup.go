package bolt

import (
	"context"
	"fmt"
	"io"

	bbolt "go.etcd.io/bbolt"

	"github.com/pixfoundry/payments/store"
)

var _ store.Backuper = (*Store)(nil)

// Backup writes a consistent copy of the whole bbolt file to w while the store keeps
// serving (store.Backuper): bbolt's Tx.WriteTo inside one read transaction, so the copy is
// the state of one commit. The copy is a bbolt file: save it and Open it.
//
// Commits go on during the backup, but the read transaction pins the pages it reads: the
// file cannot shrink them away, and a commit that has to grow the memory map waits until
// the backup ends. Write the snapshot somewhere fast (a local file) rather than through a
// slow client when the database is large and busy.
func (s *Store) Backup(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(func(tx *bbolt.Tx) error {
		if _, err := tx.WriteTo(store.ContextWriter(ctx, w)); err != nil {
			return fmt.Errorf("bolt store: backup: %w", err)
		}
		return nil
	})
}
