//! [`VisibilityFilter`] as a SQL `WHERE` fragment, so scope, status, validity, expiry and
//! sensitivity are decided inside the query. The conformance suite checks this translation
//! against `VisibilityFilter::admits` on generated data.

use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Result;
use rusqlite::types::Value;

use crate::codec::ts;

/// How a table spells the filter's columns.
pub(crate) struct Columns {
    /// `Some(column)` where the table holds leaves and summaries; `None` for the leaves table.
    pub node_kind: Option<&'static str>,
    pub state: StateColumn,
    pub time_start: &'static str,
    pub time_end: &'static str,
}

/// Where a row's retrieval state comes from.
pub(crate) enum StateColumn {
    /// A leaf status column (`active`, `superseded`, `archived`, …).
    LeafStatus(&'static str),
    /// A `NodeState` column (`current`, `superseded`, `archived`, …).
    NodeState(&'static str),
}

impl StateColumn {
    /// `<column> IN (...)` for the given node states, spelled the way this table stores them.
    fn is_in(&self, prefix: &str, states: &[&str]) -> String {
        let (column, values): (&str, Vec<&str>) = match self {
            StateColumn::NodeState(column) => (column, states.to_vec()),
            StateColumn::LeafStatus(column) => {
                (column, states.iter().map(|s| if *s == "current" { "active" } else { s }).collect())
            }
        };
        let list: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
        format!("{prefix}{column} IN ({})", list.join(", "))
    }
}

pub(crate) const LEAF_COLUMNS: Columns = Columns {
    node_kind: None,
    state: StateColumn::LeafStatus("status"),
    time_start: "observed_at",
    time_end: "observed_at",
};

pub(crate) const INDEX_COLUMNS: Columns = Columns {
    node_kind: Some("node_kind"),
    state: StateColumn::NodeState("state"),
    time_start: "time_start",
    time_end: "time_end",
};

/// Appends the filter as SQL, with `?` placeholders whose values are pushed onto `params`.
/// Column names are qualified with `prefix` (e.g. `"d."`).
pub(crate) fn visibility_sql(
    filter: &VisibilityFilter,
    cols: &Columns,
    prefix: &str,
    params: &mut Vec<Value>,
) -> Result<String> {
    let c = |name: &str| format!("{prefix}{name}");
    let state = |states: &[&str]| cols.state.is_in(prefix, states);
    let mut layers = Vec::with_capacity(filter.layers.len());
    for layer in &filter.layers {
        params.push(Value::Text(layer.namespace.to_string()));
        let state_sql = match layer.frozen_at {
            Some(frozen) => {
                let at = ts(frozen)?;
                params.push(Value::Integer(at));
                params.push(Value::Integer(at));
                format!(
                    "{} AND {kf} IS NOT NULL AND {kf} <= ? AND ({ku} IS NULL OR {ku} > ?)",
                    state(&["current", "superseded", "archived"]),
                    kf = c("known_from"),
                    ku = c("known_until"),
                )
            }
            None if filter.as_of.is_some() => state(&["current", "superseded"]),
            None => state(&["current"]),
        };
        let as_of = ts(filter.effective_as_of(layer))?;
        params.push(Value::Integer(as_of));
        params.push(Value::Integer(as_of));
        layers.push(format!(
            "({ns} = ? AND {state_sql} AND ({vf} IS NULL OR {vf} <= ?) AND ({vt} IS NULL OR {vt} > ?))",
            ns = c("namespace"),
            vf = c("valid_from"),
            vt = c("valid_to"),
        ));
    }
    let mut sql = if layers.is_empty() { "0".to_owned() } else { format!("({})", layers.join(" OR ")) };

    params.push(Value::Integer(ts(filter.now)?));
    sql.push_str(&format!(" AND ({e} IS NULL OR {e} > ?)", e = c("expires_at")));
    if !filter.include_restricted {
        sql.push_str(&format!(" AND {} < 2", c("sensitivity")));
    }
    match cols.node_kind {
        Some(column) => {
            let kinds: Vec<String> = filter.node_kinds.iter().map(|k| format!("'{}'", k.as_str())).collect();
            if kinds.is_empty() {
                sql.push_str(" AND 0");
            } else {
                sql.push_str(&format!(" AND {} IN ({})", c(column), kinds.join(", ")));
            }
        }
        None if !filter.node_kinds.contains(&NodeKind::Leaf) => sql.push_str(" AND 0"),
        None => {}
    }
    if !filter.categories.is_empty() {
        let marks = placeholders(filter.categories.len());
        params.extend(filter.categories.iter().map(|cat| Value::Text(cat.as_str().to_owned())));
        sql.push_str(&format!(" AND {} IN ({marks})", c("category")));
    }
    if let Some(tree) = &filter.tree {
        params.push(Value::Text(tree.to_string()));
        sql.push_str(&format!(" AND {} = ?", c("tree_id")));
    }
    if !filter.kinds.is_empty() {
        let marks = placeholders(filter.kinds.len());
        params.extend(filter.kinds.iter().map(|k| Value::Text(k.as_str().to_owned())));
        // A row without a kind (a summary) is never in the list: `NULL IN (...)` is not true.
        sql.push_str(&format!(" AND {} IN ({marks})", c("kind")));
    }
    if let Some((start, end)) = filter.time_range {
        if let Some(start) = start {
            params.push(Value::Integer(ts(start)?));
            sql.push_str(&format!(" AND {} >= ?", c(cols.time_end)));
        }
        if let Some(end) = end {
            params.push(Value::Integer(ts(end)?));
            sql.push_str(&format!(" AND {} <= ?", c(cols.time_start)));
        }
    }
    Ok(sql)
}

pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}
