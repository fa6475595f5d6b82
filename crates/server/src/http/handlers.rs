//! The API's handlers: each reads its request, calls the bound service and writes the reply.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::service::ApiError;
use crate::{openapi, wire};

use crate::binding::{Binding, Role, operator};
use crate::request::{JsonBody, OperatorBody, OptionalJsonBody, etag, if_match, json, query, reply};
pub(super) async fn retrieve(
    Extension(s): Extension<Binding>,
    JsonBody(input): JsonBody<wire::RetrieveInput>,
) -> Response {
    reply(s.service.retrieve(input).await)
}

pub(super) async fn search(Extension(s): Extension<Binding>, JsonBody(input): JsonBody<wire::SearchInput>) -> Response {
    reply(s.service.search(input).await)
}

pub(super) async fn upsert(Extension(s): Extension<Binding>, JsonBody(input): JsonBody<wire::SaveInput>) -> Response {
    reply(s.service.save(input).await)
}

pub(super) async fn upsert_batch(
    Extension(s): Extension<Binding>,
    JsonBody(input): JsonBody<wire::BatchInput>,
) -> Response {
    reply(s.service.save_batch(input).await)
}

pub(super) async fn messages(
    Extension(s): Extension<Binding>,
    JsonBody(input): JsonBody<wire::MessagesInput>,
) -> Response {
    reply(s.service.save_messages(input).await)
}

pub(super) async fn correct(
    Extension(s): Extension<Binding>,
    headers: HeaderMap,
    JsonBody(input): JsonBody<wire::CorrectInput>,
) -> Response {
    let run = async { s.service.correct(input, if_match(&headers)?, s.role == Role::Operator).await };
    match run.await {
        Ok(corrected) => {
            let mut response = json(&corrected);
            response.headers_mut().insert(header::ETAG, etag(corrected.version));
            response
        }
        Err(e) => e.into_response(),
    }
}

pub(super) async fn forget(Extension(s): Extension<Binding>, JsonBody(input): JsonBody<wire::ForgetInput>) -> Response {
    reply(s.service.forget(input, s.role == Role::Operator).await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GetParams {
    id: String,
}

pub(super) async fn get_node(
    Extension(s): Extension<Binding>,
    params: Result<Query<GetParams>, QueryRejection>,
) -> Response {
    let input = match query(params) {
        Ok(GetParams { id }) => wire::ReadInput { id },
        Err(e) => return e.into_response(),
    };
    match s.service.read(input, s.role == Role::Operator).await {
        Ok(node) => {
            let version = node.version;
            let mut response = json(&node);
            if let Some(version) = version {
                response.headers_mut().insert(header::ETAG, etag(version));
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

pub(super) async fn browse(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::BrowseInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.browse(input).await),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn catalog(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::CatalogInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.catalog(input).await),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn daily(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::DailyInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.daily(input).await),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn profile(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::ProfileInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.profile(input).await),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn dream(
    Extension(s): Extension<Binding>,
    params: Result<Query<wire::DreamInput>, QueryRejection>,
) -> Response {
    match query(params) {
        Ok(input) => reply(s.service.dream(input).await),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn status(Extension(s): Extension<Binding>) -> Response {
    reply(s.service.status().await)
}

pub(super) async fn sync(
    Extension(s): Extension<Binding>,
    OptionalJsonBody(input): OptionalJsonBody<wire::SyncInput>,
) -> Response {
    reply(s.service.sync(input).await)
}

pub(super) async fn review_list(Extension(s): Extension<Binding>) -> Response {
    match operator(&s) {
        Ok(service) => reply(service.pending().await),
        Err(e) => e.into_response(),
    }
}

/// A review decision, for an operator's token only.
pub(super) async fn review_confirm(OperatorBody { service, input }: OperatorBody<wire::ReviewInput>) -> Response {
    reply(service.review(input, wire::Decision::Confirm).await)
}

/// A review decision, for an operator's token only.
pub(super) async fn review_reject(OperatorBody { service, input }: OperatorBody<wire::ReviewInput>) -> Response {
    reply(service.review(input, wire::Decision::Reject).await)
}

pub(super) async fn openapi_document() -> Response {
    // The same bytes as the checked-in crates/server/openapi.json.
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], openapi::canonical_document())
        .into_response()
}

pub(super) async fn not_found() -> Response {
    ApiError::new(404, "not_found", "no such endpoint; see /openapi.json").into_response()
}

pub(super) async fn method_not_allowed() -> Response {
    ApiError::new(405, "method_not_allowed", "this endpoint does not take that method; see /openapi.json")
        .into_response()
}
