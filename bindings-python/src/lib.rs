//! Python binding of redelay: the native module `redelay._native`. The public, typed API is
//! the Python package `redelay` (python/redelay/), which wraps these classes.

use pyo3::prelude::*;

mod convert;
mod message;
mod queue;
mod subscribe;

/// Lets core records up to `level` (1 error … 5 trace) through to Python `logging` (the core's
/// `redelay::forward_logs`); `redelay._runtime` passes the level of the `redelay` logger.
#[pyfunction]
fn _log_level(level: usize) {
    redelay::forward_logs(level, |level, target, text| {
        let target = target.replace("::", ".");
        convert::with_python(|py| {
            let _ = convert::helpers(py).and_then(|h| h.call_method1("log", (level, target, text)));
        });
    });
}

/// A thrown exception's reason from its type name and text, worded by the core
/// (`redelay::Failure::thrown`): `"ValueError: boom"`.
#[pyfunction]
fn failure_reason(name: &str, text: &str) -> String {
    redelay::Failure::thrown(name, text)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<queue::NativeClient>()?;
    m.add_class::<queue::NativeQueue>()?;
    m.add_class::<queue::NativeMessages>()?;
    m.add_class::<subscribe::NativeSubscription>()?;
    m.add_class::<message::BaseMessage>()?;
    m.add_class::<message::Message>()?;
    m.add_class::<message::SyncMessage>()?;
    m.add_function(wrap_pyfunction!(convert::_shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(convert::_after_fork_in_child, m)?)?;
    // A forked child (multiprocessing's "fork", gunicorn or celery prefork with preload) resets
    // what it inherited of the parent's threads; it never uses the parent's runtime
    // (`convert::Home`). `os.register_at_fork` does not exist on Windows.
    let py = m.py();
    if let Ok(at_fork) = py.import("os")?.getattr("register_at_fork") {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("after_in_child", m.getattr("_after_fork_in_child")?)?;
        at_fork.call((), Some(&kwargs))?;
    }
    m.add_function(wrap_pyfunction!(_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(failure_reason, m)?)?;
    m.add_function(wrap_pyfunction!(convert::ms, m)?)?;
    m.add_function(wrap_pyfunction!(convert::retry_delay, m)?)?;
    m.add("UNITS", redelay::Spelling::Python.units())?;
    // The core's defaults of the calls whose Python signatures show them.
    m.add("DEFAULT_FETCH_MAX", redelay::limits::DEFAULT_FETCH_MAX)?;
    m.add("DEFAULT_PAGE_LIMIT", redelay::limits::DEFAULT_PAGE_LIMIT)?;
    let codes: Vec<(&str, &str)> = redelay::ErrorKind::ALL.iter().map(|k| (k.name(), k.code())).collect();
    m.add("ERROR_CODES", codes)?;
    Ok(())
}
