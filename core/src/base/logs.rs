//! The core's log records for a binding's own logging. The core logs through `tracing`, which
//! emits `log` records when no tracing subscriber is set; a binding (Python `logging`, SLF4J,
//! a JS function) takes them through [`forward_logs`] or [`add_log_sink`], so that the target
//! filter and the levels are decided here, once.
//!
//! The `log` crate has one logger per process, so the sinks are kept here: the one of
//! [`forward_logs`] (a later call replaces it: a binding that logs one way for the whole
//! process) and any number added with [`add_log_sink`] (one per Node environment: the main
//! thread and each worker thread that asked), each removed when its [`LogSink`] is dropped.
//! Every record goes to every sink whose level lets it through.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Where records go: `(level, target, message)`, the level as in [`forward_logs`].
type Sink = Arc<dyn Fn(u8, &str, String) + Send + Sync>;

/// The sinks, each with its own level and id (0: the one of [`forward_logs`]).
struct Forward(RwLock<Vec<(u64, log::LevelFilter, Sink)>>);

static FORWARD: Forward = Forward(RwLock::new(Vec::new()));
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl log::Log for Forward {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("redelay") && m.level() <= log::max_level()
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            // Called outside the lock: a sink may log, or add or remove a sink.
            let sinks: Vec<Sink> = self.sinks().iter().filter(|s| r.level() <= s.1).map(|s| s.2.clone()).collect();
            for sink in sinks {
                sink(r.level() as u8, r.target(), r.args().to_string());
            }
        }
    }

    fn flush(&self) {}
}

impl Forward {
    fn sinks(&self) -> std::sync::RwLockReadGuard<'_, Vec<(u64, log::LevelFilter, Sink)>> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `change` to the sinks and lets through the finest level any of them wants.
    fn update(&self, change: impl FnOnce(&mut Vec<(u64, log::LevelFilter, Sink)>)) {
        let mut sinks = self.0.write().unwrap_or_else(|e| e.into_inner());
        change(&mut sinks);
        log::set_max_level(sinks.iter().map(|s| s.1).max().unwrap_or(log::LevelFilter::Off));
    }
}

/// Installs the process's logger once; false when another logger of the `log` crate was set
/// first (there is one per process).
fn install() -> bool {
    log::set_logger(&FORWARD).is_ok() || std::ptr::addr_eq(log::logger(), &FORWARD)
}

fn level(max: usize) -> log::LevelFilter {
    log::LevelFilter::iter().nth(max).unwrap_or(log::LevelFilter::Trace)
}

/// Sends the core's records (targets `redelay::*`) up to `max` (0 off, 1 error, 2 warn, 3 info,
/// 4 debug, 5 trace and above) to `sink(level, target, message)`, the level numbered as `max`. A
/// later call replaces the sink and the level (the sinks of [`add_log_sink`] stay). False when
/// another logger of the `log` crate was set first in this process (there is one per process):
/// then nothing is forwarded.
pub fn forward_logs(max: usize, sink: impl Fn(u8, &str, String) + Send + Sync + 'static) -> bool {
    if !install() {
        return false;
    }
    FORWARD.update(|sinks| {
        sinks.retain(|s| s.0 != 0);
        sinks.push((0, level(max), Arc::new(sink)));
    });
    true
}

/// One more sink for the core's records, as [`forward_logs`] has them, besides the others: each
/// gets every record up to its own level. It stays until the returned [`LogSink`] is dropped
/// (a Node environment drops its own when it is torn down). `None` when another logger of the
/// `log` crate was set first in this process.
pub fn add_log_sink(max: usize, sink: impl Fn(u8, &str, String) + Send + Sync + 'static) -> Option<LogSink> {
    if !install() {
        return None;
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    FORWARD.update(|sinks| sinks.push((id, level(max), Arc::new(sink))));
    Some(LogSink { id })
}

/// A sink of [`add_log_sink`]: removed, and its level no longer asked for, when dropped. A
/// record being handed to it at that moment may still reach it.
#[derive(Debug)]
#[must_use = "dropped, the sink is removed"]
pub struct LogSink {
    id: u64,
}

impl Drop for LogSink {
    fn drop(&mut self) {
        FORWARD.update(|sinks| sinks.retain(|s| s.0 != self.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    // The sinks are the process's: the tests of this module run one at a time, and other tests
    // may log meanwhile, so only each test's own target is looked at.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    type Got = Arc<Mutex<Vec<String>>>;

    fn collect(target: &'static str) -> (Got, impl Fn(u8, &str, String) + Send + Sync + 'static) {
        let got = Got::default();
        let g = got.clone();
        (got, move |level, t: &str, msg| {
            if t == target {
                g.lock().unwrap().push(format!("{level} {msg}"));
            }
        })
    }

    fn taken(got: &Got) -> Vec<String> {
        std::mem::take(&mut *got.lock().unwrap())
    }

    #[test]
    fn records_of_redelay_up_to_the_level_reach_the_sink_and_a_later_call_replaces_it() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let target = "redelay::forward_test";
        let (got, sink) = collect(target);
        assert!(forward_logs(2, sink));
        log::warn!(target: target, "lost");
        log::info!(target: target, "finer than warn");
        log::error!(target: "other::forward_test", "not the core's");
        assert_eq!(taken(&got), ["2 lost"]);
        let (again, sink) = collect(target);
        assert!(forward_logs(3, sink));
        log::info!(target: target, "now wanted");
        assert_eq!(taken(&again), ["3 now wanted"]);
        assert!(taken(&got).is_empty(), "replaced");
    }

    /// A Node worker thread's logger must not take the main thread's away, and must be gone
    /// with its environment: each sink gets the records up to its own level, and a dropped one
    /// none.
    #[test]
    fn added_sinks_each_get_records_up_to_their_level_until_dropped() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let target = "redelay::sinks_test";
        let (main, sink) = collect(target);
        let main_sink = add_log_sink(2, sink).unwrap();
        let (worker, sink) = collect(target);
        let worker_sink = add_log_sink(4, sink).unwrap();
        let (process, sink) = collect(target);
        assert!(forward_logs(1, sink));
        log::warn!(target: target, "to both");
        log::debug!(target: target, "to the worker");
        log::trace!(target: target, "to none");
        log::error!(target: target, "to all");
        assert_eq!(taken(&main), ["2 to both", "1 to all"]);
        assert_eq!(taken(&worker), ["2 to both", "4 to the worker", "1 to all"]);
        assert_eq!(taken(&process), ["1 to all"]);
        drop(worker_sink);
        log::debug!(target: target, "no one wants it");
        log::warn!(target: target, "still the main one's");
        assert!(taken(&worker).is_empty(), "a dropped sink gets nothing");
        assert_eq!(taken(&main), ["2 still the main one's"]);
        assert!(!log::log_enabled!(target: target, log::Level::Debug), "no sink asks for debug any more");
        drop(main_sink);
        log::warn!(target: target, "to none");
        assert!(taken(&main).is_empty());
        assert!(taken(&process).is_empty());
    }
}
