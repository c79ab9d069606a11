//! The core's logs (tracing, targets `redelay::*`, which reach the `log` crate when no tracing
//! subscriber is installed) forwarded to a JS function: `redelay.js` makes warnings process
//! warnings and shows the rest only when asked (`DEBUG=redelay` or `setLogger`).

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

type Args = (String, String, String);

/// The names of the levels `redelay::forward_logs` numbers (0 is off).
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Sends the core's records up to `level` (`error`, `warn`, `info`, `debug`, `trace` or `off`)
/// to `f([level, target, message])`, called on the JS thread; a later call replaces it.
#[napi(ts_args_type = "level: string, f: (record: [level: string, target: string, message: string]) => void")]
pub fn set_logger(level: String, f: Function<'_, Args, ()>) -> Result<()> {
    let max = LEVELS
        .iter()
        .position(|l| l.eq_ignore_ascii_case(&level))
        .ok_or_else(|| crate::errors::invalid(format!("level: unknown log level {level:?}")))?;
    // Weak: logging never keeps the process alive.
    let f = f.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?;
    redelay::forward_logs(max, move |level, target, message| {
        let name = LEVELS.get(usize::from(level)).unwrap_or(&"trace").to_string();
        f.call((name, target.to_string(), message), ThreadsafeFunctionCallMode::NonBlocking);
    });
    Ok(())
}
