//! Every input limit of redelay, in one place. Each check names the field and the limit in its
//! error, and runs before anything is written to Redis.

use std::time::Duration;

use crate::base::error::{Error, Result};

/// Queue names: 1 to 128 bytes of `A-Z a-z 0-9 _ - . :` (they become part of Redis keys).
pub const MAX_QUEUE_NAME_BYTES: usize = 128;
/// Key prefixes: 1 to 64 bytes, same characters as queue names.
pub const MAX_PREFIX_BYTES: usize = 64;
/// Message ids: 1 to 256 bytes of printable UTF-8 (no control characters), not all digits
/// (all-digit ids are the ones redelay generates).
pub const MAX_ID_BYTES: usize = 256;
/// Default largest body: 8 MiB. Change it with `ClientBuilder::max_body_bytes`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// The largest body any client may be configured to accept: 512 MiB (Redis' string limit).
pub const MAX_BODY_BYTES_CEILING: usize = 512 * 1024 * 1024;
/// Headers: at most 64 entries, 64 KiB in all (names and values).
pub const MAX_HEADERS: usize = 64;
/// See [`MAX_HEADERS`].
pub const MAX_HEADERS_BYTES: usize = 64 * 1024;
/// Longest delay, and farthest due time from now: 3650 days (about 10 years).
pub const MAX_DELAY: Duration = Duration::from_secs(3650 * 24 * 3600);
/// max_attempts: 1 to 1000.
pub const MAX_ATTEMPTS: u32 = 1000;
/// Shortest ttr (lease): 100 ms, so that lease extension has time to work.
pub const MIN_TTR: Duration = Duration::from_millis(100);
/// Longest ttr (lease): 24 hours.
pub const MAX_TTR: Duration = Duration::from_secs(24 * 3600);
/// Largest retry backoff (base or cap): 7 days.
pub const MAX_BACKOFF: Duration = Duration::from_secs(7 * 24 * 3600);
/// Most messages in one `publish_batch` call: 100,000 (sent as chunks of [`PUBLISH_CHUNK`]).
pub const MAX_BATCH: usize = 100_000;
/// Messages per publish script call (the chunks of a batch go out pipelined, in one round
/// trip): a call stays around a millisecond even over a million pending messages.
pub const PUBLISH_CHUNK: usize = 100;
/// Most messages in one fetch, and in one page of a listing (`list`, dead letters): 1000.
pub const MAX_FETCH: usize = 1000;
/// Most buckets of one `upcoming` call: 1000.
pub const MAX_UPCOMING_BUCKETS: usize = 1000;
/// Most points of one `history` call (a day of minutes): 1440.
pub const MAX_HISTORY_POINTS: usize = 1440;
/// Most points of one `history` call by day: 91, the UTC days that the 90 days of hours kept
/// can touch (a day is the sum of its hours).
pub const MAX_HISTORY_DAYS: usize = 91;
/// Most ids one bulk call takes by list (a search has no such bound): 10,000.
pub const MAX_BULK_IDS: usize = 10_000;
/// Most handlers a subscription runs at once (`SubscribeOptions::concurrency`): 10,000.
pub const MAX_CONCURRENCY: usize = 10_000;
/// At most this many queues in one subscription or one `Queue::fetch_first`.
pub const MAX_QUEUES: usize = 100;
/// Largest weight of a queue in a weighted subscription (the smallest is 1).
pub const MAX_WEIGHT: u32 = 1000;
/// Most shards of one queue (`QueueOptions::shards`).
pub const MAX_SHARDS: u32 = 256;
/// Longest nack reason kept with the message (longer ones are cut): 4000 bytes.
pub const MAX_REASON_BYTES: usize = 4000;

/// Defaults for a message's settings, when neither the message nor the queue sets them.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;
/// Default lease: 30 s.
pub const DEFAULT_TTR: Duration = Duration::from_secs(30);
/// Default first retry backoff: 1 s (doubling at each attempt, with jitter).
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Default most messages of one fetch, when the call does not say: 1.
pub const DEFAULT_FETCH_MAX: usize = 1;
/// Default wait of each fetch of a message stream (`Queue::messages`): 1 s.
pub const DEFAULT_MESSAGES_WAIT: Duration = Duration::from_secs(1);
/// Shortest wait of each fetch of a message stream: 10 ms. The stream fetches again while
/// nothing is due, so a fetch that did not wait would spin.
pub const MIN_MESSAGES_WAIT: Duration = Duration::from_millis(10);
/// Default page size of a listing (`list`, dead letters), when the call does not say: 100.
pub const DEFAULT_PAGE_LIMIT: usize = 100;
/// Default page size of a dead-letter listing: [`DEFAULT_PAGE_LIMIT`].
pub const DEFAULT_DEAD_LETTER_LIMIT: usize = DEFAULT_PAGE_LIMIT;
/// Default largest retry backoff: 1 hour.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(3600);

