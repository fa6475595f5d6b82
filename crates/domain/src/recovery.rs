//! Rebuilding rows from body documents, for a store whose database was lost or replaced while
//! its markdown survived (`arbor fsck --rebuild-from-bodies`).
//!
//! A leaf's document records the leaf as it was written ([`markdown::render_leaf`]). What a
//! person decided later (a confirmation, a rejection, a resolved conflict) lives only in the
//! lost database, so recovery settles each memory by one rule: **a recovered memory is never
//! more visible than it was written.** A version written active is current again unless a
//! later version written active replaced it; one written as a candidate waits for a person
//! again (a rejected suggestion is proposed once more, and a confirmed one asks to be
//! confirmed again — the safe direction). Documents from before the status was recorded count
//! as active only when a person typed them in. Sealed summaries are not restored: they are
//! derived, and the trees are sealed anew from the leaves.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::admission::is_manual_entry;
use crate::claims::LeafClaims;
use crate::entity::{EntitySlug, EntityType};
use crate::id::{EntityId, LeafId, ScopeId, Version};
use crate::lifecycle::LeafStatus;
use crate::markdown::{self, Document};
use crate::model::{
    Actor, Category, Confidence, ContentHash, EntityLinks, Label, LeafRecord, MemoryKind, POLICY_VERSION, Provenance,
    Salience, SourceRef, SubjectKey, TreeId,
};
use crate::namespace::Namespace;
use crate::paths::BodyPath;
use crate::sensitivity::Sensitivity;
use crate::text::fingerprint;
use crate::time::{KnownSpan, Timestamp, Validity};

/// A leaf read back from its document, with what its tree and entity rows need.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredLeaf {
    /// The leaf as written; [`settle`] decides its status and links.
    pub record: LeafRecord,
    /// The status it was written with (`None` in documents from before it was recorded).
    pub written_status: Option<LeafStatus>,
    pub tree_title: String,
    pub entity: Option<RecoveredEntity>,
}

/// The entity a recovered leaf was filed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredEntity {
    pub id: EntityId,
    pub name: String,
    pub entity_type: EntityType,
}

/// Why a document could not be read back as a leaf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecoveryError {
    #[error("not an Arbor body document: {0}")]
    NotADocument(#[from] markdown::MarkdownError),
    #[error("the document is not UTF-8")]
    NotText,
    #[error("its frontmatter has no usable `{field}`: {reason}")]
    Field { field: &'static str, reason: String },
    #[error("it says it is {claimed}, but it lies at {path}")]
    Misplaced { claimed: String, path: String },
}

fn field<T: DeserializeOwned>(doc: &Document, name: &'static str) -> Result<T, RecoveryError> {
    let value = doc.meta.get(name).ok_or(RecoveryError::Field { field: name, reason: "missing".into() })?;
    serde_json::from_value(value.clone()).map_err(|e| RecoveryError::Field { field: name, reason: e.to_string() })
}

fn optional<T: DeserializeOwned>(doc: &Document, name: &'static str) -> Result<Option<T>, RecoveryError> {
    match doc.meta.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => field(doc, name).map(Some),
    }
}

