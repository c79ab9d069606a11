//! lmstfy's data API (`/api/...`), with its routes, status codes and JSON shapes: times in
//! seconds, job bodies base64 in JSON. Namespace `ns` and queue `q` are the redelay queue
//! `ns:q` (lmstfy's names cannot contain `:`). Where lmstfy is imprecise redelay is not: a
//! delay counts from the moment Redis receives the publish, in milliseconds, and nothing is
//! delivered before its due time.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use redelay::{Delivery, Handover, MessageInfo, PublishOptions, Queue, RespawnExpiry, Select, State as MsgState};
use serde_json::{json, Value};

use crate::auth;
use crate::error::{ApiError, ApiResult, CoreExt, Style};
use crate::state::AppState;

const S: Style = Style::Lmstfy;
/// lmstfy's limits: 100 jobs per consume, 64 per bulk publish.
const MAX_CONSUME: u64 = 100;
const MAX_BULK: usize = 64;
/// lmstfy's job attributes: at most 16, names (lower-cased) cut to 32 bytes, values to 128.
const MAX_ATTRS: usize = 16;
const MAX_ATTR_NAME: usize = 32;
const MAX_ATTR_VALUE: usize = 128;
const ATTR_PREFIX: &str = "job-attr-";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/{ns}/{queue}", put(publish).get(consume).delete(destroy))
        .route("/api/{ns}/{queue}/bulk", put(publish_bulk))
        .route("/api/{ns}/{queue}/job/{job_id}", put(republish).get(peek_job).delete(delete_job))
        .route("/api/{ns}/{queue}/peek", get(peek_queue))
        .route("/api/{ns}/{queue}/size", get(size))
        .route("/api/{ns}/{queue}/deadletter", get(peek_dead).put(respawn_dead).delete(delete_dead))
        .route("/api/{ns}/{queue}/deadletter/size", get(dead_size))
}

/// The redelay queue of lmstfy's namespace and queue.
pub fn queue_name(ns: &str, q: &str) -> String {
    format!("{ns}:{q}")
}

type Params = HashMap<String, String>;

/// One lmstfy request: authenticated (401), inside its token's namespace and, for `WRITE`, not
/// read-only (403), with its path and query parameters.
pub struct Req<const WRITE: bool> {
    st: AppState,
    ns: String,
    queue: String,
    job_id: String,
    q: Params,
}

type Read = Req<false>;
type Write = Req<true>;

impl<const WRITE: bool> FromRequestParts<AppState> for Req<WRITE> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> ApiResult<Self> {
        let Query(q) =
            Query::<Params>::from_request_parts(parts, st).await.map_err(|_| ApiError::invalid("invalid query", S))?;
        let Path(mut p) =
            Path::<Params>::from_request_parts(parts, st).await.map_err(|_| ApiError::invalid("invalid path", S))?;
        let token = auth::request_token(&parts.headers, None, false)
            .or_else(|| q.get("token").filter(|t| !t.is_empty()).cloned());
        let access = match token {
            Some(t) => st.access_of(&t, S).await?,
            None => return Err(auth::unauthorized("token not found", S)),
        };
        let ns = p.remove("ns").unwrap_or_default();
        auth::check_namespace(&ns).map_err(|m| ApiError::invalid(m, S))?;
        access.check(Some(&ns), WRITE, S)?;
        let queue = p.remove("queue").unwrap_or_default();
        let job_id = p.remove("job_id").unwrap_or_default();
        Ok(Req { st: st.clone(), ns, queue, job_id, q })
    }
}

impl<const WRITE: bool> Req<WRITE> {
    /// The handle of the redelay queue of a queue name from the path.
    async fn open(&self, queue: &str) -> ApiResult<Queue> {
        auth::check_name("queue", queue).map_err(|m| ApiError::invalid(m, S))?;
        if queue.starts_with('_') {
            // lmstfy's words, then the name (as `auth::check_name` does): clients test the
            // status, and a text that starts the same.
            let m = format!("queue name contains forbidden characters: {queue:?} (may not start with _)");
            return Err(ApiError::invalid(m, S));
        }
        self.st.queue(&queue_name(&self.ns, queue), S).await
    }

    async fn queue(&self) -> ApiResult<Queue> {
        self.open(&self.queue).await
    }
}

/// A whole number of seconds (lmstfy: up to u32::MAX) from the query, or its default.
fn seconds(q: &Params, name: &str, default: u64) -> ApiResult<u64> {
    seconds_up_to(q, name, default, u32::MAX.into())
}

