//! The stored record of one message (layout 2, see `lua/lib.lua`): a fixed 56-byte header that
//! the scripts read with `struct.unpack`, the last error, then — for blobs up to
//! [`INLINE_MAX`] bytes — the blob (headers and body) that only Rust reads. A longer blob lives
//! in the queue's `body` hash, written once at publish: scripts rewrite only the small header.
//!
//! Also here: the publish spec (the header's first 18 bytes and the due/expiry instructions)
//! and the lease [`Token`].

use std::collections::BTreeMap;
use std::fmt;

use crate::base::error::{Error, ErrorKind, Result};

pub(crate) const VERSION: u8 = 2;
pub(crate) const HDR_LEN: usize = 56;
/// Blobs (headers + body) up to this many bytes are stored inside the record.
pub(crate) const INLINE_MAX: usize = 1024;

pub(crate) const F_INLINE: u8 = 1;
pub(crate) const F_DROP: u8 = 2;
pub(crate) const F_DEAD: u8 = 8;

/// A lease token: the fetch call's 6-byte id and the lease's 2-byte index in that call. Unique
/// per lease without relying on any counter in Redis (a queue destroyed and re-created, or a
/// failover that rolls back, cannot hand a stale holder's token to a new lease).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Token(pub [u8; 8]);

impl Token {
    /// Parses the 16 hex digits of [`Token`]'s `Display`; None for anything else.
    pub fn parse(s: &str) -> Option<Token> {
        let b = s.as_bytes();
        if b.len() != 16 || !b.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        let mut t = [0u8; 8];
        for (i, out) in t.iter_mut().enumerate() {
            *out = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex digits");
        }
        Some(Token(t))
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token({self})")
    }
}

/// A fetch call's id: random, so that tokens are unique and a retried call can be recognised.
pub(crate) fn new_fetch_id() -> [u8; 6] {
    rand::random()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub flags: u8,
    /// Failed attempts so far.
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: u64,
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
    pub seq: u64,
    pub published_at_ms: i64,
    pub due_at_ms: i64,
    /// 0 = never
    pub expire_at_ms: i64,
    pub token: Token,
    pub last_error: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// How a publish sets the due time or the expiry time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// This many ms after Redis receives the publish.
    FromNow(u64),
    /// At this many ms since the Unix epoch.
    At(u64),
}

/// What `publish.lua` needs for one message besides its id and blob.
pub(crate) struct Spec {
    pub inline: bool,
    pub drop_on_expiry: bool,
    pub max_attempts: u32,
    pub ttr_ms: u64,
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
    pub replace: bool,
    pub due: When,
    pub expire: Option<When>,
}

fn push_be(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

impl Spec {
    /// The record's first 18 bytes, then `'>BBI6BI6'`: replace, due mode, due value, expiry
    /// mode, expiry value (publish.lua's ARGV).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(32);
        v.push(VERSION);
        v.push(if self.inline { F_INLINE } else { 0 } | if self.drop_on_expiry { F_DROP } else { 0 });
        push_be(&mut v, 0, 2);
        push_be(&mut v, u64::from(self.max_attempts), 2);
        push_be(&mut v, self.ttr_ms, 4);
        push_be(&mut v, self.backoff_base_ms, 4);
        push_be(&mut v, self.backoff_max_ms, 4);
        v.push(u8::from(self.replace));
        let (mode, value) = match self.due {
            When::FromNow(ms) => (0, ms),
            When::At(ms) => (1, ms),
        };
        v.push(mode);
        push_be(&mut v, value, 6);
        let (mode, value) = match self.expire {
            None => (0, 0),
            Some(When::FromNow(ms)) => (1, ms),
            Some(When::At(ms)) => (2, ms),
        };
        v.push(mode);
        push_be(&mut v, value, 6);
        v
    }
}

