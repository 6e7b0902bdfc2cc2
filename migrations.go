package payments

import (
	"context"
	"errors"

	"github.com/pixfoundry/payments/store"
)

// Data migrations: a version that adds a structure older data lacks (an order for a refund
// in flight, a due-queue entry for an ACTIVE charge) fills it in when the store is opened,
// once per database. A marker record in the system space says a migration is done; a new
// database runs each one over nothing and gets its marker at once.
const (
	collMigrations   = "migrations" // system space: one marker per migration done
	migrationOrders1 = "orders-1"   // refunds IN_PROCESSING from before the order machine get orders
	migrationDue1    = "due-1"      // ACTIVE charges from before the due queue get their entries
	migrationLinks1  = "links-1"    // charges' paymentlinks records get the charge's id (chargeByLink)
	// charges' customer and subscription status index entries are renamed (withStatus)
	migrationChargeIndex1 = "charge-index-1"
	// transactions get the index entries of every filter combination (Transaction.indexes)
	migrationTransactionIndex1 = "transaction-index-1"
	// transactions' webhook audits move to their transactionWebhooks records
	migrationTransactionWebhooks = "transaction-webhooks-1"
	// customers get the e-mail and phone index entries (Customer.indexes)
	migrationCustomerIndex1 = "customer-index-1"
)

// migrations are the data migrations, in the order migrate runs them. Each lives in its
// noun's file and runs through migrateOnce; adding one is its function and a row here.
var migrations = []func(*Service, context.Context) error{
	(*Service).migrateOrders,
	(*Service).migrateOrderRoutes,
	(*Service).migrateDue,
	(*Service).migrateLinks,
	(*Service).migrateChargeIndexes,
	(*Service).migrateTransactionIndexes,
	(*Service).migrateTransactionWebhooks,
	(*Service).migratePixKeys,
	(*Service).migrateTxidRoutes,
	(*Service).migrateReceivedPix,
	(*Service).migrateCustomerIndexes,
}

// migrate runs the migrations in order, stopping at the first that fails. New runs it on
// every open.
func (s *Service) migrate(ctx context.Context) error {
	for _, run := range migrations {
		if err := run(s, ctx); err != nil {
			return err
		}
	}
	return nil
}

// migrateOnce runs fn for every company, a page of companies at a time, unless the
// migration name is marked done, and then marks it. fn must be idempotent: two processes
// opening one database at once may both run it, and a process that dies half way runs it
// again on the next open.
func (s *Service) migrateOnce(ctx context.Context, name string, fn func(co *Service) error) error {
	done := false
	err := s.view(ctx, func(t *txn) error {
		_, err := t.tx.Get(collMigrations, systemSpace, name)
		done, err = found(storeErr(err, "migration"))
		return err
	})
	if err != nil || done {
		return err
	}
	for skip := 0; ; skip += duePage {
		var ids []string
		err := s.view(ctx, func(t *txn) error {
			ids = nil
			page, err := t.tx.List(collCompanies, systemSpace, store.Query{Index: indexAll, Skip: skip, Limit: duePage})
			if err != nil {
				return internal(err)
			}
			for _, r := range page.Records {
				ids = append(ids, r.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := fn(&Service{core: s.core, company: id}); err != nil {
				return err
			}
		}
		if len(ids) < duePage {
			break
		}
	}
	return s.update(ctx, func(t *txn) error {
		err := t.tx.Insert(collMigrations, systemSpace, store.Record{ID: name, Data: []byte(`{}`)})
		if errors.Is(err, store.ErrConflict) {
			return nil // another process did it
		}
		return storeErr(err, "migration")
	})
}