/// Reads a leaf back from the document at `path`. The document must lie where a leaf with its
/// id, namespace and tree would (a copy elsewhere is not taken for the leaf).
pub fn leaf_from_document(path: &BodyPath, bytes: &[u8]) -> Result<RecoveredLeaf, RecoveryError> {
    let text = std::str::from_utf8(bytes).map_err(|_| RecoveryError::NotText)?;
    let doc = markdown::parse(text)?;
    let id: LeafId = field(&doc, "id")?;
    let namespace: Namespace = field(&doc, "namespace")?;
    let category: Category = field(&doc, "category")?;
    let tree_id: TreeId = field(&doc, "tree")?;
    let expected = BodyPath::leaf(&namespace, category, &tree_id, &id);
    if &expected != path {
        return Err(RecoveryError::Misplaced { claimed: expected.to_string(), path: path.to_string() });
    }
    let title: String = field(&doc, "title")?;
    let body = crate::markdown::prose_after_frontmatter(&doc.body);
    let source_short: String = field(&doc, "source")?;
    let source: SourceRef = optional(&doc, "provenance")?.unwrap_or_else(|| source_from_short(&source_short));
    let actor: Actor = optional(&doc, "actor")?.unwrap_or(match source {
        SourceRef::UserEntry => Actor::User,
        SourceRef::Integration { .. } => Actor::Integration,
        SourceRef::Save => Actor::Agent,
        _ => Actor::User,
    });
    let observed_at: Timestamp = field(&doc, "observed_at")?;
    let valid_from: Option<Timestamp> = optional(&doc, "valid_from")?;
    let valid_to: Option<Timestamp> = optional(&doc, "valid_to")?;
    let validity = Validity::stored(valid_from, valid_to)
        .map_err(|e| RecoveryError::Field { field: "valid_to", reason: e.to_string() })?;
    let entity_id: Option<EntityId> = optional(&doc, "entity")?;
    let entity = match (&entity_id, optional::<String>(&doc, "entity_name")?) {
        (Some(id), Some(name)) => Some(RecoveredEntity {
            id: id.clone(),
            name,
            entity_type: optional(&doc, "entity_type")?.unwrap_or(EntityType::Topic),
        }),
        // Older documents name the entity by id only: its slug, from the tree id, reads as a
        // name ("project-atlas" -> "Project Atlas").
        (Some(id), None) => {
            Some(RecoveredEntity { id: id.clone(), name: name_from_slug(&tree_id), entity_type: EntityType::Topic })
        }
        (None, _) => None,
    };
    let tree_title: String = optional(&doc, "tree_title")?.unwrap_or_else(|| match &entity {
        Some(entity) => entity.name.clone(),
        None => "Uncategorized".to_owned(),
    });
    let written_status: Option<LeafStatus> = optional(&doc, "status")?;
    let record = LeafRecord {
        id,
        lineage: field(&doc, "lineage")?,
        version: field::<Version>(&doc, "version")?,
        namespace,
        category,
        tree_id,
        kind: field::<MemoryKind>(&doc, "kind")?,
        title,
        summary: crate::model::leaf_summary(&body),
        subject: optional::<SubjectKey>(&doc, "subject")?,
        fingerprint: optional::<ContentHash>(&doc, "fingerprint")?.unwrap_or_else(|| fingerprint(&body)),
        body_path: path.clone(),
        body_sha256: ContentHash::of(bytes),
        observed_at,
        created_at: field(&doc, "created_at")?,
        validity,
        expires_at: optional(&doc, "expires_at")?,
        known: KnownSpan::NEVER,
        confidence: Confidence::saturating(field::<f32>(&doc, "confidence")?),
        salience: Salience::saturating(field::<f32>(&doc, "salience")?),
        sensitivity: field::<Sensitivity>(&doc, "sensitivity")?,
        status: LeafStatus::Candidate,
        supersedes: optional(&doc, "supersedes")?,
        superseded_by: None,
        provenance: Provenance {
            source,
            actor,
            source_sha256: field(&doc, "source_sha256")?,
            extractor: field(&doc, "extractor")?,
            policy_version: optional(&doc, "policy_version")?.unwrap_or_else(|| POLICY_VERSION.to_owned()),
        },
        labels: optional::<Vec<Label>>(&doc, "labels")?.unwrap_or_default(),
        entities: EntityLinks {
            primary: entity_id,
            secondary: optional::<Vec<EntityId>>(&doc, "secondary_entities")?.unwrap_or_default(),
        },
        parent: None,
        // The claims are the text's: read again, as they were when it was written.
        claims: LeafClaims::read(&body),
    };
    Ok(RecoveredLeaf { record, written_status, tree_title, entity })
}

/// A source from the short form older documents recorded (`message:m-1`, `import:crm`, …).
/// What the short form loses (a message's conversation, a task's event) stays unknown.
fn source_from_short(short: &str) -> SourceRef {
    let (kind, rest) = short.split_once(':').unwrap_or((short, ""));
    match kind {
        "user-entry" => SourceRef::UserEntry,
        "save" => SourceRef::Save,
        "message" => SourceRef::Message { conversation: None, message_id: rest.to_owned() },
        "task" => SourceRef::Task { task_id: rest.to_owned(), event_id: None },
        "run" => match ScopeId::parse(rest) {
            Ok(run) => SourceRef::Run { run },
            Err(_) => SourceRef::Import { origin: short.to_owned() },
        },
        "import" => SourceRef::Import { origin: rest.to_owned() },
        // A promotion or a conclusion names more than its short form keeps.
        "promotion" | "experiment" | "" => SourceRef::Import { origin: format!("recovered {short}") },
        system => SourceRef::Integration { system: system.to_owned(), record_id: rest.to_owned() },
    }
}

