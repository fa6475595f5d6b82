-- Searching leaves SQL: each process answers full text and vectors from an in-memory mirror
-- of this table (the arbor-search engine, which the SQLite backend runs too), caught up
-- through a change sequence. BM25 in SQL scored every document holding a question's terms, and
-- HNSW indexes made every write slow; both grew with the store.
--
-- Each document now carries a number the mirror knows it by (`doc`), the change sequence of
-- its last write (`seq`, taken under the index writers' advisory lock, so sequence order is
-- commit order) and its hashed terms with their counts (`doc_terms`). Rows written before this
-- keep their tsvector until they are next written; the mirror reads their terms from it.
ALTER TABLE index_docs
    ADD COLUMN doc BIGINT GENERATED ALWAYS AS IDENTITY,
    ADD COLUMN seq BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN doc_terms BYTEA,
    ALTER COLUMN terms DROP NOT NULL,
    ALTER COLUMN term_count DROP NOT NULL;
CREATE UNIQUE INDEX index_docs_doc ON index_docs (doc);
CREATE INDEX index_docs_seq ON index_docs (seq);

-- Removals, by the change sequence, for the mirrors of other processes.
CREATE TABLE index_removed (
    seq  BIGINT PRIMARY KEY,
    doc  BIGINT NOT NULL
);

CREATE SEQUENCE index_seq;

-- Bumped by every clear: a mirror that saw another generation loads afresh.
CREATE TABLE index_generation (
    singleton  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
    value      BIGINT NOT NULL
);
INSERT INTO index_generation (value) VALUES (0);

-- What only the searches in SQL used.
DROP INDEX index_docs_terms;
DROP INDEX index_docs_scope;
DROP TABLE index_terms;
DROP TABLE index_totals;
DO $$
DECLARE
    name TEXT;
BEGIN
    FOR name IN SELECT indexname FROM pg_indexes
                WHERE schemaname = current_schema() AND indexname LIKE 'index\_docs\_hnsw\_%'
    LOOP
        EXECUTE format('DROP INDEX %I', name);
    END LOOP;
END $$;
