//! One mapping from the core's [`redelay::ErrorKind`] to an HTTP status, and the two error body
//! shapes: lmstfy's `{"error": "..."}` and the native API's
//! `{"error": {"code": "ERR_REDELAY_...", "message": "..."}}` (with `"so_far"` beside them when the
//! error stopped a long run part way, [`redelay::Error::so_far`]).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use redelay::ErrorKind;
use serde_json::json;

/// Which API an error is answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Lmstfy,
    V1,
}

/// The HTTP status of each core error kind.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::InvalidArgument => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::LeaseLost => StatusCode::CONFLICT,
        ErrorKind::Connection => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorKind::Redis | ErrorKind::Handler => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An error answer: a status, a stable code and a message, in one API's shape.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// `ERR_REDELAY_...`: the core's code, or one of the gateway's own (unauthorized,
    /// forbidden, too large, no such route, a method the route does not take).
    pub code: &'static str,
    pub message: String,
    pub style: Style,
    /// The core's [`redelay::Error::so_far`]: the totals of a long run (a bulk action, a
    /// respawn or purge of dead letters) this error stopped part way, by their wire names;
    /// `/v1` answers them as `"so_far"` in the error.
    pub so_far: Option<Vec<(&'static str, u64)>>,
    /// The queue to open anew and answer the request again for, once: the core refused the
    /// gateway's handle of it for its shard count ([`redelay::Error::shard_count_mismatch`]:
    /// destroyed and made again with another count by another client since the handle was
    /// opened), before anything was written. Not for an error that stopped a long run part
    /// way ([`so_far`](Self::so_far)). Carried to the middleware as the response's [`Reopen`].
    pub reopen: Option<String>,
}

/// The extension of an error answer whose request is answered again once with its queue
/// opened anew ([`ApiError::reopen`], `reopen_and_retry` in `lib.rs`).
#[derive(Debug, Clone)]
pub struct Reopen(pub String);

pub const UNAUTHORIZED: &str = "ERR_REDELAY_UNAUTHORIZED";
pub const FORBIDDEN: &str = "ERR_REDELAY_FORBIDDEN";
pub const TOO_LARGE: &str = "ERR_REDELAY_TOO_LARGE";
pub const NO_ROUTE: &str = "ERR_REDELAY_NO_ROUTE";
pub const METHOD_NOT_ALLOWED: &str = "ERR_REDELAY_METHOD_NOT_ALLOWED";

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>, style: Style) -> Self {
        ApiError { status, code, message: message.into(), style, so_far: None, reopen: None }
    }

    /// Bad input found by the gateway itself (a malformed parameter or body): 400.
    pub fn invalid(message: impl Into<String>, style: Style) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorKind::InvalidArgument.code(), message, style)
    }

    /// A core error, with the status of its kind. On `/v1` the field it names is spelled as in
    /// the JSON (`ttr_ms: must be 100 ms to 24 h …` where the core says `ttr: …`,
    /// [`redelay::Spelling::SnakeMs`]); lmstfy's answers keep the core's words.
    pub fn core(e: redelay::Error, style: Style) -> Self {
        let e = match style {
            Style::V1 => e.spelled(redelay::Spelling::SnakeMs),
            Style::Lmstfy => e,
        };
        let status = status_of(e.kind());
        if status == StatusCode::INTERNAL_SERVER_ERROR || status == StatusCode::SERVICE_UNAVAILABLE {
            tracing::warn!(target: "redelay::server", "{}: {}", e.kind().name(), e.message());
        }
        let so_far = e.so_far().map(<[_]>::to_vec);
        let reopen = e.shard_count_mismatch().filter(|_| so_far.is_none()).map(str::to_string);
        ApiError { so_far, reopen, ..Self::new(status, e.kind().code(), e.message(), style) }
    }

    pub fn too_large(message: impl Into<String>, style: Style) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE, message, style)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match self.style {
            Style::Lmstfy => json!({ "error": self.message }),
            Style::V1 => {
                let mut error = json!({ "code": self.code, "message": self.message });
                if let Some(so_far) = self.so_far {
                    let counts: serde_json::Map<_, _> = so_far.into_iter().map(|(k, n)| (k.into(), n.into())).collect();
                    error["so_far"] = counts.into();
                }
                json!({ "error": error })
            }
        };
        let mut res = (self.status, Json(body)).into_response();
        if let Some(queue) = self.reopen {
            res.extensions_mut().insert(Reopen(queue));
        }
        res
    }
}

/// `Result` of a handler.
pub type ApiResult<T> = Result<T, ApiError>;

/// Turns a core result into an API result in one style.
pub trait CoreExt<T> {
    fn api(self, style: Style) -> ApiResult<T>;
}

impl<T> CoreExt<T> for redelay::Result<T> {
    fn api(self, style: Style) -> ApiResult<T> {
        self.map_err(|e| ApiError::core(e, style))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_status_and_keeps_its_code() {
        for k in ErrorKind::ALL {
            let e = ApiError::core(redelay::Error::new(k, "m"), Style::V1);
            assert_eq!(e.code, k.code());
            assert!(e.status.is_client_error() || e.status.is_server_error());
        }
        assert_eq!(status_of(ErrorKind::InvalidArgument), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(ErrorKind::LeaseLost), StatusCode::CONFLICT);
    }

    #[test]
    fn v1_names_the_json_field_lmstfy_the_core_s() {
        let e = || redelay::Error::invalid("ttr: must be 100 ms to 24 h, got 50 ms");
        assert_eq!(ApiError::core(e(), Style::V1).message, "ttr_ms: must be 100 ms to 24 h, got 50 ms");
        assert_eq!(ApiError::core(e(), Style::Lmstfy).message, "ttr: must be 100 ms to 24 h, got 50 ms");
    }
}