/// A whole number of seconds up to `max` from the query, or its default; lmstfy's answer
/// `invalid NAME` for anything else.
fn seconds_up_to(q: &Params, name: &str, default: u64, max: u64) -> ApiResult<u64> {
    match q.get(name) {
        None => Ok(default),
        Some(v) => {
            v.parse::<u64>().ok().filter(|n| *n <= max).ok_or_else(|| ApiError::invalid(format!("invalid {name}"), S))
        }
    }
}

fn ms_between(a: SystemTime, b: SystemTime) -> i64 {
    match b.duration_since(a) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// Seconds of life left (rounded up, so a job that has not expired never shows 0, which
/// means "forever"), or 0 for a job that never expires.
fn ttl_left(expires_at: Option<SystemTime>, now: SystemTime) -> u64 {
    expires_at.map_or(0, |t| (ms_between(now, t).max(1) as u64).div_ceil(1000))
}

/// The longest start of `s` of at most `max` bytes that ends on a character boundary.
fn clip(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// lmstfy's job attributes of a publish, as redelay message headers: with `Enable-Job-Version:
/// YES` (any case), each `Job-Attr-NAME: value` header with a value is the attribute `name`
/// (lower-cased, cut to 32 bytes) = value (cut to 128 bytes; the first of repeated headers);
/// more than 16 is lmstfy's 400. Without `Enable-Job-Version`, lmstfy ignores them, and so does
/// this. An attribute with an empty name (header `Job-Attr-:`), which lmstfy keeps, is
/// dropped: a redelay header needs a name.
fn attributes(h: &HeaderMap) -> ApiResult<BTreeMap<String, String>> {
    let enabled =
        h.get("enable-job-version").and_then(|v| v.to_str().ok()).is_some_and(|v| v.trim().eq_ignore_ascii_case("yes"));
    let mut attrs = BTreeMap::new();
    if !enabled {
        return Ok(attrs);
    }
    // HeaderMap names are lower-case; `get` is the first value of a repeated header.
    for name in h.keys() {
        let Some(attr) = name.as_str().strip_prefix(ATTR_PREFIX) else { continue };
        let value = h.get(name).map(|v| String::from_utf8_lossy(v.as_bytes())).unwrap_or_default();
        if value.is_empty() {
            continue;
        }
        attrs.entry(clip(attr, MAX_ATTR_NAME).to_string()).or_insert_with(|| clip(&value, MAX_ATTR_VALUE).to_string());
    }
    if attrs.len() > MAX_ATTRS {
        return Err(ApiError::invalid("too many attributes, cannot exceed 16", S));
    }
    attrs.remove("");
    Ok(attrs)
}

/// A job's `attributes` as lmstfy shows them: its headers, null when it has none.
fn attributes_json(headers: &BTreeMap<String, String>) -> Value {
    if headers.is_empty() {
        Value::Null
    } else {
        json!(headers)
    }
}

/// What lmstfy shows of a job, from a delivery or a stored message.
struct Job<'a> {
    id: &'a str,
    body: &'a [u8],
    headers: &'a BTreeMap<String, String>,
    ttl: u64,
    elapsed_ms: i64,
    remain: u32,
}

fn job_json(ns: &str, queue: &str, j: Job) -> Value {
    json!({
        "namespace": ns,
        "queue": queue,
        "job_id": j.id,
        "data": crate::wire::b64(j.body),
        "ttl": j.ttl,
        "elapsed_ms": j.elapsed_ms,
        "remain_tries": j.remain,
        "attributes": attributes_json(j.headers),
    })
}

fn delivered_json(ns: &str, d: &Delivery) -> Value {
    let queue = d.queue().strip_prefix(&format!("{ns}:")).unwrap_or(d.queue());
    let mut v = job_json(
        ns,
        queue,
        Job {
            id: d.id(),
            body: d.body(),
            headers: d.headers(),
            ttl: ttl_left(d.expires_at(), d.delivered_at()),
            elapsed_ms: ms_between(d.published_at(), d.delivered_at()),
            remain: d.max_attempts().saturating_sub(d.attempt()),
        },
    );
    v["msg"] = json!("new job");
    v
}

/// A stored job as lmstfy shows it, its ttl and elapsed time counted to `now` (Redis clock).
fn info_json(ns: &str, queue: &str, m: &MessageInfo, now: SystemTime) -> Value {
    job_json(
        ns,
        queue,
        Job {
            id: &m.id,
            body: &m.body,
            headers: &m.headers,
            ttl: ttl_left(m.expires_at, now),
            elapsed_ms: ms_between(m.published_at, now),
            remain: m.max_attempts.saturating_sub(m.attempts),
        },
    )
}

/// delay, ttl and tries of a publish, checked as lmstfy checks them, as redelay options: the
/// ttl (from the publish) is the expiry, and an expired job is dropped, as in lmstfy. Each job
/// then gets an id of [`redelay::unique_id`]: as lmstfy's, it never repeats, not even after the
/// queue is destroyed (a plain queue's generated ids start over at 1), so a client holding an
/// old job's id cannot delete or peek a new job by it.
fn publish_options(st: &AppState, q: &Params) -> ApiResult<PublishOptions> {
    let d = st.config.lmstfy;
    let delay = seconds(q, "delay", 0)?;
    let ttl = seconds(q, "ttl", d.ttl_s)?;
    if ttl > 0 && ttl < delay {
        return Err(ApiError::invalid("ttl is shorter than delay", S));
    }
    let tries = match q.get("tries") {
        None => d.tries,
        Some(v) => v.parse::<u16>().map(u32::from).map_err(|_| ApiError::invalid("invalid tries", S))?,
    };
    if tries == 0 {
        return Err(ApiError::invalid("tries shouldn't be zero", S));
    }
    Ok(PublishOptions {
        delay: Some(Duration::from_secs(delay)),
        expires_in: (ttl > 0).then(|| Duration::from_secs(ttl)),
        drop_on_expiry: ttl > 0,
        max_attempts: Some(tries),
        ..Default::default()
    })
}

fn check_body(st: &AppState, len: usize, what: &str) -> ApiResult<()> {
    let max = st.client_max_body();
    if len > max {
        return Err(ApiError::too_large(format!("{what} too large"), S));
    }
    Ok(())
}

/// The message of a publish request, every part of it checked (body size, query, attributes):
/// nothing is written before this succeeds.
fn publish_message(st: &AppState, q: &Params, h: &HeaderMap, body: Bytes) -> ApiResult<redelay::Message> {
    check_body(st, body.len(), "body")?;
    let mut opts = publish_options(st, q)?;
    opts.id = Some(redelay::unique_id());
    // The job attributes are the message's headers; checked last, as lmstfy does.
    opts.headers = attributes(h)?;
    opts.message(body.to_vec()).api(S)
}

fn published(id: &str) -> Response {
    (StatusCode::CREATED, Json(json!({ "msg": "published", "job_id": id }))).into_response()
}

/// `PUT /api/:ns/:queue` — publish; `delay`, `ttl` (0 = forever), `tries`; the raw body;
/// `Job-Attr-*` headers with `Enable-Job-Version: YES` (see [`attributes`]).
async fn publish(r: Write, h: HeaderMap, body: Bytes) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let m = publish_message(&r.st, &r.q, &h, body)?;
    Ok(published(&qu.publish(m).await.api(S)?.id))
}

