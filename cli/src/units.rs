//! Durations and times as people type and read them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses `250ms`, `3s`, `1.5s`, `30m`, `2h`, `7d` (a bare number is milliseconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("{s:?} is not a duration like 250ms, 3s, 30m, 2h, 7d"))?;
    let ms = match unit {
        "" | "ms" => n,
        "s" => n * 1e3,
        "m" => n * 60e3,
        "h" => n * 3600e3,
        "d" => n * 86400e3,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s, m, h, d)")),
    };
    if !ms.is_finite() || ms < 0.0 {
        return Err(format!("{s:?} is not a duration"));
    }
    Ok(Duration::from_micros((ms * 1000.0) as u64))
}

/// Milliseconds since the Unix epoch.
pub fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// `1.234 ms`, `12.3 s` ...
pub fn human(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.2} ms", us as f64 / 1e3)
    } else {
        format!("{:.2} s", us as f64 / 1e6)
    }
}

/// A time relative to `now`: `in 3.20 s`, `2.10 s ago`.
pub fn relative(t: SystemTime, now: SystemTime) -> String {
    match t.duration_since(now) {
        Ok(d) => format!("in {}", human(d)),
        Err(e) => format!("{} ago", human(e.duration())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("42").unwrap(), Duration::from_millis(42));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3 weeks").is_err());
        assert_eq!(human(Duration::from_micros(1500)), "1.50 ms");
    }
}
