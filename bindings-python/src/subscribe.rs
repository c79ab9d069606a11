//! Handlers that call Python, and the subscription handle.
//!
//! * `async def` handlers run on the caller's event loop. Deliveries are queued here and handed
//!   to the loop in batches: one `call_soon_threadsafe` per batch, not per message, then one
//!   `create_task` per message; the task's done-callback reports the outcome back.
//! * Plain `def` handlers run on the runtime's blocking thread pool, never on an event loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::sync::oneshot;

use redelay::{Delivery, Failure, HandlerFuture};

use crate::convert::{run, runtime_helpers};

use crate::message::{new_message, new_sync_message};
use crate::types::Counters;

type Outcome = Result<(), Failure>;

/// Turns a handler's exception into a Failure (logging it), via `redelay._runtime.failure`.
fn failure_of(py: Python<'_>, exc: &Bound<'_, PyAny>, msg: &Bound<'_, PyAny>) -> Failure {
    let r = (|| -> PyResult<Failure> {
        let (reason, retry_in): (String, Option<f64>) =
            runtime_helpers(py)?.call_method1("failure", (exc, msg))?.extract()?;
        Ok(match retry_in.and_then(|s| Duration::try_from_secs_f64(s).ok()) {
            Some(d) => Failure::retry_in(reason, d),
            None => Failure::new(reason),
        })
    })();
    r.unwrap_or_else(|e| Failure::new(format!("handler failed ({e})")))
}

/// A plain `def` handler, run on the blocking thread pool.
pub struct SyncHandler {
    func: Arc<Py<PyAny>>,
}

fn call_sync(py: Python<'_>, func: &Py<PyAny>, d: Delivery) -> Outcome {
    let msg = new_sync_message(py, d).map_err(|e| Failure::new(e.to_string()))?.into_bound(py).into_any();
    match func.bind(py).call1((&msg,)) {
        Ok(ret) => {
            if ret.hasattr("__await__").unwrap_or(false) {
                // Close a coroutine so Python does not warn that it was never awaited.
                let _ = ret.call_method0("close");
                Err(Failure::new("handler returned an awaitable: declare it `async def` to run it on the event loop"))
            } else {
                Ok(())
            }
        }
        Err(e) => Err(failure_of(py, e.value(py).as_any(), &msg)),
    }
}

impl redelay::Handler for SyncHandler {
    fn handle(&self, d: Delivery) -> HandlerFuture {
        let func = self.func.clone();
        Box::pin(async move {
            let r = tokio::task::spawn_blocking(move || {
                crate::convert::with_python(|py| call_sync(py, &func, d))
                    .unwrap_or_else(|| Err(Failure::new("the Python interpreter is shutting down")))
            })
            .await;
            r.unwrap_or_else(|e| Err(Failure::new(format!("handler thread failed: {e}"))))
        })
    }
}

struct DispatchState {
    event_loop: Py<PyAny>,
    /// The contextvars context of the subscribe call: handler tasks start from a copy of it.
    context: Py<PyAny>,
    func: Py<PyAny>,
    pending: Mutex<Vec<Queued>>,
    scheduled: AtomicBool,
}

/// A delivery waiting to be started on the loop.
struct Queued {
    d: Delivery,
    tx: oneshot::Sender<Outcome>,
    task: Arc<Mutex<Option<Py<PyAny>>>>,
}

/// Held by the Rust side while a handler task runs: if the core gives up on the handler
/// (drain timeout), the Python task is cancelled instead of running on unobserved.
struct CancelOnDrop {
    st: Arc<DispatchState>,
    task: Arc<Mutex<Option<Py<PyAny>>>>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Some(task) = self.task.lock().unwrap().take() {
            let st = self.st.clone();
            crate::convert::with_python(move |py| {
                if let Ok(cancel) = task.bind(py).getattr("cancel") {
                    let _ = st.event_loop.bind(py).call_method1("call_soon_threadsafe", (cancel,));
                }
            });
        }
    }
}

/// An `async def` handler, run as tasks on the event loop captured at subscribe.
pub struct AsyncHandler {
    st: Arc<DispatchState>,
}

impl AsyncHandler {
    fn fail_pending(&self, why: &str) {
        let batch = std::mem::take(&mut *self.st.pending.lock().unwrap());
        self.st.scheduled.store(false, Ordering::Release);
        for q in batch {
            let _ = q.tx.send(Err(Failure::new(why)));
        }
    }
}

impl redelay::Handler for AsyncHandler {
    fn handle(&self, d: Delivery) -> HandlerFuture {
        let (tx, rx) = oneshot::channel();
        let task = Arc::new(Mutex::new(None));
        self.st.pending.lock().unwrap().push(Queued { d, tx, task: task.clone() });
        let guard = CancelOnDrop { st: self.st.clone(), task, armed: true };
        if !self.st.scheduled.swap(true, Ordering::AcqRel) {
            let st = self.st.clone();
            let scheduled = crate::convert::with_python(|py| -> PyResult<()> {
                let drain = Py::new(py, Drain { st: st.clone() })?;
                let kwargs = pyo3::types::PyDict::new(py);
                kwargs.set_item("context", st.context.bind(py))?;
                st.event_loop.bind(py).call_method("call_soon_threadsafe", (drain,), Some(&kwargs))?;
                Ok(())
            });
            match scheduled {
                Some(Ok(())) => {}
                Some(Err(e)) => self.fail_pending(&format!("cannot run the handler on its event loop: {e}")),
                None => self.fail_pending("the Python interpreter is shutting down"),
            }
        }
        Box::pin(async move {
            let mut guard = guard; // move the whole guard in (not just a copy of its flag)
            let out = rx
                .await
                .unwrap_or_else(|_| Err(Failure::new("handler abandoned: its event loop stopped before it finished")));
            guard.armed = false;
            out
        })
    }
}

