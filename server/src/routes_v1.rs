//! The native JSON API, `/v1/...`: everything redelay has, in milliseconds, with ids, headers
//! and lease tokens. Queues are named as in the core; a namespace token covers the queues
//! `NAMESPACE:...` (those the lmstfy API makes), the admin token every queue. Errors are
//! `{"error": {"code": "ERR_REDELAY_...", "message": ...}}` with the status of the core's kind
//! (`error::status_of`). The routes are listed in `openapi.json`, served at `/v1/openapi.json`.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequestParts, MatchedPath, Path, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use redelay::wire::to_json;
use redelay::{BulkOptions, Due, Queue, RespawnOptions, Search, State as MsgState, Step};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::auth::Access;
use crate::error::{ApiError, ApiResult, CoreExt, Style};
use crate::state::AppState;
use crate::{webhook, wire};

const S: Style = Style::V1;

/// The OpenAPI 3.1 document of this API.
pub const OPENAPI: &str = include_str!("openapi.json");

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/whoami", get(whoami))
        .route("/v1/queues", get(queues))
        .route("/v1/overview", get(overview))
        .route("/v1/fetch", post(fetch_many))
        .route("/v1/queues/{queue}", delete(destroy))
        .route("/v1/queues/{queue}/messages", post(publish).get(list))
        .route("/v1/queues/{queue}/messages/batch", post(publish_batch))
        .route("/v1/queues/{queue}/messages/{id}", get(peek).delete(cancel))
        .route("/v1/queues/{queue}/messages/{id}/ack", post(ack))
        .route("/v1/queues/{queue}/messages/{id}/nack", post(nack))
        .route("/v1/queues/{queue}/messages/{id}/release", post(release))
        .route("/v1/queues/{queue}/messages/{id}/extend", post(extend))
        .route("/v1/queues/{queue}/messages/{id}/reschedule", post(reschedule))
        .route("/v1/queues/{queue}/fetch", post(fetch))
        .route("/v1/queues/{queue}/stats", get(stats))
        .route("/v1/queues/{queue}/verify", post(verify))
        .route("/v1/queues/{queue}/pause", post(pause))
        .route("/v1/queues/{queue}/resume", post(resume))
        .route("/v1/queues/{queue}/history", get(history).put(set_history))
        .route("/v1/queues/{queue}/history/totals", get(history_totals))
        .route("/v1/queues/{queue}/upcoming", get(upcoming))
        .route("/v1/queues/{queue}/search", get(search))
        .route("/v1/queues/{queue}/dead", get(dead))
        .route("/v1/queues/{queue}/dead/respawn", post(respawn))
        .route("/v1/queues/{queue}/dead/purge", post(purge))
        .route("/v1/queues/{queue}/dead/errors", get(dead_errors))
        .route("/v1/queues/{queue}/bulk", post(bulk))
        .route("/v1/queues/{queue}/webhook", get(get_hook).put(put_hook).delete(delete_hook))
}

/// The namespace of a queue: what comes before its first `:` (None without one).
pub fn namespace_of(queue: &str) -> Option<&str> {
    queue.split_once(':').map(|(ns, _)| ns)
}

/// The query parameters each route reads, by method and route (besides `token`, which every
/// route takes): any other is refused (400), so that a misspelt `limt=5` does not quietly give
/// the default, nor `DELETE /v1/queues/q?confirm=no` destroy the queue. A route not listed reads
/// none. `openapi.json` lists the same (a test checks).
pub const QUERY_PARAMS: &[(&str, &str, &[&str])] = &[
    ("GET", "/v1/overview", &["offset", "limit", "contains"]),
    ("GET", "/v1/queues/{queue}/messages", &["state", "offset", "limit"]),
    ("GET", "/v1/queues/{queue}/history", &["since_ms", "until_ms", "step"]),
    ("GET", "/v1/queues/{queue}/upcoming", &["from_ms", "width_ms", "buckets"]),
    ("GET", "/v1/queues/{queue}/search", &["id_prefix", "header", "body", "error", "cursor"]),
    ("GET", "/v1/queues/{queue}/dead", &["offset", "limit"]),
    ("GET", "/v1/queues/{queue}/messages/{id}", &["body"]),
];

/// The query parameters the route `path` reads with `method` ([`QUERY_PARAMS`]; a HEAD is its
/// GET).
pub fn query_params(method: &str, path: &str) -> &'static [&'static str] {
    let method = if method == "HEAD" { "GET" } else { method };
    QUERY_PARAMS.iter().find(|(m, p, _)| *m == method && *p == path).map_or(&[], |(_, _, reads)| reads)
}

