//! Durations and times as people type and read them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest duration typed: longer ones are surely a slip (every limit of the core is far
/// shorter), and refused naming the input rather than a number saturated on the way.
const MAX_DURATION_DAYS: f64 = 36_500.0;

/// Parses `250ms`, `3s`, `1.5s`, `30m`, `2h`, `7d` and compounds of them (`1h30m`,
/// `1d12h`); a bare number is milliseconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!("{s:?}: a duration cannot be negative"));
    }
    let usage = || format!("{s:?} is not a duration like 250ms, 3s, 1.5s, 30m, 2h, 7d or 1h30m");
    let number =
        |n: &str| n.parse::<f64>().ok().filter(|_| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    let ms = if s.is_empty() {
        return Err(usage());
    } else if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        number(s).ok_or_else(usage)?
    } else {
        let (mut ms, mut rest) = (0.0, s);
        while !rest.is_empty() {
            let split = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let (num, tail) = rest.split_at(split);
            let n = number(num).ok_or_else(usage)?;
            let end = tail.find(|c: char| !c.is_alphabetic()).unwrap_or(tail.len());
            let (unit, tail) = tail.split_at(end);
            ms += n * match unit {
                "ms" => 1.0,
                "s" => 1e3,
                "m" => 60e3,
                "h" => 3600e3,
                "d" => 86400e3,
                "" => return Err(usage()),
                _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s, m, h, d)")),
            };
            rest = tail;
        }
        ms
    };
    if !ms.is_finite() || ms < 0.0 {
        return Err(usage());
    }
    if ms > MAX_DURATION_DAYS * 86400e3 {
        return Err(format!("{s:?} is longer than {MAX_DURATION_DAYS}d (100 years)"));
    }
    Ok(Duration::from_micros((ms * 1000.0).round() as u64))
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

