//! Delivered messages: BaseMessage (fields), Message (asyncio settle), SyncMessage (blocking settle).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{datetime, duration_arg, opt_duration_arg, run, timedelta};

/// One delivery of a message. Fields only; `Message` and `SyncMessage` add ack/nack/extend.
#[pyclass(frozen, subclass, module = "redelay._native")]
pub struct BaseMessage {
    pub d: redelay::Delivery,
    body: PyOnceLock<Py<PyBytes>>,
}

impl BaseMessage {
    fn new(d: redelay::Delivery) -> Self {
        BaseMessage { d, body: PyOnceLock::new() }
    }
}

/// A delivered message whose ack/nack/extend are awaitables (asyncio API).
#[pyclass(frozen, extends = BaseMessage, module = "redelay._native")]
pub struct Message;

/// A delivered message whose ack/nack/extend block (sync API and plain `def` handlers).
#[pyclass(frozen, extends = BaseMessage, module = "redelay._native")]
pub struct SyncMessage;

pub fn new_message(py: Python<'_>, d: redelay::Delivery) -> PyResult<Py<Message>> {
    Py::new(py, PyClassInitializer::from(BaseMessage::new(d)).add_subclass(Message))
}

pub fn new_sync_message(py: Python<'_>, d: redelay::Delivery) -> PyResult<Py<SyncMessage>> {
    Py::new(py, PyClassInitializer::from(BaseMessage::new(d)).add_subclass(SyncMessage))
}

#[pymethods]
impl BaseMessage {
    /// The message id.
    #[getter]
    fn id(&self) -> &str {
        self.d.id()
    }
    /// The queue it came from.
    #[getter]
    fn queue(&self) -> &str {
        self.d.queue()
    }
    /// The body, byte for byte as published.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.body.get_or_init(py, || PyBytes::new(py, self.d.body()).unbind()).bind(py).clone()
    }
    /// The headers as published (a new dict on each access).
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.d.headers() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// 1 on the first delivery, one more for every failed or expired attempt before.
    #[getter]
    fn attempt(&self) -> u32 {
        self.d.attempt()
    }
    /// Deliveries allowed before the message goes to the dead letters.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.d.max_attempts()
    }
    /// The reason given by the previous failed attempt, or None.
    #[getter]
    fn last_error(&self) -> Option<&str> {
        self.d.last_error()
    }
    /// When Redis stored the message (aware UTC datetime, Redis clock).
    #[getter]
    fn published_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.d.published_at())
    }
    /// When the message became due (for a retry: when the retry became due).
    #[getter]
    fn due_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.d.due_at())
    }
    /// When this delivery was leased (Redis clock, microsecond precision).
    #[getter]
    fn delivered_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.d.delivered_at())
    }
    /// `delivered_at - due_at` as a timedelta (by the Redis clock).
    #[getter]
    fn lateness<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        timedelta(py, self.d.lateness())
    }
    /// When the current lease runs out unless extended.
    #[getter]
    fn lease_deadline<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.d.lease_deadline())
    }
    /// The lease token, for settling by id with `queue.ack(id, token)`.
    #[getter]
    fn token(&self) -> &str {
        self.d.token()
    }
    /// True once ack or nack was called.
    #[getter]
    fn settled(&self) -> bool {
        self.d.is_settled()
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        Ok(format!(
            "<{} id={:?} queue={:?} attempt={} body_len={}>",
            slf.get_type().name()?,
            this.d.id(),
            this.d.queue(),
            this.d.attempt(),
            this.d.body().len()
        ))
    }
}

fn settle_ack(py: Python<'_>, d: redelay::Delivery, blocking: bool) -> PyResult<Bound<'_, PyAny>> {
    run(py, blocking, async move { d.ack().await })
}

fn settle_nack<'py>(
    py: Python<'py>,
    d: redelay::Delivery,
    retry_in: Option<&Bound<'py, PyAny>>,
    reason: String,
    blocking: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let retry_in = opt_duration_arg(retry_in, "retry_in")?;
    run(py, blocking, async move { d.nack(retry_in, &reason).await })
}

fn settle_extend<'py>(
    py: Python<'py>,
    d: redelay::Delivery,
    ttr: &Bound<'py, PyAny>,
    blocking: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ttr = duration_arg(ttr, "ttr")?;
    run(py, blocking, async move { d.extend(ttr).await })
}

#[pymethods]
impl Message {
    /// Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
    /// out (the message may be delivered again) or it was already settled.
    fn ack<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        settle_ack(slf.py(), slf.as_super().get().d.clone(), false)
    }
    /// Give the message back for another attempt, after `retry_in` (seconds or timedelta) or
    /// its exponential backoff. At max_attempts it goes to the dead letters with `reason`.
    /// Returns True when it went to the dead letters.
    #[pyo3(signature = (retry_in=None, reason=String::new()))]
    fn nack<'py>(
        slf: &Bound<'py, Self>,
        retry_in: Option<&Bound<'py, PyAny>>,
        reason: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        settle_nack(slf.py(), slf.as_super().get().d.clone(), retry_in, reason, false)
    }
    /// Extend the lease to `ttr` (seconds or timedelta) from now.
    fn extend<'py>(slf: &Bound<'py, Self>, ttr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        settle_extend(slf.py(), slf.as_super().get().d.clone(), ttr, false)
    }
}

#[pymethods]
impl SyncMessage {
    /// Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
    /// out (the message may be delivered again) or it was already settled.
    fn ack<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        settle_ack(slf.py(), slf.as_super().get().d.clone(), true)
    }
    /// Give the message back for another attempt, after `retry_in` (seconds or timedelta) or
    /// its exponential backoff. At max_attempts it goes to the dead letters with `reason`.
    /// Returns True when it went to the dead letters.
    #[pyo3(signature = (retry_in=None, reason=String::new()))]
    fn nack<'py>(
        slf: &Bound<'py, Self>,
        retry_in: Option<&Bound<'py, PyAny>>,
        reason: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        settle_nack(slf.py(), slf.as_super().get().d.clone(), retry_in, reason, true)
    }
    /// Extend the lease to `ttr` (seconds or timedelta) from now.
    fn extend<'py>(slf: &Bound<'py, Self>, ttr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        settle_extend(slf.py(), slf.as_super().get().d.clone(), ttr, true)
    }
}