/// An authenticated request (401 otherwise) and what its token allows, with its query: only
/// the parameters its route reads ([`QUERY_PARAMS`]; another is a 400 naming it).
pub struct Auth {
    pub st: AppState,
    pub access: Access,
    pub q: HashMap<String, String>,
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> ApiResult<Self> {
        let access = st.access(&parts.headers, parts.uri.query(), S).await?;
        let Query(q) = Query::<HashMap<String, String>>::from_request_parts(parts, st)
            .await
            .map_err(|e| ApiError::invalid(format!("query: {e}"), S))?;
        let route = parts.extensions.get::<MatchedPath>().map_or("", MatchedPath::as_str);
        let reads = query_params(parts.method.as_str(), route);
        // (Sorted, so that of several the error names the same one every time.)
        let mut unknown: Vec<&String> = q.keys().filter(|k| *k != "token" && !reads.contains(&k.as_str())).collect();
        unknown.sort();
        if let Some(k) = unknown.first() {
            let expected = if reads.is_empty() {
                "this route reads none".to_string()
            } else {
                format!("expected {}", reads.join(", "))
            };
            return Err(ApiError::invalid(format!("{k}: unknown query parameter; {expected}"), S));
        }
        Ok(Auth { st: st.clone(), access, q })
    }
}

impl Auth {
    /// The handle of `name` if the token may act on it (403 otherwise).
    pub async fn open(&self, name: &str, write: bool) -> ApiResult<Queue> {
        self.access.check(namespace_of(name), write, S)?;
        self.st.queue(name, S).await
    }

    /// The query parameter `name` as a whole number, if given.
    fn num<T: std::str::FromStr>(&self, name: &str) -> ApiResult<Option<T>> {
        let Some(v) = self.q.get(name) else { return Ok(None) };
        v.parse().map(Some).map_err(|_| {
            // A whole number that does not parse is a negative one for an unsigned field.
            let what = if v.parse::<i64>().is_ok() { "a whole number >= 0" } else { "a whole number" };
            ApiError::invalid(format!("{name}: must be {what}, got {v:?}"), S)
        })
    }
}

/// A request on one queue (and maybe one message id): authenticated, and allowed on that
/// queue's namespace — for `WRITE`, by a token that is not read-only.
pub struct On<const WRITE: bool> {
    pub a: Auth,
    pub queue: Queue,
    pub id: String,
}

impl<const WRITE: bool> FromRequestParts<AppState> for On<WRITE> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> ApiResult<Self> {
        let a = Auth::from_request_parts(parts, st).await?;
        let Path(mut p) = Path::<HashMap<String, String>>::from_request_parts(parts, st)
            .await
            .map_err(|e| ApiError::invalid(format!("path: {e}"), S))?;
        let queue = a.open(&p.remove("queue").unwrap_or_default(), WRITE).await?;
        Ok(On { a, queue, id: p.remove("id").unwrap_or_default() })
    }
}

pub type Read = On<false>;
pub type Write = On<true>;

/// A JSON body in the core's wire forms (`redelay::wire`: an error names the field); an empty
/// body is `{}`.
pub fn parse<T: DeserializeOwned>(body: &Bytes) -> ApiResult<T> {
    let v = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body).map_err(|e| ApiError::invalid(format!("body: not JSON: {e}"), S))?
    };
    // Every body is an object: another JSON value is named as such, not as serde's "invalid
    // length 1, expected an object".
    let kind = match &v {
        Value::Object(_) => None,
        Value::Array(_) => Some("an array"),
        Value::String(_) => Some("a string"),
        Value::Number(_) => Some("a number"),
        Value::Bool(_) => Some("a boolean"),
        Value::Null => Some("null"),
    };
    redelay::wire::from_json(v).map_err(|e| match kind {
        Some(k) => ApiError::invalid(format!("body: expected a JSON object, got {k}"), S),
        None => ApiError::core(e, S),
    })
}

/// The body of a route that takes none: empty, or an empty JSON object (`{}`, what some clients
/// send with every POST). Anything else is refused rather than ignored, naming the field.
fn no_body(body: &Bytes) -> ApiResult<()> {
    match parse::<Value>(body)? {
        Value::Object(m) if m.is_empty() => Ok(()),
        Value::Object(m) => {
            let k = m.keys().next().map_or("", String::as_str);
            Err(ApiError::invalid(format!("{k}: unknown field `{k}`, this route takes no body"), S))
        }
        _ => Err(ApiError::invalid("body: this route takes no body (send none, or {})", S)),
    }
}

fn ok(v: Value) -> ApiResult<Response> {
    Ok(Json(v).into_response())
}

