-- Arbor's Postgres schema, version 1. The same columns as the embedded schema (see
-- `arbor_ports::rows`): timestamps are BIGINT nanoseconds since the Unix epoch, sensitivity is
-- 0 normal, 1 sensitive, 2 restricted; text sorts byte-wise (COLLATE "C"), as written. No index holds words: subjects are indexed by hash and
-- full text by hashed tokens, so forgotten words cannot linger in index pages.

CREATE TABLE trees (
    namespace   TEXT COLLATE "C" NOT NULL,
    tree_id     TEXT COLLATE "C" NOT NULL,
    entity      TEXT COLLATE "C",
    title       TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL,
    root        TEXT COLLATE "C",
    root_stale  BOOLEAN NOT NULL,
    PRIMARY KEY (namespace, tree_id)
);

CREATE TABLE entities (
    id           TEXT COLLATE "C" PRIMARY KEY,
    namespace    TEXT COLLATE "C" NOT NULL,
    entity_type  TEXT COLLATE "C" NOT NULL,
    slug         TEXT COLLATE "C" NOT NULL,
    name         TEXT COLLATE "C" NOT NULL,
    aliases      TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    CONSTRAINT entities_slug UNIQUE (namespace, slug)
);

-- The distinct words each entity is known by, for the shortlist.
CREATE TABLE entity_terms (
    namespace  TEXT COLLATE "C" NOT NULL,
    term       TEXT COLLATE "C" NOT NULL,
    entity_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (namespace, term, entity_id)
);

CREATE TABLE leaves (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    lineage             TEXT COLLATE "C" NOT NULL,
    version             BIGINT NOT NULL,
    namespace           TEXT COLLATE "C" NOT NULL,
    category            TEXT COLLATE "C" NOT NULL,
    tree_id             TEXT COLLATE "C" NOT NULL,
    kind                TEXT COLLATE "C" NOT NULL,
    title               TEXT COLLATE "C" NOT NULL,
    summary             TEXT COLLATE "C" NOT NULL,
    subject             TEXT COLLATE "C",
    fingerprint         TEXT COLLATE "C" NOT NULL,
    body_path           TEXT COLLATE "C" NOT NULL,
    body_sha256         TEXT COLLATE "C" NOT NULL,
    observed_at         BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    valid_from          BIGINT,
    valid_to            BIGINT,
    expires_at          BIGINT,
    known_from          BIGINT,
    known_until         BIGINT,
    confidence          DOUBLE PRECISION NOT NULL,
    salience            DOUBLE PRECISION NOT NULL,
    sensitivity         SMALLINT NOT NULL,
    status              TEXT COLLATE "C" NOT NULL,
    supersedes          TEXT COLLATE "C",
    superseded_by       TEXT COLLATE "C",
    provenance          TEXT COLLATE "C" NOT NULL,
    labels              TEXT COLLATE "C" NOT NULL,
    entity_primary      TEXT COLLATE "C",
    entities_secondary  TEXT COLLATE "C" NOT NULL,
    parent              TEXT COLLATE "C",
    subject_hash        TEXT COLLATE "C"
);

CREATE INDEX leaves_by_fingerprint ON leaves (namespace, tree_id, fingerprint);
CREATE INDEX leaves_by_subject ON leaves (namespace, tree_id, subject_hash) WHERE subject_hash IS NOT NULL;
CREATE INDEX leaves_unsealed ON leaves (namespace, tree_id) WHERE parent IS NULL;
CREATE INDEX leaves_by_time ON leaves (namespace, observed_at DESC, id DESC);
-- At most one live leaf per (namespace, tree, fingerprint).
CREATE UNIQUE INDEX leaves_live_fingerprint ON leaves (namespace, tree_id, fingerprint)
    WHERE status IN ('active', 'candidate', 'rejected');

CREATE TABLE summaries (
    id                TEXT COLLATE "C" PRIMARY KEY,
    namespace         TEXT COLLATE "C" NOT NULL,
    category          TEXT COLLATE "C" NOT NULL,
    tree_id           TEXT COLLATE "C" NOT NULL,
    role              TEXT COLLATE "C" NOT NULL,
    height            BIGINT NOT NULL,
    parent            TEXT COLLATE "C",
    children          TEXT COLLATE "C" NOT NULL,
    title             TEXT COLLATE "C" NOT NULL,
    summary           TEXT COLLATE "C" NOT NULL,
    body_path         TEXT COLLATE "C" NOT NULL,
    body_sha256       TEXT COLLATE "C" NOT NULL,
    time_range_start  BIGINT,
    time_range_end    BIGINT,
    sealed_at         BIGINT NOT NULL,
    labels            TEXT COLLATE "C" NOT NULL,
    sensitivity       SMALLINT NOT NULL,
    status            TEXT COLLATE "C" NOT NULL,
    retired_at        BIGINT,
    replaces          TEXT COLLATE "C"
);

