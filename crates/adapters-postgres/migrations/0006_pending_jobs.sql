-- Retrieval asks whether index jobs wait in the namespaces it reads (`pending_jobs`).
CREATE INDEX jobs_pending_by_kind ON jobs (kind, namespace) WHERE NOT dead;
