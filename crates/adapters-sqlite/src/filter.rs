//! [`VisibilityFilter`] as a SQL `WHERE` fragment over the `leaves` table, so listings decide
//! scope, status, validity, expiry and sensitivity inside the query. The conformance suite
//! checks this translation against `VisibilityFilter::admits` on generated data.

use arbor_domain::visibility::{NodeKind, VisibilityFilter};
use arbor_ports::Result;
use rusqlite::types::Value;

use crate::codec::ts;

/// The leaf statuses a layer may see ([`VisibilityFilter::visible_leaf_statuses`]).
fn status_in(filter: &VisibilityFilter, frozen: bool) -> String {
    let statuses: Vec<String> =
        filter.visible_leaf_statuses(frozen).into_iter().map(|s| format!("'{}'", s.as_str())).collect();
    format!("status IN ({})", statuses.join(", "))
}

/// The filter over `leaves`, with `?` placeholders whose values are pushed onto `params`.
pub(crate) fn leaf_visibility_sql(filter: &VisibilityFilter, params: &mut Vec<Value>) -> Result<String> {
    if !filter.node_kinds.contains(&NodeKind::Leaf) {
        return Ok("0".to_owned());
    }
    let groups = filter.layer_groups();
    let mut conditions = Vec::with_capacity(groups.len());
    for group in groups {
        let marks = placeholders(group.namespaces.len());
        params.extend(group.namespaces.iter().map(|ns| Value::Text(ns.to_string())));
        let state = match group.frozen_at {
            Some(frozen) => {
                let at = ts(frozen)?;
                params.push(Value::Integer(at));
                params.push(Value::Integer(at));
                format!(
                    "{} AND known_from IS NOT NULL AND known_from <= ? AND (known_until IS NULL OR known_until > ?)",
                    status_in(filter, true)
                )
            }
            None => status_in(filter, false),
        };
        let as_of = ts(group.as_of)?;
        params.push(Value::Integer(as_of));
        params.push(Value::Integer(as_of));
        conditions.push(format!(
            "(namespace IN ({marks}) AND {state} AND (valid_from IS NULL OR valid_from <= ?) AND (valid_to IS NULL OR valid_to > ?))"
        ));
    }
    let mut sql = if conditions.is_empty() { "0".to_owned() } else { format!("({})", conditions.join(" OR ")) };
    params.push(Value::Integer(ts(filter.now)?));
    sql.push_str(" AND (expires_at IS NULL OR expires_at > ?)");
    if !filter.include_restricted {
        sql.push_str(" AND sensitivity < 2");
    }
    if !filter.categories.is_empty() {
        let marks = placeholders(filter.categories.len());
        params.extend(filter.categories.iter().map(|cat| Value::Text(cat.as_str().to_owned())));
        sql.push_str(&format!(" AND category IN ({marks})"));
    }
    if let Some(tree) = &filter.tree {
        params.push(Value::Text(tree.to_string()));
        sql.push_str(" AND tree_id = ?");
    }
    if !filter.kinds.is_empty() {
        let marks = placeholders(filter.kinds.len());
        params.extend(filter.kinds.iter().map(|k| Value::Text(k.as_str().to_owned())));
        sql.push_str(&format!(" AND kind IN ({marks})"));
    }
    if let Some((start, end)) = filter.time_range {
        if let Some(start) = start {
            params.push(Value::Integer(ts(start)?));
            sql.push_str(" AND observed_at >= ?");
        }
        if let Some(end) = end {
            params.push(Value::Integer(ts(end)?));
            sql.push_str(" AND observed_at <= ?");
        }
    }
    Ok(sql)
}

pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}
