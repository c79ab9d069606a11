//! The Rust agent of the cross-language interop matrix (tests/interop): the same command line
//! as the Python, Node and Kotlin agents, using only the public API of the `redelay` crate.
//!
//!   interop_agent publish URL QUEUES SPEC_JSON_FILE
//!   interop_agent consume URL QUEUES N OUT_JSON_FILE [--nack REASON | --leave]
//!   interop_agent peek URL QUEUE ID
//!   interop_agent admin URL QUEUE OP ARG_JSON
//!
//! QUEUES is one queue name or several separated by commas (queue names cannot contain one).
//!
//! `publish` reads a JSON list `[{"id","body_b64","headers":{..},"delay_ms","max_attempts",
//! "ttr_ms","expires_in_ms","drop_on_expiry"}]` (all but `body_b64` optional) and publishes it
//! as one batch to each queue; it prints `[{"queue","id","status"}]`.
//!
//! `consume` prints `ready` once connected, then fetches from every queue at once until N
//! messages arrived from each (30 s at most), writes a JSON list with one object per message
//! (`id`, `queue`, `body_b64`, `headers`, `attempt`, `max_attempts`, `last_error`,
//! `published_at_ms`, `due_at_ms`, `delivered_at_ms`, `lateness_ms`, `consumer`) to
//! OUT_JSON_FILE, then acks each (with `--nack REASON`: nacks each, retry in 0, with REASON;
//! with `--leave`: settles none, so that their leases lapse after the agent has exited).
//! Exits 3 when some did not arrive in time (what did arrive is written and settled).
//!
//! `peek` prints the stored message as JSON (`null` when there is none).
//!
//! `admin` runs one operation of the queue and prints its outcome as JSON: `pause` / `resume`
//! (ARG `{}`, prints `{"changed"}`), `search` (ARG `{"header": [NAME, VALUE]}`, runs every
//! step, prints `{"ids"}` sorted), `bulk` (ARG `{"action": "deliver_now" | ..., "header":
//! [NAME, VALUE]}`, prints `{"matched", "done"}`), `stats` (QUEUE may be several separated by
//! commas, ARG `{}`, prints `{QUEUE: {"total","scheduled","ready","leased","lapsed","dead"}}`).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redelay::{Client, Delivery, Message, PublishStatus};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(30);

fn usage() -> ! {
    eprintln!(
        "usage: interop_agent publish URL QUEUES SPEC_JSON_FILE\n       \
         interop_agent consume URL QUEUES N OUT_JSON_FILE [--nack REASON | --leave]\n       \
         interop_agent peek URL QUEUE ID\n       \
         interop_agent admin URL QUEUE pause|resume|search|bulk|stats ARG_JSON"
    );
    std::process::exit(2)
}

fn die(msg: impl std::fmt::Display) -> ! {
    eprintln!("interop_agent (rust): {msg}");
    std::process::exit(1)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b64_decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return Err(format!("invalid base64 character {:?}", c as char)),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

fn ms_f64(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as f64 / 1000.0,
        Err(e) => -(e.duration().as_micros() as f64) / 1000.0,
    }
}

