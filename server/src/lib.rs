//! `redelay serve`: an HTTP gateway over the redelay core.
//!
//! - the data listener: lmstfy's API (`/api/...`, [`routes_lmstfy`]) and the native JSON API
//!   (`/v1/...`, [`routes_v1`]), `/healthz`, and `/metrics` when enabled;
//! - the dashboard at `/` ([`dashboard`]: static assets, its data from `/v1`);
//! - the admin listener: lmstfy's token routes ([`routes_admin`]).
//!
//! Every route but `/healthz`, `/metrics` and the dashboard's static assets needs a token
//! ([`auth`]).

pub mod auth;
pub mod config;
pub mod dashboard;
pub mod error;
pub mod routes_admin;
pub mod routes_lmstfy;
pub mod routes_v1;
pub mod state;
pub mod webhook;
pub mod webhook_registry;
pub mod wire;

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rand::RngCore;
use serde_json::json;

pub use config::{LmstfyDefaults, ServerConfig};
pub use state::AppState;

/// Names of the APIs in the answer counters, by index ([`api_of`]).
const APIS: [&str; 5] = ["lmstfy", "v1", "admin", "dashboard", "probe"];

/// Index of an API in the answer counters ([`APIS`]): 0 lmstfy (and unknown routes), 1 v1,
/// 2 admin, 3 the dashboard's files, 4 the probes (`/healthz`, `/metrics`: a load balancer's
/// checks and Prometheus' scrapes, which are no API's answers).
fn api_of(path: &str) -> usize {
    if path.starts_with("/v1") {
        1
    } else if path.starts_with("/token") {
        2
    } else if dashboard::is_asset(path) {
        3
    } else if path == "/healthz" || path == "/metrics" {
        4
    } else {
        0
    }
}

/// Every answer gets an `X-Request-ID` (as lmstfy's do) and is counted for `/metrics`.
async fn stamp(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let api = api_of(req.uri().path());
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let mut res = next.run(req).await;
    // What axum answers itself, in plain text or with no body — a body over the request limit,
    // a method the route does not take — is answered in the API's shape.
    let json = res.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if res.status() == StatusCode::PAYLOAD_TOO_LARGE && !json {
        res = if api == 1 {
            let msg = format!("request body: more than the limit of {} bytes", body_limit(&st));
            error::ApiError::too_large(msg, error::Style::V1)
        } else {
            error::ApiError::too_large("body too large", error::Style::Lmstfy)
        }
        .into_response();
    } else if res.status() == StatusCode::METHOD_NOT_ALLOWED && !json {
        res = if api == 1 {
            let msg = format!("method: {method} is not allowed on {path}");
            let e =
                error::ApiError::new(StatusCode::METHOD_NOT_ALLOWED, error::METHOD_NOT_ALLOWED, msg, error::Style::V1);
            e.into_response()
        } else {
            // lmstfy (gin) answers a route's other methods as an unknown route.
            routes_lmstfy::no_route().await
        };
    }
    let mut b = [0u8; 8];
    rand::rng().fill_bytes(&mut b);
    let id: String = b.iter().map(|x| format!("{x:02x}")).collect();
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert("x-request-id", v);
    }
    st.count(api, res.status().as_u16());
    res
}

/// What a request's body was, as its handler read it: its chunks (shared with the handler's,
/// not copied) and whether it was read to its end.
#[derive(Default)]
struct KeptBody {
    chunks: Vec<axum::body::Bytes>,
    whole: bool,
}

