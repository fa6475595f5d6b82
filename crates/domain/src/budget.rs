//! Retrieval budgets per read-chain layer and in total [design §budgets]: no layer may take more
//! than its share, and the pack as a whole never exceeds the total, counted in items and in
//! characters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::namespace::{Namespace, NamespaceKind};

/// How many items a pack holds when the caller does not say [design §budgets].
pub const DEFAULT_MAX_RESULTS: usize = 12;

/// A limit in items and characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerBudget {
    pub max_items: usize,
    pub max_chars: usize,
}

/// Budgets for one retrieval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrievalBudget {
    pub per_layer: BTreeMap<NamespaceKind, LayerBudget>,
    pub total: LayerBudget,
}

impl Default for RetrievalBudget {
    /// The defaults of [design §budgets]; agent layers get an automation-sized share. The total is
    /// below the sum of the layers on purpose: layers may not each fill up and be concatenated
    /// without bound.
    fn default() -> Self {
        let b = |max_items, max_chars| LayerBudget { max_items, max_chars };
        RetrievalBudget {
            per_layer: [
                (NamespaceKind::Run, b(8, 4_000)),
                (NamespaceKind::Automation, b(8, 4_000)),
                (NamespaceKind::Experiment, b(8, 4_000)),
                (NamespaceKind::Conversation, b(8, 4_000)),
                (NamespaceKind::Agent, b(8, 4_000)),
                (NamespaceKind::Project, b(10, 5_000)),
                (NamespaceKind::Global, b(6, 3_000)),
            ]
            .into_iter()
            .collect(),
            total: b(20, 10_000),
        }
    }
}

/// One ranked candidate as the budget sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetItem {
    pub namespace: Namespace,
    pub chars: usize,
}

/// Why a candidate was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSkip {
    TotalItems,
    TotalChars,
    LayerItems,
    LayerChars,
}

impl BudgetSkip {
    pub fn explain(self) -> &'static str {
        match self {
            BudgetSkip::TotalItems => "total item budget reached",
            BudgetSkip::TotalChars => "would exceed the total character budget",
            BudgetSkip::LayerItems => "its layer's item budget was reached",
            BudgetSkip::LayerChars => "would exceed its layer's character budget",
        }
    }
}

/// Which candidates fit: indexes into the input, in input (rank) order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BudgetSelection {
    pub selected: Vec<usize>,
    pub skipped: Vec<(usize, BudgetSkip)>,
}

/// The bounds a configured budget must keep ([`RetrievalBudget::check`]): at least one item
/// and a sentence's worth of characters (a layer that should give nothing is left out of the
/// read chain, not starved), and at most what a model's context can take as one pack.
pub const BUDGET_ITEMS: std::ops::RangeInclusive<usize> = 1..=100;
pub const BUDGET_CHARS: std::ops::RangeInclusive<usize> = 200..=100_000;

/// About how many characters of evidence a budget of `tokens` model tokens holds: memory text
/// runs about four characters a token (English prose a little more, Chinese far less, which
/// the compact pack's own estimate then corrects by cutting to the budget).
pub fn chars_for_tokens(tokens: usize) -> usize {
    tokens.saturating_mul(4)
}

/// A store's own budgets: its settings over the defaults, a layer at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<LayerBudget>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_layer: BTreeMap<NamespaceKind, LayerBudget>,
}

impl BudgetSettings {
    /// The defaults with these settings over them, checked.
    pub fn budget(&self) -> Result<RetrievalBudget, String> {
        let mut budget = RetrievalBudget::default();
        if let Some(total) = self.total {
            budget.total = total;
        }
        budget.per_layer.extend(self.per_layer.iter().map(|(kind, layer)| (*kind, *layer)));
        budget.check()?;
        Ok(budget)
    }
}

impl RetrievalBudget {
    /// Whether every limit is within [`BUDGET_ITEMS`] and [`BUDGET_CHARS`]; the first that is
    /// not, said for the person who set it.
    pub fn check(&self) -> Result<(), String> {
        let layers = self.per_layer.iter().map(|(kind, layer)| (format!("per_layer.{}", kind.as_str()), layer));
        for (name, layer) in std::iter::once(("total".to_owned(), &self.total)).chain(layers) {
            if !BUDGET_ITEMS.contains(&layer.max_items) {
                return Err(format!(
                    "budget {name}.max_items must be {} to {}, not {}",
                    BUDGET_ITEMS.start(),
                    BUDGET_ITEMS.end(),
                    layer.max_items
                ));
            }
            if !BUDGET_CHARS.contains(&layer.max_chars) {
                return Err(format!(
                    "budget {name}.max_chars must be {} to {}, not {}",
                    BUDGET_CHARS.start(),
                    BUDGET_CHARS.end(),
                    layer.max_chars
                ));
            }
        }
        Ok(())
    }

