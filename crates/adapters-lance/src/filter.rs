//! [`VisibilityFilter`] as a LanceDB (DataFusion SQL) predicate, so scope, state, validity,
//! expiry and sensitivity are decided inside every search (`only_if`, a pre-filter), never
//! after it. The conformance suite checks the result against `VisibilityFilter::admits` on
//! generated documents.

use arbor_domain::visibility::VisibilityFilter;
use arbor_ports::Result;
use arbor_ports::rows::ts;

/// A SQL string literal, quotes doubled.
pub(crate) fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn list(values: impl IntoIterator<Item = String>) -> String {
    values.into_iter().map(|v| literal(&v)).collect::<Vec<_>>().join(", ")
}

/// The states a layer may see ([`VisibilityFilter::visible_states`]), as a quoted list.
fn visible_states(filter: &VisibilityFilter, frozen: bool) -> String {
    list(filter.visible_states(frozen).iter().map(|state| state.as_str().to_owned()))
}

/// The predicate over the documents' filter columns.
pub(crate) fn predicate(filter: &VisibilityFilter) -> Result<String> {
    let groups = filter.layer_groups();
    if groups.is_empty() || filter.node_kinds.is_empty() {
        return Ok("false".to_owned());
    }
    let mut layers = Vec::with_capacity(groups.len());
    for group in groups {
        let namespaces = list(group.namespaces.iter().map(ToString::to_string));
        let mut condition = format!("namespace IN ({namespaces})");
        match group.frozen_at {
            // A frozen layer shows what was current when it froze, whatever happened since.
            Some(frozen) => {
                let at = ts(frozen)?;
                condition.push_str(&format!(
                    " AND state IN ({}) AND known_from IS NOT NULL \
                     AND known_from <= {at} AND (known_until IS NULL OR known_until > {at})",
                    visible_states(filter, true)
                ));
            }
            None => condition.push_str(&format!(" AND state IN ({})", visible_states(filter, false))),
        }
        let as_of = ts(group.as_of)?;
        condition.push_str(&format!(
            " AND (valid_from IS NULL OR valid_from <= {as_of}) AND (valid_to IS NULL OR valid_to > {as_of})"
        ));
        layers.push(format!("({condition})"));
    }
    let mut sql = format!("({})", layers.join(" OR "));
    sql.push_str(&format!(" AND (expires_at IS NULL OR expires_at > {})", ts(filter.now)?));
    sql.push_str(&format!(" AND node_kind IN ({})", list(filter.node_kinds.iter().map(|k| k.as_str().to_owned()))));
    if !filter.include_restricted {
        sql.push_str(" AND sensitivity < 2");
    }
    if !filter.categories.is_empty() {
        sql.push_str(&format!(" AND category IN ({})", list(filter.categories.iter().map(|c| c.as_str().to_owned()))));
    }
    if let Some(tree) = &filter.tree {
        sql.push_str(&format!(" AND tree_id = {}", literal(tree.as_str())));
    }
    if !filter.kinds.is_empty() {
        sql.push_str(&format!(" AND kind IN ({})", list(filter.kinds.iter().map(|k| k.as_str().to_owned()))));
    }
    if let Some((start, end)) = filter.time_range {
        if let Some(start) = start {
            sql.push_str(&format!(" AND time_end >= {}", ts(start)?));
        }
        if let Some(end) = end {
            sql.push_str(&format!(" AND time_start <= {}", ts(end)?));
        }
    }
    Ok(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_cannot_break_out_of_their_quotes() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal("'); DROP"), "'''); DROP'");
    }
}
