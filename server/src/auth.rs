//! Tokens: one per namespace (or read-only), kept in Redis as their SHA-256 only, and the admin
//! token. A request's token comes from the `X-Token` header, the `token` query parameter (both
//! lmstfy's), or `Authorization: Bearer` (the native API's).

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{ApiError, Style, FORBIDDEN, UNAUTHORIZED};

/// What a token allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The admin token: every namespace, every queue, token management.
    pub admin: bool,
    /// The namespace of a namespace token.
    pub namespace: Option<String>,
    /// Reads only (peek, stats, lists, search, history); publish, consume and changes are 403.
    pub read_only: bool,
}

impl Access {
    pub fn admin() -> Access {
        Access { admin: true, namespace: None, read_only: false }
    }

    /// 403 unless this token may act on namespace `ns` (`None`: a queue outside every
    /// namespace, for the admin token only) — and, for `write`, is not read-only.
    pub fn check(&self, ns: Option<&str>, write: bool, style: Style) -> Result<(), ApiError> {
        let inside = self.admin || (ns.is_some() && self.namespace.as_deref() == ns);
        if !inside {
            let what = ns.map_or("queues outside every namespace".to_string(), |n| format!("namespace {n:?}"));
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                FORBIDDEN,
                format!("token is not allowed in {what}"),
                style,
            ));
        }
        if write && self.read_only {
            return Err(ApiError::new(StatusCode::FORBIDDEN, FORBIDDEN, "token is read-only", style));
        }
        Ok(())
    }
}

/// A stored token, without the token: what it allows and its description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub namespace: String,
    pub read_only: bool,
    pub description: String,
    pub created_at_ms: i64,
}

/// Hex SHA-256 of a token: its id in Redis and in listings.
pub fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Longest namespace: 126 bytes. A namespace's queues are the redelay queues `NS:QUEUE`, at most
/// [`MAX_QUEUE_NAME_BYTES`](redelay::limits::MAX_QUEUE_NAME_BYTES) in all, so a longer namespace
/// could never name one: its tokens (`redelay token create`, the admin route) are refused, as its
/// requests are.
pub const MAX_NAMESPACE_BYTES: usize = redelay::limits::MAX_QUEUE_NAME_BYTES - 2;

/// A namespace: lmstfy's name rule, and at most [`MAX_NAMESPACE_BYTES`].
pub fn check_namespace(ns: &str) -> Result<(), String> {
    if ns.len() > MAX_NAMESPACE_BYTES {
        return Err(format!(
            "namespace name: must be 1 to {MAX_NAMESPACE_BYTES} bytes (its queues are named \
             NAMESPACE:QUEUE, at most {} bytes), got {}",
            redelay::limits::MAX_QUEUE_NAME_BYTES,
            ns.len()
        ));
    }
    check_name("namespace", ns)
}

/// lmstfy's namespace and queue names: 1 to 255 bytes of `A-Z a-z 0-9 - _`.
pub fn check_name(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 255 {
        return Err(format!("{what} name: must be 1 to 255 bytes, got {}", s.len()));
    }
    if !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return Err(format!("{what} name contains forbidden characters: {s:?} (A-Z a-z 0-9 - _ only)"));
    }
    Ok(())
}

/// The tokens of one prefix, in the hash `<prefix>:tokens` (SHA-256 hex → [`TokenInfo`] as
/// JSON; the core's [`redelay::Settings`], so on every topology the client reaches): a token is
/// found in O(1) from any request.
#[derive(Clone)]
pub struct TokenStore {
    hash: redelay::Settings,
    /// A queue handle used only for its [`redelay::Queue::redis_now`]: a token's creation time
    /// is by the Redis clock, as every stored time (the handle reads and writes no keys).
    clock: redelay::Queue,
}

impl TokenStore {
    pub fn new(client: &redelay::Client) -> redelay::Result<TokenStore> {
        Ok(TokenStore { hash: client.settings("tokens")?, clock: client.queue("tokens")? })
    }