    /// The layer budget for a namespace kind (kinds without an entry get the total).
    pub fn layer(&self, kind: NamespaceKind) -> LayerBudget {
        self.per_layer.get(&kind).copied().unwrap_or(self.total)
    }

    /// This budget with the total tightened (never loosened) to a caller's request.
    #[must_use]
    pub fn with_total_at_most(&self, max_items: Option<usize>, max_chars: Option<usize>) -> RetrievalBudget {
        let mut out = self.clone();
        if let Some(items) = max_items {
            out.total.max_items = out.total.max_items.min(items);
        }
        if let Some(chars) = max_chars {
            out.total.max_chars = out.total.max_chars.min(chars);
        }
        out
    }

    /// The most items a selection from these namespaces can hold: the total limit, or the
    /// sum of their layer limits when that is smaller. Reading more candidates than this up
    /// front cannot change what is selected first.
    pub fn most_items<'a>(&self, namespaces: impl IntoIterator<Item = &'a Namespace>) -> usize {
        let layers = namespaces.into_iter().map(|ns| self.layer(ns.kind()).max_items).fold(0, usize::saturating_add);
        self.total.max_items.min(layers)
    }

    /// Greedily takes candidates in rank order, skipping any that would break a limit. A
    /// skipped long item does not stop a later short one from fitting.
    pub fn select(&self, items: &[BudgetItem]) -> BudgetSelection {
        let mut tracker = self.tracker();
        let mut selection = BudgetSelection::default();
        for (index, item) in items.iter().enumerate() {
            match tracker.offer(item) {
                Ok(()) => selection.selected.push(index),
                Err(reason) => selection.skipped.push((index, reason)),
            }
        }
        selection
    }

    /// A running selection, for callers that want to decide before paying for an item (e.g.
    /// before reading its body): [`BudgetTracker::room_for`] needs only the namespace.
    pub fn tracker(&self) -> BudgetTracker<'_> {
        BudgetTracker { budget: self, items: 0, chars: 0, used: BTreeMap::new() }
    }
}

/// The state of a greedy selection under a [`RetrievalBudget`]. `select` is this, run over a
/// list; both apply exactly the same rule.
#[derive(Debug, Clone)]
pub struct BudgetTracker<'a> {
    budget: &'a RetrievalBudget,
    items: usize,
    chars: usize,
    used: BTreeMap<Namespace, (usize, usize)>,
}