/// The latest time typed as epoch ms: the last millisecond of year 9999, the latest an ISO
/// 8601 time of four-digit years names.
const MAX_EPOCH_MS: u64 = 253_402_300_799_999;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The days of month `m` (1 to 12) of year `y` in the proleptic Gregorian calendar.
fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A time as people type it: ISO 8601 / RFC 3339 (`2026-11-23T08:00:00Z`,
/// `2026-11-23T09:00:00.5+01:00`, `2026-11-23 08:00:00Z`) or milliseconds since the epoch (up
/// to 9999-12-31T23:59:59.999Z). Every field is digits only and in its range: the days of the
/// month (leap years counted), hours 00-23, minutes and seconds 00-59 (no leap second), offsets
/// -23:59 to +23:59.
pub fn parse_time(s: &str) -> Result<SystemTime, String> {
    let s = s.trim();
    let bad = || format!("{s:?} is not a time like 2026-11-23T08:00:00Z (ISO 8601, with Z or an offset) or epoch ms");
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<u64>() {
            Ok(ms) if ms <= MAX_EPOCH_MS => Ok(UNIX_EPOCH + Duration::from_millis(ms)),
            _ => Err(format!("{s:?}: epoch ms out of range: at most {MAX_EPOCH_MS} (9999-12-31T23:59:59.999Z)")),
        };
    }
    // Bytes, not chars: a field holding a multi-byte char is no digits (and never sliced).
    let b = s.as_bytes();
    let at = |i: usize| b.get(i).copied();
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let d = b.get(r).filter(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit)).ok_or_else(bad)?;
        Ok(d.iter().fold(0, |n, c| n * 10 + i64::from(c - b'0')))
    };
    if at(4) != Some(b'-')
        || at(7) != Some(b'-')
        || !matches!(at(10), Some(b'T' | b't' | b' '))
        || at(13) != Some(b':')
        || at(16) != Some(b':')
    {
        return Err(bad());
    }
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut frac_ms = 0i64;
    if at(i) == Some(b'.') {
        let start = i + 1;
        i = start;
        while at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        // Milliseconds: the first three digits, the rest cut off.
        frac_ms = num(start..(start + 3).min(i))? * 10i64.pow((start + 3).saturating_sub(i) as u32);
    }
    let offset_min = match &b[i..] {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return Err(format!("{s:?}: the offset must be -23:59 to +23:59"));
            }
            (oh * 60 + om) * if *sign == b'-' { -1 } else { 1 }
        }
        _ => return Err(bad()),
    };
    let range = |what: &str, v: i64, lo: i64, hi: i64| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(format!("{s:?}: {what} must be {lo:02} to {hi:02}"))
        }
    };
    range("the month", mo, 1, 12)?;
    let days = days_in_month(y, mo as u32);
    if !(1..=i64::from(days)).contains(&d) {
        let month = MONTHS[mo as usize - 1];
        return Err(format!("{s:?}: the day must be 01 to {days} ({month} {y} has {days} days)"));
    }
    range("the hour", h, 0, 23)?;
    range("the minute", mi, 0, 59)?;
    range("the second", sec, 0, 59)?;
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

    #[test]
    fn compound_durations_and_too_long_ones_name_the_input() {
        let ok = [
            ("1h30m", 5_400_000_000),
            ("1d2h3m4s5ms", 93_784_005_000),
            ("2h", 7_200_000_000),
            ("1.5h", 5_400_000_000),
            ("0.3s", 300_000),
            ("1m30.5s", 90_500_000),
            ("0", 0),
            ("1.5", 1_500),
        ];
        for (s, us) in ok {
            assert_eq!(parse_duration(s), Ok(Duration::from_micros(us)), "{s}");
        }
        let bad = [
            ("1h30", "is not a duration like"),
            ("h", "is not a duration like"),
            ("", "is not a duration like"),
            ("1..5s", "is not a duration like"),
            ("1 h", "is not a duration like"),
            ("1x", "unknown unit \"x\""),
            ("1h-5m", "is not a duration like"),
            ("99999999999999999999999d", "\"99999999999999999999999d\" is longer than 36500d (100 years)"),
            ("36501d", "\"36501d\" is longer than 36500d (100 years)"),
        ];
        for (s, want) in bad {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
        assert!(parse_duration("36500d").is_ok());
    }

    #[test]
    fn impossible_times_are_refused_with_the_reason() {
        let at = |s: &str| parse_time(s).map(iso);
        let ok = [
            ("2028-02-29T08:00:00Z", "2028-02-29T08:00:00.000Z"),
            ("2000-02-29T08:00:00Z", "2000-02-29T08:00:00.000Z"),
            ("2026-12-31T23:59:59.9999Z", "2026-12-31T23:59:59.999Z"),
            ("2026-11-23T08:00:00+23:59", "2026-11-22T08:01:00.000Z"),
            ("2026-11-23T08:00:00-23:59", "2026-11-24T07:59:00.000Z"),
            ("2026-11-23t08:00:00-00:00", "2026-11-23T08:00:00.000Z"),
            ("253402300799999", "9999-12-31T23:59:59.999Z"),
        ];
        for (s, want) in ok {
            assert_eq!(at(s).as_deref(), Ok(want), "{s}");
        }
        let syntax = "is not a time like";
        let bad = [
            ("2026-11-23T08:00:00+0é00", syntax),
            ("2026-11-23T08:00:00+01é0", syntax),
            ("2026-11-23T08:00:00é", syntax),
            ("é026-11-23T08:00:00Z", syntax),
            ("2026-11-23T08:00:0éZ", syntax),
            ("2026-11-23T08:00:00.éZ", syntax),
            ("2026-+1-23T08:00:00Z", syntax),
            ("+026-11-23T08:00:00Z", syntax),
            ("2026-11-23T08:00:00+-1:00", syntax),
            ("2026-11-23T08:00:00+01:+1", syntax),
            ("2026-11-23T 8:00:00Z", syntax),
            ("2026-11-23T08:00:00.Z", syntax),
            ("2026-11-23T08:00:00ZZ", syntax),
            ("2026-02-31T08:00:00Z", "day must be 01 to 28 (February 2026 has 28 days)"),
            ("2026-02-29T08:00:00Z", "day must be 01 to 28 (February 2026 has 28 days)"),
            ("1900-02-29T08:00:00Z", "February 1900 has 28 days"),
            ("2026-04-31T08:00:00Z", "April 2026 has 30 days"),
            ("2026-11-00T08:00:00Z", "November 2026 has 30 days"),
            ("2026-13-01T08:00:00Z", "month must be 01 to 12"),
            ("2026-00-01T08:00:00Z", "month must be 01 to 12"),
            ("2026-11-23T24:00:00Z", "hour must be 00 to 23"),
            ("2026-11-23T08:60:00Z", "minute must be 00 to 59"),
            ("2026-11-23T08:00:60Z", "second must be 00 to 59"),
            ("2026-11-23T08:00:00+99:99", "offset must be -23:59 to +23:59"),
            ("2026-11-23T08:00:00+24:00", "offset must be -23:59 to +23:59"),
            ("2026-11-23T08:00:00-00:60", "offset must be -23:59 to +23:59"),
            ("1969-12-31T23:59:59Z", "is before 1970"),
            ("18446744073709551615", "epoch ms out of range: at most 253402300799999 (9999-12-31T23:59:59.999Z)"),
            ("99999999999999999999", "epoch ms out of range"),
            ("253402300800000", "epoch ms out of range"),
        ];
        for (s, want) in bad {
            let e = parse_time(s).unwrap_err();
            assert!(e.starts_with(&format!("{s:?}")) && e.contains(want), "{s}: {e}");
        }
    }
}