/// A request answered with an error that asks for its queue to be opened anew
/// ([`error::Reopen`]: the core refused the gateway's kept handle for its shard count, the queue
/// having been destroyed and made again with another count by another client since the handle
/// was opened; nothing was written) is answered again, once, after its handle is dropped, so
/// that the queue is opened with the count now stored in Redis, instead of answering 400 until
/// the kept handle ages out. The body goes to the second run as the handler read it; a request
/// whose body was not read to its end is not run again.
async fn reopen_and_retry(State(st): State<AppState>, req: Request, next: Next) -> Response {
    use axum::body::{Body, HttpBody};
    use futures_util::{stream, StreamExt};
    type Chunk = Result<axum::body::Bytes, axum::Error>;
    let (parts, body) = req.into_parts();
    let kept = Arc::new(Mutex::new(KeptBody::default()));
    let body = if body.is_end_stream() {
        kept.lock().unwrap().whole = true;
        body
    } else {
        let (seen, end) = (kept.clone(), kept.clone());
        let chunks = body.into_data_stream().map(move |c: Chunk| {
            if let Ok(b) = &c {
                seen.lock().unwrap().chunks.push(b.clone());
            }
            c
        });
        let end = stream::once(async move {
            end.lock().unwrap().whole = true;
            None::<Chunk>
        })
        .filter_map(std::future::ready);
        Body::from_stream(chunks.chain(end))
    };
    let mut res = next.clone().run(Request::from_parts(parts.clone(), body)).await;
    let Some(error::Reopen(queue)) = res.extensions_mut().remove::<error::Reopen>() else { return res };
    let body = {
        let k = kept.lock().unwrap();
        if !k.whole {
            return res;
        }
        Body::from_stream(stream::iter(k.chunks.clone().into_iter().map(Ok::<_, std::convert::Infallible>)))
    };
    tracing::info!(
        target: "redelay::server",
        "queue {queue:?} has another shard count in Redis than this server's handle: opened anew, answering again"
    );
    st.drop_handle(&queue);
    let mut res = next.run(Request::from_parts(parts, body)).await;
    res.extensions_mut().remove::<error::Reopen>();
    res
}

async fn healthz(State(st): State<AppState>) -> Response {
    match st.client.ping().await {
        Ok(()) => Json(json!({ "status": "ok" })).into_response(),
        Err(e) => {
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "down", "error": e.message() }))).into_response()
        }
    }
}

async fn metrics(State(st): State<AppState>) -> Response {
    let mut out = String::from(
        "# HELP redelay_http_answers_total HTTP answers of redelay serve by API and status class.\n# TYPE redelay_http_answers_total counter\n",
    );
    for (api, name) in APIS.iter().enumerate() {
        for class in 0..5 {
            let n = st.answers[api][class].load(Ordering::Relaxed);
            let _ = writeln!(out, "redelay_http_answers_total{{api=\"{name}\",code=\"{}xx\"}} {n}", class + 1);
        }
    }
    ([("content-type", "text/plain; version=0.0.4")], out).into_response()
}

async fn fallback(req: Request) -> Response {
    if req.uri().path().starts_with("/v1") {
        error::ApiError::new(StatusCode::NOT_FOUND, error::NO_ROUTE, "no such route", error::Style::V1).into_response()
    } else {
        routes_lmstfy::no_route().await
    }
}

/// Largest request body: a body of the client's limit as base64 in JSON, and room for headers.
fn body_limit(st: &AppState) -> usize {
    st.client_max_body() / 3 * 4 + (1 << 20)
}

/// The data listener's routes.
pub fn data_router(st: AppState) -> Router {
    let mut r = Router::new()
        .route("/healthz", get(healthz))
        .merge(routes_lmstfy::router())
        .merge(routes_v1::router())
        .merge(dashboard::router())
        .fallback(fallback);
    if st.config.metrics {
        r = r.route("/metrics", get(metrics));
    }
    r.layer(DefaultBodyLimit::max(body_limit(&st)))
        .layer(middleware::from_fn_with_state(st.clone(), reopen_and_retry))
        .layer(middleware::from_fn_with_state(st.clone(), stamp))
        .with_state(st)
}

