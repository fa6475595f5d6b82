-- Full text moves from FTS5 into the in-memory mirror (postings.rs): each document's hashed
-- terms are stored with its payload, the posting lists are built from them, and BM25 is
-- computed as FTS5 computed it. Rows written before this have no `terms`; the mirror reads
-- them from the text. (`secure_delete` is on, so the dropped tables' pages are zeroed.)
ALTER TABLE index_payload ADD COLUMN terms BLOB;
DROP TABLE index_fts;
DROP TABLE index_terms;

-- Retrieval asks whether index jobs wait in the namespaces it reads (`pending_jobs`).
CREATE INDEX jobs_pending_by_kind ON jobs (kind, namespace) WHERE dead = 0;