/// `PUT /api/:ns/:queue/job/:job_id` — the body as a new job (a new id, as in lmstfy) in place
/// of the job. The request is checked whole first, so a refused one (400, 413) leaves the job
/// as it was; then the new job is stored, and only then the old one deleted: a failure between
/// the two (Redis lost) leaves both, never neither.
async fn republish(r: Write, h: HeaderMap, body: Bytes) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let m = publish_message(&r.st, &r.q, &h, body)?;
    // The id the delete below takes (the core's rule for an id to act on), checked before the
    // publish too.
    if r.job_id.len() > redelay::limits::MAX_ID_BYTES {
        let n = r.job_id.len();
        return Err(ApiError::invalid(format!("id: must be 1 to {} bytes, got {n}", redelay::limits::MAX_ID_BYTES), S));
    }
    let p = qu.publish(m).await.api(S)?;
    qu.cancel(&r.job_id).await.api(S)?;
    Ok(published(&p.id))
}

/// `PUT /api/:ns/:queue/bulk` — a JSON array of up to 64 jobs (each element's JSON text is a
/// job body); 201 `{"msg":"published","job_ids":[...]}`. All are stored or none; the job
/// attributes, as on a publish, are every job's.
async fn publish_bulk(r: Write, h: HeaderMap, body: Bytes) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let mut opts = publish_options(&r.st, &r.q)?;
    let jobs: Vec<Box<serde_json::value::RawValue>> = serde_json::from_slice(&body)
        .map_err(|_| ApiError::invalid("request body should be an array of objects", S))?;
    if jobs.is_empty() {
        return Err(ApiError::invalid("no jobs", S));
    }
    if jobs.len() > MAX_BULK {
        return Err(ApiError::invalid("too many jobs", S));
    }
    for j in &jobs {
        check_body(&r.st, j.get().len(), "job")?;
    }
    opts.headers = attributes(&h)?;
    let items = jobs
        .into_iter()
        .map(|j| (j.get().as_bytes().to_vec(), PublishOptions { id: Some(redelay::unique_id()), ..opts.clone() }))
        .collect();
    let msgs = redelay::batch_messages(items).api(S)?;
    let ids: Vec<String> = qu.publish_batch(msgs).await.api(S)?.into_iter().map(|p| p.id).collect();
    Ok((StatusCode::CREATED, Json(json!({ "msg": "published", "job_ids": ids }))).into_response())
}