async fn openapi(_a: Auth) -> Response {
    ([("content-type", "application/json")], OPENAPI).into_response()
}

/// `GET /v1/whoami`: what the request's token allows (the dashboard hides the actions of a
/// read-only token; the routes refuse them anyway).
async fn whoami(a: Auth) -> Response {
    Json(json!({ "admin": a.access.admin, "namespace": a.access.namespace, "read_only": a.access.read_only }))
        .into_response()
}

/// The queues published to that the token may see, by name.
async fn visible(a: &Auth) -> ApiResult<Vec<String>> {
    Ok(seen_by(a, a.st.client.queues().await.api(S)?))
}

/// Of the queues `names`, those the token may see.
fn seen_by(a: &Auth, names: Vec<String>) -> Vec<String> {
    names.into_iter().filter(|n| a.access.check(namespace_of(n), false, S).is_ok()).collect()
}

/// `GET /v1/queues`: the queues published to that the token may see.
async fn queues(a: Auth) -> ApiResult<Response> {
    let names = visible(&a).await?;
    ok(json!({ "queues": names }))
}

/// Queues on one overview page at most. Each costs a stats and a history call, all sent at
/// once: this is the gateway's bound on what one request asks of Redis, not a core limit (the
/// core's [`MAX_FETCH`](redelay::limits::MAX_FETCH) bounds a page of messages, another thing).
pub const MAX_OVERVIEW_PAGE: usize = 1000;

/// `GET /v1/overview?offset=&limit=&contains=`: a page (default 100, at most 1000) of the
/// queues the token may see — with `contains`, of those whose name contains that text (ASCII
/// letters in either case) — each with its stats and its last hour: counts, deliveries in the
/// last minute, and the lateness buckets holding p50 and p99 — what a dashboard's overview
/// shows, in one request. The hour ends now by the Redis clock (of each queue's node). The
/// filter costs Redis nothing more: the registry is read whole (one SMEMBERS) either way, and
/// only the page's queues are asked for their stats; `total` counts the queues that match.
/// A registered name the core refuses to open (`.` or `..`, stored before such names were
/// refused) is no row: it is listed in `unreachable`, so that it neither fails every page
/// (it did: a 400) nor goes unseen. A queue whose stats or history fail (a sharded queue with
/// a shard out of reach, its node down) is a row `{"queue", "error"}` ([`wire::queue_error`])
/// and the page answers with every other queue as usual; its warning is logged once when it
/// becomes unreadable and an info line when it is read again, not at every poll.
async fn overview(a: Auth) -> ApiResult<Response> {
    let offset = a.num::<usize>("offset")?.unwrap_or(0);
    // A page of queues is as long as a page of any listing unless asked otherwise.
    let limit = a.num::<usize>("limit")?.unwrap_or(redelay::limits::DEFAULT_PAGE_LIMIT);
    if limit == 0 || limit > MAX_OVERVIEW_PAGE {
        return Err(ApiError::invalid(format!("limit: must be 1 to {MAX_OVERVIEW_PAGE}, got {limit}"), S));
    }
    let registered = a.st.client.queues().await.api(S)?;
    // A queue no longer registered (destroyed) is no longer one that cannot be read.
    a.st.overview_registered(&registered);
    let mut names = seen_by(&a, registered);
    if let Some(text) = a.q.get("contains").map(|t| t.to_ascii_lowercase()) {
        names.retain(|n| n.to_ascii_lowercase().contains(&text));
    }
    let (names, unreachable): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|n| a.st.client.queue(n).is_ok());
    let total = names.len();
    let page: Vec<&String> = names.iter().skip(offset).take(limit).collect();
    let a = &a;
    let rows = futures_util::future::join_all(page.into_iter().map(|n| async move {
        let row = match overview_row(a, n).await {
            // Made again with another count since this server opened it: opened anew, once.
            Err(e) if e.shard_count_mismatch().is_some() => {
                a.st.drop_handle(n);
                overview_row(a, n).await
            }
            row => row,
        };
        match row {
            Ok(row) => {
                a.st.overview_read(n);
                row
            }
            Err(e) => {
                // Logged once per outage of the queue (`AppState::overview_failed`), not
                // per poll as a failed request is.
                let e = e.spelled(redelay::Spelling::SnakeMs);
                a.st.overview_failed(n, &e);
                wire::queue_error(n, &e)
            }
        }
    }))
    .await;
    ok(json!({ "total": total, "queues": rows, "unreachable": unreachable }))
}

