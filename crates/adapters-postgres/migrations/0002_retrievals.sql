-- Version 2: what retrieval needs beyond version 1: recorded retrievals (`arbor retrieve
-- --record`, `arbor show-retrieval`), the access records they imply, and an index for a leaf's
-- neighbours in its tree. A snapshot holds ids, ranks and reasons as JSON, and the question; no
-- memory body.

CREATE TABLE retrievals (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    namespace   TEXT COLLATE "C" NOT NULL,
    at          BIGINT NOT NULL,
    snapshot    TEXT NOT NULL
);

CREATE TABLE access (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    retrieval       TEXT COLLATE "C" NOT NULL,
    node            TEXT COLLATE "C" NOT NULL,
    namespace       TEXT COLLATE "C" NOT NULL,
    entered_context BOOLEAN NOT NULL,
    at              BIGINT NOT NULL
);

CREATE INDEX access_by_node ON access (node, seq DESC);

-- Retrieval's tree-structure channel reads a strong hit's neighbours in its tree's timeline.
CREATE INDEX leaves_by_tree_time ON leaves (namespace, tree_id, observed_at, id);
