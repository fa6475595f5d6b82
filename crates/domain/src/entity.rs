//! Entities: who or what a memory is about. Ids and slugs are made by code, never by a model.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::{EntityId, IdError};
use crate::namespace::Namespace;
use crate::time::Timestamp;

/// The allowed entity types. A model's proposal with any other type is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityType {
    Person,
    Organization,
    Project,
    Place,
    Product,
    Tool,
    Topic,
}

impl EntityType {
    pub const ALL: [EntityType; 7] = [
        EntityType::Person,
        EntityType::Organization,
        EntityType::Project,
        EntityType::Place,
        EntityType::Product,
        EntityType::Tool,
        EntityType::Topic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Person => "person",
            EntityType::Organization => "organization",
            EntityType::Project => "project",
            EntityType::Place => "place",
            EntityType::Product => "product",
            EntityType::Tool => "tool",
            EntityType::Topic => "topic",
        }
    }

    pub fn parse(value: &str) -> Option<EntityType> {
        EntityType::ALL.into_iter().find(|t| t.as_str() == value)
    }
}

impl fmt::Display for EntityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A canonical entity slug: lowercase ASCII letters, digits and single hyphens, 1–48 bytes,
/// generated from a name by [`EntitySlug::from_name`]. Unique per namespace.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntitySlug(Box<str>);

impl EntitySlug {
    pub const MAX_LEN: usize = 48;

    /// Validates an existing slug (from storage or a tree id).
    pub fn parse(value: &str) -> Result<EntitySlug, IdError> {
        let malformed = || IdError::Malformed {
            what: "entity slug",
            value: value.to_owned(),
            expected: "lowercase letters, digits and single hyphens, at most 48 bytes",
        };
        if value.is_empty() {
            return Err(IdError::Empty { what: "entity slug" });
        }
        let well_formed = value.len() <= EntitySlug::MAX_LEN
            && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !value.starts_with('-')
            && !value.ends_with('-')
            && !value.contains("--");
        if well_formed { Ok(EntitySlug(value.into())) } else { Err(malformed()) }
    }

    /// Makes a slug from a display name: ASCII letters and digits kept (lowercased), everything
    /// else a separator, runs collapsed, at most 48 bytes cut at a word boundary when possible.
    ///
    /// A name with no ASCII letters or digits (e.g. "张伟") gets a stable hash slug
    /// `e-<8 hex>` so that every name has a slug and equal names get equal slugs.
    pub fn from_name(name: &str) -> EntitySlug {
        let mut slug = String::with_capacity(name.len());
        let mut pending_hyphen = false;
        for ch in name.chars() {
            if ch.is_ascii_alphanumeric() {
                if pending_hyphen && !slug.is_empty() {
                    slug.push('-');
                }
                pending_hyphen = false;
                slug.push(ch.to_ascii_lowercase());
            } else {
                pending_hyphen = true;
            }
        }
        if slug.len() > EntitySlug::MAX_LEN {
            let cut = slug[..EntitySlug::MAX_LEN].rfind('-').filter(|&at| at >= 16);
            slug.truncate(cut.unwrap_or(EntitySlug::MAX_LEN));
            while slug.ends_with('-') {
                slug.pop();
            }
        }
        if slug.is_empty() || slug == crate::model::TreeId::UNCATEGORIZED {
            let hash = crate::model::ContentHash::of(name.trim().to_lowercase().as_bytes());
            slug = format!("e-{}", &hash.as_str()[..8]);
        }
        EntitySlug(slug.into())
    }

