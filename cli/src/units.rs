//! Durations and times as people type and read them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses `250ms`, `3s`, `1.5s`, `30m`, `2h`, `7d` (a bare number is milliseconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!("{s:?}: a duration cannot be negative"));
    }
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

/// A span as people read it: `850ms`, `3.20s`, `29m59.98s`, `2h05m`, `3d04h`.
pub fn span(d: Duration) -> String {
    let ms = d.as_millis();
    // Rounded to hundredths of a second once, before it is split into units: 299.999 s is
    // `5m00.00s`, not `4m60.00s`.
    let cs = (d.as_micros() + 5_000) / 10_000;
    let s = cs / 100;
    if ms < 1000 {
        format!("{ms}ms")
    } else if s < 60 {
        format!("{s}.{:02}s", cs % 100)
    } else if s < 3600 {
        format!("{}m{:02}.{:02}s", s / 60, s % 60, cs % 100)
    } else if s < 86400 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}d{:02}h", s / 86400, s % 86400 / 3600)
    }
}

/// A time relative to `now`: `in 29m59.98s`, `2.10s ago`.
pub fn relative(t: SystemTime, now: SystemTime) -> String {
    match t.duration_since(now) {
        Ok(d) => format!("in {}", span(d)),
        Err(e) => format!("{} ago", span(e.duration())),
    }
}

/// ISO 8601 in UTC with milliseconds, then the time relative to `now`:
/// `2026-11-23T06:01:59.706Z, in 29m59.98s`.
pub fn when(t: SystemTime, now: SystemTime) -> String {
    format!("{}, {}", iso(t), relative(t, now))
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-23T06:01:59.706Z`
pub fn iso(t: SystemTime) -> String {
    let ms = epoch_ms(t);
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, mo, d) = civil(days);
    let (h, mi, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// A time as people type it: ISO 8601 / RFC 3339 (`2026-11-23T08:00:00Z`,
/// `2026-11-23T09:00:00.5+01:00`, `2026-11-23 08:00:00Z`) or milliseconds since the epoch.
pub fn parse_time(s: &str) -> Result<SystemTime, String> {
    let s = s.trim();
    let bad = || format!("{s:?} is not a time like 2026-11-23T08:00:00Z (ISO 8601, with Z or an offset) or epoch ms");
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().map(|ms| UNIX_EPOCH + Duration::from_millis(ms)).map_err(|_| bad());
    }
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(bad);
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut frac_ms = 0i64;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = s.get(start..i).ok_or_else(bad)?;
        if digits.is_empty() {
            return Err(bad());
        }
        frac_ms = format!("{:0<3}", &digits[..digits.len().min(3)]).parse().map_err(|_| bad())?;
    }
    let offset_min = match s.get(i..).ok_or_else(bad)? {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?)
        }
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    let ms = ((days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60) * 1000) + frac_ms;
    if ms < 0 {
        return Err(format!("{s:?} is before 1970"));
    }
    Ok(UNIX_EPOCH + Duration::from_millis(ms as u64))
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
        assert_eq!(parse_duration("-5s").unwrap_err(), r#""-5s": a duration cannot be negative"#);
        assert_eq!(human(Duration::from_micros(1500)), "1.50 ms");
        assert_eq!(span(Duration::from_millis(1_799_980)), "29m59.98s");
        assert_eq!(span(Duration::from_millis(850)), "850ms");
        assert_eq!(span(Duration::from_secs(7500)), "2h05m");
        // Rounding carries into the next unit instead of showing 60 of a unit.
        assert_eq!(span(Duration::from_micros(299_999_000)), "5m00.00s");
        assert_eq!(span(Duration::from_micros(59_999_000)), "1m00.00s");
        assert_eq!(span(Duration::from_micros(3_199_994)), "3.20s");
        assert_eq!(span(Duration::from_micros(3_599_999_000)), "1h00m");
        assert_eq!(span(Duration::from_secs(61)), "1m01.00s");
    }

    #[test]
    fn iso_times_print_and_parse() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_413_719_706);
        assert_eq!(iso(t), "2026-11-23T06:01:59.706Z");
        assert_eq!(parse_time("2026-11-23T06:01:59.706Z").unwrap(), t);
        assert_eq!(parse_time("2026-11-23T07:01:59.706+01:00").unwrap(), t);
        assert_eq!(parse_time("1795413719706").unwrap(), t);
        assert_eq!(iso(parse_time("2024-02-29 23:59:59Z").unwrap()), "2024-02-29T23:59:59.000Z");
        assert_eq!(iso(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        for bad in ["tomorrow", "2026-11-23", "2026-11-23T08:00:00", "2026-13-01T00:00:00Z", "2026-11-23T08:00:00+0100"]
        {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        let now = UNIX_EPOCH + Duration::from_millis(1_795_412_000_000);
        assert_eq!(when(t, now), "2026-11-23T06:01:59.706Z, in 28m39.71s");
    }
}