fn queues(arg: &str) -> Vec<String> {
    arg.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

fn spec_message(e: &Value) -> Result<Message, String> {
    let body = b64_decode(e["body_b64"].as_str().ok_or("body_b64 missing")?)?;
    let mut m = Message::new(body);
    if let Some(id) = e["id"].as_str() {
        m = m.id(id);
    }
    if let Some(h) = e["headers"].as_object() {
        let mut headers = BTreeMap::new();
        for (k, v) in h {
            headers.insert(k.clone(), v.as_str().ok_or("header values must be strings")?.to_string());
        }
        m = m.headers(headers);
    }
    if let Some(d) = e["delay_ms"].as_u64() {
        m = m.delay(Duration::from_millis(d));
    }
    if let Some(n) = e["max_attempts"].as_u64() {
        m = m.max_attempts(n as u32);
    }
    if let Some(d) = e["ttr_ms"].as_u64() {
        m = m.ttr(Duration::from_millis(d));
    }
    if let Some(d) = e["expires_in_ms"].as_u64() {
        m = m.expires_in(Duration::from_millis(d)).drop_on_expiry(e["drop_on_expiry"].as_bool().unwrap_or(false));
    }
    Ok(m)
}

async fn publish(client: &Client, queue_arg: &str, spec_file: &str) {
    let text = std::fs::read_to_string(spec_file).unwrap_or_else(|e| die(format!("{spec_file}: {e}")));
    let spec: Value = serde_json::from_str(&text).unwrap_or_else(|e| die(format!("{spec_file}: {e}")));
    let entries = spec.as_array().unwrap_or_else(|| die("the spec must be a JSON list"));
    let msgs: Vec<Message> = entries.iter().map(|e| spec_message(e).unwrap_or_else(|e| die(e))).collect();
    let mut out = Vec::new();
    for name in queues(queue_arg) {
        let q = client.queue(&name).unwrap_or_else(|e| die(e));
        let published = q.publish_batch(msgs.clone()).await.unwrap_or_else(|e| die(format!("publish_batch: {e}")));
        for p in published {
            let status = match p.status {
                PublishStatus::Stored => "stored",
                PublishStatus::Duplicate => "duplicate",
                PublishStatus::Replaced => "replaced",
            };
            out.push(json!({"queue": name, "id": p.id, "status": status}));
        }
    }
    println!("{}", Value::Array(out));
}

/// Fetches from `q` until `n` arrived or the deadline passed.
async fn fetch_n(q: redelay::Queue, n: usize, deadline: Instant) -> (Vec<Delivery>, Option<String>) {
    let mut got: Vec<Delivery> = Vec::new();
    while got.len() < n {
        let now = Instant::now();
        if now >= deadline {
            return (got, None);
        }
        let wait = (deadline - now).min(Duration::from_secs(1));
        match q.fetch((n - got.len()).min(1000), wait).await {
            Ok(ds) => got.extend(ds),
            Err(e) => return (got, Some(format!("fetch from {}: {e}", q.name()))),
        }
    }
    (got, None)
}

fn record(d: &Delivery) -> Value {
    json!({
        "id": d.id(),
        "queue": d.queue(),
        "body_b64": b64_encode(d.body()),
        "headers": d.headers(),
        "attempt": d.attempt(),
        "max_attempts": d.max_attempts(),
        "last_error": d.last_error(),
        "published_at_ms": ms_f64(d.published_at()),
        "due_at_ms": ms_f64(d.due_at()),
        "delivered_at_ms": ms_f64(d.delivered_at()),
        "lateness_ms": d.lateness().as_micros() as f64 / 1000.0,
        "consumer": "rust",
    })
}

/// What `consume` does with what it got.
enum Settle {
    Ack,
    Nack(String),
    Leave,
}

async fn consume(client: &Client, queue_arg: &str, n: usize, out_file: &str, settle: Settle) {
    let qs: Vec<redelay::Queue> =
        queues(queue_arg).iter().map(|name| client.queue(name).unwrap_or_else(|e| die(e))).collect();
    println!("ready");
    std::io::stdout().flush().ok();
    let deadline = Instant::now() + TIMEOUT;
    let tasks: Vec<_> = qs.into_iter().map(|q| (q.name().to_string(), tokio::spawn(fetch_n(q, n, deadline)))).collect();
    let mut all = Vec::new();
    let mut problems = Vec::new();
    for (name, t) in tasks {
        let (got, err) = t.await.unwrap_or_else(|e| die(e));
        if got.len() < n {
            problems.push(format!("{name}: {} of {n} messages arrived within {TIMEOUT:?}", got.len()));
        }
        problems.extend(err);
        all.extend(got);
    }
    let records: Vec<Value> = all.iter().map(record).collect();
    std::fs::write(out_file, Value::Array(records).to_string()).unwrap_or_else(|e| die(format!("{out_file}: {e}")));
    for d in &all {
        let r = match &settle {
            Settle::Nack(reason) => d.nack(Some(Duration::ZERO), reason).await.map(|_| ()),
            Settle::Ack => d.ack().await,
            Settle::Leave => Ok(()),
        };
        if let Err(e) = r {
            problems.push(format!("settling {}: {e}", d.id()));
        }
    }
    if !problems.is_empty() {
        eprintln!("interop_agent (rust): {}", problems.join("; "));
        std::process::exit(3);
    }
}

async fn peek(client: &Client, queue: &str, id: &str) {
    let q = client.queue(queue).unwrap_or_else(|e| die(e));
    let v = match q.peek(id).await.unwrap_or_else(|e| die(e)) {
        None => Value::Null,
        Some(m) => json!({
            "id": m.id,
            "state": m.state.as_str(),
            "body_b64": b64_encode(&m.body),
            "headers": m.headers,
            "attempts": m.attempts,
            "max_attempts": m.max_attempts,
            "published_at_ms": ms_f64(m.published_at),
            "due_at_ms": ms_f64(m.due_at),
            "last_error": m.last_error,
        }),
    };
    println!("{v}");
}

/// The `{"header": [NAME, VALUE]}` of an admin argument as a search.
fn header_search(arg: &Value) -> redelay::Search {
    match arg["header"].as_array().map(|h| h.iter().map(|v| v.as_str()).collect::<Vec<_>>()).as_deref() {
        Some([Some(n), Some(v)]) => redelay::Search::Header(n.to_string(), v.to_string()),
        _ => die(format!("admin: want {{\"header\": [NAME, VALUE]}}, got {arg}")),
    }
}

async fn admin(client: &Client, queue: &str, op: &str, arg: &str) {
    let arg: Value = serde_json::from_str(arg).unwrap_or_else(|e| die(format!("admin argument: {e}")));
    if op == "stats" {
        let mut out = serde_json::Map::new();
        for name in queues(queue) {
            let q = client.queue(&name).unwrap_or_else(|e| die(e));
            let s = q.stats().await.unwrap_or_else(|e| die(e));
            out.insert(
                name,
                json!({"total": s.total, "scheduled": s.scheduled, "ready": s.ready, "leased": s.leased,
                       "lapsed": s.lapsed, "dead": s.dead}),
            );
        }
        println!("{}", Value::Object(out));
        return;
    }
    let q = client.queue(queue).unwrap_or_else(|e| die(e));
    let out = match op {
        "pause" => json!({"changed": q.pause().await.unwrap_or_else(|e| die(e))}),
        "resume" => json!({"changed": q.resume().await.unwrap_or_else(|e| die(e))}),
        "search" => {
            let what = header_search(&arg);
            let (mut ids, mut cursor) = (Vec::new(), None::<String>);
            loop {
                let page = q.search(&what, cursor.as_deref()).await.unwrap_or_else(|e| die(e));
                ids.extend(page.items.into_iter().map(|m| m.id));
                cursor = page.cursor;
                if cursor.is_none() {
                    break;
                }
            }
            ids.sort();
            ids.dedup();
            json!({ "ids": ids })
        }
        "bulk" => {
            let action: redelay::BulkAction = serde_json::from_value(arg["action"].clone())
                .unwrap_or_else(|e| die(format!("admin bulk action: {e}")));
            let opts = redelay::BulkOptions::search(action, header_search(&arg));
            let r = q.bulk(&opts).await.unwrap_or_else(|e| die(e));
            json!({"matched": r.matched, "done": r.done})
        }
        _ => usage(),
    };
    println!("{out}");
}

#[tokio::main]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 5 {
        usage();
    }
    let client = Client::connect(&a[2]).await.unwrap_or_else(|e| die(format!("connect: {e}")));
    match a[1].as_str() {
        "publish" if a.len() == 5 => publish(&client, &a[3], &a[4]).await,
        "consume" if a.len() >= 6 => {
            let n: usize = a[4].parse().unwrap_or_else(|_| usage());
            let settle = match a.get(6).map(String::as_str) {
                None if a.len() == 6 => Settle::Ack,
                Some("--nack") if a.len() == 8 => Settle::Nack(a[7].clone()),
                Some("--leave") if a.len() == 7 => Settle::Leave,
                _ => usage(),
            };
            consume(&client, &a[3], n, &a[5], settle).await
        }
        "peek" if a.len() == 5 => peek(&client, &a[3], &a[4]).await,
        "admin" if a.len() == 6 => admin(&client, &a[3], &a[4], &a[5]).await,
        _ => usage(),
    }
}
