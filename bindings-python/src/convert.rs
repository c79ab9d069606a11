//! The runtime, errors (the one place where a core error becomes a Python exception), and
//! conversions. Only representability is checked here (a negative number of seconds is no
//! `Duration`); every default, range and rule is the core's.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::time::Duration;

use serde::de::DeserializeOwned;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::IntoPyObjectExt;

/// The tokio runtime of one process, and that process's id. A forked child has a copy of its
/// parent's, but neither its worker threads (only the forking thread exists in the child) nor
/// descriptors of its own: its epoll instance and eventfd are the parent's, so a child that
/// registered, deregistered or woke anything through it would disturb the parent. The child
/// never uses it, nor drops it (that would wait for threads that do not exist): it builds its
/// own on first use, and the inherited one stays unreachable, leaked.
pub struct Home {
    pid: u32,
    rt: tokio::runtime::Runtime,
}

/// The `Home` of this process (or of the parent, in a child that has not used redelay yet);
/// null before first use. Leaked on purpose, never freed: a `&'static Home` stays valid, and
/// its address is never reused for another process's.
static HOME: AtomicPtr<Home> = AtomicPtr::new(std::ptr::null_mut());

/// This process's runtime: multi-threaded, created on first use (in a forked child: on first
/// use there, see [`Home`]), never dropped.
pub fn home() -> &'static Home {
    let pid = std::process::id();
    let cur = HOME.load(Ordering::Acquire);
    // SAFETY: HOME is null or a leaked Box, never freed.
    if let Some(h) = unsafe { cur.as_ref() } {
        if h.pid == pid {
            return h;
        }
        _after_fork_in_child(); // a fork that bypassed `os.register_at_fork` (a C-level fork)
    }
    let mut b = tokio::runtime::Builder::new_multi_thread();
    let rt = b.thread_name("redelay").enable_all().build().expect("redelay: cannot start the tokio runtime");
    let new = Box::into_raw(Box::new(Home { pid, rt }));
    match HOME.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: just leaked.
        Ok(_) => unsafe { &*new },
        Err(won) => {
            // Another thread of this process built one first: ours was never used.
            // SAFETY: `new` is ours alone; `won` is a leaked Box of this process.
            unsafe { Box::from_raw(new) }.rt.shutdown_background();
            unsafe { &*won }
        }
    }
}

/// The binding's tokio runtime (this process's).
pub fn rt() -> &'static tokio::runtime::Runtime {
    &home().rt
}

impl Home {
    /// True in the process that built this runtime (false in a forked child).
    pub fn is_current(&'static self) -> bool {
        std::ptr::eq(HOME.load(Ordering::Acquire), self) && self.pid == std::process::id()
    }
}

/// A core object (client, queue, subscription, delivery) with the runtime it lives on: its
/// connections' and tasks' state is that runtime's. Usable only in the process that made it; in
/// a forked child it refuses every call, and is never dropped (dropping it would deregister the
/// parent's sockets from the parent's epoll, or spawn onto a runtime without threads): leaked.
pub struct Homed<T> {
    home: &'static Home,
    v: ManuallyDrop<T>,
}

impl<T> Homed<T> {
    /// `v`, made in this process.
    pub fn new(v: T) -> Self {
        Homed { home: home(), v: ManuallyDrop::new(v) }
    }

    /// The object in the process that made it; None in a forked child.
    pub fn here(&self) -> Option<&T> {
        self.home.is_current().then_some(&*self.v)
    }

    /// The object, or the ConnectionError of a forked child (`what`: "client was created" ...).
    pub fn get(&self, py: Python<'_>, what: &str) -> PyResult<&T> {
        if let Some(v) = self.here() {
            return Ok(v);
        }
        let msg = format!(
            "redelay: this {what} in process {} before a fork; create a new client in this process (pid {})",
            self.home.pid,
            std::process::id()
        );
        Err(to_py_err(py, redelay::Error::new(redelay::ErrorKind::Connection, msg)))
    }

    /// The object for reading what it holds in memory only (a name, a field): never its
    /// connections nor its runtime. Also in a forked child.
    pub fn peek(&self) -> &T {
        &self.v
    }

    /// `v`, of the same process as this object (a queue of this client, say).
    pub fn with<U>(&self, v: U) -> Homed<U> {
        Homed { home: self.home, v: ManuallyDrop::new(v) }
    }
}

impl<T> Drop for Homed<T> {
    fn drop(&mut self) {
        if self.home.is_current() {
            // SAFETY: dropped once, here; never used after.
            unsafe { ManuallyDrop::drop(&mut self.v) }
        }
    }
}

/// Resets, in a forked child, what the child inherited of the parent's threads: no runtime
/// thread is inside Python, none is shutting down, and the forking thread's random numbers
/// (the core's ids and lease tokens) are not the parent's. Registered with
/// `os.register_at_fork(after_in_child=...)`; also run when a child first finds the parent's
/// runtime (a fork from C). The runtime itself is replaced lazily (see [`Home`]).
#[pyfunction]
pub fn _after_fork_in_child() {
    ACTIVE.store(0, Ordering::SeqCst);
    SHUTDOWN.store(false, Ordering::SeqCst);
    let _ = rand::rng().reseed();
}

