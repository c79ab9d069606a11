//! The docs state the core's limits and defaults: every number a page, README or docstring
//! writes for a limit is checked here against the constant in `redelay::limits`, so changing a
//! limit fails this test until each text that states it says the new number.
//!
//! Table-driven: one row per file, each phrase rendered from the constants as the file writes
//! it (`1,440` in prose, `1440` where the file writes it so).

use std::path::Path;
use std::time::Duration;

use redelay::limits::*;
use redelay::SubscribeOptions;

/// `10000` as `10,000`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn days(d: Duration) -> u64 {
    d.as_secs() / 86_400
}

fn hours(d: Duration) -> u64 {
    d.as_secs() / 3600
}

fn mib(bytes: usize) -> usize {
    bytes / (1024 * 1024)
}

/// The phrases each file must contain, rendered from the constants.
fn table() -> Vec<(&'static str, Vec<String>)> {
    let delay = days(MAX_DELAY);
    let (ttr_min, ttr_max) = (MIN_TTR.as_millis(), hours(MAX_TTR));
    vec![
        (
            "README.md",
            vec![
                format!("| queue name | 1–{MAX_QUEUE_NAME_BYTES} bytes"),
                format!("| key prefix | 1–{MAX_PREFIX_BYTES} bytes"),
                format!("| id | 1–{MAX_ID_BYTES} bytes"),
                format!(
                    "| body | default at most {} MiB (`ClientBuilder::max_body_bytes`, up to {} MiB) |",
                    mib(DEFAULT_MAX_BODY_BYTES),
                    mib(MAX_BODY_BYTES_CEILING)
                ),
                format!("| headers | at most {MAX_HEADERS}, {} KiB in all", MAX_HEADERS_BYTES / 1024),
                format!("| delay / `at` | at most {delay} days ahead"),
                format!("| max_attempts | 1–{MAX_ATTEMPTS} (default {DEFAULT_MAX_ATTEMPTS}) |"),
                format!("| ttr | {ttr_min} ms – {ttr_max} h (default {} s) |", DEFAULT_TTR.as_secs()),
                format!(
                    "| backoff base / max | 1 ms – {} days (default {} s / {} h)",
                    days(MAX_BACKOFF),
                    DEFAULT_BACKOFF_BASE.as_secs(),
                    hours(DEFAULT_BACKOFF_MAX)
                ),
                format!("| expiry | after the due time, at most {delay} days ahead"),
                format!("| queues of one subscription or fetch | 1–{MAX_QUEUES}, each named once; weights 1–{MAX_WEIGHT} |"),
                format!("| batch | at most {} messages per `publish_batch` (sent as atomic script calls of {PUBLISH_CHUNK},", thousands(MAX_BATCH)),
                format!("| fetch | 1–{MAX_FETCH} messages per call;"),
                format!("| shards of a queue | 1–{MAX_SHARDS} "),
                format!("| subscription | concurrency 1–{} ", thousands(MAX_CONCURRENCY)),
                format!("| nack reason | kept up to {} bytes", thousands(MAX_REASON_BYTES)),
                format!("| history | at most {} points per query", thousands(MAX_HISTORY_POINTS)),
                format!("{MAX_HISTORY_DAYS} by UTC day"),
                format!("purges up to {} ids", thousands(MAX_BULK_IDS)),
            ],
        ),
        (
            "docs/architecture.md",
            vec![
                format!("`limits::retry_delay` (0 to {delay} days)"),
                format!("| {} points |", thousands(MAX_HISTORY_POINTS)),
                format!("a list of ids (at most {})", thousands(MAX_BULK_IDS)),
            ],
        ),
        (
            "docs/server.md",
            vec![
                format!("`max_body_bytes` ({} MiB by default)", mib(DEFAULT_MAX_BODY_BYTES)),
                format!("the whole redelay name at most {MAX_QUEUE_NAME_BYTES} bytes"),
                format!("`max_attempts: must be 1 to {MAX_ATTEMPTS}`"),
                format!("`ttr` above {ttr_max} h"),
                format!("beyond {} days", thousands(delay as usize)),
                format!("`ttr_ms: must be {ttr_min} ms to {ttr_max} h, got 50 ms`"),
                format!("(`limit` 1 to {MAX_FETCH}, default {DEFAULT_PAGE_LIMIT}) of th"),
                format!("0 to {delay} days as in every language"),
                format!("to {} days from now, as a message's `at_ms`", thousands(delay as usize)),
                format!("at most {MAX_HISTORY_POINTS} points, {MAX_HISTORY_DAYS} by day)"),
                format!("the first to die first (`limit` 1 to {MAX_FETCH}, default {DEFAULT_DEAD_LETTER_LIMIT})"),
            ],
        ),
        (
            "docs/python.md",
            vec![
                format!("(`max` 1 to {MAX_FETCH}, default {DEFAULT_FETCH_MAX};"),
                format!("`retry_in: must be 0 to {delay} days, got -1 s`"),
                format!("`ttr: must be {ttr_min} ms to {ttr_max} h, got 0.05 s"),
                format!("picks the delay: 0 to {delay} days"),
                format!("(1 to {MAX_SHARDS}; a different count"),
            ],
        ),
        (
            "docs/node.md",
            vec![
                format!("(`max` 1 to {MAX_FETCH}, default {DEFAULT_FETCH_MAX};"),
                format!("`maxAttempts: must be 1 to {MAX_ATTEMPTS}, got 0`"),
                format!("`ttrMs: must be {ttr_min} ms to {ttr_max} h, got 50 ms`"),
                format!("picks the delay: 0 to {delay} days"),
                format!("`retryInMs: must be 0 to {delay} days, got -5 ms`"),
                format!("(1 to {MAX_SHARDS}; a different count"),
            ],
        ),
        (
            "docs/kotlin.md",
            vec![
                format!("(`max` 1 to {MAX_FETCH}, the core's default"),
                format!("1 to {MAX_ATTEMPTS}, got 0`"),
                format!("picks the delay: 0 to {delay} days"),
                format!("`retryIn: must be 0 to {delay} days, got -5000 ms`"),
                format!("(1 to {MAX_SHARDS}; a different count"),
            ],
        ),
        (
            "bindings-python/README.md",
            vec![
                format!("delay is 0 to {delay} days"),
                format!("--ttr: must be {ttr_min} ms to {ttr_max} h, got 0.01 s"),
                format!("`ttr: must be {ttr_min} ms to {ttr_max} h, got 0.05 s`"),
            ],
        ),
        (
            "bindings-node/README.md",
            vec![
                format!("`maxBodyBytes` (default {} MiB)", mib(DEFAULT_MAX_BODY_BYTES)),
                format!("(name: 1–{MAX_QUEUE_NAME_BYTES} bytes"),
                format!("hash tags (1–{MAX_SHARDS}, default 1)"),
                format!("picks by weights (1–{MAX_WEIGHT})"),
                format!("up to `max` (1–{MAX_FETCH}, default {DEFAULT_FETCH_MAX}) due mes"),
                format!("up to {} messages in one round trip", thousands(MAX_BATCH)),
                format!("at most {MAX_HISTORY_POINTS} points ({MAX_HISTORY_DAYS} by day)"),
                format!("`limit` 1–{MAX_FETCH}, default offset 0"),
                format!("on up to {} ids", thousands(MAX_BULK_IDS)),
                format!("\"id: must be 1 to {MAX_ID_BYTES} bytes, got 0\""),
            ],
        ),
        (
            "bindings-kotlin/README.md",
            vec![
                format!("(up to {})", thousands(MAX_BATCH)),
                format!("due messages (1 to {MAX_FETCH};"),
                format!("By weights (1 to {MAX_WEIGHT}, one per queue)"),
                format!("list of ids (up to {})", thousands(MAX_BULK_IDS)),
            ],
        ),
        (
            "bindings-python/python/redelay/_asyncio.py",
            vec![format!("(1 to {MAX_QUEUE_NAME_BYTES} bytes of"), format!("hash tags (1 to {MAX_SHARDS};")],
        ),
        (
            "bindings-python/python/redelay/_ops.py",
            vec![
                format!("in one round trip (up to {})", thousands(MAX_BATCH)),
                format!("(at most {MAX_HISTORY_POINTS} points, {MAX_HISTORY_DAYS} by day)"),
                format!("``buckets`` (1 to {MAX_UPCOMING_BUCKETS})"),
                format!("``limit`` (1 to {MAX_FETCH}, default {DEFAULT_DEAD_LETTER_LIMIT})"),
                format!("the messages ``ids`` (up to {})", thousands(MAX_BULK_IDS)),
            ],
        ),
        ("bindings-python/python/redelay/_types.py", vec![format!("with weights (1 to {MAX_WEIGHT})"), format!("(default {} MiB)", mib(DEFAULT_MAX_BODY_BYTES))]),
        ("bindings-python/python/redelay/_native.pyi", vec![format!("must be 0 to {delay} days, got -2 s")]),
        ("bindings-python/python/redelay/_errors.py", vec![format!("{delay} days, else")]),
        (
            "bindings-kotlin/jvm/src/main/kotlin/dev/redelay/Client.kt",
            vec![
                format!("(1 to {MAX_QUEUE_NAME_BYTES} bytes of"),
                format!("hash tags (1 to {MAX_SHARDS};"),
                format!("up to [max] (1 to {MAX_FETCH};"),
                format!("(1 to {MAX_QUEUES}, no name twice)"),
                format!("(one per queue, 1 to {MAX_WEIGHT})"),
            ],
        ),
        ("bindings-kotlin/jvm/src/main/kotlin/dev/redelay/Errors.kt", vec![format!("0 to {delay} days")]),
        (
            "bindings-kotlin/jvm/src/main/kotlin/dev/redelay/Queue.kt",
            vec![
                format!("Pulls up to [max] (1 to {MAX_FETCH};"),
                format!("[wait] ({} ms or more; null, the default: the core's default, {} s)", MIN_MESSAGES_WAIT.as_millis(), DEFAULT_MESSAGES_WAIT.as_secs()),
            ],
        ),
        (
            "bindings-python/python/redelay/_worker.py",
            vec![
                format!("(default: the core's, {})", SubscribeOptions::default().concurrency),
                format!("(default: the core's, {})", SubscribeOptions::default().drain_timeout.as_secs()),
            ],
        ),
    ]
}

#[test]
fn every_limit_a_doc_states_is_the_cores() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut wrong = Vec::new();
    for (file, phrases) in table() {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Line breaks and a docstring's indentation or comment marks read as one space.
        let flat = text
            .lines()
            .map(|l| l.trim().trim_start_matches("* ").trim_start_matches("/// ").trim_start_matches("// "))
            .collect::<Vec<_>>()
            .join(" ");
        wrong.extend(phrases.into_iter().filter(|p| !flat.contains(p.as_str())).map(|p| format!("{file}: {p:?}")));
    }
    assert!(
        wrong.is_empty(),
        "these texts do not state the core's limits (fix the text, or this table):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn thousands_groups_digits_as_the_docs_write_them() {
    let cases =
        [(1, "1"), (999, "999"), (1000, "1,000"), (10_000, "10,000"), (100_000, "100,000"), (1_000_000, "1,000,000")];
    for (n, want) in cases {
        assert_eq!(thousands(n), want);
    }
}