fn name_from_slug(tree: &TreeId) -> String {
    let slug = tree.as_str().split_once(':').map(|(_, s)| s).unwrap_or(tree.as_str());
    slug.split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The status a version gets back when nothing later replaced it: what it was written with,
/// or, for documents that did not record it, active only if a person typed it in.
fn as_written(leaf: &RecoveredLeaf) -> LeafStatus {
    match leaf.written_status {
        // A version written already replaced (an earlier event of the batch that replaced it)
        // was current once: it takes its place in its lineage like any active version, and
        // is history again below.
        Some(LeafStatus::Active | LeafStatus::Superseded) => LeafStatus::Active,
        Some(_) => LeafStatus::Candidate,
        None if is_manual_entry(leaf.record.provenance.actor, &leaf.record.provenance.source) => LeafStatus::Active,
        None => LeafStatus::Candidate,
    }
}

/// Settles the statuses and links of recovered leaves by the rule of this module, so that the
/// store's invariants hold again: in each memory (lineage) the latest version written active
/// is current and the earlier ones are its history; candidates stay candidates; a leaf that
/// another current leaf says it replaced is history too; and in each tree at most one current
/// leaf per subject and one live leaf per fingerprint remain (the newest keeps its place; the
/// others become history, or are archived when they were only suggestions); and a current leaf
/// that a consolidation pass retired in favour of another current one (`retired`: pairs of
/// retired and kept ids, as its reports record them) is history again. Known time starts at
/// each leaf's creation.
pub fn settle(mut leaves: Vec<RecoveredLeaf>, retired: &[(LeafId, LeafId)]) -> Vec<RecoveredLeaf> {
    leaves.sort_by(|a, b| {
        (&a.record.namespace.to_string(), &a.record.lineage, a.record.version, &a.record.id).cmp(&(
            &b.record.namespace.to_string(),
            &b.record.lineage,
            b.record.version,
            &b.record.id,
        ))
    });
    for leaf in &mut leaves {
        leaf.record.status = as_written(leaf);
    }
    // Within a lineage, every version written active before the latest one written active
    // was replaced by the next version written active.
    let mut by_lineage: BTreeMap<(String, LeafId), Vec<usize>> = BTreeMap::new();
    for (i, leaf) in leaves.iter().enumerate() {
        by_lineage.entry((leaf.record.namespace.to_string(), leaf.record.lineage.clone())).or_default().push(i);
    }
    let mut replaced_by: BTreeMap<usize, usize> = BTreeMap::new();
    for versions in by_lineage.values() {
        let active: Vec<usize> =
            versions.iter().copied().filter(|&i| leaves[i].record.status == LeafStatus::Active).collect();
        for pair in active.windows(2) {
            replaced_by.insert(pair[0], pair[1]);
        }
    }
    // A current leaf that says which leaf it replaced (another memory about the same subject).
    let index: BTreeMap<LeafId, usize> = leaves.iter().enumerate().map(|(i, l)| (l.record.id.clone(), i)).collect();
    for (i, leaf) in leaves.iter().enumerate() {
        if leaf.record.status != LeafStatus::Active {
            continue;
        }
        if let Some(&old) = leaf.record.supersedes.as_ref().and_then(|id| index.get(id))
            && leaves[old].record.status == LeafStatus::Active
            && old != i
        {
            replaced_by.entry(old).or_insert(i);
        }
    }
    // What consolidation retired, when both are still as they were then: current.
    for (old, kept) in retired {
        if let (Some(&old), Some(&kept)) = (index.get(old), index.get(kept))
            && leaves[old].record.status == LeafStatus::Active
            && leaves[kept].record.status == LeafStatus::Active
            && old != kept
        {
            replaced_by.entry(old).or_insert(kept);
        }
    }
    // A version written already replaced stays history even when what replaced it is not
    // among the documents (never more visible than written).
    let mut replaced_unknown: BTreeSet<usize> = BTreeSet::new();
    for (i, leaf) in leaves.iter_mut().enumerate() {
        if leaf.written_status == Some(LeafStatus::Superseded) && !replaced_by.contains_key(&i) {
            leaf.record.status = LeafStatus::Superseded;
            replaced_unknown.insert(i);
        }
    }
    // One current leaf per (tree, subject) and one live leaf per (tree, fingerprint): the
    // newest stays.
    let mut order: Vec<usize> = (0..leaves.len()).collect();
    order.sort_by(|&a, &b| {
        (leaves[b].record.created_at, &leaves[b].record.id).cmp(&(leaves[a].record.created_at, &leaves[a].record.id))
    });
    let mut current_subjects: BTreeMap<(String, TreeId, SubjectKey), usize> = BTreeMap::new();
    let mut live_fingerprints: BTreeMap<(String, TreeId, ContentHash), usize> = BTreeMap::new();
    let mut demoted: BTreeSet<usize> = BTreeSet::new();
    for &i in &order {
        let record = &leaves[i].record;
        let status = if replaced_by.contains_key(&i) { LeafStatus::Superseded } else { record.status };
        let tree = (record.namespace.to_string(), record.tree_id.clone());
        if status == LeafStatus::Active
            && let Some(subject) = &record.subject
        {
            let key = (tree.0.clone(), tree.1.clone(), subject.clone());
            match current_subjects.get(&key) {
                Some(&newer) => {
                    replaced_by.insert(i, newer);
                    continue;
                }
                None => {
                    current_subjects.insert(key, i);
                }
            }
        }
        if matches!(status, LeafStatus::Active | LeafStatus::Candidate) {
            let key = (tree.0, tree.1, record.fingerprint.clone());
            match live_fingerprints.get(&key) {
                Some(&newer) if status == LeafStatus::Active => {
                    replaced_by.insert(i, newer);
                }
                Some(_) => {
                    demoted.insert(i);
                }
                None => {
                    live_fingerprints.insert(key, i);
                }
            }
        }
    }
    let successors: BTreeMap<usize, (LeafId, Timestamp, Timestamp)> = replaced_by
        .iter()
        .map(|(&old, &new)| {
            let successor = &leaves[new].record;
            let from = successor.validity.valid_from.unwrap_or(successor.observed_at);
            (old, (successor.id.clone(), from, successor.created_at))
        })
        .collect();
    for (i, leaf) in leaves.iter_mut().enumerate() {
        let record = &mut leaf.record;
        if let Some((successor, valid_from, known_until)) = successors.get(&i) {
            record.status = LeafStatus::Superseded;
            record.superseded_by = Some(successor.clone());
            record.validity = record.validity.ended_at(*valid_from);
            record.known = KnownSpan {
                known_from: Some(record.created_at),
                known_until: Some(*known_until.max(&record.created_at)),
            };
        } else if replaced_unknown.contains(&i) {
            // Its successor's document is gone: history as written, closed where it was.
            record.known = KnownSpan { known_from: Some(record.created_at), known_until: Some(record.created_at) };
        } else if demoted.contains(&i) {
            // A second suggestion of words already live in the tree: archived (set aside,
            // restorable, never retrieved), since one tree holds each text live once.
            record.status = LeafStatus::Archived;
            record.known = KnownSpan::NEVER;
        } else if record.status == LeafStatus::Active {
            record.known = KnownSpan::from(record.created_at);
        } else {
            record.known = KnownSpan::NEVER;
        }
    }
    leaves
}

/// The slug an entity of a recovered tree is filed by (the tree id's second half).
pub fn entity_slug(tree: &TreeId) -> Option<EntitySlug> {
    let (_, slug) = tree.as_str().split_once(':')?;
    (slug != TreeId::UNCATEGORIZED).then(|| EntitySlug::parse(slug).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::{Filing, render_leaf};
    use crate::model::tests::leaf_record;

    /// An active leaf saying `text`, written where its body belongs.
    fn sample_leaf(id: &str, text: &str) -> LeafRecord {
        let mut leaf = leaf_record(id, Timestamp::from_second(1_780_000_000).unwrap());
        leaf.title = text.to_owned();
        leaf.summary = text.to_owned();
        leaf.fingerprint = fingerprint(text);
        leaf.body_path = BodyPath::leaf(&leaf.namespace, leaf.category, &leaf.tree_id, &leaf.id);
        leaf.claims = LeafClaims::read(text);
        leaf
    }

    fn recovered(leaf: &LeafRecord, text: &str, filing: Filing<'_>) -> RecoveredLeaf {
        let document = render_leaf(leaf, text, filing);
        let path = leaf.body_path.clone();
        leaf_from_document(&path, document.as_bytes()).unwrap()
    }

    #[test]
    fn a_document_gives_back_the_row_it_was_written_from() {
        let mut leaf = sample_leaf("leaf-01", "Dana moved to Berlin in May.");
        leaf.tree_id = TreeId::parse("interaction:dana").unwrap();
        leaf.entities.primary = Some(EntityId::parse("ent-dana").unwrap());
        leaf.body_path = BodyPath::leaf(&leaf.namespace, leaf.category, &leaf.tree_id, &leaf.id);
        let filing = Filing { tree_title: "Dana", entity: Some(("Dana", EntityType::Person)) };
        let back = recovered(&leaf, "Dana moved to Berlin in May.", filing);
        let mut expected = leaf.clone();
        expected.body_sha256 = back.record.body_sha256.clone();
        expected.status = LeafStatus::Candidate; // until settled
        expected.known = KnownSpan::NEVER;
        expected.parent = None;
        assert_eq!(back.record, expected);
        assert_eq!(back.written_status, Some(leaf.status));
        assert_eq!(back.tree_title, "Dana");
        let entity = back.entity.unwrap();
        assert_eq!((entity.name.as_str(), entity.entity_type), ("Dana", EntityType::Person));
        let settled = settle(vec![recovered(&leaf, "Dana moved to Berlin in May.", filing)], &[]);
        assert_eq!(settled[0].record.status, LeafStatus::Active);
    }

    #[test]
    fn a_document_elsewhere_or_not_a_document_is_refused() {
        let leaf = sample_leaf("leaf-01", "text");
        let filing = Filing { tree_title: "Dana", entity: None };
        let document = render_leaf(&leaf, "text", filing);
        let elsewhere = BodyPath::parse("memory/global/interaction/interaction:other/leaves/leaf-01.md").unwrap();
        assert!(matches!(leaf_from_document(&elsewhere, document.as_bytes()), Err(RecoveryError::Misplaced { .. })));
        let path = leaf.body_path.clone();
        assert!(matches!(leaf_from_document(&path, b"just some notes"), Err(RecoveryError::NotADocument(_))));
        assert!(matches!(leaf_from_document(&path, b"---\nid: \"leaf-01\"\n---\n"), Err(RecoveryError::Field { .. })));
        assert_eq!(leaf_from_document(&path, b"\xff\xfe"), Err(RecoveryError::NotText));
    }

    #[test]
    fn versions_settle_into_one_current_and_its_history() {
        let filing = Filing { tree_title: "Uncategorized", entity: None };
        let v1 = sample_leaf("leaf-01", "I live in Lisbon.");
        let mut v2 = sample_leaf("leaf-02", "I live in Berlin.");
        v2.lineage = v1.id.clone();
        v2.version = v1.version.next();
        v2.created_at = v1.created_at + jiff::SignedDuration::from_hours(1);
        let mut v3 = sample_leaf("leaf-03", "I live in Porto, maybe.");
        v3.lineage = v1.id.clone();
        v3.version = v2.version.next();
        v3.status = LeafStatus::Candidate;
        v3.created_at = v2.created_at + jiff::SignedDuration::from_hours(1);
        let settled = settle(
            vec![
                recovered(&v3, "I live in Porto, maybe.", filing),
                recovered(&v1, "I live in Lisbon.", filing),
                recovered(&v2, "I live in Berlin.", filing),
            ],
            &[],
        );
        let status = |id: &str| settled.iter().find(|l| l.record.id.as_str() == id).unwrap().record.clone();
        assert_eq!(status("leaf-01").status, LeafStatus::Superseded);
        assert_eq!(status("leaf-01").superseded_by.as_ref().map(LeafId::as_str), Some("leaf-02"));
        assert_eq!(status("leaf-02").status, LeafStatus::Active, "the latest version written active is current");
        assert_eq!(status("leaf-03").status, LeafStatus::Candidate, "a suggestion waits for a person again");
    }

    /// A version written already replaced (the earlier event of a batch whose later event
    /// replaced it) comes back as history, not as a suggestion waiting for a person; without
    /// its successor's document it stays history, never current.
    #[test]
    fn a_version_written_replaced_is_history_again() {
        let filing = Filing { tree_title: "Uncategorized", entity: None };
        let mut v1 = sample_leaf("leaf-01", "My favorite editor is Helix.");
        v1.status = LeafStatus::Superseded;
        v1.superseded_by = Some(LeafId::parse("leaf-02").unwrap());
        let mut v2 = sample_leaf("leaf-02", "My favorite editor is Zed now.");
        v2.lineage = v1.id.clone();
        v2.version = v1.version.next();
        v2.supersedes = Some(v1.id.clone());
        let both = settle(
            vec![
                recovered(&v1, "My favorite editor is Helix.", filing),
                recovered(&v2, "My favorite editor is Zed now.", filing),
            ],
            &[],
        );
        let status = |id: &str| both.iter().find(|l| l.record.id.as_str() == id).unwrap().record.clone();
        assert_eq!(status("leaf-01").status, LeafStatus::Superseded);
        assert_eq!(status("leaf-01").superseded_by.as_ref().map(LeafId::as_str), Some("leaf-02"));
        assert_eq!(status("leaf-02").status, LeafStatus::Active);

        let alone = settle(vec![recovered(&v1, "My favorite editor is Helix.", filing)], &[]);
        assert_eq!(alone[0].record.status, LeafStatus::Superseded, "never more visible than written");
    }

    #[test]
    fn what_consolidation_retired_is_history_again_while_both_are_current() {
        let filing = Filing { tree_title: "Uncategorized", entity: None };
        let porto = sample_leaf("leaf-01", "Maya lives in Porto.");
        let mut amsterdam = sample_leaf("leaf-02", "Maya just moved to Amsterdam.");
        amsterdam.created_at = porto.created_at + jiff::SignedDuration::from_hours(1);
        let documents = || {
            vec![
                recovered(&porto, "Maya lives in Porto.", filing),
                recovered(&amsterdam, "Maya just moved to Amsterdam.", filing),
            ]
        };
        let retired = [(porto.id.clone(), amsterdam.id.clone())];
        let settled = settle(documents(), &retired);
        let porto_now = settled.iter().find(|l| l.record.id == porto.id).unwrap();
        assert_eq!(porto_now.record.status, LeafStatus::Superseded);
        assert_eq!(porto_now.record.superseded_by.as_ref(), Some(&amsterdam.id));
        // Without the record, both documents are current: nothing in them says otherwise.
        assert!(settle(documents(), &[]).iter().all(|l| l.record.status == LeafStatus::Active));
        // A record naming a leaf that is gone changes nothing.
        let gone = [(porto.id.clone(), LeafId::parse("leaf-99").unwrap())];
        assert!(settle(documents(), &gone).iter().all(|l| l.record.status == LeafStatus::Active));
    }

    #[test]
    fn older_documents_are_active_only_if_a_person_typed_them() {
        let filing = Filing { tree_title: "Uncategorized", entity: None };
        let mut typed = sample_leaf("leaf-01", "typed in");
        typed.provenance.source = SourceRef::UserEntry;
        let mut heard = sample_leaf("leaf-02", "heard in passing");
        heard.provenance.source = SourceRef::Message { conversation: None, message_id: "m1".into() };
        let strip = |leaf: &LeafRecord, text: &str| {
            let document = render_leaf(leaf, text, filing);
            let old: String = document
                .lines()
                .filter(|line| !["status:", "actor:", "provenance:"].iter().any(|k| line.starts_with(k)))
                .map(|line| format!("{line}\n"))
                .collect();
            leaf_from_document(&leaf.body_path.clone(), old.as_bytes()).unwrap()
        };
        let settled = settle(vec![strip(&typed, "typed in"), strip(&heard, "heard in passing")], &[]);
        assert_eq!(settled[0].record.status, LeafStatus::Active);
        assert_eq!(settled[1].record.status, LeafStatus::Candidate);
        assert_eq!(
            settled[1].record.provenance.source,
            SourceRef::Message { conversation: None, message_id: "m1".into() },
            "read back from its short form"
        );
    }

    #[test]
    fn names_come_back_from_slugs() {
        assert_eq!(name_from_slug(&TreeId::parse("interaction:project-atlas").unwrap()), "Project Atlas");
        assert_eq!(entity_slug(&TreeId::parse("interaction:uncategorized").unwrap()), None);
    }
}