CREATE INDEX summaries_by_tree ON summaries (namespace, tree_id, status);

-- The outbox. Workers in any number of processes claim with FOR UPDATE SKIP LOCKED.
CREATE TABLE jobs (
    id            TEXT COLLATE "C" PRIMARY KEY,
    kind          TEXT COLLATE "C" NOT NULL,
    namespace     TEXT COLLATE "C" NOT NULL,
    tree_id       TEXT COLLATE "C",
    nodes         TEXT COLLATE "C" NOT NULL,
    key           TEXT COLLATE "C" NOT NULL,
    attempts      BIGINT NOT NULL,
    run_after     BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_error    TEXT COLLATE "C",
    lease_worker  TEXT COLLATE "C",
    lease_until   BIGINT,
    dead          BOOLEAN NOT NULL
);

CREATE INDEX jobs_runnable ON jobs (run_after, id) WHERE NOT dead;
CREATE INDEX jobs_by_key ON jobs (key) WHERE lease_until IS NULL AND NOT dead;

CREATE TABLE audit (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              BIGINT NOT NULL,
    action          TEXT COLLATE "C" NOT NULL,
    namespace       TEXT COLLATE "C" NOT NULL,
    node            TEXT COLLATE "C",
    content_sha256  TEXT COLLATE "C",
    actor           TEXT COLLATE "C" NOT NULL,
    policy_version  TEXT COLLATE "C" NOT NULL
);

CREATE INDEX audit_by_namespace ON audit (namespace, seq DESC);

-- Body files announced before they are written; cleared in the commit that refers to them.
CREATE TABLE body_intents (
    id          TEXT COLLATE "C" PRIMARY KEY,
    owner       TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL,
    paths       TEXT COLLATE "C" NOT NULL
);

-- The search index projection: the filter columns, the hashed terms (a tsvector whose lexemes
-- are token hashes, positions standing for occurrences), and the vector with the embedder that
-- made it. One HNSW index per embedder is created when its first vector arrives (see index.rs).
CREATE TABLE index_docs (
    node_id      TEXT COLLATE "C" PRIMARY KEY,
    node_kind    TEXT COLLATE "C" NOT NULL,
    namespace    TEXT COLLATE "C" NOT NULL,
    category     TEXT COLLATE "C" NOT NULL,
    tree_id      TEXT COLLATE "C" NOT NULL,
    kind         TEXT COLLATE "C",
    state        TEXT COLLATE "C" NOT NULL,
    valid_from   BIGINT,
    valid_to     BIGINT,
    known_from   BIGINT,
    known_until  BIGINT,
    expires_at   BIGINT,
    sensitivity  SMALLINT NOT NULL,
    time_start   BIGINT NOT NULL,
    time_end     BIGINT NOT NULL,
    terms        TSVECTOR NOT NULL,
    term_count   INTEGER NOT NULL,
    embedder     TEXT COLLATE "C",
    embedding    VECTOR
);

-- fastupdate off: entries go straight into the tree. With the default pending list every search
-- scans all recent, unsorted entries until a vacuum merges them, which slows a busy index by
-- several times.
CREATE INDEX index_docs_terms ON index_docs USING gin (terms) WITH (fastupdate = off);
CREATE INDEX index_docs_scope ON index_docs (namespace, state);

-- How many indexed documents hold each hashed term (BM25's document frequency, and what
-- `TermSelection::Rarest` ranks by), and the corpus totals BM25 normalizes by.
CREATE TABLE index_terms (
    term  TEXT COLLATE "C" PRIMARY KEY,
    docs  BIGINT NOT NULL
);

CREATE TABLE index_totals (
    singleton  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
    docs       BIGINT NOT NULL,
    tokens     BIGINT NOT NULL
);

INSERT INTO index_totals (docs, tokens) VALUES (0, 0);