/// Runs on the event loop: starts a task for every queued delivery.
#[pyclass(frozen, module = "redelay._native")]
struct Drain {
    st: Arc<DispatchState>,
}

#[pymethods]
impl Drain {
    fn __call__(&self, py: Python<'_>) {
        self.st.scheduled.store(false, Ordering::Release);
        let batch = std::mem::take(&mut *self.st.pending.lock().unwrap());
        let lp = self.st.event_loop.bind(py);
        let func = self.st.func.bind(py);
        for Queued { d, tx, task: slot } in batch {
            let msg = match new_message(py, d) {
                Ok(m) => m.into_bound(py).into_any(),
                Err(e) => {
                    let _ = tx.send(Err(Failure::new(e.to_string())));
                    continue;
                }
            };
            let ret = match func.call1((&msg,)) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(failure_of(py, e.value(py).as_any(), &msg)));
                    continue;
                }
            };
            if ret.is_none() {
                let _ = tx.send(Ok(()));
                continue;
            }
            // A coroutine becomes a task; any other awaitable (a Future ...) goes through
            // ensure_future.
            let task = match lp.call_method1("create_task", (&ret,)).or_else(|_| {
                let kwargs = pyo3::types::PyDict::new(py);
                kwargs.set_item("loop", lp)?;
                py.import("asyncio")?.call_method("ensure_future", (&ret,), Some(&kwargs))
            }) {
                Ok(t) => t,
                Err(e) => {
                    let _ = tx.send(Err(Failure::new(format!("handler did not return an awaitable: {e}"))));
                    continue;
                }
            };
            *slot.lock().unwrap() = Some(task.clone().unbind());
            let done = Completer { tx: Mutex::new(Some(tx)), msg: msg.unbind() };
            if let Err(e) = task.call_method1("add_done_callback", (done,)) {
                e.restore(py);
                // The Completer was dropped with its sender: the Rust side sees "abandoned".
                let _ = PyErr::take(py);
            }
        }
    }
}

/// Done-callback of a handler task: reports its outcome.
#[pyclass(frozen, module = "redelay._native")]
struct Completer {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    msg: Py<PyAny>,
}

#[pymethods]
impl Completer {
    fn __call__(&self, py: Python<'_>, task: &Bound<'_, PyAny>) {
        let Some(tx) = self.tx.lock().unwrap().take() else { return };
        let outcome = (|| -> PyResult<Outcome> {
            if task.call_method0("cancelled")?.is_truthy()? {
                return Ok(Err(Failure::new("handler task was cancelled")));
            }
            let exc = task.call_method0("exception")?;
            if exc.is_none() {
                Ok(Ok(()))
            } else {
                Ok(Err(failure_of(py, &exc, self.msg.bind(py))))
            }
        })();
        let _ = tx.send(outcome.unwrap_or_else(|e| Err(Failure::new(e.to_string()))));
    }
}

pub fn make_handler(
    py: Python<'_>,
    func: Py<PyAny>,
    event_loop: Option<Py<PyAny>>,
) -> PyResult<Arc<dyn redelay::Handler>> {
    Ok(match event_loop {
        Some(event_loop) => Arc::new(AsyncHandler {
            st: Arc::new(DispatchState {
                context: py.import("contextvars")?.call_method0("copy_context")?.unbind(),
                event_loop,
                func,
                pending: Mutex::new(Vec::new()),
                scheduled: AtomicBool::new(false),
            }),
        }),
        None => Arc::new(SyncHandler { func: Arc::new(func) }),
    })
}

/// A running subscription (the core's), shared with close futures.
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeSubscription {
    pub sub: Arc<redelay::Subscription>,
}

#[pymethods]
impl NativeSubscription {
    /// Stop fetching, let running handlers finish (up to the drain timeout, or `timeout`
    /// seconds when given), return. Blocking or awaitable.
    #[pyo3(signature = (blocking, timeout=None))]
    fn close<'py>(&self, py: Python<'py>, blocking: bool, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let sub = self.sub.clone();
        let limit = timeout.and_then(|t| Duration::try_from_secs_f64(t.max(0.0)).ok());
        run(py, blocking, async move {
            match limit {
                Some(t) => {
                    let _ = tokio::time::timeout(t, sub.close()).await;
                }
                None => sub.close().await,
            }
            Ok::<bool, redelay::Error>(true)
        })
    }
    /// Counts so far.
    fn counters(&self) -> Counters {
        Counters(self.sub.counters())
    }
    /// True once close was called.
    #[getter]
    fn closed(&self) -> bool {
        self.sub.is_closed()
    }
}
