-- Version 4: where each active leaf is filed for reconciliation (`MetadataStore::leaves_filed_under`),
-- read latest first per key. Keys are 64-bit hashes of the namespace and the key's words
-- (`rows::lookup_key_hash`), never the words; each entry carries the 64-bit signature of the leaf's
-- content words, by which a lookup ranks what it read. The adapter writes a leaf's entries with its
-- row from its summary (`rows::filed_entries`) and removes them when it stops being active.
-- `lookup_keys_version` records the rules the rows were made by; a writer that opens a store made by
-- other rules (or this migration's 0) files every active leaf again.

CREATE TABLE leaf_keys (
    key          INTEGER NOT NULL,
    observed_at  INTEGER NOT NULL,
    leaf         TEXT NOT NULL,
    words        INTEGER NOT NULL,
    PRIMARY KEY (key, observed_at, leaf)
) STRICT, WITHOUT ROWID;

INSERT INTO counters (name, value) VALUES ('lookup_keys_version', 0);