    /// Creates a token for `namespace` (a random one unless `token` is given, at least 20
    /// bytes). Returns the token: it is shown once, only its hash is kept.
    pub async fn create(
        &self,
        namespace: &str,
        read_only: bool,
        description: &str,
        token: Option<String>,
    ) -> redelay::Result<String> {
        check_namespace(namespace).map_err(redelay::Error::invalid)?;
        let token = match token {
            Some(t) if t.len() < 20 => {
                return Err(redelay::Error::invalid(format!("token: at least 20 bytes, got {}", t.len())))
            }
            Some(t) => t,
            None => {
                let mut b = [0u8; 16];
                rand::rng().fill_bytes(&mut b);
                b.iter().map(|x| format!("{x:02x}")).collect()
            }
        };
        let info = TokenInfo {
            namespace: namespace.to_string(),
            read_only,
            description: description.to_string(),
            created_at_ms: crate::wire::ms(self.clock.redis_now().await?),
        };
        if !self.hash.set_new(&hash(&token), &serde_json::to_string(&info).unwrap()).await? {
            return Err(redelay::Error::invalid("token: that token exists already"));
        }
        Ok(token)
    }

    /// What `token` allows, or None for an unknown token.
    pub async fn lookup(&self, token: &str) -> redelay::Result<Option<TokenInfo>> {
        Ok(self.hash.get(&hash(token)).await?.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// The tokens of `namespace`: hash → info.
    pub async fn list(&self, namespace: &str) -> redelay::Result<BTreeMap<String, TokenInfo>> {
        Ok(self
            .hash
            .all()
            .await?
            .into_iter()
            .filter_map(|(h, s)| serde_json::from_str::<TokenInfo>(&s).ok().map(|i| (h, i)))
            .filter(|(_, i)| i.namespace == namespace)
            .collect())
    }

    /// Revokes a token of `namespace`, given as the token itself or as its hash (from a
    /// listing). Returns false when there was no such token in that namespace.
    pub async fn revoke(&self, namespace: &str, token_or_hash: &str) -> redelay::Result<bool> {
        let mine = self.list(namespace).await?;
        let h = if mine.contains_key(token_or_hash) { token_or_hash.to_string() } else { hash(token_or_hash) };
        if !mine.contains_key(&h) {
            return Ok(false);
        }
        self.hash.delete(&h).await
    }
}

/// The token a request carries: `X-Token`, `Authorization: Bearer`, or (`query_ok`) the
/// `token` query parameter.
pub fn request_token(headers: &HeaderMap, query: Option<&str>, query_ok: bool) -> Option<String> {
    if let Some(v) = headers.get("x-token").and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty()) {
        return Some(v.to_string());
    }
    if let Some(v) = headers.get("authorization").and_then(|v| v.to_str().ok()) {
        // The scheme is case-insensitive (RFC 9110 §11.1): `Bearer`, `bearer`, `BEARER` …
        if let Some((scheme, t)) = v.split_once(' ') {
            if scheme.eq_ignore_ascii_case("bearer") && !t.trim().is_empty() {
                return Some(t.trim().to_string());
            }
        }
    }
    if query_ok {
        for pair in query.unwrap_or("").split('&') {
            if let Some(t) = pair.strip_prefix("token=") {
                let t = percent_decode(t);
                if !t.is_empty() {
                    return Some(t);
                }
            }
        }
    }
    None
}

/// Decodes `%XX` escapes and `+` of a query value.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(x) => {
                        out.push(x);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            x => out.push(x),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// 401 in one style.
pub fn unauthorized(message: &str, style: Style) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, UNAUTHORIZED, message, style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_names_and_query_tokens() {
        assert_eq!(hash("abc").len(), 64);
        assert_ne!(hash("abc"), hash("abd"));
        assert!(check_name("queue", "a-b_C9").is_ok());
        assert!(check_name("queue", "a:b").unwrap_err().contains("forbidden"));
        assert!(check_name("namespace", "").is_err());
        let h = HeaderMap::new();
        assert_eq!(request_token(&h, Some("a=1&token=x%2By+z"), true).as_deref(), Some("x+y z"));
        assert_eq!(request_token(&h, Some("token=x"), false), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        let a = Access { admin: false, namespace: Some("ns".into()), read_only: true };
        assert!(a.check(Some("ns"), false, Style::V1).is_ok());
        assert_eq!(a.check(Some("ns"), true, Style::V1).unwrap_err().status, StatusCode::FORBIDDEN);
        assert_eq!(a.check(Some("other"), false, Style::V1).unwrap_err().status, StatusCode::FORBIDDEN);
        assert_eq!(a.check(None, false, Style::V1).unwrap_err().status, StatusCode::FORBIDDEN);
        assert!(Access::admin().check(None, true, Style::V1).is_ok());
    }
}