impl BudgetTracker<'_> {
    /// Whether no further item can be taken at all.
    pub fn is_full(&self) -> bool {
        self.items >= self.budget.total.max_items
    }

    /// The item-count limits an item from `namespace` would hit, whatever its size.
    pub fn room_for(&self, namespace: &Namespace) -> Result<(), BudgetSkip> {
        let layer = self.budget.layer(namespace.kind());
        let (layer_items, _) = self.used.get(namespace).copied().unwrap_or((0, 0));
        if self.items >= self.budget.total.max_items {
            Err(BudgetSkip::TotalItems)
        } else if layer_items >= layer.max_items {
            Err(BudgetSkip::LayerItems)
        } else {
            Ok(())
        }
    }

    /// Takes the item if it fits every limit.
    pub fn offer(&mut self, item: &BudgetItem) -> Result<(), BudgetSkip> {
        self.room_for(&item.namespace)?;
        let layer = self.budget.layer(item.namespace.kind());
        let (layer_items, layer_chars) = self.used.get(&item.namespace).copied().unwrap_or((0, 0));
        if layer_chars + item.chars > layer.max_chars {
            return Err(BudgetSkip::LayerChars);
        }
        if self.chars + item.chars > self.budget.total.max_chars {
            return Err(BudgetSkip::TotalChars);
        }
        self.items += 1;
        self.chars += item.chars;
        self.used.insert(item.namespace.clone(), (layer_items + 1, layer_chars + item.chars));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::id::ScopeId;
    use crate::testkit::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn settings_override_the_defaults_a_layer_at_a_time_within_bounds() {
        assert_eq!(BudgetSettings::default().budget(), Ok(RetrievalBudget::default()));
        assert!(RetrievalBudget::default().check().is_ok(), "the defaults are within the bounds");
        let b = |max_items, max_chars| LayerBudget { max_items, max_chars };
        let settings = BudgetSettings {
            total: Some(b(30, 12_000)),
            per_layer: [(NamespaceKind::Global, b(2, 800))].into_iter().collect(),
        };
        let budget = settings.budget().unwrap();
        assert_eq!((budget.total, budget.layer(NamespaceKind::Global)), (b(30, 12_000), b(2, 800)));
        assert_eq!(budget.layer(NamespaceKind::Project), b(10, 5_000), "an unnamed layer keeps its default");
        for (layer, named) in [
            (b(0, 800), "max_items"),
            (b(101, 800), "max_items"),
            (b(2, 199), "max_chars"),
            (b(2, 100_001), "max_chars"),
        ] {
            let settings =
                BudgetSettings { per_layer: [(NamespaceKind::Run, layer)].into_iter().collect(), ..Default::default() };
            let why = settings.budget().unwrap_err();
            assert!(why.starts_with(&format!("budget per_layer.run.{named} must be")), "{why}");
        }
        let parsed: Result<BudgetSettings, _> = serde_json::from_str(r#"{"total": {"max_item": 3, "max_chars": 900}}"#);
        assert!(parsed.is_err(), "a misspelt limit is an error, not a default");
    }

    fn namespaces() -> Vec<Namespace> {
        vec![
            Namespace::conversation(ScopeId::parse("c").unwrap()),
            Namespace::project(ScopeId::parse("p").unwrap()),
            Namespace::global(),
            Namespace::run(ScopeId::parse("r").unwrap()),
        ]
    }

    #[test]
    fn a_long_item_does_not_block_a_short_one() {
        let budget = RetrievalBudget::default();
        let global = Namespace::global();
        let items = vec![
            BudgetItem { namespace: global.clone(), chars: 2_900 },
            BudgetItem { namespace: global.clone(), chars: 500 },
            BudgetItem { namespace: global, chars: 100 },
        ];
        let selection = budget.select(&items);
        assert_eq!(selection.selected, vec![0, 2]);
        assert_eq!(selection.skipped, vec![(1, BudgetSkip::LayerChars)]);
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// Budgets are never exceeded, per layer or in total, and every skip was necessary: at
        /// the moment it was considered, the skipped item would have broken a limit.
        #[test]
        fn budgets_are_never_exceeded(items in proptest::collection::vec((0usize..4, 0usize..3_000), 0..80),
                                      max_items in proptest::option::of(0usize..30),
                                      max_chars in proptest::option::of(0usize..20_000)) {
            let ns = namespaces();
            let items: Vec<BudgetItem> = items.into_iter().map(|(n, chars)| BudgetItem { namespace: ns[n].clone(), chars }).collect();
            let budget = RetrievalBudget::default().with_total_at_most(max_items, max_chars);
            let selection = budget.select(&items);
            prop_assert_eq!(selection.selected.len() + selection.skipped.len(), items.len());
            prop_assert!(selection.selected.windows(2).all(|w| w[0] < w[1]));

            let total_chars: usize = selection.selected.iter().map(|&i| items[i].chars).sum();
            prop_assert!(selection.selected.len() <= budget.total.max_items);
            prop_assert!(selection.selected.len() <= budget.most_items(&ns));
            let used: BTreeSet<&Namespace> = selection.selected.iter().map(|&i| &items[i].namespace).collect();
            prop_assert!(selection.selected.len() <= budget.most_items(used));
            prop_assert!(total_chars <= budget.total.max_chars);
            for namespace in &ns {
                let layer = budget.layer(namespace.kind());
                let mine: Vec<usize> = selection.selected.iter().copied().filter(|&i| &items[i].namespace == namespace).collect();
                prop_assert!(mine.len() <= layer.max_items);
                prop_assert!(mine.iter().map(|&i| items[i].chars).sum::<usize>() <= layer.max_chars);
            }
            // Each skip was forced by what had been selected before it.
            for &(skipped, _) in &selection.skipped {
                let before: Vec<usize> = selection.selected.iter().copied().filter(|&i| i < skipped).collect();
                let item = &items[skipped];
                let layer = budget.layer(item.namespace.kind());
                let same: Vec<usize> = before.iter().copied().filter(|&i| items[i].namespace == item.namespace).collect();
                let forced = before.len() >= budget.total.max_items
                    || before.iter().map(|&i| items[i].chars).sum::<usize>() + item.chars > budget.total.max_chars
                    || same.len() >= layer.max_items
                    || same.iter().map(|&i| items[i].chars).sum::<usize>() + item.chars > layer.max_chars;
                prop_assert!(forced, "item {} was skipped although it fit", skipped);
            }
        }
    }
}
