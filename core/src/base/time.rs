//! Time: Redis milliseconds and `SystemTime`, and a sleep precise to well under a millisecond.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(crate) fn ms_to_time(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        UNIX_EPOCH
    }
}

pub(crate) fn time_to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// Sleeps until `target` with sub-millisecond precision: tokio's timer (1 ms granularity,
/// rounding up) to about 1.5 ms before, then yielding until the instant. The spin costs at
/// most that long per idle wake-up and is what brings lateness under a millisecond.
pub(crate) async fn sleep_precise(target: Instant) {
    const SPIN: Duration = Duration::from_micros(1500);
    if let Some(early) = target.checked_sub(SPIN) {
        if early > Instant::now() {
            tokio::time::sleep_until(early.into()).await;
        }
    }
    while Instant::now() < target {
        tokio::task::yield_now().await;
    }
}

static START: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);

/// Milliseconds on this process' monotonic clock (since its first call, or `init_mono`).
pub(crate) fn mono_ms() -> u64 {
    START.elapsed().as_millis() as u64
}

/// Sets the origin of [`mono_ms`] now (see [`crate::init_globals`]).
pub(crate) fn init_mono() {
    std::sync::LazyLock::force(&START);
}
