//! The native API's HTTP-only JSON shapes. Everything else is the core's wire form
//! (`redelay::wire`: snake_case, times and durations as `*_ms`); only bodies differ: HTTP
//! clients get and give a body as `body` (the text, when UTF-8) and `body_base64`, where the
//! core's form has an array of bytes. A delivery has no wire form in the core (it is a live
//! handle): its JSON shape is here, and so are the answers of the `/v1` reads that wrap the
//! core's forms (`{"items": …}`, `{"points": …}`) and of the changes that are no core form
//! (`{"changed"}`, `{"count"}`, `{"ok", "records", "problems"}` …): the gateway and the CLI's
//! `--json` print them through these functions, so that a script reads both alike.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use redelay::wire::to_json;
use redelay::{Bucket, Delivery, HistoryPoint, ListPage, MessageInfo, PublishOptions, SearchPage, Stats, VerifyReport};
use serde_json::{json, Value};

/// ms since the Unix epoch (negative before it), saturated at the ends of `i64`.
pub fn ms(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

pub fn time(ms: i64) -> SystemTime {
    if ms >= 0 {
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        SystemTime::UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

pub fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn body_fields(v: &mut Value, body: &[u8]) {
    v["body"] = std::str::from_utf8(body).map_or(Value::Null, |s| json!(s));
    v["body_base64"] = json!(b64(body));
}

/// A message to publish: the core's [`PublishOptions`] wire form plus the body as text
/// (`body`) or base64 (`body_base64`). Errors name the field as in the JSON; the core validates
/// the rest.
pub fn publish_parts(v: Value) -> Result<(Vec<u8>, PublishOptions), String> {
    let Value::Object(mut m) = v else {
        return Err("a message: must be a JSON object".into());
    };
    let mut take = |k: &str| m.remove(k).filter(|v| !v.is_null());
    let body = match (take("body"), take("body_base64")) {
        (Some(Value::String(t)), None) => t.into_bytes(),
        (None, Some(Value::String(b))) => {
            base64::engine::general_purpose::STANDARD.decode(b).map_err(|e| format!("body_base64: not base64: {e}"))?
        }
        (None, None) => Vec::new(),
        (Some(_), Some(_)) => return Err("body/body_base64: give one of them, not both".into()),
        (Some(_), None) => return Err("body: must be a string".into()),
        (None, Some(_)) => return Err("body_base64: must be a string of base64".into()),
    };
    let o: PublishOptions = redelay::wire::from_json(Value::Object(m))
        .map_err(|e| e.spelled(redelay::Spelling::SnakeMs).message().to_string())?;
    Ok((body, o))
}

/// The JSON form of a delivery (with its lease token).
pub fn delivery(d: &Delivery) -> Value {
    let mut v = json!({
        "id": d.id(),
        "queue": d.queue(),
        "token": d.token(),
        "headers": d.headers(),
        "attempt": d.attempt(),
        "max_attempts": d.max_attempts(),
        "last_error": d.last_error(),
        "published_at_ms": ms(d.published_at()),
        "due_at_ms": ms(d.due_at()),
        "delivered_at_ms": ms(d.delivered_at()),
        "lateness_ms": d.lateness().as_millis() as u64,
        "lease_deadline_ms": ms(d.lease_deadline()),
        "expires_at_ms": d.expires_at().map(ms),
    });
    body_fields(&mut v, d.body());
    v
}

/// The core's form of a stored message, its body as `body`/`body_base64`.
pub fn message(m: &MessageInfo) -> Value {
    let mut v = to_json(m);
    body_fields(&mut v, &m.body);
    v
}

/// [`message`] without the body: its size in bytes as `body_bytes` instead.
pub fn message_without_body(m: &MessageInfo) -> Value {
    let mut v = to_json(m);
    if let Some(o) = v.as_object_mut() {
        o.remove("body");
    }
    v["body_bytes"] = json!(m.body.len());
    v
}

/// Messages, each as [`message`].
fn messages(items: &[MessageInfo]) -> Vec<Value> {
    items.iter().map(message).collect()
}

/// A page of one state (`GET …/messages`): `{"total", "items"}`.
pub fn list_page(p: &ListPage) -> Value {
    json!({ "total": p.total, "items": messages(&p.items) })
}

/// A step of a search (`GET …/search`): `{"items", "scanned", "cursor"}`, the cursor null once
/// the whole queue was scanned.
pub fn search_page(p: &SearchPage) -> Value {
    json!({ "items": messages(&p.items), "scanned": p.scanned, "cursor": p.cursor })
}

/// A page of dead letters (`GET …/dead`): `{"items"}`.
pub fn dead_letters(items: &[MessageInfo]) -> Value {
    json!({ "items": messages(items) })
}

/// A history point in the core's wire form, with the upper bounds of the lateness buckets
/// holding its p50 and p99 (`lateness_p50_below_ms`, `lateness_p99_below_ms`: ms, `"inf"` for
/// the last bucket, null without deliveries).
pub fn point(p: &HistoryPoint) -> Value {
    let mut v = to_json(p);
    for (q, key) in [(0.5, "lateness_p50_below_ms"), (0.99, "lateness_p99_below_ms")] {
        v[key] = p.lateness_bound_ms(q).map_or(Value::Null, |b| if b.is_finite() { json!(b) } else { json!("inf") });
    }
    v
}

/// A history (`GET …/history`): `{"points"}`, each a [`point`].
pub fn history(points: &[HistoryPoint]) -> Value {
    json!({ "points": points.iter().map(point).collect::<Vec<_>>() })
}

/// What falls due per span (`GET …/upcoming`): `{"buckets"}`, each the core's
/// [`Bucket`] `{"at_ms", "count"}` (`at_ms`: where the span starts).
pub fn upcoming(buckets: &[(SystemTime, u64)]) -> Value {
    let v: Vec<Value> = buckets.iter().map(|&(at, count)| to_json(&Bucket { at, count })).collect();
    json!({ "buckets": v })
}

/// The answer of a verify (`POST …/verify`): `{"ok", "records", "problems"}`.
pub fn verified(v: &VerifyReport) -> Value {
    json!({ "ok": v.is_ok(), "records": v.records, "problems": v.problems })
}

/// The answer of a switch (pause, resume, history on or off): `{"changed"}`, false when it
/// already was so.
pub fn changed(changed: bool) -> Value {
    json!({ "changed": changed })
}

/// The answer of a dead-letter respawn or purge (`POST …/dead/respawn`, `…/dead/purge`):
/// `{"count"}`, how many it acted on.
pub fn count(n: u64) -> Value {
    json!({ "count": n })
}

/// The answer of a cancel that deleted its message (`DELETE …/messages/{id}`; none is a 404):
/// `{"cancelled": true}`.
pub fn cancelled() -> Value {
    json!({ "cancelled": true })
}

/// The answer of a queue's destroy (`DELETE /v1/queues/{q}`): `{"destroyed": true}`.
pub fn destroyed() -> Value {
    json!({ "destroyed": true })
}

/// The answer of a reschedule: `{"due_at_ms"}`.
pub fn rescheduled(due_at: SystemTime) -> Value {
    json!({ "due_at_ms": ms(due_at) })
}

/// One queue's counts by name: `{"queue", "stats"}` (`stats` the core's [`Stats`]), a row of
/// `GET /v1/overview` (which adds the last hour) and of `redelay stats --json`.
pub fn queue_stats(name: &str, stats: &Stats) -> Value {
    json!({ "queue": name, "stats": to_json(stats) })
}

/// A queue whose counts could not be read (a shard of a sharded queue out of reach, its
/// node failing): `{"queue", "error": {"kind", "code", "message"}}` (`kind` the core's
/// [`ErrorKind`](redelay::ErrorKind) name, `code` its stable code), a row of `GET /v1/overview`
/// and of `redelay stats --json` in place of the counts, so that one queue's failure leaves
/// the others' rows standing.
pub fn queue_error(name: &str, e: &redelay::Error) -> Value {
    json!({ "queue": name, "error": { "kind": e.kind().name(), "code": e.kind().code(), "message": e.message() } })
}