/// The rule of every duration given as a number of milliseconds (the wire's `*_ms` fields,
/// Kotlin's `Duration`s): not negative. The refusal's words leave out the field, which the
/// caller names in front: `delay_ms: must not be negative, got -5 ms`.
pub fn non_negative_ms(ms: i64) -> std::result::Result<Duration, String> {
    u64::try_from(ms).map(Duration::from_millis).map_err(|_| negative_ms(ms))
}

/// The words of [`non_negative_ms`]'s refusal, for a whole or fractional number of ms.
pub(crate) fn negative_ms(ms: impl std::fmt::Display) -> String {
    format!("must not be negative, got {ms} ms")
}

fn name_chars_ok(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// Checks a queue name (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`, not `.` or `..`), as every
/// handle a producer or consumer opens does.
pub fn check_queue_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_QUEUE_NAME_BYTES {
        return Err(Error::invalid(format!(
            "queue name: must be 1 to {MAX_QUEUE_NAME_BYTES} bytes, got {}",
            name.len()
        )));
    }
    if !name_chars_ok(name) {
        return Err(Error::invalid(format!("queue name: {name:?} may only contain A-Z a-z 0-9 _ - . :")));
    }
    if is_dot_segment(name) {
        return Err(Error::invalid(format!("queue name: {name:?} is a path step in a URL, so HTTP could not name it")));
    }
    Ok(())
}

/// `.` or `..`: a URL path segment that clients resolve away, whatever its encoding, so the
/// gateway's routes (and the dashboard) could never address a queue or message of that name.
pub(crate) fn is_dot_segment(s: &str) -> bool {
    s == "." || s == ".."
}

pub(crate) fn check_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() || prefix.len() > MAX_PREFIX_BYTES || !name_chars_ok(prefix) {
        return Err(Error::invalid(format!(
            "prefix: must be 1 to {MAX_PREFIX_BYTES} bytes of A-Z a-z 0-9 _ - . :, got {prefix:?}"
        )));
    }
    Ok(())
}

pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(Error::invalid(format!("id: must be 1 to {MAX_ID_BYTES} bytes, got {}", id.len())));
    }
    if id.chars().any(char::is_control) {
        return Err(Error::invalid(format!("id: {id:?} contains a control character")));
    }
    if is_dot_segment(id) {
        return Err(Error::invalid(format!("id: {id:?} is a path step in a URL, so HTTP could not name it")));
    }
    if id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid(format!(
            "id: {id:?} is all digits; such ids are reserved for ids redelay generates"
        )));
    }
    Ok(())
}

/// Checks a body against the client's limit (`max_body_bytes`).
pub(crate) fn check_body(len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::invalid(format!("body: {len} bytes is more than the limit of {max} bytes")));
    }
    Ok(())
}

pub(crate) fn check_max_body_setting(max: usize) -> Result<()> {
    if max == 0 || max > MAX_BODY_BYTES_CEILING {
        return Err(Error::invalid(format!("max_body_bytes: must be 1 to {MAX_BODY_BYTES_CEILING}, got {max}")));
    }
    Ok(())
}

pub(crate) fn check_headers<'a>(headers: impl Iterator<Item = (&'a str, &'a str)>, count: usize) -> Result<()> {
    if count > MAX_HEADERS {
        return Err(Error::invalid(format!("headers: {count} entries, more than the limit of {MAX_HEADERS}")));
    }
    let mut total = 0;
    for (k, v) in headers {
        if k.is_empty() {
            return Err(Error::invalid("headers: a header name is empty"));
        }
        total += k.len() + v.len();
    }
    if total > MAX_HEADERS_BYTES {
        return Err(Error::invalid(format!(
            "headers: {total} bytes in all, more than the limit of {MAX_HEADERS_BYTES} bytes"
        )));
    }
    Ok(())
}

pub(crate) fn check_delay(field: &str, d: Duration) -> Result<()> {
    if d > MAX_DELAY {
        return Err(Error::invalid(format!(
            "{field}: {} ms is more than the limit of {}",
            d.as_millis(),
            span(MAX_DELAY)
        )));
    }
    Ok(())
}

