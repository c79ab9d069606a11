//! The serde forms of the options and results ("wire forms"), one for every binding and the HTTP
//! gateway: snake_case field names, durations as `*_ms` numbers of milliseconds, times as `*_ms`
//! milliseconds since the Unix epoch, bodies as bytes. Options refuse unknown fields, and
//! [`decode`] turns any serde error into an `InvalidArgument` naming the field, e.g.
//! `delay_ms: invalid type: string "soon", expected milliseconds, a number >= 0` (a negative
//! duration: `delay_ms: must not be negative, got -5 ms`, the core's rule). Decoding only
//! checks types; each option struct's `validate()` then checks ranges and rules.
//!
//! The field names are those of `tests/conformance/cases.json`.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::ser::Serializer;

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::base::time::{ms_to_time, time_to_ms};

/// Decodes a `T` from any serde deserializer (a JSON value, a Python dict, a JS object). An
/// error names the path of the field at fault.
pub fn decode<'de, T: de::Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<T> {
    serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        let inner = plain(e.into_inner().to_string());
        if path == "." || path.is_empty() {
            Error::invalid(inner)
        } else {
            Error::invalid(format!("{path}: {inner}"))
        }
    })
}

/// A serde message with a Rust type it expects (`expected usize`) in words every language
/// reads (`expected a whole number >= 0`).
fn plain(msg: String) -> String {
    let msg = match msg.strip_prefix("unknown variant ") {
        Some(rest) => format!("unknown value {rest}"),
        None => msg,
    };
    let Some(at) = msg.rfind(", expected ") else { return msg };
    let words = match &msg[at + ", expected ".len()..] {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number >= 0",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a sequence" => "a list",
        "a map" => "an object of names and values",
        "map with a single key" => "exactly one of its names",
        t if t.starts_with("struct ") => "an object",
        t if t.starts_with("tuple variant") => "a [name, value] pair",
        _ => return msg,
    };
    format!("{}, expected {words}", &msg[..at])
}

/// [`decode`] from a JSON value.
pub fn from_json<T: DeserializeOwned>(v: serde_json::Value) -> Result<T> {
    decode(v)
}

/// The JSON form of a result.
pub fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("redelay: wire forms always serialize")
}

/// Milliseconds from a JSON-ish number: integers or finite floats >= 0 (fractions are rounded
/// down to whole microseconds). A negative duration is refused by the core's rule
/// ([`limits::non_negative_ms`], in its words); a negative time (`time`: before the epoch) in
/// serde's.
struct MsVisitor {
    time: bool,
}

