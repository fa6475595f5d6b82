//! [`VisibilityFilter`] as a SQL condition, so listings and searches decide scope, status,
//! validity, expiry and sensitivity inside the query. One translation serves the `leaves`
//! table (by leaf status) and the index's `index_docs` (by node state); the conformance suite
//! checks both against `VisibilityFilter::admits` on generated data.

use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Result;
use arbor_ports::rows::ts;
use sqlx::{Postgres, QueryBuilder};

/// The table a condition is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// `leaves`: `status` holds leaf statuses, `observed_at` is the node's time.
    Leaves,
    /// `index_docs`: `state` holds node states, `node_kind` says leaf or summary, and
    /// `time_start`/`time_end` bound the node's time.
    IndexDocs,
}

impl Target {
    /// The stored values for the states a layer may see
    /// ([`VisibilityFilter::visible_states`]) on this table.
    fn visible(self, filter: &VisibilityFilter, frozen: bool) -> Vec<String> {
        match self {
            Target::Leaves => filter.visible_leaf_statuses(frozen).iter().map(|s| s.as_str().to_owned()).collect(),
            Target::IndexDocs => filter.visible_states(frozen).iter().map(|s| s.as_str().to_owned()).collect(),
        }
    }

    fn state_column(self) -> &'static str {
        match self {
            Target::Leaves => "status",
            Target::IndexDocs => "state",
        }
    }

    fn time_columns(self) -> (&'static str, &'static str) {
        match self {
            Target::Leaves => ("observed_at", "observed_at"),
            Target::IndexDocs => ("time_start", "time_end"),
        }
    }
}

/// Pushes `( condition )` onto `sql`, binding every value.
pub(crate) fn push_visibility(
    sql: &mut QueryBuilder<'_, Postgres>,
    filter: &VisibilityFilter,
    target: Target,
) -> Result<()> {
    let kinds: Vec<&str> = filter.node_kinds.iter().map(|k| k.as_str()).collect();
    if (target == Target::Leaves && !filter.node_kinds.contains(&NodeKind::Leaf)) || kinds.is_empty() {
        sql.push("FALSE");
        return Ok(());
    }
    let groups = filter.layer_groups();
    if groups.is_empty() {
        sql.push("FALSE");
        return Ok(());
    }
    let state = target.state_column();
    sql.push("((");
    for (i, group) in groups.into_iter().enumerate() {
        if i > 0 {
            sql.push(") OR (");
        }
        let namespaces: Vec<String> = group.namespaces.iter().map(ToString::to_string).collect();
        sql.push("namespace = ANY(").push_bind(namespaces).push(")");
        match group.frozen_at {
            Some(frozen) => {
                let at = ts(frozen)?;
                sql.push(format!(" AND {state} = ANY("))
                    .push_bind(target.visible(filter, true))
                    .push(") AND known_from IS NOT NULL AND known_from <= ")
                    .push_bind(at)
                    .push(" AND (known_until IS NULL OR known_until > ")
                    .push_bind(at)
                    .push(")");
            }
            None => {
                sql.push(format!(" AND {state} = ANY(")).push_bind(target.visible(filter, false)).push(")");
            }
        }
        let as_of = ts(group.as_of)?;
        sql.push(" AND (valid_from IS NULL OR valid_from <= ")
            .push_bind(as_of)
            .push(") AND (valid_to IS NULL OR valid_to > ")
            .push_bind(as_of)
            .push(")");
    }
    sql.push(")) AND (expires_at IS NULL OR expires_at > ").push_bind(ts(filter.now)?).push(")");
    if target == Target::IndexDocs {
        sql.push(" AND node_kind = ANY(")
            .push_bind(kinds.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>())
            .push(")");
    }
    if !filter.include_restricted {
        sql.push(" AND sensitivity < 2");
    }
    if !filter.categories.is_empty() {
        let categories: Vec<String> = filter.categories.iter().map(|c| c.as_str().to_owned()).collect();
        sql.push(" AND category = ANY(").push_bind(categories).push(")");
    }
    if let Some(tree) = &filter.tree {
        sql.push(" AND tree_id = ").push_bind(tree.to_string());
    }
    if !filter.kinds.is_empty() {
        let kinds: Vec<String> = filter.kinds.iter().map(|k| k.as_str().to_owned()).collect();
        sql.push(" AND kind = ANY(").push_bind(kinds).push(")");
    }
    if let Some((start, end)) = filter.time_range {
        let (start_column, end_column) = target.time_columns();
        if let Some(start) = start {
            sql.push(format!(" AND {end_column} >= ")).push_bind(ts(start)?);
        }
        if let Some(end) = end {
            sql.push(format!(" AND {start_column} <= ")).push_bind(ts(end)?);
        }
    }
    Ok(())
}