/// A row of the overview: a queue's stats and its last hour (the token may read every queue
/// [`visible`] lists).
async fn overview_row(a: &Auth, n: &str) -> redelay::Result<Value> {
    let q = a.st.queue_handle(n).await?;
    let (stats, hour) = tokio::try_join!(q.stats(), async {
        let now = q.redis_now().await?;
        q.history(now - Duration::from_secs(3600), now, Step::Minute).await
    })?;
    let last_minute = hour.last().map_or(0, |p| p.delivered);
    let sum = hour.iter().skip(1).fold(hour.first().cloned(), |acc, p| {
        acc.map(|mut a| {
            a.add(p);
            a
        })
    });
    let mut row = wire::queue_stats(n, &stats);
    row["last_hour"] = sum.as_ref().map_or(Value::Null, wire::point);
    row["delivered_last_minute"] = json!(last_minute);
    row["lateness_p50_below_ms"] = row["last_hour"]["lateness_p50_below_ms"].clone();
    row["lateness_p99_below_ms"] = row["last_hour"]["lateness_p99_below_ms"].clone();
    Ok(row)
}

/// `POST /v1/queues/{queue}/messages`: one message; 201 `{"id","status"}`.
async fn publish(r: Write, body: Bytes) -> ApiResult<Response> {
    let (b, o) = wire::publish_parts(parse(&body)?).map_err(|m| ApiError::invalid(m, S))?;
    let p = r.queue.publish(o.message(b).api(S)?).await.api(S)?;
    Ok((StatusCode::CREATED, Json(to_json(&p))).into_response())
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Batch {
    messages: Vec<Value>,
}

/// `POST /v1/queues/{queue}/messages/batch`: all stored, or none (an error names the message).
async fn publish_batch(r: Write, body: Bytes) -> ApiResult<Response> {
    let b: Batch = parse(&body)?;
    let items = b
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| wire::publish_parts(m).map_err(|e| ApiError::invalid(format!("message {i}: {e}"), S)))
        .collect::<ApiResult<Vec<_>>>()?;
    let msgs = redelay::batch_messages(items).api(S)?;
    let res: Vec<Value> = r.queue.publish_batch(msgs).await.api(S)?.into_iter().map(|p| to_json(&p)).collect();
    Ok((StatusCode::CREATED, Json(json!({ "results": res }))).into_response())
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchRequest {
    /// Several queues, in priority order (`/v1/fetch` only).
    #[serde(default)]
    queues: Vec<String>,
    max: Option<usize>,
    #[serde(default, with = "redelay::wire::opt_ms")]
    wait_ms: Option<Duration>,
    #[serde(default, with = "redelay::wire::opt_ms")]
    ttr_ms: Option<Duration>,
}

async fn fetch_from(st: &AppState, qs: Vec<Queue>, f: &FetchRequest) -> ApiResult<Response> {
    let (max, wait) = (f.max.unwrap_or(redelay::limits::DEFAULT_FETCH_MAX), f.wait_ms.unwrap_or_default());
    let got = st.fetch(qs, max, wait, f.ttr_ms, S).await?;
    ok(json!({ "messages": got.iter().map(wire::delivery).collect::<Vec<_>>() }))
}

/// `POST /v1/queues/{queue}/fetch` `{max, wait_ms, ttr_ms}`: leased messages, each with its
/// lease token (ack, nack or extend it before its `lease_deadline_ms`).
async fn fetch(r: Write, body: Bytes) -> ApiResult<Response> {
    let f: FetchRequest = parse(&body)?;
    if !f.queues.is_empty() {
        return Err(ApiError::invalid("queues: only for /v1/fetch", S));
    }
    fetch_from(&r.a.st, vec![r.queue.clone()], &f).await
}

/// `POST /v1/fetch` `{queues, max, wait_ms, ttr_ms}`: from the first of the queues with due
/// messages, in priority order; the wait ends at a publish to any of them.
async fn fetch_many(a: Auth, body: Bytes) -> ApiResult<Response> {
    let f: FetchRequest = parse(&body)?;
    let mut qs = Vec::with_capacity(f.queues.len());
    for n in &f.queues {
        qs.push(a.open(n, true).await?);
    }
    fetch_from(&a.st, qs, &f).await
}

/// The lease token every settle needs: without one the request is malformed (400), not a
/// lost lease (409).
fn lease_token(token: &Option<String>) -> ApiResult<&str> {
    let t = token.as_deref().filter(|t| !t.is_empty());
    t.ok_or_else(|| ApiError::invalid("token: required (the lease token the fetch returned)", S))
}

// One body per settle, each with only the fields that settle reads: another one (a nack's
// `retry_in_ms` given to a release) is a 400 naming it, not a field quietly ignored.

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AckBody {
    token: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NackBody {
    token: Option<String>,
    /// The retry's delay in ms (fractions allowed), read by the core's rule of every retry delay
    /// (`redelay::limits::retry_delay`, as in every language).
    retry_in_ms: Option<f64>,
    /// The old name of `retry_in_ms`, still accepted.
    delay_ms: Option<f64>,
    #[serde(default)]
    reason: String,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseBody {
    token: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtendBody {
    token: Option<String>,
    #[serde(default, with = "redelay::wire::opt_ms")]
    ttr_ms: Option<Duration>,
}

/// `POST .../messages/{id}/ack` `{token}`.
async fn ack(r: Write, body: Bytes) -> ApiResult<Response> {
    let s: AckBody = parse(&body)?;
    r.queue.ack(&r.id, lease_token(&s.token)?).await.api(S)?;
    ok(json!({ "acked": true }))
}

/// `POST .../messages/{id}/nack` `{token, retry_in_ms?, reason?}`: retried after `retry_in_ms`
/// (or the message's backoff), or dead at its last attempt: `{"dead": bool}`. `delay_ms` is
/// the old name of `retry_in_ms`.
async fn nack(r: Write, body: Bytes) -> ApiResult<Response> {
    let s: NackBody = parse(&body)?;
    let retry_in = match (s.retry_in_ms, s.delay_ms) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "retry_in_ms/delay_ms: give one of them, not both (delay_ms is the old name)",
                S,
            ))
        }
        (r, d) => r.or(d).map(redelay::limits::retry_delay).transpose().api(S)?,
    };
    let dead = r.queue.nack(&r.id, lease_token(&s.token)?, retry_in, &s.reason).await.api(S)?;
    ok(json!({ "dead": dead }))
}

