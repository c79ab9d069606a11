//! The core's logs (tracing, targets `redelay::*`, which reach the `log` crate when no tracing
//! subscriber is installed) forwarded to a JS function: `redelay.js` makes warnings process
//! warnings and shows the rest only when asked (`DEBUG=redelay` or `setLogger`).
//!
//! Each JS environment (the main thread, each worker thread) has its own logger, a sink of the
//! core's (`redelay::add_log_sink`) in its instance data (`teardown.rs`): a worker's does not
//! replace the main thread's, and goes with the worker. Every logger gets every record of the
//! process up to its own level (the core does not know which environment a record is about).

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use crate::teardown::EnvState;

type Args = (String, String, String);

/// The names of the levels `redelay::add_log_sink` numbers (0 is off).
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Sends the core's records up to `level` (`error`, `warn`, `info`, `debug`, `trace` or `off`)
/// to `f([level, target, message])`, called on this environment's JS thread; a later call in the
/// same environment replaces it, and `f` null removes it. Other environments' loggers stay.
#[napi(ts_args_type = "level: string, f: ((record: [level: string, target: string, message: string]) => void) | null")]
pub fn set_logger(env: &Env, level: String, f: Option<Function<'_, Args, ()>>) -> Result<()> {
    let max = LEVELS
        .iter()
        .position(|l| l.eq_ignore_ascii_case(&level))
        .ok_or_else(|| crate::errors::invalid(format!("level: unknown log level {level:?}")))?;
    let state = EnvState::of(env)?;
    let Some(f) = f else {
        state.set_logger(None);
        return Ok(());
    };
    // Weak: logging never keeps the process alive.
    let f = f.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?;
    let sink = redelay::add_log_sink(max, move |level, target, message| {
        let name = LEVELS.get(usize::from(level)).unwrap_or(&"trace").to_string();
        f.call((name, target.to_string(), message), ThreadsafeFunctionCallMode::NonBlocking);
    });
    state.set_logger(sink);
    Ok(())
}