/// A retry delay (`retry_in`) of a nack or of a handler's "retry later": 0 to
/// [`MAX_DELAY`]. The error names the field, the range and the value given in ms
/// (`retry_in: must be 0 to 3650 days, got -5000 ms`).
pub(crate) fn check_retry_in(d: Duration) -> Result<()> {
    check_span("retry_in", d, Duration::ZERO, MAX_DELAY)
}

/// A retry delay given as a number of milliseconds, as every binding has one before it is a
/// `Duration` (Python's seconds times 1000, Node's `retryInMs`, Kotlin's signed `Duration`):
/// its `RetryLater` and its `nack` both read it here, so that one delay means the same on
/// every path and in every language. Negative, NaN, infinite or beyond [`MAX_DELAY`] is
/// refused with the words a `Duration` beyond the limit gets (fractions are kept to the microsecond).
pub fn retry_delay(ms: f64) -> Result<Duration> {
    if !(0.0..=MAX_DELAY.as_millis() as f64).contains(&ms) {
        return Err(Error::invalid(format!("retry_in: must be 0 to {}, got {} ms", span(MAX_DELAY), number(ms))));
    }
    Ok(Duration::from_micros((ms * 1000.0) as u64))
}

/// A number given, as people read it: in digits (`-5000`, `0.5`), or with an exponent once it
/// would take more than 15 of them (`1e300`, not three hundred digits).
fn number(v: f64) -> String {
    if v.abs() < 1e15 {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// A duration given as a number of seconds (Python's): finite and not negative. The refusal
/// names `field` and shows the value as given (`got -1e300`, `got inf`).
pub fn seconds(field: &str, s: f64) -> Result<f64> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(Error::invalid(format!("{field}: must be a finite number of seconds, not negative, got {s:?}")));
    }
    Ok(s)
}

/// [`seconds`] in the wire's milliseconds, below the wire's bound of 10^15 ms (10^12 s, far
/// above every limit of a duration): a value beyond it is refused in the seconds it was given,
/// not in the milliseconds it would have been.
pub fn seconds_as_ms(field: &str, s: f64) -> Result<f64> {
    if seconds(field, s)? >= 1e12 {
        return Err(Error::invalid(format!(
            "{field}: must be below 10^12 s (every limit of a duration is far below), got {s:e} s"
        )));
    }
    Ok(s * 1000.0)
}

/// A limit as people read it, in its largest whole unit: `100 ms`, `30 s`, `1 min`, `24 h`,
/// `7 days` (days from 2 on; a value that is no whole number of a larger unit stays in ms).
pub(crate) fn span(d: Duration) -> String {
    let ms = d.as_millis();
    let (n, unit) = match ms {
        0 => return "0".to_string(),
        _ if ms % 86_400_000 == 0 && ms >= 2 * 86_400_000 => (ms / 86_400_000, "days"),
        _ if ms % 3_600_000 == 0 => (ms / 3_600_000, "h"),
        _ if ms % 60_000 == 0 => (ms / 60_000, "min"),
        _ if ms % 1000 == 0 => (ms / 1000, "s"),
        _ => (ms, "ms"),
    };
    format!("{n} {unit}")
}

/// A duration within `min` to `max`; the error names the field, the range as people read it
/// and the value given in ms (`ttr: must be 100 ms to 24 h, got 50 ms`).
pub(crate) fn check_span(field: &str, d: Duration, min: Duration, max: Duration) -> Result<()> {
    if d < min || d > max {
        return Err(Error::invalid(format!(
            "{field}: must be {} to {}, got {} ms",
            span(min),
            span(max),
            d.as_millis()
        )));
    }
    Ok(())
}

/// `at` as ms since the Unix epoch; the limit is checked against the client's clock with the
/// same 10-year bound (the due time itself is later compared with Redis' clock only).
pub(crate) fn check_at(at_ms: i64, local_now_ms: i64) -> Result<()> {
    check_time("at", at_ms, local_now_ms)
}

/// A time argument named `field` (ms since the Unix epoch): not before the epoch, and at most
/// the 10-year bound of delays past the client's clock.
pub(crate) fn check_time(field: &str, ms: i64, local_now_ms: i64) -> Result<()> {
    if ms < 0 {
        return Err(Error::invalid(format!("{field}: {ms} ms is before the Unix epoch")));
    }
    if ms.saturating_sub(local_now_ms) > MAX_DELAY.as_millis() as i64 {
        return Err(Error::invalid(format!("{field}: more than {} days in the future", MAX_DELAY.as_secs() / 86400)));
    }
    Ok(())
}

