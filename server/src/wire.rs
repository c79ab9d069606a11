//! JSON forms of the core's values for the native API: times as `*_ms` since the Unix epoch,
//! durations as `*_ms`, bodies as `body` (the text, when UTF-8) and `body_base64`.
// TODO(issue 16): use the core's own serde forms once the core has them ("wire:" on main).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use redelay::{Delivery, HistoryPoint, MessageInfo, PublishOptions, Stats};
use serde::Deserialize;
use serde_json::{json, Value};

pub fn ms(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

pub fn time(ms: i64) -> SystemTime {
    if ms >= 0 {
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        SystemTime::UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

fn opt_ms(t: Option<SystemTime>) -> Value {
    t.map_or(Value::Null, |t| json!(ms(t)))
}

pub fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn body_fields(v: &mut Value, body: &[u8]) {
    v["body"] = std::str::from_utf8(body).map_or(Value::Null, |s| json!(s));
    v["body_base64"] = json!(b64(body));
}

/// A message to publish: the body as text (`body`) or base64 (`body_base64`), and the
/// fields of [`PublishOptions`] with durations and times in ms.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    pub body: Option<String>,
    pub body_base64: Option<String>,
    pub id: Option<String>,
    pub delay_ms: Option<u64>,
    pub at_ms: Option<i64>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub max_attempts: Option<u32>,
    pub ttr_ms: Option<u64>,
    pub backoff_base_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    #[serde(default)]
    pub replace: bool,
    pub expires_in_ms: Option<u64>,
    pub expires_at_ms: Option<i64>,
    #[serde(default)]
    pub drop_on_expiry: bool,
}

impl PublishRequest {
    /// The body and the core's options; the core validates them.
    pub fn into_parts(self) -> Result<(Vec<u8>, PublishOptions), String> {
        let body = match (self.body, self.body_base64) {
            (Some(t), None) => t.into_bytes(),
            (None, Some(b)) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| format!("body_base64: not base64: {e}"))?,
            (None, None) => Vec::new(),
            (Some(_), Some(_)) => return Err("body/body_base64: give one of them, not both".into()),
        };
        let d = |x: Option<u64>| x.map(Duration::from_millis);
        let o = PublishOptions {
            id: self.id,
            delay: d(self.delay_ms),
            at: self.at_ms.map(time),
            headers: self.headers,
            max_attempts: self.max_attempts,
            ttr: d(self.ttr_ms),
            backoff_base: d(self.backoff_base_ms),
            backoff_max: d(self.backoff_max_ms),
            replace: self.replace,
            expires_in: d(self.expires_in_ms),
            expires_at: self.expires_at_ms.map(time),
            drop_on_expiry: self.drop_on_expiry,
        };
        Ok((body, o))
    }
}

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
        "expires_at_ms": opt_ms(d.expires_at()),
    });
    body_fields(&mut v, d.body());
    v
}

pub fn message(m: &MessageInfo) -> Value {
    let mut v = json!({
        "id": m.id,
        "state": m.state.as_str(),
        "headers": m.headers,
        "attempts": m.attempts,
        "max_attempts": m.max_attempts,
        "ttr_ms": m.ttr.as_millis() as u64,
        "published_at_ms": ms(m.published_at),
        "due_at_ms": ms(m.due_at),
        "lease_deadline_ms": opt_ms(m.lease_deadline),
        "died_at_ms": opt_ms(m.died_at),
        "expires_at_ms": opt_ms(m.expires_at),
        "last_error": m.last_error,
    });
    body_fields(&mut v, &m.body);
    v
}

pub fn stats(s: &Stats) -> Value {
    json!({
        "now_ms": ms(s.now),
        "total": s.total,
        "scheduled": s.scheduled,
        "ready": s.ready,
        "leased": s.leased,
        "dead": s.dead,
        "next_due_ms": opt_ms(s.next_due),
        "oldest_ready_due_ms": opt_ms(s.oldest_ready_due),
        "paused": s.paused,
    })
}

pub fn history(p: &HistoryPoint) -> Value {
    json!({
        "at_ms": ms(p.at),
        "published": p.published,
        "delivered": p.delivered,
        "acked": p.acked,
        "retried": p.retried,
        "dead": p.dead,
        "expired": p.expired,
        "lateness": p.lateness,
        "lateness_sum_ms": p.lateness_sum_ms,
    })
}
