package payments

import "github.com/pixfoundry/payments/store"

// Paging limits.
const (
	DefaultLimit = 100     // page size when the caller gives none, as the real API's lists
	MaxLimit     = 1000    // largest page
	MaxSkip      = 100_000 // skipping costs in proportion to skip; use start/end beyond this
)

// ListParams select a page of a list: skip records, then return at most limit.
type ListParams struct {
	Skip  int
	Limit int // 0 means DefaultLimit
}

// PageInfo describes the page a list returned, as the real API does.
type PageInfo struct {
	Skip            int  `json:"skip"`
	Limit           int  `json:"limit"`
	TotalCount      int  `json:"totalCount"`
	HasPreviousPage bool `json:"hasPreviousPage"`
	HasNextPage     bool `json:"hasNextPage"`
}

func (p ListParams) check() (ListParams, error) {
	if p.Skip < 0 || p.Skip > MaxSkip {
		return p, invalid("skip", "skip must be between 0 and %d", MaxSkip)
	}
	if p.Limit < 0 || p.Limit > MaxLimit {
		return p, invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	return p, nil
}

// query is the newest-first query of an index for this page.
func (p ListParams) query(index string) store.Query {
	return store.Query{Index: index, Desc: true, Skip: p.Skip, Limit: p.Limit}
}

func (p ListParams) info(total int) PageInfo {
	return PageInfo{
		Skip:            p.Skip,
		Limit:           p.Limit,
		TotalCount:      total,
		HasPreviousPage: p.Skip > 0,
		HasNextPage:     p.Skip+p.Limit < total,
	}
}
