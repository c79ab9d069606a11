//! The core's log records (targets `redelay::*`, the gateway's `redelay::server` included) on
//! stderr, one line each: `2026-11-26T22:50:01.123Z WARN redelay::server: …`. Without it
//! `redelay serve` would keep its warnings (a failed request, a webhook that cannot deliver, a
//! queue out of reach) to itself.

use std::time::SystemTime;

/// The levels of `--log`, quietest first; a record's level (1 error … 5 trace) indexes it.
pub const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Writes the core's records up to `level` (one of [`LEVELS`]) to stderr.
pub fn to_stderr(level: &str) {
    let max = LEVELS.iter().position(|l| *l == level).unwrap_or(2);
    redelay::forward_logs(max, |l, target, message| {
        let name = LEVELS.get(usize::from(l)).copied().unwrap_or("trace").to_ascii_uppercase();
        eprintln!("{} {name} {target}: {message}", crate::units::iso(SystemTime::now()));
    });
}
