//! Entities: who or what a memory is about. Ids and slugs are made by code, never by a model.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::id::EntityId;
use crate::namespace::Namespace;
use crate::time::Timestamp;

pub use crate::values::EntitySlug;

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
            prop_assert_ne!(slug.as_str(), crate::values::TreeId::UNCATEGORIZED);
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
