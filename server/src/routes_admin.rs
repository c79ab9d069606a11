//! lmstfy's admin routes for tokens, on the admin listener, for the admin token only:
//! `POST /token/:ns` (201 `{"token": ...}`), `GET /token/:ns` (`{"tokens": {id: description}}`,
//! ids being the SHA-256 of the tokens: only that is stored), `DELETE /token/:ns/:token` (204;
//! the token or its id).

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, post};
use axum::{Json, Router};
use base64::Engine as _;
use serde_json::json;

use crate::auth;
use crate::error::{ApiError, ApiResult, CoreExt, Style};
use crate::state::AppState;

const S: Style = Style::Lmstfy;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/token/{ns}", post(new_token).get(list_tokens))
        .route("/token/{ns}/{token}", delete(delete_token))
}

/// The admin token from `X-Token`, `Authorization: Bearer`, or the password of
/// `Authorization: Basic` (not the `token` parameter: lmstfy uses it for the new token).
async fn admin(st: &AppState, h: &HeaderMap) -> ApiResult<()> {
    let basic = h
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.split_once(':').map(|(_, p)| p.to_string()));
    let Some(token) = auth::request_token(h, None, false).or(basic) else {
        return Err(auth::unauthorized("token not found", S));
    };
    let a = st.access_of(&token, S).await?;
    if !a.admin {
        return Err(ApiError::new(StatusCode::FORBIDDEN, crate::error::FORBIDDEN, "admin token required", S));
    }
    Ok(())
}

/// Query and form fields together (lmstfy reads `description` and `token` from either).
fn fields(q: HashMap<String, String>, h: &HeaderMap, body: &Bytes) -> HashMap<String, String> {
    let mut all = q;
    let form = h
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
    if form {
        for pair in String::from_utf8_lossy(body).split('&') {
            if let Some((k, v)) = pair.split_once('=') {
                all.entry(auth::percent_decode(k)).or_insert_with(|| auth::percent_decode(v));
            }
        }
    }
    all
}

/// `POST /token/:ns?description=...[&token=...][&read_only=true]`.
async fn new_token(
    State(st): State<AppState>,
    Path(ns): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    admin(&st, &h).await?;
    let f = fields(q, &h, &body);
    let desc =
        f.get("description").filter(|d| !d.is_empty()).ok_or_else(|| ApiError::invalid("invalid description", S))?;
    auth::check_namespace(&ns).map_err(|m| ApiError::invalid(m, S))?;
    let read_only = matches!(f.get("read_only").map(String::as_str), Some("true" | "1"));
    let given = f.get("token").filter(|t| !t.is_empty()).cloned();
    let token = st.tokens.create(&ns, read_only, desc, given).await.api(S)?;
    Ok((StatusCode::CREATED, Json(json!({ "token": token }))).into_response())
}

/// `GET /token/:ns`.
async fn list_tokens(State(st): State<AppState>, Path(ns): Path<String>, h: HeaderMap) -> ApiResult<Response> {
    admin(&st, &h).await?;
    let tokens: serde_json::Map<String, serde_json::Value> =
        st.tokens.list(&ns).await.api(S)?.into_iter().map(|(k, i)| (k, json!(i.description))).collect();
    Ok(Json(json!({ "tokens": tokens })).into_response())
}

/// `DELETE /token/:ns/:token`.
async fn delete_token(
    State(st): State<AppState>,
    Path((ns, token)): Path<(String, String)>,
    h: HeaderMap,
) -> ApiResult<Response> {
    admin(&st, &h).await?;
    st.tokens.revoke(&ns, &token).await.api(S)?;
    st.forget(&token);
    Ok(StatusCode::NO_CONTENT.into_response())
}