/// `POST .../messages/{id}/release` `{token}`: handed back unprocessed, due now, no attempt
/// counted (for a worker that cannot start the work, e.g. while shutting down).
async fn release(r: Write, body: Bytes) -> ApiResult<Response> {
    let s: ReleaseBody = parse(&body)?;
    r.queue.release(&r.id, lease_token(&s.token)?).await.api(S)?;
    ok(json!({ "released": true }))
}

/// `POST .../messages/{id}/extend` `{token, ttr_ms}`: the lease runs `ttr_ms` from now.
async fn extend(r: Write, body: Bytes) -> ApiResult<Response> {
    let s: ExtendBody = parse(&body)?;
    let ttr = s.ttr_ms.ok_or_else(|| ApiError::invalid("ttr_ms: required", S))?;
    r.queue.extend(&r.id, lease_token(&s.token)?, ttr).await.api(S)?;
    ok(json!({ "extended": true }))
}

/// `DELETE .../messages/{id}`: deleted wherever it is; 404 when there is no such id.
async fn cancel(r: Write, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    if !r.queue.cancel(&r.id).await.api(S)? {
        return Err(ApiError::core(
            redelay::Error::new(redelay::ErrorKind::NotFound, format!("no message with id {:?}", r.id)),
            S,
        ));
    }
    ok(wire::cancelled())
}

