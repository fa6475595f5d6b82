-- Version 3: the order leaves were written in, per namespace, so a consolidation pass reads
-- only what changed since it last ran (`MetadataStore::leaves_written_after`).

CREATE INDEX leaves_by_written ON leaves (namespace, created_at, id);
