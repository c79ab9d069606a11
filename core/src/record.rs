//! The stored record of one message: a fixed header that the Lua scripts read with
//! `struct.unpack` (see `lua/lib.lua`), the last error, then a tail only Rust reads: the headers
//! and the body. Lua never decodes the tail, so a large body costs Lua nothing but a copy.

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};

pub(crate) const VERSION: u8 = 1;
const HDR_LEN: usize = 35;

/// The header fields of a stored record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: u64,
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
    pub seq: u64,
    pub published_at_ms: i64,
    pub due_at_ms: i64,
    pub last_error: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// Encodes the tail (headers then body) that `publish.lua` appends to the header it writes.
pub(crate) fn encode_tail(headers: &BTreeMap<String, String>, body: &[u8]) -> Vec<u8> {
    let hlen: usize = headers.iter().map(|(k, v)| 6 + k.len() + v.len()).sum();
    let mut out = Vec::with_capacity(2 + hlen + body.len());
    out.extend_from_slice(&(headers.len() as u16).to_be_bytes());
    for (k, v) in headers {
        out.extend_from_slice(&(k.len() as u16).to_be_bytes());
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v.as_bytes());
    }
    out.extend_from_slice(body);
    out
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn uint(&mut self, n: usize) -> Option<u64> {
        Some(self.take(n)?.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }
    fn string(&mut self, n: usize) -> Option<String> {
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

/// The error for a stored record that cannot be read; it names the id.
pub(crate) fn corrupt(id: &str) -> Error {
    Error::new(ErrorKind::Redis, format!("message {id:?}: stored record is corrupt or of an unknown version"))
}

/// Decodes a stored record; an error names the id when the record is unreadable.
pub(crate) fn decode(id: &str, raw: &[u8]) -> Result<Record> {
    decode_opt(raw).ok_or_else(|| corrupt(id))
}

fn decode_opt(raw: &[u8]) -> Option<Record> {
    if raw.len() < HDR_LEN + 2 || raw[0] != VERSION {
        return None;
    }
    let mut r = Reader { buf: raw, pos: 1 };
    let attempts = r.uint(2)? as u32;
    let max_attempts = r.uint(2)? as u32;
    let ttr_ms = r.uint(4)?;
    let backoff_base_ms = r.uint(4)?;
    let backoff_max_ms = r.uint(4)?;
    let seq = r.uint(6)?;
    let published_at_ms = r.uint(6)? as i64;
    let due_at_ms = r.uint(6)? as i64;
    let errlen = r.uint(2)? as usize;
    let err = String::from_utf8_lossy(r.take(errlen)?).into_owned();
    let count = r.uint(2)? as usize;
    let mut headers = BTreeMap::new();
    for _ in 0..count {
        let kl = r.uint(2)? as usize;
        let k = r.string(kl)?;
        let vl = r.uint(4)? as usize;
        let v = r.string(vl)?;
        headers.insert(k, v);
    }
    let body = raw[r.pos..].to_vec();
    Some(Record {
        attempts,
        max_attempts,
        ttr_ms,
        backoff_base_ms,
        backoff_max_ms,
        seq,
        published_at_ms,
        due_at_ms,
        last_error: if err.is_empty() { None } else { Some(err) },
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a record as publish.lua does: header, empty error, tail.
    fn lua_like(attempts: u16, tail: &[u8]) -> Vec<u8> {
        let mut v = vec![VERSION];
        v.extend_from_slice(&attempts.to_be_bytes());
        v.extend_from_slice(&5u16.to_be_bytes());
        for x in [30_000u32, 1000, 3_600_000] {
            v.extend_from_slice(&x.to_be_bytes());
        }
        for x in [7u64, 1_700_000_000_000, 1_700_000_005_000] {
            v.extend_from_slice(&x.to_be_bytes()[2..]);
        }
        v.extend_from_slice(&0u16.to_be_bytes());
        v.extend_from_slice(tail);
        v
    }

    #[test]
    fn round_trip_headers_and_binary_body() {
        let mut h = BTreeMap::new();
        h.insert("trace-ïd".to_string(), "välue ✓".to_string());
        let body = vec![0u8, 255, 1, 2, 0xc3];
        let raw = lua_like(2, &encode_tail(&h, &body));
        let r = decode("x", &raw).unwrap();
        assert_eq!(r.attempts, 2);
        assert_eq!(r.max_attempts, 5);
        assert_eq!(r.ttr_ms, 30_000);
        assert_eq!(r.seq, 7);
        assert_eq!(r.published_at_ms, 1_700_000_000_000);
        assert_eq!(r.due_at_ms, 1_700_000_005_000);
        assert_eq!(r.headers, h);
        assert_eq!(r.body, body);
        assert_eq!(r.last_error, None);
    }

    proptest::proptest! {
        /// Whatever bytes Redis hands back, decoding never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = decode("fuzz", &raw);
        }

        /// A record with a valid header and any tail decodes or names the id, never panics.
        #[test]
        fn any_tail_after_a_valid_header(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100)) {
            match decode("fuzz-id", &lua_like(1, &tail)) {
                Ok(r) => proptest::prop_assert_eq!(r.attempts, 1),
                Err(e) => proptest::prop_assert!(e.message().contains("fuzz-id")),
            }
        }
    }

    #[test]
    fn corrupt_records_name_the_id() {
        for raw in [&b""[..], b"\x09garbage-garbage-garbage-garbage-garbage", &lua_like(0, b"")[..20]] {
            let e = decode("order-7", raw).unwrap_err();
            assert!(e.message().contains("order-7"), "{e}");
        }
        // a tail whose header count promises more than there is
        let raw = lua_like(0, &[0, 3, 0, 1]);
        assert!(decode("id", &raw).is_err());
    }
}
