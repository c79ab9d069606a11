//! Conversions between Python values and the core's types, and errors.
//!
//! Only representability is checked here (a negative or non-finite number of seconds cannot be
//! a `Duration`, a naive datetime has no instant); every limit is the core's.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyType};
use pyo3::IntoPyObjectExt;

static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();

/// The binding's tokio runtime (multi-threaded, created on first use, never dropped).
pub fn rt() -> &'static tokio::runtime::Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("redelay")
            .enable_all()
            .build()
            .expect("redelay: cannot start the tokio runtime")
    })
}

/// Set at interpreter exit (by `redelay._runtime`'s atexit hook): from then on no runtime
/// thread enters Python.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Runtime threads currently inside (or entering) Python.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` attached to Python from a runtime thread; None once the interpreter is shutting
/// down. Every entry into Python from a thread Python did not create goes through here, so
/// that exit can wait for them: CPython 3.11 kills a foreign thread that waits for the GIL
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
    py.detach(|| loop {
        if ACTIVE.load(Ordering::SeqCst) == 0 {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    })
}

static ERRORS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RUNTIME_HELPERS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static MEMORYVIEW: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    ERRORS.get_or_try_init(py, || py.import("redelay._errors").map(|m| m.into_any().unbind())).map(|m| m.bind(py))
}

/// The Python helpers in `redelay._runtime` (failure mapping, logging).
pub fn runtime_helpers(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    RUNTIME_HELPERS
        .get_or_try_init(py, || py.import("redelay._runtime").map(|m| m.into_any().unbind()))
        .map(|m| m.bind(py))
}

fn class_name(kind: redelay::ErrorKind) -> &'static str {
    use redelay::ErrorKind::*;
    match kind {
        InvalidArgument => "InvalidArgumentError",
        Connection => "ConnectionError",
        Timeout => "TimeoutError",
        LeaseLost => "LeaseLostError",
        NotFound => "NotFoundError",
        Redis => "RedisError",
        Handler => "HandlerError",
    }
}

/// A redelay exception of the class for `kind`, carrying `message`.
pub fn py_error(py: Python<'_>, kind: redelay::ErrorKind, message: &str) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = errors_module(py)?.getattr(class_name(kind))?;
        Ok(PyErr::from_value(cls.call1((message,))?))
    };
    make().unwrap_or_else(|e| e)
}

/// The core's error as a Python exception.
pub fn to_py_err(py: Python<'_>, e: redelay::Error) -> PyErr {
    py_error(py, e.kind(), e.message())
}

pub fn invalid(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    py_error(py, redelay::ErrorKind::InvalidArgument, message.as_ref())
}

fn timedelta_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TIMEDELTA.import(py, "datetime", "timedelta")
}

fn datetime_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATETIME.import(py, "datetime", "datetime")
}

fn epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    EPOCH
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let dt = py.import("datetime")?;
            let utc = dt.getattr("timezone")?.getattr("utc")?;
            let epoch = dt.getattr("datetime")?.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
            Ok(epoch.unbind())
        })
        .map(|e| e.bind(py))
}

/// A `timedelta` of `us` microseconds (may be negative).
pub fn timedelta_us(py: Python<'_>, us: i64) -> PyResult<Bound<'_, PyAny>> {
    let days = us.div_euclid(86_400_000_000);
    let rest = us.rem_euclid(86_400_000_000);
    timedelta_type(py)?.call1((days, rest / 1_000_000, rest % 1_000_000))
}

pub fn timedelta(py: Python<'_>, d: Duration) -> PyResult<Bound<'_, PyAny>> {
    timedelta_us(py, d.as_micros().min(i64::MAX as u128) as i64)
}

/// An aware UTC datetime for `t`.
pub fn datetime(py: Python<'_>, t: SystemTime) -> PyResult<Bound<'_, PyAny>> {
    let us = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    };
    epoch(py)?.add(timedelta_us(py, us)?)
}

pub fn opt_datetime(py: Python<'_>, t: Option<SystemTime>) -> PyResult<Option<Bound<'_, PyAny>>> {
    t.map(|t| datetime(py, t)).transpose()
}

/// Seconds (int or float) or a `timedelta`, as a `Duration`. `field` names the argument in errors.
pub fn duration_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Duration> {
    let py = obj.py();
    let secs: f64 = if obj.is_instance(timedelta_type(py)?)? {
        // days/seconds/microseconds are exact integers; total_seconds() could round.
        let days: i64 = obj.getattr("days")?.extract()?;
        let s: i64 = obj.getattr("seconds")?.extract()?;
        let us: i64 = obj.getattr("microseconds")?.extract()?;
        let total = days as i128 * 86_400_000_000 + s as i128 * 1_000_000 + us as i128;
        if total < 0 {
            return Err(invalid(py, format!("{field}: must not be negative, got {}", obj.repr()?)));
        }
        return Ok(Duration::from_micros(total.min(u64::MAX as i128) as u64));
    } else if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!("{field}: expected seconds (int or float) or a timedelta, got bool")));
    } else {
        match obj.extract::<f64>() {
            Ok(v) => v,
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "{field}: expected seconds (int or float) or a timedelta, got {}",
                    obj.get_type().name()?
                )))
            }
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(invalid(py, format!("{field}: must be a finite number of seconds, not negative, got {secs}")));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| invalid(py, format!("{field}: {secs} seconds is out of range")))
}