    /// The first of `base`, `base-2`, `base-3`, … that `is_taken` says is free. Used when two
    /// different entities would get the same slug in one namespace.
    pub fn disambiguate(base: &EntitySlug, mut is_taken: impl FnMut(&EntitySlug) -> bool) -> EntitySlug {
        if !is_taken(base) {
            return base.clone();
        }
        for n in 2u32.. {
            let suffix = format!("-{n}");
            let mut stem = base.as_str().to_owned();
            stem.truncate(EntitySlug::MAX_LEN - suffix.len());
            while stem.ends_with('-') {
                stem.pop();
            }
            let candidate = EntitySlug(format!("{stem}{suffix}").into());
            if !is_taken(&candidate) {
                return candidate;
            }
        }
        unreachable!("u32 suffixes exhausted")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EntitySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for EntitySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntitySlug({:?})", &*self.0)
    }
}

impl Serialize for EntitySlug {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EntitySlug {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        EntitySlug::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// An entity row. Entities live in one namespace; the same person in two projects is two
/// entities, because namespaces are isolation boundaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    pub id: EntityId,
    pub namespace: Namespace,
    pub entity_type: EntityType,
    pub slug: EntitySlug,
    pub name: String,
    pub aliases: Vec<String>,
    pub created_at: Timestamp,
}

impl Entity {
    /// Whether `name` names this entity: its name, an alias, or its slug, compared by slug so
    /// "Project Alpha", "project-alpha" and "PROJECT ALPHA" agree.
    pub fn is_named(&self, name: &str) -> bool {
        let wanted = EntitySlug::from_name(name);
        wanted == self.slug
            || EntitySlug::from_name(&self.name) == wanted
            || self.aliases.iter().any(|alias| EntitySlug::from_name(alias) == wanted)
    }

    /// The distinct words this entity is known by (its name, aliases and slug, tokenized as
    /// every index tokenizes text): what a store's entity lookup matches a text's words with.
    pub fn words(&self) -> std::collections::BTreeSet<String> {
        let mut words: std::collections::BTreeSet<String> = crate::text::tokenize(&self.name).into_iter().collect();
        self.aliases.iter().for_each(|alias| words.extend(crate::text::tokenize(alias)));
        words.extend(crate::text::tokenize(self.slug.as_str()));
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn slugs_from_names() {
        assert_eq!(EntitySlug::from_name("Project Alpha").as_str(), "project-alpha");
        assert_eq!(EntitySlug::from_name("  Caroline's  dog!! ").as_str(), "caroline-s-dog");
        assert_eq!(EntitySlug::from_name("张伟").as_str().len(), "e-".len() + 8);
        assert_eq!(EntitySlug::from_name("张伟"), EntitySlug::from_name(" 张伟 "));
        assert_ne!(EntitySlug::from_name("uncategorized").as_str(), "uncategorized");
    }

    #[test]
    fn disambiguation_appends_a_counter() {
        let base = EntitySlug::from_name("Alex");
        let taken = ["alex", "alex-2"];
        let slug = EntitySlug::disambiguate(&base, |s| taken.contains(&s.as_str()));
        assert_eq!(slug.as_str(), "alex-3");
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Every name gets a valid slug, the same name always gets the same slug, and a slug is
        /// never the reserved fallback bucket.
        #[test]
        fn every_name_has_a_valid_stable_slug(name in "\\PC{0,80}") {
            let slug = EntitySlug::from_name(&name);
            prop_assert!(EntitySlug::parse(slug.as_str()).is_ok(), "{:?} -> {:?}", name, slug);
            prop_assert_eq!(&EntitySlug::from_name(&name), &slug);
            prop_assert_ne!(slug.as_str(), crate::model::TreeId::UNCATEGORIZED);
        }

        #[test]
        fn disambiguated_slugs_are_valid_and_free(name in "[a-z]{1,60}", taken in 0usize..5) {
            let base = EntitySlug::from_name(&name);
            let mut used: Vec<EntitySlug> = vec![base.clone()];
            for _ in 0..taken {
                let next = EntitySlug::disambiguate(&base, |s| used.contains(s));
                prop_assert!(EntitySlug::parse(next.as_str()).is_ok());
                prop_assert!(!used.contains(&next));
                used.push(next);
            }
        }
    }
}