/// Set at interpreter exit (by `redelay._runtime`'s atexit hook): from then on no runtime
/// thread enters Python.
pub static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Threads inside (or entering) Python from the runtime, or waiting in `take_wait`.
pub static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` attached to Python from a runtime thread; None once the interpreter is shutting
/// down. Exit waits for these: CPython 3.11 kills a foreign thread that waits for the GIL
/// during finalization, which would unwind through Rust frames and crash.
pub fn with_python<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let r = if SHUTDOWN.load(Ordering::SeqCst) { None } else { Python::try_attach(f) };
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
    r
}

/// Called at interpreter exit: stops runtime threads from entering Python, and waits (GIL
/// released, up to `timeout` seconds) for those inside to leave.
#[pyfunction]
pub fn _shutdown(py: Python<'_>, timeout: f64) -> bool {
    SHUTDOWN.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
    py.detach(|| {
        while ACTIVE.load(Ordering::SeqCst) != 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        ACTIVE.load(Ordering::SeqCst) == 0
    })
}

static HELPERS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `redelay._runtime`: errors, handler failures, logging.
pub fn helpers(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    HELPERS.get_or_try_init(py, || py.import("redelay._runtime").map(|m| m.into_any().unbind())).map(|m| m.bind(py))
}

/// The core's error as the exception class of its kind (`redelay._errors.from_core`), its
/// fields named as Python names them (`at`, not `at_ms`; `start` for `from`), with the totals
/// of a long run it stopped part way (`redelay::Error::so_far`, their wire names).
pub fn to_py_err(py: Python<'_>, e: redelay::Error) -> PyErr {
    let e = e.spelled(redelay::Spelling::Python);
    let args = (e.kind().name(), e.message(), e.so_far().map(<[_]>::to_vec));
    let err = helpers(py).and_then(|h| h.call_method1("from_core", args));
    err.map_or_else(|err| err, PyErr::from_value)
}

/// Runs `fut` on the runtime without holding the GIL, checking for signals (Ctrl-C) every
/// 100 ms when called from the main thread.
pub fn block_on<F: Future + Send>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F::Output: Send,
{
    py.detach(|| {
        rt().block_on(async move {
            tokio::pin!(fut);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    r = &mut fut => return Ok(r),
                    _ = tick.tick() => {
                        if let Some(Err(e)) = Python::try_attach(|py| py.check_signals()) {
                            return Err(e);
                        }
                    }
                }
            }
        })
    })
}

/// Runs a core call either blocking (sync API, GIL released) or as an asyncio future of the
/// running loop (asyncio API); cancelling that future aborts the Rust one.
pub fn run<'py, F, T>(py: Python<'py>, blocking: bool, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, redelay::Error>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    if blocking {
        let v = block_on(py, fut)?.map_err(|e| to_py_err(py, e))?;
        // A signal that came as the call finished (Ctrl-C after the last check of `block_on`):
        // its exception is raised here, instead of by Python as the call returns, which would
        // drop the result unread. A result holding leases (a fetch's `Deliveries`) gives them
        // back as it is dropped.
        py.check_signals()?;
        return v.into_bound_py_any(py).map(unit);
    }
    let lp = py.import("asyncio")?.call_method0("get_running_loop")?;
    let py_fut = lp.call_method0("create_future")?;
    let (lp_u, fut_u) = (lp.unbind(), py_fut.clone().unbind());
    let handle = rt().spawn(async move {
        let r = fut.await;
        with_python(move |py| {
            let (v, e) = match r.map_err(|e| to_py_err(py, e)).and_then(|v| v.into_bound_py_any(py)) {
                Ok(v) => (unit(v), py.None().into_bound(py)),
                Err(e) => (py.None().into_bound(py), e.into_value(py).into_bound(py).into_any()),
            };
            // `_runtime.settle` sets the outcome on the loop; fails only when the loop is closed.
            let settle = helpers(py).and_then(|h| h.getattr("settle"));
            let _ = settle.and_then(|s| lp_u.bind(py).call_method1("call_soon_threadsafe", (s, fut_u, v, e)));
        });
    });
    let abort = Homed::new(handle.abort_handle());
    let on_done = pyo3::types::PyCFunction::new_closure(py, None, None, move |args, _| -> PyResult<()> {
        // (Never in a forked child, where the task is the parent's.)
        if let (true, Some(abort)) = (args.get_item(0)?.call_method0("cancelled")?.is_truthy()?, abort.here()) {
            abort.abort(); // the asyncio future was cancelled: so is the Rust one
        }
        Ok(())
    })?;
    py_fut.call_method1("add_done_callback", (on_done,))?;
    Ok(py_fut)
}

/// Rust's `()` (an empty tuple) as None.
fn unit(v: Bound<'_, PyAny>) -> Bound<'_, PyAny> {
    if v.is(pyo3::types::PyTuple::empty(v.py())) {
        v.py().None().into_bound(v.py())
    } else {
        v
    }
}

/// A duration argument: seconds (int or float) or a `timedelta`; else the name of the type
/// given (a `bool` or a `str` is no number of seconds), refused by [`secs`] naming the field.
pub struct Secs(pub Result<f64, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Secs {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        use pyo3::types::{PyBool, PyFloat, PyInt};
        if obj.is_instance_of::<PyBool>() {
            return Ok(Secs(Err("bool".into())));
        }
        Ok(Secs(if obj.hasattr("total_seconds")? {
            Ok(obj.call_method0("total_seconds")?.extract()?)
        } else if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() {
            Ok(obj.extract::<f64>()?)
        } else {
            Err(obj.get_type().name()?.to_string())
        }))
    }
}

/// A str argument as UTF-8, refused naming `field` as the Python API's own arguments are: another
/// type (`bytes` too), or a str with a lone surrogate (`redelay._results.surrogate`'s wording).
pub fn text(v: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let py = v.py();
    let Ok(s) = v.cast::<pyo3::types::PyString>() else {
        let msg = format!("{field}: invalid type: {}, expected a str", v.get_type().name()?);
        return Err(to_py_err(py, redelay::Error::invalid(msg)));
    };
    match s.to_cow() {
        Ok(s) => Ok(s.into_owned()),
        Err(_) => Err(PyErr::from_value(py.import("redelay._results")?.call_method1("surrogate", (field,))?)),
    }
}

/// A queue's weight (an int, as `redelay._ops` checked): one beyond 64 bits as its text, for
/// the core to refuse as it was given rather than a raw `OverflowError`.
pub struct Weight(pub Result<i64, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Weight {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Weight(obj.extract::<i64>().map_err(|_| obj.to_string())))
    }
}

/// A duration argument in seconds, checked by `check` (the core's `limits::seconds`, or
/// `limits::seconds_as_ms` for the wire form); `field` names it in the error.
fn secs(Secs(s): Secs, field: &str, check: fn(&str, f64) -> redelay::Result<f64>) -> PyResult<f64> {
    let s = s.map_err(|t| not_secs(field, &t))?;
    check(field, s).map_err(|e| Python::attach(|py| to_py_err(py, e)))
}

fn not_secs(field: &str, t: &str) -> PyErr {
    pyo3::exceptions::PyTypeError::new_err(format!("{field}: expected seconds (int or float) or a timedelta, got {t}"))
}

/// A retry delay (`RetryLater`, a nack's `retry_in`): seconds or a timedelta, its range checked
/// by the core's one rule of a retry delay (`redelay::limits::retry_delay`), as in every
/// language: negative, NaN or beyond 3650 days is refused.
pub fn retry_in(Secs(s): Secs) -> PyResult<Duration> {
    let s = s.map_err(|t| not_secs("retry_in", &t))?;
    redelay::limits::retry_delay(s * 1000.0).map_err(|e| Python::attach(|py| to_py_err(py, e)))
}

/// [`retry_in`] in seconds, for `RetryLater` and `Queue.nack`.
#[pyfunction]
pub fn retry_delay(retry_in: Secs) -> PyResult<f64> {
    Ok(self::retry_in(retry_in)?.as_secs_f64())
}

/// A duration argument as a `Duration` (one too long for it is the longest, for the core's
/// limit to refuse).
pub fn dur(s: Option<Secs>, field: &str) -> PyResult<Option<Duration>> {
    s.map(|s| Ok(Duration::try_from_secs_f64(secs(s, field, redelay::limits::seconds)?).unwrap_or(Duration::MAX)))
        .transpose()
}

/// A duration argument of an option in the core's wire form (ms); `redelay._results.wire`.
#[pyfunction]
pub fn ms(s: Secs, field: &str) -> PyResult<f64> {
    secs(s, field, redelay::limits::seconds_as_ms)
}

/// Runs a close (blocking or awaitable), waiting at most `timeout` when given: True when it
/// is over, False when it was given up on (the core's next close waits for the same drain).
pub fn close<'py, F>(py: Python<'py>, blocking: bool, timeout: Option<Secs>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = ()> + Send + 'static,
{
    let limit = dur(timeout, "timeout")?;
    run(py, blocking, async move {
        let Some(t) = limit else {
            fut.await;
            return Ok::<bool, redelay::Error>(true);
        };
        Ok(tokio::time::timeout(t, fut).await.is_ok())
    })
}

/// Arguments in their wire form (JSON text from `redelay._results.wire`); an error names the
/// field (read as a JSON value first, so that it carries no position in the text).
pub fn de<T: DeserializeOwned>(py: Python<'_>, json: &str) -> PyResult<T> {
    let v = serde_json::from_str(json).map_err(|e| redelay::Error::invalid(format!("arguments: {e}")));
    v.and_then(redelay::wire::from_json).map_err(|e| to_py_err(py, e))
}
