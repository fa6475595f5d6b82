-- Arbor's embedded schema, version 1.
--
-- Timestamps are INTEGER nanoseconds since the Unix epoch. Sensitivity is 0 normal, 1 sensitive,
-- 2 restricted, so it orders. No index holds words: subjects are indexed by hash, full text by
-- hashed tokens, so forgotten words cannot linger in index pages.

CREATE TABLE trees (
    namespace   TEXT NOT NULL,
    tree_id     TEXT NOT NULL,
    entity      TEXT,
    title       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    root        TEXT,
    root_stale  INTEGER NOT NULL,
    PRIMARY KEY (namespace, tree_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE entities (
    id          TEXT NOT NULL PRIMARY KEY,
    namespace   TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    slug        TEXT NOT NULL,
    name        TEXT NOT NULL,
    aliases     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (namespace, slug)
) STRICT;

-- The distinct words each entity is known by, for the shortlist.
CREATE TABLE entity_terms (
    namespace   TEXT NOT NULL,
    term        TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    PRIMARY KEY (namespace, term, entity_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE leaves (
    id                  TEXT NOT NULL UNIQUE,
    lineage             TEXT NOT NULL,
    version             INTEGER NOT NULL,
    namespace           TEXT NOT NULL,
    category            TEXT NOT NULL,
    tree_id             TEXT NOT NULL,
    kind                TEXT NOT NULL,
    title               TEXT NOT NULL,
    summary             TEXT NOT NULL,
    subject             TEXT,
    subject_hash        TEXT,
    fingerprint         TEXT NOT NULL,
    body_path           TEXT NOT NULL,
    body_sha256         TEXT NOT NULL,
    observed_at         INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    valid_from          INTEGER,
    valid_to            INTEGER,
    expires_at          INTEGER,
    known_from          INTEGER,
    known_until         INTEGER,
    confidence          REAL NOT NULL,
    salience            REAL NOT NULL,
    sensitivity         INTEGER NOT NULL,
    status              TEXT NOT NULL,
    supersedes          TEXT,
    superseded_by       TEXT,
    provenance          TEXT NOT NULL,
    labels              TEXT NOT NULL,
    entity_primary      TEXT,
    entities_secondary  TEXT NOT NULL,
    parent              TEXT
) STRICT;

CREATE INDEX leaves_by_fingerprint ON leaves (namespace, tree_id, fingerprint);
CREATE INDEX leaves_by_subject ON leaves (namespace, tree_id, subject_hash) WHERE subject_hash IS NOT NULL;
CREATE INDEX leaves_unsealed ON leaves (namespace, tree_id) WHERE parent IS NULL;
CREATE INDEX leaves_by_time ON leaves (namespace, observed_at DESC, id DESC);
-- At most one live leaf per (namespace, tree, fingerprint).
CREATE UNIQUE INDEX leaves_live_fingerprint ON leaves (namespace, tree_id, fingerprint)
    WHERE status IN ('active', 'candidate', 'rejected');

CREATE TABLE summaries (
    id                TEXT NOT NULL UNIQUE,
    namespace         TEXT NOT NULL,
    category          TEXT NOT NULL,
    tree_id           TEXT NOT NULL,
    role              TEXT NOT NULL,
    height            INTEGER NOT NULL,
    parent            TEXT,
    children          TEXT NOT NULL,
    title             TEXT NOT NULL,
    summary           TEXT NOT NULL,
    body_path         TEXT NOT NULL,
    body_sha256       TEXT NOT NULL,
    time_range_start  INTEGER,
    time_range_end    INTEGER,
    sealed_at         INTEGER NOT NULL,
    labels            TEXT NOT NULL,
    sensitivity       INTEGER NOT NULL,
    status            TEXT NOT NULL,
    retired_at        INTEGER,
    replaces          TEXT
) STRICT;

CREATE INDEX summaries_by_tree ON summaries (namespace, tree_id, status);

CREATE TABLE jobs (
    id            TEXT NOT NULL PRIMARY KEY,
    kind          TEXT NOT NULL,
    namespace     TEXT NOT NULL,
    tree_id       TEXT,
    nodes         TEXT NOT NULL,
    key           TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    run_after     INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    last_error    TEXT,
    lease_worker  TEXT,
    lease_until   INTEGER,
    dead          INTEGER NOT NULL
) STRICT;

CREATE INDEX jobs_runnable ON jobs (dead, run_after, id);
CREATE INDEX jobs_by_key ON jobs (key) WHERE lease_until IS NULL AND dead = 0;

CREATE TABLE audit (
    seq             INTEGER PRIMARY KEY,
    at              INTEGER NOT NULL,
    action          TEXT NOT NULL,
    namespace       TEXT NOT NULL,
    node            TEXT,
    content_sha256  TEXT,
    actor           TEXT NOT NULL,
    policy_version  TEXT NOT NULL
) STRICT;

CREATE INDEX audit_by_namespace ON audit (namespace, seq DESC);

-- The search index projection: `index_docs` holds what the filter reads (mirrored in memory,
-- see mirror.rs), `index_payload` the text and vectors. `seq` orders changes so a process can
-- catch up with what another wrote.
CREATE TABLE index_docs (
    node_id      TEXT NOT NULL UNIQUE,
    node_kind    TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    category     TEXT NOT NULL,
    tree_id      TEXT NOT NULL,
    kind         TEXT,
    state        TEXT NOT NULL,
    valid_from   INTEGER,
    valid_to     INTEGER,
    known_from   INTEGER,
    known_until  INTEGER,
    expires_at   INTEGER,
    sensitivity  INTEGER NOT NULL,
    time_start   INTEGER NOT NULL,
    time_end     INTEGER NOT NULL,
    seq          INTEGER NOT NULL
) STRICT;

CREATE TABLE index_payload (
    doc       INTEGER PRIMARY KEY,
    text      TEXT NOT NULL,
    embedder  TEXT,
    vector    BLOB
) STRICT;

CREATE INDEX index_docs_by_seq ON index_docs (seq);

-- Full text over hashed tokens (see `index.rs`): BM25 without storing a single word.
CREATE VIRTUAL TABLE index_fts USING fts5(
    terms,
    content = '',
    contentless_delete = 1,
    tokenize = 'ascii'
);
INSERT INTO index_fts (index_fts, rank) VALUES ('secure-delete', 1);

-- How many indexed documents hold each hashed term: lets a long query keep only its most
-- distinctive terms without walking every posting list (FTS5's own vocabulary table does).
CREATE TABLE index_terms (
    term  INTEGER PRIMARY KEY,
    docs  INTEGER NOT NULL CHECK (docs > 0)
) STRICT;

-- Rows removed from the index, by change sequence, so other processes can drop them too.
CREATE TABLE index_removed (
    seq      INTEGER PRIMARY KEY,
    doc      INTEGER NOT NULL,
    node_id  TEXT NOT NULL
) STRICT;

CREATE TABLE counters (
    name   TEXT NOT NULL PRIMARY KEY,
    value  INTEGER NOT NULL
) STRICT;

INSERT INTO counters (name, value) VALUES ('index_seq', 0), ('index_generation', 0);

-- Body files announced before they are written; cleared in the commit that refers to them.
CREATE TABLE body_intents (
    id          TEXT NOT NULL PRIMARY KEY,
    owner       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    paths       TEXT NOT NULL
) STRICT;
