//! Delivered messages: BaseMessage (fields and settling), Message (settles with awaitables,
//! asyncio API) and SyncMessage (settles blocking: sync API and plain `def` handlers).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict};

use std::time::SystemTime;

use crate::convert::{dur, run, text, Homed, Secs};

/// One delivery of a message.
#[pyclass(frozen, subclass, module = "redelay._native")]
pub struct BaseMessage {
    d: Homed<redelay::Delivery>,
    body: PyOnceLock<Py<PyBytes>>,
    blocking: bool,
}

/// A delivered message of the asyncio API: `ack`/`nack`/`extend` are awaitables.
#[pyclass(frozen, extends = BaseMessage, module = "redelay._native")]
pub struct Message;

/// A delivered message of the blocking API (and of plain `def` handlers): settling blocks.
#[pyclass(frozen, extends = BaseMessage, module = "redelay._native")]
pub struct SyncMessage;

/// What a forked child's refusal names.
const MESSAGE: &str = "message was delivered";

/// A `SyncMessage` (blocking) or a `Message` (asyncio) for `d`.
pub fn new_message(py: Python<'_>, d: redelay::Delivery, blocking: bool) -> PyResult<Py<PyAny>> {
    let base = PyClassInitializer::from(BaseMessage { d: Homed::new(d), body: PyOnceLock::new(), blocking });
    Ok(if blocking {
        Py::new(py, base.add_subclass(SyncMessage))?.into_any()
    } else {
        Py::new(py, base.add_subclass(Message))?.into_any()
    })
}

/// `#[pymethods]` of BaseMessage: one line per getter (`name -> type = |delivery, py| value`),
/// then the other methods as written.
macro_rules! methods {
    ($($(#[doc = $doc:literal])* $name:ident -> $t:ty = |$d:ident, $py:ident| $e:expr;)* {$($rest:tt)*}) => {
        #[pymethods]
        impl BaseMessage {
            $($(#[doc = $doc])* #[getter] fn $name<'py>(&self, $py: Python<'py>) -> $t { let $d = self.d.peek(); $e })*
            $($rest)*
        }
    };
}

methods! {
    /// The message id.
    id -> &str = |d, _py| d.id();
    /// The queue it came from.
    queue -> &str = |d, _py| d.queue();
    /// The headers as published (a new dict on each access).
    headers -> PyResult<Bound<'py, PyDict>> = |d, py| d.headers().into_pyobject(py);
    /// 1 on the first delivery, one more for every failed or expired attempt before.
    attempt -> u32 = |d, _py| d.attempt();
    /// Deliveries allowed before the message goes to the dead letters.
    max_attempts -> u32 = |d, _py| d.max_attempts();
    /// The reason given by the previous failed attempt, or None.
    last_error -> Option<&str> = |d, _py| d.last_error();
    /// When Redis stored the message (aware UTC datetime, Redis clock).
    published_at -> SystemTime = |d, _py| d.published_at();
    /// When the message became due (for a retry: when the retry became due).
    due_at -> SystemTime = |d, _py| d.due_at();
    /// When this delivery was leased (Redis clock).
    delivered_at -> SystemTime = |d, _py| d.delivered_at();
    /// When the message expires (it is not delivered again after that), or None.
    expires_at -> Option<SystemTime> = |d, _py| d.expires_at();
    /// `delivered_at - due_at` as a timedelta (by the Redis clock).
    lateness -> std::time::Duration = |d, _py| d.lateness();
    /// When the current lease runs out unless extended.
    lease_deadline -> SystemTime = |d, _py| d.lease_deadline();
    /// The lease token, for settling by id with `queue.ack(id, token)`.
    token -> &str = |d, _py| d.token();
    /// True once ack or nack was called.
    settled -> bool = |d, _py| d.is_settled();
{
    /// The body, byte for byte as published.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.body.get_or_init(py, || PyBytes::new(py, self.d.peek().body()).unbind()).bind(py).clone()
    }
    /// Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran out or it was settled.
    fn ack<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        run(py, self.blocking, self.d.get(py, MESSAGE)?.ack())
    }
    /// Give the message back for another attempt, after `retry_in` or its backoff; True when it went to the dead letters.
    #[pyo3(signature = (retry_in=None, reason=None), text_signature = "(self, /, retry_in=None, reason='')")]
    fn nack<'py>(
        &self,
        py: Python<'py>,
        retry_in: Option<Secs>,
        reason: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let retry_in = retry_in.map(crate::convert::retry_in).transpose()?;
        let reason = reason.map(|r| text(&r, "reason")).transpose()?.unwrap_or_default();
        run(py, self.blocking, self.d.get(py, MESSAGE)?.nack(retry_in, &reason))
    }
    /// Hand the message back unprocessed, due now, without counting an attempt.
    fn release<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        run(py, self.blocking, self.d.get(py, MESSAGE)?.release())
    }
    /// Extend the lease to `ttr` (seconds or timedelta) from now.
    fn extend<'py>(&self, py: Python<'py>, ttr: Secs) -> PyResult<Bound<'py, PyAny>> {
        run(py, self.blocking, self.d.get(py, MESSAGE)?.extend(dur(Some(ttr), "ttr")?.unwrap_or_default()))
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let d = slf.get().d.peek();
        let name = slf.get_type().name()?;
        Ok(format!(
            "<{name} id={:?} queue={:?} attempt={} body_len={}>",
            d.id(),
            d.queue(),
            d.attempt(),
            d.body().len()
        ))
    }
}
}
