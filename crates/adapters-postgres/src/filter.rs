//! [`VisibilityFilter`] as a SQL condition on the `leaves` table, so listings decide scope,
//! status, validity, expiry and sensitivity inside the query; the conformance suite checks it
//! against `VisibilityFilter::admits` on generated data. (Searches evaluate the same filter in
//! memory, in `arbor-search`.)

use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Result;
use arbor_ports::rows::ts;
use sqlx::{Postgres, QueryBuilder};

/// Pushes the condition onto `sql` (a leaf row's columns: `status`, `observed_at`, …),
/// binding every value.
pub(crate) fn push_visibility(sql: &mut QueryBuilder<'_, Postgres>, filter: &VisibilityFilter) -> Result<()> {
    if !filter.node_kinds.contains(&NodeKind::Leaf) {
        sql.push("FALSE");
        return Ok(());
    }
    let groups = filter.layer_groups();
    if groups.is_empty() {
        sql.push("FALSE");
        return Ok(());
    }
    let visible = |frozen: bool| -> Vec<String> {
        filter.visible_leaf_statuses(frozen).iter().map(|s| s.as_str().to_owned()).collect()
    };
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
                sql.push(" AND status = ANY(")
                    .push_bind(visible(true))
                    .push(") AND known_from IS NOT NULL AND known_from <= ")
                    .push_bind(at)
                    .push(" AND (known_until IS NULL OR known_until > ")
                    .push_bind(at)
                    .push(")");
            }
            None => {
                sql.push(" AND status = ANY(").push_bind(visible(false)).push(")");
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
        if let Some(start) = start {
            sql.push(" AND observed_at >= ").push_bind(ts(start)?);
        }
        if let Some(end) = end {
            sql.push(" AND observed_at <= ").push_bind(ts(end)?);
        }
    }
    Ok(())
}
