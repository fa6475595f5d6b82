-- Version 4: where each active leaf is filed for reconciliation (`MetadataStore::leaves_filed_under`),
-- read latest first per key. Keys are 64-bit hashes of the namespace and the key's words
-- (`rows::lookup_key_hash`), never the words; each entry carries the 64-bit signature of the leaf's
-- content words, by which a lookup ranks what it read. The adapter writes a leaf's entries with its
-- row from its summary (`rows::filed_entries`) and removes them when it stops being active.
-- `lookup_keys_version` records the rules the rows were made by; a process that connects to a
-- store made by other rules (or this migration's 0) files every active leaf again.

CREATE TABLE leaf_keys (
    key          BIGINT NOT NULL,
    observed_at  BIGINT NOT NULL,
    leaf         TEXT NOT NULL,
    words        BIGINT NOT NULL,
    PRIMARY KEY (key, observed_at, leaf)
);

CREATE TABLE lookup_keys_version (
    singleton  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
    version    INTEGER NOT NULL
);

INSERT INTO lookup_keys_version (version) VALUES (0);