/// `DELETE /v1/queues/{queue}`: the whole queue — every message in every state, its
/// settings and counters, and its name from the registry (the core's `Queue::destroy`; a
/// sharded queue's shards and shard count too): `{"destroyed": true}`, also for a queue that
/// did not exist. Its webhook, if any, is deleted too, first: the answer comes once this
/// server's worker of it has stopped (what it had fetched but not POSTed released), so nothing
/// of the queue is pushed afterwards (`webhook::sync`).
async fn destroy(r: Write, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    let st = &r.a.st;
    // Nothing of the queue stays: a webhook left behind would push its next messages.
    if webhook::stored(st)?.delete(r.queue.name()).await.api(S)? {
        webhook::sync(st).await;
    }
    r.queue.destroy().await.api(S)?;
    st.forget_queue(r.queue.name());
    ok(wire::destroyed())
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct When {
    /// Milliseconds as every `*_ms` duration of the core's wire forms (a negative one is
    /// refused in the core's words).
    #[serde(default, with = "redelay::wire::opt_ms")]
    delay_ms: Option<Duration>,
    at_ms: Option<i64>,
}

/// `POST .../messages/{id}/reschedule` `{delay_ms | at_ms}`: `{"due_at_ms"}`.
async fn reschedule(r: Write, body: Bytes) -> ApiResult<Response> {
    let w: When = parse(&body)?;
    let due = Due::required(w.delay_ms, w.at_ms.map(wire::time)).api(S)?;
    let at = r.queue.reschedule(&r.id, due).await.api(S)?;
    ok(wire::rescheduled(at))
}

/// `GET .../messages/{id}`: the message, whatever its state; 404 when there is none.
/// `GET .../messages/{id}?body=`: the message; with `body=false`, without its body (its size as
/// `body_bytes`), for polling one whose body is large.
async fn peek(r: Read) -> ApiResult<Response> {
    let with_body = match r.a.q.get("body").map(String::as_str) {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => return Err(ApiError::invalid(format!("body: must be true or false, got {v:?}"), S)),
    };
    match r.queue.peek(&r.id).await.api(S)? {
        Some(m) if with_body => ok(wire::message(&m)),
        Some(m) => ok(wire::message_without_body(&m)),
        None => Err(ApiError::core(
            redelay::Error::new(redelay::ErrorKind::NotFound, format!("no message with id {:?}", r.id)),
            S,
        )),
    }
}

fn state_of(s: &str) -> ApiResult<MsgState> {
    Ok(match s {
        "scheduled" => MsgState::Scheduled,
        "ready" => MsgState::Ready,
        "leased" => MsgState::Leased,
        "dead" => MsgState::Dead,
        _ => return Err(ApiError::invalid(format!("state: one of scheduled, ready, leased, dead; got {s:?}"), S)),
    })
}

/// `GET /v1/queues/{queue}/messages?state=&offset=&limit=`: a page of one state, in order.
async fn list(r: Read) -> ApiResult<Response> {
    let state = state_of(r.a.q.get("state").map_or("ready", String::as_str))?;
    let limit = r.a.num("limit")?.unwrap_or(redelay::limits::DEFAULT_PAGE_LIMIT);
    let page = r.queue.list(state, r.a.num("offset")?.unwrap_or(0), limit).await.api(S)?;
    ok(wire::list_page(&page))
}

async fn stats(r: Read) -> ApiResult<Response> {
    ok(to_json(&r.queue.stats().await.api(S)?))
}

/// `POST .../verify`: the invariant, checked atomically (O(n)). No body.
async fn verify(r: Read, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    ok(wire::verified(&r.queue.verify().await.api(S)?))
}

/// `POST .../pause`: consumers get nothing until a resume: `{"changed"}`. No body.
async fn pause(r: Write, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    ok(wire::changed(r.queue.pause().await.api(S)?))
}

/// `POST .../resume`: `{"changed"}`. No body.
async fn resume(r: Write, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    ok(wire::changed(r.queue.resume().await.api(S)?))
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistorySwitch {
    on: Option<bool>,
}

/// `PUT .../history` `{"on": true|false}`: the queue's history counters on (the default) or
/// off, for every client: `{"changed"}` (false when they already were so).
async fn set_history(r: Write, body: Bytes) -> ApiResult<Response> {
    const NEED: &str = "on: required, true or false";
    let s: HistorySwitch = parse(&body).map_err(|e| {
        // A field's error names it already (`on: invalid type …`, `x: unknown field …`); a
        // body that is not a JSON object is told the field it lacks.
        if e.message.starts_with("on: ") || e.message.contains("unknown field") {
            e
        } else {
            ApiError::invalid(format!("{NEED} ({})", e.message), S)
        }
    })?;
    let on = s.on.ok_or_else(|| ApiError::invalid(NEED, S))?;
    ok(wire::changed(r.queue.set_history(on).await.api(S)?))
}

/// A time given in the query (`since_ms`, `until_ms`, `from_ms`): ms since the Unix epoch, from the epoch
/// to [`MAX_DELAY`](redelay::limits::MAX_DELAY) (10 years) from now by this machine's clock —
/// the range of a message's `at_ms` — or a 400 naming the field and the range.
fn query_time(a: &Auth, name: &str) -> ApiResult<Option<i64>> {
    let Some(t) = a.num::<i64>(name)? else { return Ok(None) };
    let ahead = redelay::limits::MAX_DELAY;
    let latest = wire::ms(std::time::SystemTime::now()).saturating_add(ahead.as_millis() as i64);
    if !(0..=latest).contains(&t) {
        return Err(ApiError::invalid(
            format!(
                "{name}: must be 0 (the Unix epoch) to {} days from now, in ms since the epoch; got {t}",
                ahead.as_secs() / 86_400
            ),
            S,
        ));
    }
    Ok(Some(t))
}

/// `GET .../history?since_ms=&until_ms=&step=minute|hour|day` (default: the last hour by
/// minute, until now by the Redis clock). Each time within the epoch and 10 years from now.
async fn history(r: Read) -> ApiResult<Response> {
    let step = r.a.q.get("step").map_or("minute", String::as_str);
    let Some(step) = Step::ALL.into_iter().find(|s| s.name() == step) else {
        return Err(ApiError::invalid(format!("step: minute, hour or day, got {step:?}"), S));
    };
    let since = query_time(&r.a, "since_ms")?;
    let until = match query_time(&r.a, "until_ms")? {
        Some(t) => t,
        None => wire::ms(r.queue.redis_now().await.api(S)?),
    };
    let since = since.unwrap_or(until.saturating_sub(3_600_000).max(0));
    let pts = r.queue.history(wire::time(since), wire::time(until), step).await.api(S)?;
    ok(wire::history(&pts))
}

async fn history_totals(r: Read) -> ApiResult<Response> {
    ok(wire::point(&r.queue.history_totals().await.api(S)?))
}

/// The width of an upcoming bucket when the query does not say: a minute.
pub const DEFAULT_UPCOMING_WIDTH_MS: u64 = 60_000;
/// The upcoming buckets when the query does not say: an hour of minutes (at most the core's
/// [`MAX_UPCOMING_BUCKETS`](redelay::limits::MAX_UPCOMING_BUCKETS)).
pub const DEFAULT_UPCOMING_BUCKETS: usize = 60;

/// `GET .../upcoming?from_ms=&width_ms=&buckets=` (default: the next hour by minute, from now
/// by the Redis clock). `from_ms` within the epoch and 10 years from now, as `since_ms`.
async fn upcoming(r: Read) -> ApiResult<Response> {
    let from = match query_time(&r.a, "from_ms")? {
        Some(t) => t,
        None => wire::ms(r.queue.redis_now().await.api(S)?),
    };
    let width = r.a.num::<u64>("width_ms")?.unwrap_or(DEFAULT_UPCOMING_WIDTH_MS);
    let n = r.a.num::<usize>("buckets")?.unwrap_or(DEFAULT_UPCOMING_BUCKETS);
    let b = r.queue.upcoming(wire::time(from), Duration::from_millis(width), n).await.api(S)?;
    ok(wire::upcoming(&b))
}

/// `GET .../search?id_prefix= | header=NAME:VALUE | body= | error=` and `cursor=`: one bounded
/// step; call again with the returned cursor until it is null.
async fn search(r: Read) -> ApiResult<Response> {
    let q = &r.a.q;
    let what = match (q.get("id_prefix"), q.get("header"), q.get("body"), q.get("error")) {
        (Some(p), None, None, None) => Search::IdPrefix(p.clone()),
        (None, Some(h), None, None) => {
            let (k, v) = h.split_once(':').ok_or_else(|| ApiError::invalid("header: NAME:VALUE", S))?;
            Search::Header(k.to_string(), v.to_string())
        }
        (None, None, Some(b), None) => Search::Body(b.clone().into_bytes()),
        (None, None, None, Some(e)) => Search::Error(e.clone()),
        _ => return Err(ApiError::invalid("id_prefix/header/body/error: give exactly one of them", S)),
    };
    let page = r.queue.search(&what, q.get("cursor").map(String::as_str)).await.api(S)?;
    ok(wire::search_page(&page))
}

/// `GET .../dead?offset=&limit=`: dead letters, the first to die first.
async fn dead(r: Read) -> ApiResult<Response> {
    let limit = r.a.num("limit")?.unwrap_or(redelay::limits::DEFAULT_DEAD_LETTER_LIMIT);
    let items = r.queue.dead_letters(r.a.num("offset")?.unwrap_or(0), limit).await.api(S)?;
    ok(wire::dead_letters(&items))
}

/// `POST .../dead/respawn` `{ids | oldest | all, expires_in_ms | clear_expiry}` (the core's
/// [`RespawnOptions`]): `{"count"}`.
async fn respawn(r: Write, body: Bytes) -> ApiResult<Response> {
    let o: RespawnOptions = parse(&body)?;
    ok(wire::count(r.queue.respawn_with(o.select, o.expiry).await.api(S)?))
}

/// `POST .../dead/purge` `{ids | oldest | all}`: `{"count"}`.
async fn purge(r: Write, body: Bytes) -> ApiResult<Response> {
    ok(wire::count(r.queue.purge_dead(parse(&body)?).await.api(S)?))
}

/// `POST .../bulk`: the core's [`BulkOptions`] wire form (`{"action", "ids" | "search",
/// "delay_ms" | "at_ms", "expires_in_ms" | "clear_expiry"}`), answered with its `BulkReport` (`{matched, done, scanned}`).
async fn bulk(r: Write, body: Bytes) -> ApiResult<Response> {
    let o: BulkOptions = parse(&body)?;
    ok(to_json(&r.queue.bulk(&o).await.api(S)?))
}

/// Dead letters a grouping reads at most (the first to die first), in pages of `GROUP_PAGE`.
pub const MAX_GROUPED: usize = 10_000;
const GROUP_PAGE: usize = 200;
/// Body bytes a grouping reads at most (the core's pages carry the bodies): past this it stops,
/// so that a dashboard's poll never pulls gigabytes of large dead letters.
pub const MAX_GROUPED_BYTES: usize = 32 << 20;
/// Ids a group of dead letters shows as its samples, at most.
pub const SAMPLE_IDS: usize = 5;

/// `GET .../dead/errors`: the dead letters grouped by their last error, largest group first,
/// each with its count, a few ids and when the first and last of them died. Reads the first
/// 10,000 dead letters at most, and stops after 32 MiB of bodies (`scanned`: how many were
/// read; `total`: all of them).
async fn dead_errors(r: Read) -> ApiResult<Response> {
    struct Group {
        count: u64,
        ids: Vec<String>,
        first: i64,
        last: i64,
    }
    let mut groups: HashMap<String, Group> = HashMap::new();
    let (mut scanned, mut total, mut bytes) = (0, 0, 0);
    while scanned < MAX_GROUPED && bytes < MAX_GROUPED_BYTES {
        let page = r.queue.list(MsgState::Dead, scanned, GROUP_PAGE).await.api(S)?;
        total = page.total;
        if page.items.is_empty() {
            break;
        }
        scanned += page.items.len();
        for m in page.items {
            bytes += m.body.len();
            let died = wire::ms(m.died_at.unwrap_or(m.due_at));
            let g = groups.entry(m.last_error.unwrap_or_default()).or_insert(Group {
                count: 0,
                ids: Vec::new(),
                first: died,
                last: died,
            });
            g.count += 1;
            if g.ids.len() < SAMPLE_IDS {
                g.ids.push(m.id);
            }
            (g.first, g.last) = (g.first.min(died), g.last.max(died));
        }
    }
    let mut rows: Vec<(String, Group)> = groups.into_iter().collect();
    rows.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(&b.0)));
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|(e, g)| {
            json!({ "error": e, "count": g.count, "sample_ids": g.ids, "first_died_at_ms": g.first, "last_died_at_ms": g.last })
        })
        .collect();
    ok(json!({ "total": total, "scanned": scanned, "groups": rows }))
}

