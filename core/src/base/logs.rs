//! The core's log records for a binding's own logging. The core logs through `tracing`, which
//! emits `log` records when no tracing subscriber is set; a binding (Python `logging`, SLF4J,
//! a JS function) takes them through [`forward_logs`], so that the target filter and the levels
//! are decided here, once.

use std::sync::{Arc, RwLock};

/// Where records go: `(level, target, message)`, the level as in [`forward_logs`].
type Sink = Arc<dyn Fn(u8, &str, String) + Send + Sync>;

struct Forward(RwLock<Option<Sink>>);

static FORWARD: Forward = Forward(RwLock::new(None));

impl log::Log for Forward {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("redelay") && m.level() <= log::max_level()
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            let sink = self.0.read().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(sink) = sink {
                sink(r.level() as u8, r.target(), r.args().to_string());
            }
        }
    }

    fn flush(&self) {}
}

/// Sends the core's records (targets `redelay::*`) up to `max` (0 off, 1 error, 2 warn, 3 info,
/// 4 debug, 5 trace and above) to `sink(level, target, message)`, the level numbered as `max`. A
/// later call replaces the sink and the level. False when another logger of the `log` crate was
/// set first in this process (there is one per process): then nothing is forwarded.
pub fn forward_logs(max: usize, sink: impl Fn(u8, &str, String) + Send + Sync + 'static) -> bool {
    if log::set_logger(&FORWARD).is_err() && !std::ptr::addr_eq(log::logger(), &FORWARD) {
        return false;
    }
    *FORWARD.0.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(sink));
    log::set_max_level(log::LevelFilter::iter().nth(max).unwrap_or(log::LevelFilter::Trace));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn records_of_redelay_up_to_the_level_reach_the_sink_and_a_later_call_replaces_it() {
        // Other tests may log at the same time: only this test's target is looked at.
        let target = "redelay::forward_test";
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        assert!(forward_logs(2, move |level, t, msg| g.lock().unwrap().push(format!("{level} {t} {msg}"))));
        log::warn!(target: target, "lost");
        log::info!(target: target, "finer than warn");
        log::error!(target: "other::forward_test", "not the core's");
        let ours = |v: &Vec<String>| v.iter().filter(|s| s.contains("forward_test")).cloned().collect::<Vec<_>>();
        assert_eq!(ours(&got.lock().unwrap()), ["2 redelay::forward_test lost"]);
        let again = Arc::new(Mutex::new(Vec::new()));
        let a = again.clone();
        assert!(forward_logs(3, move |level, t, msg| a.lock().unwrap().push(format!("{level} {t} {msg}"))));
        log::info!(target: target, "now wanted");
        assert_eq!(ours(&again.lock().unwrap()), ["3 redelay::forward_test now wanted"]);
        assert_eq!(ours(&got.lock().unwrap()).len(), 1);
    }
}
