//! The dashboard: a page, a script and a style sheet embedded in the binary, served at `/`
//! without a token. The page asks for a token (kept in the tab's sessionStorage) and sends it
//! with every `/v1` call it makes, so it sees and does exactly what the token allows. No CDN, no
//! build step: plain HTML, CSS and a JavaScript module drawing its charts in SVG.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::state::AppState;

pub const INDEX: &str = include_str!("../assets/index.html");
pub const SCRIPT: &str = include_str!("../assets/dashboard.mjs");
pub const STYLE: &str = include_str!("../assets/dashboard.css");
pub const ICON: &str = include_str!("../assets/icon.svg");

/// The page may load only its own script, style and API (no inline script, no other origin),
/// and may not be framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

/// The paths of the dashboard's files.
const PATHS: [&str; 4] = ["/", "/dashboard.mjs", "/dashboard.css", "/icon.svg"];

pub fn is_asset(path: &str) -> bool {
    PATHS.contains(&path)
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/dashboard.mjs", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/dashboard.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
        .route("/icon.svg", get(|| async { asset("image/svg+xml", ICON) }))
}
