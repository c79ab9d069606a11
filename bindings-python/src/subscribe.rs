//! Subscriptions on the core's bridge (`Queue::subscribe_foreign`). The Python layer
//! (`redelay._runtime`) runs the handlers: `async def` ones on the event loop (woken by
//! `PyWake`, it calls `take`), plain `def` ones on threads that block in `take_wait`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use pyo3::prelude::*;

use crate::convert::{Homed, Secs, ACTIVE, SHUTDOWN};
use crate::message::new_message;

/// Wakes the event loop: calls the Python `wake` (`loop.call_soon_threadsafe(drain)`); None
/// for worker threads, which wait in `take_wait` instead. `closed` is called once at close,
/// and then both are let go of: `wake` leads back to this subscription (its runner holds it),
/// a cycle through Rust that Python's collector cannot see, so nothing of it would be freed.
pub struct PyWake {
    pub wake: std::sync::Mutex<Option<Py<PyAny>>>,
    pub closed: std::sync::Mutex<Option<Py<PyAny>>>,
}

impl PyWake {
    pub fn new(wake: Option<Py<PyAny>>, closed: Option<Py<PyAny>>) -> Self {
        PyWake { wake: std::sync::Mutex::new(wake), closed: std::sync::Mutex::new(closed) }
    }
}

impl redelay::Wake for PyWake {
    fn wake(&self) -> bool {
        if self.wake.lock().unwrap().is_none() {
            return true; // worker threads take by themselves; or closed
        }
        crate::convert::with_python(|py| {
            // Not called under the lock: the call may let another thread take the GIL.
            let wake = self.wake.lock().unwrap().as_ref().map(|w| w.clone_ref(py));
            wake.is_none_or(|w| w.call0(py).is_ok())
        })
        .unwrap_or(false)
    }

    fn closed(&self) {
        crate::convert::with_python(|py| {
            let (closed, wake) = (self.closed.lock().unwrap().take(), self.wake.lock().unwrap().take());
            if let Some(closed) = closed {
                drop(closed.call0(py));
            }
            drop(wake);
        });
    }
}

/// A running subscription (the core's).
#[pyclass(frozen, weakref, module = "redelay._native")]
pub struct NativeSubscription {
    sub: Homed<std::sync::Arc<redelay::Subscription>>,
}

impl From<redelay::Subscription> for NativeSubscription {
    fn from(s: redelay::Subscription) -> Self {
        NativeSubscription { sub: Homed::new(s.into()) }
    }
}

/// What a forked child's refusal names (every method refuses there: the subscription's tasks
/// and threads are the parent's).
const SUB: &str = "subscription was started";

type Batch = Vec<(u64, Py<PyAny>)>;
/// A handler's outcome from Python: None acks, (reason, retry_in seconds) nacks.
type Outcome = Option<(String, Option<f64>)>;

fn to_py(py: Python<'_>, v: Vec<(u64, redelay::Delivery)>, blocking: bool) -> PyResult<Batch> {
    v.into_iter().map(|(k, d)| Ok((k, new_message(py, d, blocking)?))).collect()
}

#[pymethods]
impl NativeSubscription {
    /// The deliveries waiting, as (key, Message) pairs; on the event loop, after a wake.
    fn take(&self, py: Python<'_>) -> PyResult<Batch> {
        to_py(py, self.sub.get(py, SUB)?.take(), false)
    }

    /// Waits (GIL released) up to `timeout` seconds for deliveries, as (key, SyncMessage)
    /// pairs; empty on timeout, on close and at interpreter exit.
    fn take_wait(&self, py: Python<'_>, timeout: f64) -> PyResult<Batch> {
        let sub = self.sub.get(py, SUB)?;
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        let v = if SHUTDOWN.load(Ordering::SeqCst) {
            Vec::new()
        } else {
            py.detach(|| sub.take_wait(Duration::from_secs_f64(timeout.clamp(0.0, 60.0))))
        };
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
        if SHUTDOWN.load(Ordering::SeqCst) && !v.is_empty() {
            sub.give_back(v.into_iter().map(|(k, _)| k).collect());
            return Ok(Vec::new());
        }
        to_py(py, v, true)
    }

    /// Hands deliveries back unprocessed (due now, no attempt counted): taken but never run.
    fn give_back(&self, py: Python<'_>, keys: Vec<u64>) -> PyResult<()> {
        self.sub.get(py, SUB)?.give_back(keys);
        Ok(())
    }

    /// Hands deliveries back and closes: a handler said the program is stopping (the core stops
    /// fetching first, so that they are not run again before the close).
    fn give_back_and_stop(&self, py: Python<'_>, keys: Vec<u64>) -> PyResult<()> {
        self.sub.get(py, SUB)?.give_back_and_stop(keys);
        Ok(())
    }

    /// Reports outcomes: None acks, (reason, retry_in seconds or None) nacks.
    fn complete(&self, py: Python<'_>, outcomes: Vec<(u64, Outcome)>) -> PyResult<()> {
        let f = |(r, s): (String, Option<f64>)| redelay::Failure::with_retry_ms(r, s.map(|s| s * 1000.0));
        let outcomes = outcomes.into_iter().map(|(k, o)| (k, o.map_or(Ok(()), |o| Err(f(o))))).collect();
        self.sub.get(py, SUB)?.complete(outcomes);
        Ok(())
    }

    /// Stop fetching, let running handlers finish (up to the drain timeout, or `timeout`
    /// seconds when given), return. Blocking or awaitable.
    #[pyo3(signature = (blocking, timeout=None))]
    fn close<'py>(&self, py: Python<'py>, blocking: bool, timeout: Option<Secs>) -> PyResult<Bound<'py, PyAny>> {
        let sub = self.sub.get(py, SUB)?.clone();
        crate::convert::close(py, blocking, timeout, async move { sub.close().await })
    }

    /// The core's close, not waited for: calls `done` (from a runtime thread; not once the
    /// interpreter is exiting) when it is over. Once closing has started (by `close`, the
    /// client, or the core), that is when its drain is over: the core's close, called again,
    /// waits for the same drain. How `wait()` learns that the subscription has closed.
    fn close_then(&self, py: Python<'_>, done: Py<PyAny>) -> PyResult<()> {
        let sub = self.sub.get(py, SUB)?.clone();
        crate::convert::rt().spawn(async move {
            sub.close().await;
            crate::convert::with_python(|py| drop(done.call0(py)));
        });
        Ok(())
    }

    /// (delivered, handled, acked, nacked, lease_lost, errors).
    fn counters(&self, py: Python<'_>) -> PyResult<(u64, u64, u64, u64, u64, u64)> {
        let c = self.sub.get(py, SUB)?.counters();
        Ok((c.delivered, c.handled, c.acked, c.nacked, c.lease_lost, c.errors))
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.sub.get(py, SUB)?.is_closed())
    }

    #[getter]
    fn queues(&self) -> Vec<String> {
        self.sub.peek().queue_names()
    }

    /// The latest fetch or settle error, as the exception of its kind; None when none.
    #[getter]
    fn last_error(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let e = self.sub.get(py, SUB)?.last_error();
        Ok(e.map(|e| crate::convert::to_py_err(py, e).into_value(py).into_any()))
    }
}