pub fn opt_duration_arg(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<Duration>> {
    match obj {
        Some(o) if !o.is_none() => duration_arg(o, field).map(Some),
        _ => Ok(None),
    }
}

/// An aware `datetime` as a `SystemTime`; a naive one is refused.
pub fn time_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<SystemTime> {
    let py = obj.py();
    if !obj.is_instance(datetime_type(py)?)? {
        return Err(PyTypeError::new_err(format!(
            "{field}: expected an aware datetime, got {}",
            obj.get_type().name()?
        )));
    }
    if obj.call_method0("utcoffset")?.is_none() {
        return Err(invalid(
            py,
            format!(
                "{field}: naive datetime {} has no time zone; pass an aware one, e.g. datetime.now(timezone.utc)",
                obj.repr()?
            ),
        ));
    }
    let delta = obj.sub(epoch(py)?)?;
    let days: i64 = delta.getattr("days")?.extract()?;
    let s: i64 = delta.getattr("seconds")?.extract()?;
    let us: i64 = delta.getattr("microseconds")?.extract()?;
    let total = days as i128 * 86_400_000_000 + s as i128 * 1_000_000 + us as i128;
    let t = if total >= 0 {
        UNIX_EPOCH.checked_add(Duration::from_micros(total as u64))
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_micros((-total) as u64))
    };
    t.ok_or_else(|| {
        invalid(py, format!("{field}: {} is out of range", obj.repr().map(|r| r.to_string()).unwrap_or_default()))
    })
}

/// A message body: bytes, bytearray, memoryview or str (UTF-8).
pub fn body_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    let py = obj.py();
    if obj.is_instance(MEMORYVIEW.import(py, "builtins", "memoryview")?)? {
        let b = obj.call_method0("tobytes")?;
        return Ok(b.cast::<PyBytes>()?.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "body: expected bytes, bytearray, memoryview or str, got {}",
        obj.get_type().name()?
    )))
}

pub fn headers_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(out) };
    let dict = match obj.cast::<PyDict>() {
        Ok(d) => d.clone(),
        // Any other mapping: copy it into a dict.
        Err(_) => PyDict::from_sequence(
            &obj.call_method0("items")
                .map_err(|_| PyTypeError::new_err("headers: expected a mapping of str to str"))?,
        )
        .map_err(|_| PyTypeError::new_err("headers: expected a mapping of str to str"))?,
    };
    for (k, v) in dict.iter() {
        let k: String = k.extract().map_err(|_| PyTypeError::new_err("headers: names must be str"))?;
        let v: String =
            v.extract().map_err(|_| PyTypeError::new_err(format!("headers: value of {k:?} must be str")))?;
        out.insert(k, v);
    }
    Ok(out)
}

/// A positive integer that fits `u32`, or a message naming the field.
pub fn u32_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u32> {
    let py = obj.py();
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!("{field}: expected int, got bool")));
    }
    let v: i64 = obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{field}: expected int, got {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    u32::try_from(v).map_err(|_| invalid(py, format!("{field}: must be a positive integer, got {v}")))
}

pub fn usize_arg(py: Python<'_>, v: i64, field: &str) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| invalid(py, format!("{field}: must not be negative, got {v}")))
}

/// Runs `fut` on the runtime without holding the GIL, checking for signals (Ctrl-C) every
/// 100 ms when called from the main thread.
pub fn block_on<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    py.detach(|| {
        rt().block_on(async move {
            tokio::pin!(fut);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            tick.tick().await;
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

/// Runs a core call either blocking (sync API, GIL released) or as a Python awaitable (asyncio
/// API, resolved on the caller's event loop).
pub fn run<'py, F, T>(py: Python<'py>, blocking: bool, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, redelay::Error>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    if blocking {
        let v = block_on(py, fut)?.map_err(|e| to_py_err(py, e))?;
        v.into_bound_py_any(py)
    } else {
        into_awaitable(py, fut)
    }
}

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Runs `fut` on the runtime and returns an asyncio future of the running loop that resolves
/// with its result. Cancelling the asyncio future aborts the Rust one.
pub fn into_awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, redelay::Error>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let get_loop = GET_RUNNING_LOOP
        .get_or_try_init(py, || py.import("asyncio")?.getattr("get_running_loop").map(|f| f.unbind()))?;
    let lp = get_loop.bind(py).call0()?;
    let py_fut = lp.call_method0("create_future")?;
    let lp_u = lp.unbind();
    let fut_u = py_fut.clone().unbind();
    let handle = rt().spawn(async move {
        let r = fut.await;
        with_python(move |py| {
            let value = match r {
                Ok(v) => v.into_py_any(py),
                Err(e) => Err(to_py_err(py, e)),
            };
            let setter = Setter { fut: fut_u, value: Mutex::new(Some(value)) };
            // Fails only when the loop is closed: nobody is waiting any more.
            let _ = lp_u.bind(py).call_method1("call_soon_threadsafe", (setter,));
        });
    });
    py_fut.call_method1("add_done_callback", (Aborter { handle: handle.abort_handle() },))?;
    Ok(py_fut)
}

/// Sets an asyncio future's outcome, on its loop.
#[pyclass(frozen, module = "redelay._native")]
struct Setter {
    fut: Py<PyAny>,
    value: Mutex<Option<PyResult<Py<PyAny>>>>,
}

#[pymethods]
impl Setter {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let fut = self.fut.bind(py);
        let Some(value) = self.value.lock().unwrap().take() else { return Ok(()) };
        if fut.call_method0("done")?.is_truthy()? {
            return Ok(()); // cancelled meanwhile
        }
        match value {
            Ok(v) => fut.call_method1("set_result", (v,))?,
            Err(e) => fut.call_method1("set_exception", (e.into_value(py),))?,
        };
        Ok(())
    }
}

/// Done-callback of an asyncio future: aborts the Rust task when the future was cancelled.
#[pyclass(frozen, module = "redelay._native")]
struct Aborter {
    handle: tokio::task::AbortHandle,
}

#[pymethods]
impl Aborter {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        if fut.call_method0("cancelled")?.is_truthy()? {
            self.handle.abort();
        }
        Ok(())
    }
}
