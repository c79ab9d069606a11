//! The core's logs (tracing, targets `redelay::*`, which reach the `log` crate when no tracing
//! subscriber is installed) forwarded to a JS function: `redelay.js` makes warnings process
//! warnings and shows the rest only when asked (`DEBUG=redelay` or `setLogger`).

use std::sync::Mutex;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

type Args = (String, String, String);
/// Weak: logging never keeps the process alive.
type LogFn = ThreadsafeFunction<Args, (), Args, Status, false, true>;

struct JsLog(Mutex<Option<LogFn>>);

static LOG: JsLog = JsLog(Mutex::new(None));

impl log::Log for JsLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target().starts_with("redelay")
    }

    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            if let Some(f) = self.0.lock().unwrap().as_ref() {
                let args = (r.level().as_str().to_lowercase(), r.target().to_string(), r.args().to_string());
                f.call(args, ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }

    fn flush(&self) {}
}

/// Sends the core's records up to `level` (`error`, `warn`, `info`, `debug`, `trace` or `off`)
/// to `f([level, target, message])`, called on the JS thread.
#[napi(ts_args_type = "level: string, f: (record: [level: string, target: string, message: string]) => void")]
pub fn set_logger(level: String, f: Function<'_, Args, ()>) -> Result<()> {
    let max: log::LevelFilter =
        level.parse().map_err(|_| crate::errors::invalid(format!("level: unknown log level {level:?}")))?;
    *LOG.0.lock().unwrap() = Some(f.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?);
    let _ = log::set_logger(&LOG);
    log::set_max_level(max);
    Ok(())
}
