//! Python binding of redelay: the native module `redelay._native`. The public, typed API is
//! the Python package `redelay` (python/redelay/), which wraps these classes.

use pyo3::prelude::*;

mod convert;
mod message;
mod queue;
mod subscribe;
mod types;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<queue::NativeClient>()?;
    m.add_class::<queue::NativeQueue>()?;
    m.add_class::<subscribe::NativeSubscription>()?;
    m.add_class::<message::BaseMessage>()?;
    m.add_class::<message::Message>()?;
    m.add_class::<message::SyncMessage>()?;
    m.add_class::<types::Published>()?;
    m.add_class::<types::Stats>()?;
    m.add_class::<types::MessageInfo>()?;
    m.add_class::<types::VerifyReport>()?;
    m.add_class::<types::Counters>()?;
    m.add_function(wrap_pyfunction!(convert::_shutdown, m)?)?;
    m.add("CORE_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
