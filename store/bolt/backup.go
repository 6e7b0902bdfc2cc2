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
// Commits go on during the backup, but the read transaction pins the pages it reads: pages
// the commits free meanwhile are not reused until it ends, so the file grows by what they
// write. The store maps twice the file's size when it opens (see mapSize), so that growth
// does not need a larger memory map, which would wait for the backup to end and hold up
// every other call while it waited (TestBackup_WritesGoOn); a file that more than doubles
// during one process's life can still meet that wait once per 1 GiB it grows. Write the
// snapshot somewhere fast (a local file) rather than through a slow client when the
// database is large and busy.
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