/// `GET /api/:ns/:q1,:q2,...` — consume: `ttr`, `timeout` (long-poll, woken by a publish;
/// 0, the default, polls once), `count`; several queues in priority order. `count` 1 answers
/// an object, above 1 an array of up to `count` jobs, as lmstfy: from the first queue with due
/// jobs, then the next ones (see [`consume_several`]).
async fn consume(r: Write) -> ApiResult<Response> {
    let (d, q, ns) = (r.st.config.lmstfy, &r.q, &r.ns);
    let names: Vec<&str> = r.queue.split(',').filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        return Err(ApiError::invalid("invalid queue name(s)", S));
    }
    let mut handles = Vec::with_capacity(names.len());
    for n in &names {
        handles.push(r.open(n).await?);
    }
    let ttr = Some(Duration::from_secs(seconds(q, "ttr", d.ttr_s)?));
    let wait = Duration::from_secs(seconds(q, "timeout", d.timeout_s)?);
    let count = match q.get("count") {
        None => Some(1),
        Some(v) => v.parse::<u64>().ok().filter(|c| (1..=MAX_CONSUME).contains(c)),
    }
    .ok_or_else(|| ApiError::invalid("invalid count", S))? as usize;
    let got = if handles.len() > 1 && count > 1 {
        consume_several(&r.st, handles, count, wait, ttr).await?
    } else {
        r.st.fetch(handles, count, wait, ttr, S).await?
    };
    if got.is_empty() {
        return Ok((StatusCode::NOT_FOUND, Json(json!({ "msg": "no job available" }))).into_response());
    }
    if count > 1 {
        let v: Vec<Value> = got.iter().map(|d| delivered_json(ns, d)).collect();
        return Ok(Json(Value::Array(v)).into_response());
    }
    Ok(Json(delivered_json(ns, &got[0])).into_response())
}

/// Up to `count` jobs from several queues, filled in priority order as lmstfy fills them (one
/// job at a time from the first queue with one due): the deliveries of the first queue with
/// due jobs (the core's `fetch_first`, waiting up to `wait` for one), then, while fewer than
/// `count`, those of the next queue with due jobs, without waiting. Until answered, what is
/// leased is held in [`Handover`]s, so a client that leaves gets it released (no attempt
/// counted). A later pull that fails ends the filling; the jobs so far are the answer, as in
/// lmstfy.
async fn consume_several(
    st: &AppState,
    queues: Vec<Queue>,
    count: usize,
    wait: Duration,
    ttr: Option<Duration>,
) -> ApiResult<Vec<Delivery>> {
    let first = st.fetch(queues.clone(), count, wait, ttr, S).await?;
    let mut n = first.len();
    let mut held = vec![Handover::new(first)];
    // Each pull takes at least one job or ends the filling: at most `count` pulls.
    while n > 0 && n < count {
        match st.fetch(queues.clone(), count - n, Duration::ZERO, ttr, S).await {
            Ok(more) if !more.is_empty() => {
                n += more.len();
                held.push(Handover::new(more));
            }
            _ => break,
        }
    }
    Ok(held.iter_mut().flat_map(Handover::take).collect())
}

/// `DELETE /api/:ns/:queue/job/:job_id` — the job is never delivered again, whatever its
/// state: 204.
async fn delete_job(r: Write) -> ApiResult<Response> {
    let qu = r.queue().await?;
    qu.cancel(&r.job_id).await.api(S)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn not_found(msg: &str) -> Response {
    (StatusCode::NOT_FOUND, Json(json!({ "error": msg }))).into_response()
}

/// Whether `m` expired (its `ttl` passed, by the Redis clock `now`) while it waited: the core
/// drops such a job at the next fetch; until then it is shown no more, as lmstfy shows none.
/// (A job delivered before its expiry, leased or dead, is kept, as the core keeps it.)
fn expired(m: &MessageInfo, now: SystemTime) -> bool {
    matches!(m.state, MsgState::Scheduled | MsgState::Ready) && m.expires_at.is_some_and(|t| t <= now)
}

/// `GET /api/:ns/:queue/job/:job_id` — the job without consuming it; 404 once expired.
async fn peek_job(r: Read) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let Some(m) = qu.peek(&r.job_id).await.api(S)? else { return Ok(not_found("job not found")) };
    let now = qu.redis_now().await.api(S)?;
    if expired(&m, now) {
        return Ok(not_found("job not found"));
    }
    Ok(Json(info_json(&r.ns, &r.queue, &m, now)).into_response())
}