/// A webhook's URL: http(s), parseable, at most 2048 bytes.
fn check_url(url: &str) -> ApiResult<()> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || reqwest::Url::parse(url).is_err() {
        return Err(ApiError::invalid(format!("url: an http:// or https:// URL, got {url:?}"), S));
    }
    if url.len() > 2048 {
        return Err(ApiError::invalid(format!("url: at most 2048 bytes, got {}", url.len()), S));
    }
    Ok(())
}

/// `PUT /v1/queues/{queue}/webhook` `{"url": "http://..."}`: answered once this server runs
/// it, and a worker of the URL it replaces has stopped (`webhook::sync`).
pub async fn put_hook(r: Write, body: Bytes) -> ApiResult<Response> {
    let h: webhook::Hook = parse(&body)?;
    check_url(&h.url)?;
    webhook::check_destination(&h.url, &r.a.st.config)?;
    let st = &r.a.st;
    webhook::stored(st)?.set(r.queue.name(), &serde_json::to_string(&h).unwrap()).await.api(S)?;
    webhook::sync(st).await;
    Ok(axum::Json(json!({ "queue": r.queue.name(), "url": h.url })).into_response())
}

/// `GET /v1/queues/{queue}/webhook`: 404 when the queue has none.
pub async fn get_hook(r: Read) -> ApiResult<Response> {
    match webhook::load(&r.a.st).await?.remove(r.queue.name()) {
        Some(h) => Ok(axum::Json(json!({ "queue": r.queue.name(), "url": h.url })).into_response()),
        None => Err(ApiError::core(
            redelay::Error::new(redelay::ErrorKind::NotFound, format!("queue {:?} has no webhook", r.queue.name())),
            S,
        )),
    }
}

/// `DELETE /v1/queues/{queue}/webhook`: `{"deleted": bool}`, once this server's worker of it
/// has stopped (`webhook::sync`): after the answer, nothing more is POSTed to its URL from here.
pub async fn delete_hook(r: Write, body: Bytes) -> ApiResult<Response> {
    no_body(&body)?;
    let st = &r.a.st;
    let deleted = webhook::stored(st)?.delete(r.queue.name()).await.api(S)?;
    webhook::sync(st).await;
    Ok(axum::Json(json!({ "deleted": deleted })).into_response())
}