/// The admin listener's routes.
pub fn admin_router(st: AppState) -> Router {
    routes_admin::router()
        .route("/healthz", get(healthz))
        .fallback(routes_lmstfy::no_route)
        .layer(DefaultBodyLimit::max(1 << 16))
        .layer(middleware::from_fn_with_state(st.clone(), stamp))
        .with_state(st)
}

/// How long requests in flight (long-polls) may finish after a shutdown is asked for.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves on already bound listeners until `shutdown` resolves; starts the webhooks. After
/// `shutdown`, requests in flight get [`SHUTDOWN_GRACE`] to finish; long-polls still waiting
/// then are cut (what they lease later is released).
pub async fn run(
    st: AppState,
    data: tokio::net::TcpListener,
    admin: Option<tokio::net::TcpListener>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let wait = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|v| *v).await;
    };
    webhook::start(&st, rx.clone());
    let data_srv = axum::serve(data, data_router(st.clone())).with_graceful_shutdown(wait(rx.clone()));
    let admin_srv = admin.map(|l| axum::serve(l, admin_router(st.clone())).with_graceful_shutdown(wait(rx.clone())));
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    let servers = async {
        match admin_srv {
            Some(a) => {
                let (x, y) = tokio::join!(async { data_srv.await }, async { a.await });
                x.and(y)
            }
            None => data_srv.await,
        }
    };
    let mut rx = rx;
    let grace_over = async move {
        let _ = rx.wait_for(|v| *v).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        r = servers => r,
        _ = grace_over => Ok(()),
    }
}

/// The first stop signal, named: SIGINT (Ctrl-C) or SIGTERM (what `kill`, systemd, Docker and
/// Kubernetes send to stop a service). The signals are caught from this call on, not from the
/// first poll, so that one sent as soon as the server says it listens stops it gracefully. A
/// signal that cannot be listened to is waited on never, rather than taken as received.
fn stop_signal() -> impl std::future::Future<Output = &'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let recv = |kind| {
            let s = signal(kind).ok();
            async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
        };
        let (int, term) = (recv(SignalKind::interrupt()), recv(SignalKind::terminate()));
        async move {
            tokio::select! {
                () = int => "SIGINT",
                () = term => "SIGTERM",
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        "SIGINT"
    }
}

/// `redelay serve`: connects the token store, binds the listeners, serves until Ctrl-C
/// (SIGINT) or SIGTERM.
pub async fn serve(client: redelay::Client, config: ServerConfig) -> redelay::Result<()> {
    let tokens = auth::TokenStore::new(&client)?;
    webhook::http_client(&config)?;
    let bind = |a| async move {
        tokio::net::TcpListener::bind(a)
            .await
            .map_err(|e| redelay::Error::invalid(format!("listen: cannot bind {a}: {e}")))
    };
    let data = bind(config.listen).await?;
    let admin = match config.admin_listen {
        Some(a) => Some(bind(a).await?),
        None => None,
    };
    // The bound addresses, so that a port 0 (any free one) prints the port it got.
    let stop = stop_signal();
    let data_addr = data.local_addr().unwrap_or(config.listen);
    let admin_addr = admin.as_ref().and_then(|l| l.local_addr().ok().or(config.admin_listen));
    eprintln!(
        "redelay serve: data API on http://{0} (lmstfy /api, native /v1), dashboard on http://{0}/{1}",
        data_addr,
        admin_addr.map(|a| format!(", admin (tokens) on http://{a}")).unwrap_or_default()
    );
    if config.admin_token.is_none() {
        eprintln!("redelay serve: no admin token: create namespace tokens with `redelay token create NAMESPACE`");
    }
    let st = AppState::new(client.clone(), tokens, config);
    let r = run(st, data, admin, async {
        let sig = stop.await;
        eprintln!("redelay serve: {sig}: stopping (requests in flight get {} s)", SHUTDOWN_GRACE.as_secs());
    })
    .await;
    client.close().await;
    r.map_err(|e| redelay::Error::new(redelay::ErrorKind::Connection, format!("serve: {e}")))
}