/// Ready jobs one peek looks at for one that has not expired.
const PEEK_PAGE: usize = 100;

/// `GET /api/:ns/:queue/peek` — the next ready job that has not expired, without consuming it.
async fn peek_queue(r: Read) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let page = qu.list(MsgState::Ready, 0, PEEK_PAGE).await.api(S)?;
    if page.items.is_empty() {
        return Ok(not_found("the queue is empty"));
    }
    let now = qu.redis_now().await.api(S)?;
    Ok(match page.items.iter().find(|m| !expired(m, now)) {
        Some(m) => Json(info_json(&r.ns, &r.queue, m, now)).into_response(),
        None => not_found("the queue is empty"),
    })
}

fn size_json(ns: &str, queue: &str, size: u64) -> Response {
    Json(json!({ "namespace": ns, "queue": queue, "size": size })).into_response()
}

/// `GET /api/:ns/:queue/size` — jobs ready to be consumed.
async fn size(r: Read) -> ApiResult<Response> {
    let qu = r.queue().await?;
    Ok(size_json(&r.ns, &r.queue, qu.stats().await.api(S)?.ready))
}

/// `GET /api/:ns/:queue/deadletter/size`.
async fn dead_size(r: Read) -> ApiResult<Response> {
    let qu = r.queue().await?;
    Ok(size_json(&r.ns, &r.queue, qu.stats().await.api(S)?.dead))
}

/// `DELETE /api/:ns/:queue` — deletes the jobs that are ready (not the delayed or leased
/// ones), as lmstfy does: 204.
async fn destroy(r: Write) -> ApiResult<Response> {
    let qu = r.queue().await?;
    // Bounded: at most 1000 pages per call, each the largest the core lists.
    for _ in 0..1000 {
        let page = qu.list(MsgState::Ready, 0, redelay::limits::MAX_FETCH).await.api(S)?;
        if page.items.is_empty() {
            break;
        }
        for m in &page.items {
            qu.cancel(&m.id).await.api(S)?;
        }
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/:ns/:queue/deadletter` — how many, and the id of the first to have died.
async fn peek_dead(r: Read) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let size = qu.stats().await.api(S)?.dead;
    let head = qu.dead_letters(0, 1).await.api(S)?.into_iter().next().map(|m| m.id).unwrap_or_default();
    Ok(Json(json!({ "namespace": r.ns, "queue": r.queue, "deadletter_size": size, "deadletter_head": head }))
        .into_response())
}

fn limit(q: &Params) -> ApiResult<usize> {
    match q.get("limit") {
        None => Ok(1),
        Some(v) => v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| ApiError::invalid("invalid limit", S)),
    }
}

/// `PUT /api/:ns/:queue/deadletter` — respawn the `limit` (default 1) oldest dead jobs:
/// 200 `{"msg":"respawned","count":n}`. Each gets a fresh `ttl` counted from the respawn
/// (default the publish default, 24 h); `ttl=0` means forever. As in lmstfy, where a dead job
/// has no TTL (its pump PERSISTs it) and the respawn EXPIREs it only for a `ttl` above 0.
async fn respawn_dead(r: Write) -> ApiResult<Response> {
    let qu = r.queue().await?;
    let n = limit(&r.q)?;
    // lmstfy reads this ttl as an int64 (publish's as a uint32); past the core's 10 years the
    // core refuses it with its message.
    let expiry = match seconds_up_to(&r.q, "ttl", r.st.config.lmstfy.ttl_s, i64::MAX as u64)? {
        0 => RespawnExpiry::Clear,
        ttl => RespawnExpiry::In(Duration::from_secs(ttl)),
    };
    let count = qu.respawn_with(Select::Oldest(n), expiry).await.api(S)?;
    Ok(Json(json!({ "msg": "respawned", "count": count })).into_response())
}

/// `DELETE /api/:ns/:queue/deadletter` — delete the `limit` (default 1) oldest dead jobs: 204.
async fn delete_dead(r: Write) -> ApiResult<Response> {
    let qu = r.queue().await?;
    qu.purge_dead(Select::Oldest(limit(&r.q)?)).await.api(S)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// lmstfy's answer for an unknown route.
pub async fn no_route() -> Response {
    (StatusCode::NOT_FOUND, Json(json!({ "error": "api not found" }))).into_response()
}
