//! Reading a request and writing its reply: JSON bodies (JSON only, objects only, size-limited),
//! query strings, `If-Match` versions, and `ApiError`s as `{"error": {code, message}}`.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{FromRequest, Query, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use std::sync::Arc;

use crate::binding::{Binding, operator};
use crate::service::{ApiError, ApiResult, Service};

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(self.body())).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub(crate) fn json<T: Serialize>(value: &T) -> Response {
    axum::Json(value).into_response()
}

pub(crate) fn reply<T: Serialize>(result: ApiResult<T>) -> Response {
    match result {
        Ok(value) => json(&value),
        Err(error) => error.into_response(),
    }
}

/// A JSON request body as a handler takes it (its last argument): read as [`body`] reads one,
/// and refused with the same [`ApiError`]. Routes that need a role take [`OperatorBody`]
/// instead, which checks the role before it reads the body.
pub(crate) struct JsonBody<T>(pub(crate) T);

/// A JSON body that may be left out (no body and no content type): the defaults then.
pub(crate) struct OptionalJsonBody<T>(pub(crate) T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for OptionalJsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = request.headers().clone();
        let bytes = Bytes::from_request(request, state).await;
        optional_body(&headers, bytes).map(OptionalJsonBody).map_err(IntoResponse::into_response)
    }
}

/// An operator's request with a JSON body: the caller's role (on the binding the token check
/// put on the request) is checked first, and only then the body is read, so a caller without
/// the role is refused alike whatever it sends and learns nothing of what its body would have
/// meant.
pub(crate) struct OperatorBody<T> {
    pub(crate) service: Arc<Service>,
    pub(crate) input: T,
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for OperatorBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let missing = || ApiError::new(500, "internal", "the request carries no binding").into_response();
        let binding = request.extensions().get::<Binding>().cloned().ok_or_else(missing)?;
        operator(&binding).map_err(IntoResponse::into_response)?;
        let JsonBody(input) = JsonBody::from_request(request, state).await?;
        Ok(OperatorBody { service: binding.service, input })
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = request.headers().clone();
        let bytes = Bytes::from_request(request, state).await;
        body(&headers, bytes).map(JsonBody).map_err(IntoResponse::into_response)
    }
}

/// A JSON request body, or the reason it is not one.
pub(crate) fn body<T: DeserializeOwned>(headers: &HeaderMap, bytes: Result<Bytes, BytesRejection>) -> ApiResult<T> {
    let bytes = bytes.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(413, "payload_too_large", "the request body is too large"),
        _ => ApiError::invalid(format!("could not read the request body: {rejection}")),
    })?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(ApiError::new(415, "unsupported_media_type", "the request body must be application/json"));
    }
    // Through a value first: serde would read a struct from a JSON array, which no schema here
    // allows.
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| ApiError::invalid(format!("request body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid("the request body must be a JSON object"));
    }
    serde_json::from_value(value).map_err(|e| ApiError::invalid(format!("request body: {e}")))
}

/// Like [`body`], but an empty body means the defaults.
pub(crate) fn optional_body<T: DeserializeOwned + Default>(
    headers: &HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult<T> {
    let untyped = headers.get(header::CONTENT_TYPE).is_none();
    match &bytes {
        // No body at all (and no claim of one): the defaults. A form post always has a type.
        Ok(b) if untyped && b.is_empty() => Ok(T::default()),
        _ => body(headers, bytes),
    }
}

pub(crate) fn query<T>(query: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    query.map(|Query(q)| q).map_err(|e| ApiError::invalid(format!("query string: {}", e.body_text())))
}

pub(crate) fn etag(version: u32) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{version}\"")).unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

/// The version an `If-Match` header names: the strong tag `"3"` a read returned. `*` (any
/// current version) and an empty value add nothing to the body's `version`; a weak tag cannot
/// guard a write.
pub(crate) fn if_match(headers: &HeaderMap) -> ApiResult<Option<u32>> {
    let Some(value) = headers.get(header::IF_MATCH) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ApiError::invalid("If-Match is not ASCII"))?.trim();
    if text == "*" || text.is_empty() {
        return Ok(None);
    }
    let version = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).and_then(|t| t.parse::<u32>().ok());
    version.filter(|&v| v >= 1).map(Some).ok_or_else(|| {
        ApiError::invalid(format!("If-Match must be one strong ETag from a read, like \"3\", not {text:?}"))
    })
}
