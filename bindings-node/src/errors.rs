//! The one place where the core's errors become JavaScript errors: an `Error` whose `code` is
//! `ErrorKind::code()` (`ERR_REDELAY_INVALID_ARGUMENT` …) and whose `kind` is `ErrorKind::name()`
//! (`InvalidArgument` …); `redelay.js` gives it the `RedelayError` prototype. Errors of the
//! conversions in this crate are napi `InvalidArg` errors, which `redelay.js` reads as
//! InvalidArgument too. Every message names its field as JavaScript spells it
//! (`redelay::Spelling::CamelMs`: `maxAttempts`, `ttrMs`, `at`).

use std::future::Future;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// A core error as a JS error object with `code` and `kind` (on the JS thread), and `soFar` when
/// it stopped a long run part way: the core's totals by their wire names (`redelay::Error::so_far`:
/// `count`, or `matched`, `done` and `scanned`, one word each, the same in JavaScript).
pub(crate) fn error_object(env: &Env, e: redelay::Error) -> Result<Object<'_>> {
    let e = e.spelled(SPELLING);
    let mut o = env.create_error(napi::Error::new(Status::GenericFailure, e.message()))?;
    o.set("code", e.kind().code())?;
    o.set("kind", e.kind().name())?;
    if let Some(so_far) = e.so_far() {
        let mut counts = Object::new(env)?;
        for &(name, n) in so_far {
            counts.set(name, n as f64)?;
        }
        o.set("soFar", counts)?;
    }
    Ok(o)
}

/// [`error_object`] thrown (a promise rejected with it).
pub(crate) fn js(env: &Env, e: redelay::Error) -> napi::Error {
    error_object(env, e).map(|o| napi::Error::from(o.to_unknown())).unwrap_or_else(|x| x)
}

/// How JavaScript spells the fields an error names.
pub(crate) const SPELLING: redelay::Spelling = redelay::Spelling::CamelMs;

/// A failed conversion of an argument: refused before anything reaches the core.
pub(crate) fn invalid(msg: impl std::fmt::Display) -> napi::Error {
    napi::Error::new(Status::InvalidArg, msg.to_string())
}

/// The promise of a result in the core's wire form (methods returning it say so to napi's
/// TypeScript generator with `ts_return_type = "Promise<unknown>"`).
pub(crate) type JsPromise<'e> = PromiseRaw<'e, Unknown<'e>>;

/// Runs a core call on the runtime; the promise resolves to its result in the core's wire form
/// (objects, bytes as Buffers, `()` as null) or rejects with the core's error as [`js`] makes it.
pub(crate) fn spawn<'e, T, F>(env: &'e Env, fut: F) -> Result<JsPromise<'e>>
where
    T: serde::Serialize + Send + 'static,
    F: Future<Output = redelay::Result<T>> + Send + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, |env, r| env.to_js_value(&sync(env, r)?))
}

/// A synchronous core result on the JS thread.
pub(crate) fn sync<T>(env: &Env, r: redelay::Result<T>) -> Result<T> {
    r.map_err(|e| js(env, e))
}

/// A thrown error's reason from its name and message, worded by the core
/// (`redelay::Failure::thrown`): `"TypeError: boom"`.
#[napi]
pub fn failure_reason(name: String, message: String) -> String {
    redelay::Failure::thrown(&name, &message)
}

/// Every error kind as `[name, code]`, for `RedelayError` and `ErrorCodes` in `redelay.js`.
#[napi]
pub fn error_kinds() -> Vec<Vec<&'static str>> {
    redelay::ErrorKind::ALL.iter().map(|k| vec![k.name(), k.code()]).collect()
}
