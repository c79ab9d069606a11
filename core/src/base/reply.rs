//! Reading script replies (`redis::Value`) without panicking on anything unexpected.

use redis::Value;

use crate::base::error::{Error, ErrorKind, Result};

pub(crate) fn bad(what: &str) -> Error {
    Error::new(ErrorKind::Redis, format!("unexpected reply from Redis: {what}"))
}

pub(crate) fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).ok_or_else(|| bad("integer")),
        Value::SimpleString(s) => s.parse().map_err(|_| bad("integer")),
        Value::Double(d) => Ok(*d as i64),
        _ => Err(bad("integer")),
    }
}

pub(crate) fn bytes(v: Value) -> Result<Vec<u8>> {
    match v {
        Value::BulkString(b) => Ok(b),
        Value::SimpleString(s) => Ok(s.into_bytes()),
        _ => Err(bad("string")),
    }
}

pub(crate) fn string(v: Value) -> Result<String> {
    String::from_utf8(bytes(v)?).map_err(|_| bad("UTF-8 string"))
}

pub(crate) fn array(v: Value) -> Result<Vec<Value>> {
    match v {
        Value::Array(a) | Value::Set(a) => Ok(a),
        Value::Nil => Ok(Vec::new()),
        _ => Err(bad("array")),
    }
}
