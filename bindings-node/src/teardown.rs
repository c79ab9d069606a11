//! What one JS environment (the main thread, each worker thread: each has its own) holds in the
//! core and lets go of when Node tears it down (`worker.terminate()`, `process.exit` in a
//! worker, the process ending): its open subscriptions are abandoned (what no handler took goes
//! back at once, nothing waits on JavaScript any more) and its logger is removed. Kept in the
//! environment's instance data, whose finalizer Node runs then, after the finalizers of the
//! environment's native objects (a `NativeMessages` abandons its stream in its own).

use std::sync::{Arc, Mutex, Weak};

use napi::bindgen_prelude::*;

/// What the environment's teardown abandons: a subscription's wake (which the core holds, so
/// it outlives its JS object).
pub(crate) trait Abandon: Send + Sync {
    fn abandon(&self);
}

/// The instance data. Weak: a subscription that closed is not kept, and nothing needs removing
/// on close.
#[derive(Default)]
pub(crate) struct EnvState {
    open: Mutex<Vec<Weak<dyn Abandon>>>,
    /// This environment's `setLogger` sink in the core; removed when replaced or torn down.
    logger: Mutex<Option<redelay::LogSink>>,
}

impl EnvState {
    /// The state of `env`, made on first use.
    pub(crate) fn of(env: &Env) -> Result<&'static EnvState> {
        if let Some(s) = env.get_instance_data::<EnvState>()? {
            return Ok(s);
        }
        env.set_instance_data(EnvState::default(), (), |gone| gone.value.tear_down())?;
        env.get_instance_data::<EnvState>()?.map(|s| &*s).ok_or_else(|| Error::from_reason("no instance data"))
    }

    /// Abandons `what` when the environment is torn down while it is still open.
    pub(crate) fn track(&self, what: Weak<dyn Abandon>) {
        let mut open = self.open.lock().unwrap();
        open.retain(|w| w.strong_count() > 0);
        open.push(what);
    }

    /// Makes `sink` this environment's logger, removing the one it had; `None`: none.
    pub(crate) fn set_logger(&self, sink: Option<redelay::LogSink>) {
        let old = std::mem::replace(&mut *self.logger.lock().unwrap(), sink);
        drop(old); // removed outside the lock
    }

    fn tear_down(&self) {
        self.set_logger(None);
        let open = std::mem::take(&mut *self.open.lock().unwrap());
        open.iter().filter_map(Weak::upgrade).for_each(|w| w.abandon());
    }
}

/// Tracks `what` in `env`'s state; it is abandoned if the environment goes before it closes.
pub(crate) fn track<T: Abandon + 'static>(env: &Env, what: &Arc<T>) -> Result<()> {
    let weak: Weak<dyn Abandon> = Arc::downgrade(what) as _;
    EnvState::of(env)?.track(weak);
    Ok(())
}