/// An expiry must come after the due time (and within the same 10-year bound). Mixed forms
/// (a delay and an absolute expiry, or the reverse) are compared on the client's clock.
/// `drop_on_expiry` needs an expiry: without one it would silently do nothing.
pub(crate) fn check_expiry(
    due: crate::base::message::Due,
    expires: Option<crate::base::message::Due>,
    drop_on_expiry: bool,
) -> Result<()> {
    use crate::base::message::Due;
    let Some(exp) = expires else {
        if drop_on_expiry {
            return Err(Error::invalid("drop_on_expiry: needs an expiry (`expires_in` or `expires_at`)"));
        }
        return Ok(());
    };
    let now = crate::base::time::time_to_ms(std::time::SystemTime::now());
    let at = |d: Due| match d {
        Due::In(x) => now + x.as_millis() as i64,
        Due::At(t) => crate::base::time::time_to_ms(t),
    };
    match exp {
        Due::In(d) => check_delay("expires_in", d)?,
        Due::At(t) => check_at(crate::base::time::time_to_ms(t), now)
            .map_err(|e| Error::invalid(e.message().replacen("at:", "expires_at:", 1)))?,
    }
    let (due_ms, exp_ms) = match (due, exp) {
        (Due::In(a), Due::In(b)) => (a.as_millis() as i64, b.as_millis() as i64),
        (d, e) => (at(d), at(e)),
    };
    if exp_ms <= due_ms {
        let field = if matches!(exp, Due::In(_)) { "expires_in" } else { "expires_at" };
        return Err(Error::invalid(format!(
            "{field}: must be after the due time; it is {} ms before or at it",
            due_ms - exp_ms
        )));
    }
    Ok(())
}

pub(crate) fn check_max_attempts(field: &str, n: u32) -> Result<()> {
    if n == 0 || n > MAX_ATTEMPTS {
        return Err(Error::invalid(format!("{field}: must be 1 to {MAX_ATTEMPTS}, got {n}")));
    }
    Ok(())
}

pub(crate) fn check_ttr(field: &str, d: Duration) -> Result<()> {
    check_span(field, d, MIN_TTR, MAX_TTR)
}

pub(crate) fn check_backoff(field: &str, d: Duration) -> Result<()> {
    check_span(field, d, Duration::from_millis(1), MAX_BACKOFF)
}

/// A backoff given as a pair: each within 1 ms to 7 days, and `base` not above `max` (when only
/// one of them is given, the other is the default and a base above it raises the cap instead).
pub(crate) fn check_backoff_pair(field: &str, base: Duration, max: Duration) -> Result<()> {
    check_backoff(&format!("{field} base"), base)?;
    check_backoff(&format!("{field} max"), max)?;
    if base > max {
        return Err(Error::invalid(format!(
            "{field}: base ({} ms) must not be above max ({} ms)",
            base.as_millis(),
            max.as_millis()
        )));
    }
    Ok(())
}

/// The queues of one subscription or one fetch: 1 to [`MAX_QUEUES`], each named once.
pub(crate) fn check_queue_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> Result<()> {
    if names.len() == 0 || names.len() > MAX_QUEUES {
        return Err(Error::invalid(format!("queues: give 1 to {MAX_QUEUES} queues, got {}", names.len())));
    }
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(Error::invalid(format!("queues: {name:?} is given twice")));
        }
    }
    Ok(())
}

pub(crate) fn check_batch(n: usize) -> Result<()> {
    if n > MAX_BATCH {
        return Err(Error::invalid(format!("batch: {n} messages, more than the limit of {MAX_BATCH}")));
    }
    Ok(())
}

pub(crate) fn check_fetch_max(n: usize) -> Result<()> {
    check_fetch_count("max", n)
}

/// A count of messages one fetch call or listing page takes (`max`, `limit`, `batch`): 1 to
/// [`MAX_FETCH`].
pub(crate) fn check_fetch_count(field: &str, n: usize) -> Result<()> {
    if n == 0 || n > MAX_FETCH {
        return Err(Error::invalid(format!("{field}: must be 1 to {MAX_FETCH}, got {n}")));
    }
    Ok(())
}

pub(crate) fn check_concurrency(n: usize) -> Result<()> {
    if n == 0 || n > MAX_CONCURRENCY {
        return Err(Error::invalid(format!("concurrency: must be 1 to {MAX_CONCURRENCY}, got {n}")));
    }
    Ok(())
}

