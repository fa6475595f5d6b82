-- Version 5: every version of one memory by lineage (`MetadataStore::versions`), so restoring
-- a memory finds its latest version without walking its history.
CREATE INDEX leaves_by_lineage ON leaves (namespace, lineage);
