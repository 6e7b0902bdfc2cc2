-- The store's tables. Every caller-given string (company, id, key, index name and sort
-- value) is bytea: bytewise order without collation settings, and NUL bytes allowed.
CREATE TABLE payments_records (
	collection text NOT NULL,
	company bytea NOT NULL,
	id bytea NOT NULL,
	meta bytea NOT NULL, -- the record's unique keys and index entries, encoded
	data bytea NOT NULL,
	PRIMARY KEY (collection, company, id)
);

CREATE TABLE payments_keys (
	collection text NOT NULL,
	company bytea NOT NULL,
	key bytea NOT NULL,
	id bytea NOT NULL,
	PRIMARY KEY (collection, company, key)
);

CREATE TABLE payments_index (
	collection text NOT NULL,
	company bytea NOT NULL,
	name bytea NOT NULL,
	sort bytea NOT NULL,
	id bytea NOT NULL,
	PRIMARY KEY (collection, company, name, sort, id)
);

-- Kept entry counts of each index, split into shards by record id so that concurrent
-- writers of one index rarely rewrite the same row; the total is the sum of the shards.
CREATE TABLE payments_counts (
	collection text NOT NULL,
	company bytea NOT NULL,
	name bytea NOT NULL,
	shard integer NOT NULL,
	n bigint NOT NULL,
	PRIMARY KEY (collection, company, name, shard)
);

CREATE TABLE payments_counters (
	collection text NOT NULL,
	company bytea NOT NULL,
	name bytea NOT NULL,
	value bigint NOT NULL,
	PRIMARY KEY (collection, company, name)
);