/// Ids given to settle, cancel, peek ...: any id publish may have stored, generated ones too.
pub(crate) fn check_id_any(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(Error::invalid(format!("id: must be 1 to {MAX_ID_BYTES} bytes, got {}", id.len())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_neither_queue_names_nor_ids() {
        for name in [".", ".."] {
            let e = check_queue_name(name).unwrap_err();
            assert!(e.message().contains("is a path step in a URL"), "{e}");
            let e = check_id(name).unwrap_err();
            assert!(e.message().starts_with("id: ") && e.message().contains("path step"), "{e}");
        }
        for ok in ["...", ".a", "a..b", "v1.2"] {
            check_queue_name(ok).unwrap();
            check_id(ok).unwrap();
        }
    }

    #[test]
    fn a_span_reads_in_its_largest_whole_unit() {
        let table = [
            (0, "0"),
            (1, "1 ms"),
            (100, "100 ms"),
            (1500, "1500 ms"),
            (30_000, "30 s"),
            (90_000, "90 s"),
            (60_000, "1 min"),
            (3_600_000, "1 h"),
            (86_400_000, "24 h"),
            (604_800_000, "7 days"),
            (315_360_000_000, "3650 days"),
        ];
        for (ms, want) in table {
            assert_eq!(span(Duration::from_millis(ms)), want, "{ms} ms");
        }
    }

    #[test]
    fn a_duration_out_of_range_names_the_field_the_range_and_the_value() {
        let e = check_ttr("ttr", Duration::from_millis(50)).unwrap_err();
        assert_eq!(e.message(), "ttr: must be 100 ms to 24 h, got 50 ms");
        let e = check_backoff("backoff max", Duration::from_secs(8 * 86400)).unwrap_err();
        assert_eq!(e.message(), "backoff max: must be 1 ms to 7 days, got 691200000 ms");
        let e = check_delay("delay", MAX_DELAY + Duration::from_millis(1)).unwrap_err();
        assert_eq!(e.message(), "delay: 315360000001 ms is more than the limit of 3650 days");
        assert!(check_span("x", Duration::ZERO, Duration::ZERO, Duration::from_secs(1)).is_ok());
    }

    #[test]
    fn seconds_are_finite_not_negative_and_said_as_given() {
        assert_eq!(seconds("ttr", 1.5).unwrap(), 1.5);
        assert_eq!(seconds_as_ms("ttr", 1.5).unwrap(), 1500.0);
        let refused = [
            (-1e300, "delay: must be a finite number of seconds, not negative, got -1e300"),
            (-1.0, "delay: must be a finite number of seconds, not negative, got -1.0"),
            (f64::INFINITY, "delay: must be a finite number of seconds, not negative, got inf"),
            (f64::NAN, "delay: must be a finite number of seconds, not negative, got NaN"),
            (1e300, "delay: must be below 10^12 s (every limit of a duration is far below), got 1e300 s"),
            (1e12, "delay: must be below 10^12 s (every limit of a duration is far below), got 1e12 s"),
        ];
        for (s, want) in refused {
            let e = seconds_as_ms("delay", s).unwrap_err();
            assert_eq!((e.kind(), e.message()), (crate::ErrorKind::InvalidArgument, want), "{s}");
        }
        // Below 10^12 s, the field's own limit decides (3650 days for a delay).
        assert_eq!(seconds_as_ms("delay", 999_999_999_999.0).unwrap(), 999_999_999_999_000.0);
    }

    #[test]
    fn a_retry_delay_is_0_to_3650_days_whichever_way_it_was_given() {
        let max_ms = MAX_DELAY.as_millis() as f64;
        for (ms, want) in [(0.0, Duration::ZERO), (1500.5, Duration::from_micros(1_500_500)), (max_ms, MAX_DELAY)] {
            assert_eq!(retry_delay(ms).unwrap(), want, "{ms} ms");
            check_retry_in(want).unwrap();
        }
        for (ms, got) in [
            (-5000.0, "-5000"),
            (-0.5, "-0.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (max_ms + 1.0, "315360000001"),
            (1e300, "1e300"),
            (-1e300, "-1e300"),
        ] {
            let e = retry_delay(ms).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
            assert_eq!(e.message(), format!("retry_in: must be 0 to 3650 days, got {got} ms"));
        }
        let e = check_retry_in(MAX_DELAY + Duration::from_millis(1)).unwrap_err();
        assert_eq!(e.message(), "retry_in: must be 0 to 3650 days, got 315360000001 ms", "a Duration: the same words");
    }
}