/// Encodes a blob: the headers then the body.
pub(crate) fn encode_blob(headers: &BTreeMap<String, String>, body: &[u8]) -> Vec<u8> {
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

/// Decodes a stored record; `blob` is the separately stored blob of a record not flagged
/// INLINE. An error names the id when the record is unreadable.
pub(crate) fn decode(id: &str, raw: &[u8], blob: Option<&[u8]>) -> Result<Record> {
    decode_opt(raw, blob).ok_or_else(|| corrupt(id))
}

/// True when `raw`'s header says its blob is stored inline (false for unreadable records).
pub(crate) fn is_inline(raw: &[u8]) -> bool {
    raw.len() >= HDR_LEN && raw[0] == VERSION && raw[1] & F_INLINE != 0
}

fn decode_opt(raw: &[u8], blob: Option<&[u8]>) -> Option<Record> {
    if raw.len() < HDR_LEN || raw[0] != VERSION {
        return None;
    }
    let mut r = Reader { buf: raw, pos: 1 };
    let flags = r.uint(1)? as u8;
    let attempts = r.uint(2)? as u32;
    let max_attempts = r.uint(2)? as u32;
    let ttr_ms = r.uint(4)?;
    let backoff_base_ms = r.uint(4)?;
    let backoff_max_ms = r.uint(4)?;
    let seq = r.uint(6)?;
    let published_at_ms = r.uint(6)? as i64;
    let due_at_ms = r.uint(6)? as i64;
    let expire_at_ms = r.uint(6)? as i64;
    let token = Token(r.take(8)?.try_into().ok()?);
    let blob_len = r.uint(4)? as usize;
    let errlen = r.uint(2)? as usize;
    let err = String::from_utf8_lossy(r.take(errlen)?).into_owned();
    let blob = if flags & F_INLINE != 0 { &raw[r.pos..] } else { blob? };
    if blob.len() != blob_len {
        return None;
    }
    let mut b = Reader { buf: blob, pos: 0 };
    let count = b.uint(2)? as usize;
    let mut headers = BTreeMap::new();
    for _ in 0..count {
        let kl = b.uint(2)? as usize;
        let k = b.string(kl)?;
        let vl = b.uint(4)? as usize;
        let v = b.string(vl)?;
        headers.insert(k, v);
    }
    Some(Record {
        flags,
        attempts,
        max_attempts,
        ttr_ms,
        backoff_base_ms,
        backoff_max_ms,
        seq,
        published_at_ms,
        due_at_ms,
        expire_at_ms,
        token,
        last_error: if err.is_empty() { None } else { Some(err) },
        headers,
        body: blob[b.pos..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a record as publish.lua does: spec prefix, computed fields, empty error, blob.
    fn lua_like(attempts: u16, blob: &[u8], inline: bool) -> Vec<u8> {
        let spec = Spec {
            inline,
            drop_on_expiry: false,
            max_attempts: 5,
            ttr_ms: 30_000,
            backoff_base_ms: 1000,
            backoff_max_ms: 3_600_000,
            replace: false,
            due: When::FromNow(0),
            expire: None,
        };
        let mut v = spec.encode()[..18].to_vec();
        v[2..4].copy_from_slice(&attempts.to_be_bytes());
        for x in [7u64, 1_700_000_000_000, 1_700_000_005_000, 0] {
            push_be(&mut v, x, 6);
        }
        v.extend_from_slice(&[0xab; 8]);
        push_be(&mut v, blob.len() as u64, 4);
        push_be(&mut v, 0, 2);
        assert_eq!(v.len(), HDR_LEN);
        if inline {
            v.extend_from_slice(blob);
        }
        v
    }

    #[test]
    fn round_trip_headers_and_binary_body_inline_and_apart() {
        let mut h = BTreeMap::new();
        h.insert("trace-ïd".to_string(), "välue ✓".to_string());
        let body = vec![0u8, 255, 1, 2, 0xc3];
        let blob = encode_blob(&h, &body);
        for inline in [true, false] {
            let raw = lua_like(2, &blob, inline);
            let r = decode("x", &raw, (!inline).then_some(&blob[..])).unwrap();
            assert_eq!(r.attempts, 2);
            assert_eq!(r.max_attempts, 5);
            assert_eq!(r.ttr_ms, 30_000);
            assert_eq!(r.seq, 7);
            assert_eq!(r.published_at_ms, 1_700_000_000_000);
            assert_eq!(r.due_at_ms, 1_700_000_005_000);
            assert_eq!(r.token, Token([0xab; 8]));
            assert_eq!(r.headers, h);
            assert_eq!(r.body, body);
            assert_eq!(r.last_error, None);
            assert_eq!(is_inline(&raw), inline);
        }
        // a record whose blob lives apart cannot be read without it
        assert!(decode("x", &lua_like(0, &blob, false), None).is_err());
    }

    #[test]
    fn tokens_print_and_parse_as_hex() {
        let t = Token([0, 1, 2, 0xfe, 0xff, 9, 0x10, 0x7f]);
        assert_eq!(t.to_string(), "000102feff09107f");
        assert_eq!(Token::parse(&t.to_string()), Some(t));
        for bad in ["", "xyz", "000102feff09107", "000102feff09107fz", "000102feff09107g"] {
            assert!(Token::parse(bad).is_none(), "{bad}");
        }
    }

    proptest::proptest! {
        /// Whatever bytes Redis hands back, decoding never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = decode("fuzz", &raw, None);
            let _ = decode("fuzz", &raw, Some(&raw));
        }

        /// A record with a valid header and any blob decodes or names the id, never panics.
        #[test]
        fn any_blob_after_a_valid_header(blob in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100)) {
            match decode("fuzz-id", &lua_like(1, &blob, true), None) {
                Ok(r) => proptest::prop_assert_eq!(r.attempts, 1),
                Err(e) => proptest::prop_assert!(e.message().contains("fuzz-id")),
            }
        }
    }

    #[test]
    fn corrupt_records_name_the_id() {
        let valid = lua_like(0, &encode_blob(&BTreeMap::new(), b""), true);
        for raw in [&b""[..], b"\x09garbage-garbage-garbage-garbage-garbage", &valid[..20]] {
            let e = decode("order-7", raw, None).unwrap_err();
            assert!(e.message().contains("order-7"), "{e}");
        }
        // a blob whose header count promises more than there is
        let raw = lua_like(0, &[0, 3, 0, 1], true);
        assert!(decode("id", &raw, None).is_err());
    }
}
