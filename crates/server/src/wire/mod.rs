//! The wire contract of the agent interfaces: every tool input and output of the MCP server
//! and every request and response body of the HTTP API, with JSON schemas derived from these
//! types (served in the MCP tool list and in `/openapi.json`).
//!
//! No input names a namespace, a read chain or a path: those come from how the server was
//! started. Inputs refuse unknown fields, so an argument like `namespace` is an error, never
//! silently ignored. Outputs mirror the app's own serialization (the pack is the contract);
//! tests check that each mirror reads back exactly what the app writes.

//!
//! One file per family of endpoints: `retrieve` (ask, search, browse, read), `save` (one,
//! a batch, chat messages), `controls` (forget, review, correct), `reports` (catalogue, daily,
//! profile, dream, status, sync), `centre` (the operator's), `errors`; `shapes` holds the
//! patterns and field readers they share.

mod centre;
mod controls;
mod errors;
mod reports;
mod retrieve;
mod save;
mod shapes;

pub(crate) use centre::*;
pub(crate) use controls::*;
pub(crate) use errors::*;
pub(crate) use reports::*;
pub(crate) use retrieve::*;
pub(crate) use save::*;
pub(crate) use shapes::{
    DAY, NODE_ID, STORABLE_YEAR, TREE_ID, UTC_OFFSET, first_duplicate_key, has_day_shape, is_node_id, is_some_text,
    is_title,
};