impl<'de> Visitor<'de> for MsVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("milliseconds, a number >= 0")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Duration, E> {
        Ok(Duration::from_millis(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Duration, E> {
        if self.time {
            u64::try_from(v).map(Duration::from_millis).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        } else {
            limits::non_negative_ms(v).map_err(E::custom)
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Duration, E> {
        if (0.0..1e15).contains(&v) {
            Ok(Duration::from_micros((v * 1000.0) as u64))
        } else if v.is_finite() && v > 0.0 {
            // Above every limit; said as such rather than as "not >= 0".
            Err(E::invalid_value(de::Unexpected::Float(v), &"milliseconds, a number >= 0 and below 10^15"))
        } else if v < 0.0 && !self.time {
            Err(E::custom(limits::negative_ms(v)))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

/// A `Duration` as milliseconds.
pub mod ms {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
        d.deserialize_any(MsVisitor { time: false })
    }
}

/// An `Option<Duration>` as milliseconds or null.
pub mod opt_ms {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> std::result::Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_millis() as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Duration>, D::Error> {
        #[derive(serde::Deserialize)]
        struct W(#[serde(with = "super::ms")] Duration);
        Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
    }

    use serde::Deserialize;
}

/// `t` as milliseconds since the Unix epoch, with its fraction (negative before the epoch):
/// a delivery's times, precise to the microsecond, as one number.
pub fn epoch_ms(t: SystemTime) -> f64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

/// A `SystemTime` as milliseconds since the Unix epoch.
pub mod time_ms {
    use super::*;

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_i64(time_to_ms(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<SystemTime, D::Error> {
        let ms = d.deserialize_any(MsVisitor { time: true })?;
        Ok(ms_to_time(ms.as_millis() as i64))
    }
}

/// An `Option<SystemTime>` as milliseconds since the Unix epoch or null.
pub mod opt_time_ms {
    use super::*;

    pub fn serialize<S: Serializer>(t: &Option<SystemTime>, s: S) -> std::result::Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&time_to_ms(*t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<SystemTime>, D::Error> {
        #[derive(serde::Deserialize)]
        struct W(#[serde(with = "super::time_ms")] SystemTime);
        Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
    }

    use serde::Deserialize;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::options::{DeadLetterQuery, PublishOptions, QueueOptions, SubscribeOptions};
    use serde_json::json;

    #[test]
    fn options_decode_from_their_wire_form_and_errors_name_the_field() {
        let o: PublishOptions = from_json(json!({"delay_ms": 1500, "id": "a", "headers": {"k": "v"}})).unwrap();
        assert_eq!(o.delay, Some(Duration::from_millis(1500)));
        assert_eq!(o.id.as_deref(), Some("a"));
        let o: PublishOptions = from_json(json!({"ttr_ms": 0.5})).unwrap();
        assert_eq!(o.ttr, Some(Duration::from_micros(500)));
        let e = from_json::<PublishOptions>(json!({"delay_ms": 1e30})).unwrap_err();
        assert_eq!(
            e.message(),
            "delay_ms: invalid value: floating point `1e+30`, expected milliseconds, a number >= 0 and below 10^15"
        );
        let e = from_json::<PublishOptions>(json!({"delay_ms": -5})).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "delay_ms: must not be negative, got -5 ms");
        let e = from_json::<PublishOptions>(json!({"ttr_ms": -0.5})).unwrap_err();
        assert_eq!(e.message(), "ttr_ms: must not be negative, got -0.5 ms");
        let e = from_json::<PublishOptions>(json!({"at_ms": -5})).unwrap_err();
        assert!(e.message().starts_with("at_ms: invalid value: integer `-5`"), "{}", e.message());
        let e = from_json::<PublishOptions>(json!({"dealy_ms": 5})).unwrap_err();
        assert!(e.message().contains("unknown field `dealy_ms`"), "{}", e.message());
        let e = from_json::<SubscribeOptions>(json!({"concurrency": "ten"})).unwrap_err();
        assert_eq!(e.message(), r#"concurrency: invalid type: string "ten", expected a whole number >= 0"#);
        let e = from_json::<PublishOptions>(json!({"max_attempts": -1})).unwrap_err();
        assert_eq!(e.message(), "max_attempts: invalid value: integer `-1`, expected a whole number >= 0");
        assert_eq!(from_json::<crate::Step>(json!("day")).unwrap(), crate::Step::Day);
        let e = from_json::<crate::Step>(json!("week")).unwrap_err();
        assert_eq!(e.message(), "unknown value `week`, expected one of `minute`, `hour`, `day`");
        let e = from_json::<crate::Search>(json!({"header": "a=b"})).unwrap_err();
        assert_eq!(e.message(), r#"header: invalid type: string "a=b", expected a [name, value] pair"#);
        let e = from_json::<crate::Search>(json!({"id_prefix": "a", "error": "b"})).unwrap_err();
        assert_eq!(e.message(), "invalid value: map, expected exactly one of its names");
        let e = from_json::<PublishOptions>(json!({"headers": [1]})).unwrap_err();
        assert_eq!(e.message(), "headers: invalid type: sequence, expected an object of names and values");
        let q: DeadLetterQuery = from_json(json!({"limit": 7})).unwrap();
        assert_eq!((q.offset, q.limit), (0, 7));
        let s: SubscribeOptions = from_json(json!({})).unwrap();
        assert_eq!(s, SubscribeOptions::default());
        let q: QueueOptions = from_json(json!({"shards": 16})).unwrap();
        assert_eq!(q, QueueOptions::shards(16));
        assert_eq!(from_json::<QueueOptions>(json!({})).unwrap().shards, 1);
        assert_eq!(to_json(&QueueOptions::shards(3)), json!({"shards": 3}));
        let e = from_json::<QueueOptions>(json!({"shards": -1})).unwrap_err();
        assert!(e.message().starts_with("shards: "), "{}", e.message());
        let e = from_json::<QueueOptions>(json!({"shard": 2})).unwrap_err();
        assert!(e.message().contains("unknown field `shard`"), "{}", e.message());
        assert!(QueueOptions::shards(0).validate().unwrap_err().message().starts_with("shards: must be 1 to 256"));
    }

    #[test]
    fn counters_have_a_wire_form_by_name() {
        let c = crate::Counters { delivered: 6, handled: 5, acked: 4, nacked: 3, lease_lost: 2, errors: 1 };
        let want = json!({"delivered": 6, "handled": 5, "acked": 4, "nacked": 3, "lease_lost": 2, "errors": 1});
        assert_eq!(to_json(&c), want);
    }

    #[test]
    fn epoch_ms_keeps_the_fraction_and_the_sign() {
        let t = std::time::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(epoch_ms(t), 1_700_000_000_123.456);
        assert_eq!(epoch_ms(std::time::UNIX_EPOCH - Duration::from_micros(1500)), -1.5);
    }
}
