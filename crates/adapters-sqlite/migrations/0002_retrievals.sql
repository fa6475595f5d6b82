-- Version 2: what retrieval needs beyond version 1: recorded retrievals (`arbor retrieve
-- --record`, `arbor show-retrieval`), the access records they imply, and an index for a leaf's
-- neighbours in its tree. A snapshot holds ids, ranks and reasons as JSON, and the question; no
-- memory body.

CREATE TABLE retrievals (
    id          TEXT NOT NULL PRIMARY KEY,
    namespace   TEXT NOT NULL,
    at          INTEGER NOT NULL,
    snapshot    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE access (
    seq             INTEGER PRIMARY KEY,
    retrieval       TEXT NOT NULL,
    node            TEXT NOT NULL,
    namespace       TEXT NOT NULL,
    entered_context INTEGER NOT NULL,
    at              INTEGER NOT NULL
) STRICT;

CREATE INDEX access_by_node ON access (node, seq DESC);

-- Retrieval's tree-structure channel reads a strong hit's neighbours in its tree's timeline.
CREATE INDEX leaves_by_tree_time ON leaves (namespace, tree_id, observed_at, id);
