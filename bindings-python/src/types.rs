//! Result objects: Published, Stats, MessageInfo, VerifyReport, Counters.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{datetime, opt_datetime, timedelta};

/// The outcome of publishing one message.
#[pyclass(frozen, module = "redelay._native")]
pub struct Published {
    /// The message id (generated when none was given).
    #[pyo3(get)]
    id: String,
    status: redelay::PublishStatus,
}

impl From<redelay::Published> for Published {
    fn from(p: redelay::Published) -> Self {
        Published { id: p.id, status: p.status }
    }
}

#[pymethods]
impl Published {
    /// "stored", "duplicate" (a message with this id existed; nothing changed) or "replaced".
    #[getter]
    fn status(&self) -> &'static str {
        match self.status {
            redelay::PublishStatus::Stored => "stored",
            redelay::PublishStatus::Duplicate => "duplicate",
            redelay::PublishStatus::Replaced => "replaced",
        }
    }
    /// True when a message with this id already existed and nothing was changed.
    #[getter]
    fn duplicate(&self) -> bool {
        self.status == redelay::PublishStatus::Duplicate
    }
    fn __repr__(&self) -> String {
        format!("Published(id={:?}, status={:?})", self.id, self.status())
    }
}

/// Counts of one queue, read atomically.
#[pyclass(frozen, module = "redelay._native")]
pub struct Stats(pub redelay::Stats);

#[pymethods]
impl Stats {
    /// Redis time of the reading (aware UTC datetime).
    #[getter]
    fn now<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.0.now)
    }
    /// All stored messages (scheduled + ready + leased + dead).
    #[getter]
    fn total(&self) -> u64 {
        self.0.total
    }
    /// Messages waiting for their due time.
    #[getter]
    fn scheduled(&self) -> u64 {
        self.0.scheduled
    }
    /// Due messages waiting for a consumer.
    #[getter]
    fn ready(&self) -> u64 {
        self.0.ready
    }
    /// Messages delivered and not yet settled.
    #[getter]
    fn leased(&self) -> u64 {
        self.0.leased
    }
    /// Dead letters.
    #[getter]
    fn dead(&self) -> u64 {
        self.0.dead
    }
    /// Due time of the next scheduled message, or None.
    #[getter]
    fn next_due<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        opt_datetime(py, self.0.next_due)
    }
    /// Due time of the oldest message that is due but not yet picked up, or None.
    #[getter]
    fn oldest_ready_due<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        opt_datetime(py, self.0.oldest_ready_due)
    }
    fn __repr__(&self) -> String {
        let s = &self.0;
        format!(
            "Stats(total={}, scheduled={}, ready={}, leased={}, dead={})",
            s.total, s.scheduled, s.ready, s.leased, s.dead
        )
    }
}

/// A stored message as `peek` and `dead_letters` show it.
#[pyclass(frozen, module = "redelay._native")]
pub struct MessageInfo(pub redelay::MessageInfo);

#[pymethods]
impl MessageInfo {
    /// The message id.
    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }
    /// "scheduled", "ready", "leased" or "dead".
    #[getter]
    fn state(&self) -> &'static str {
        self.0.state.as_str()
    }
    /// The body, byte for byte as published.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.body)
    }
    /// The headers as published.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.0.headers {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Failed or expired attempts so far.
    #[getter]
    fn attempts(&self) -> u32 {
        self.0.attempts
    }
    /// Deliveries allowed before the message goes to the dead letters.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.0.max_attempts
    }
    /// Lease length of each delivery.
    #[getter]
    fn ttr<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        timedelta(py, self.0.ttr)
    }
    /// When Redis stored the message.
    #[getter]
    fn published_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.0.published_at)
    }
    /// When the message is (or was) due.
    #[getter]
    fn due_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.0.due_at)
    }
    /// While leased: when the lease runs out; otherwise None.
    #[getter]
    fn lease_deadline<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let t = self.0.lease_deadline;
        opt_datetime(py, t)
    }
    /// While dead: when it died; otherwise None.
    #[getter]
    fn died_at<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let t = self.0.died_at;
        opt_datetime(py, t)
    }
    /// The reason of the last failure (for a dead letter: why it died), or None.
    #[getter]
    fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    fn __repr__(&self) -> String {
        format!(
            "MessageInfo(id={:?}, state={:?}, attempts={}, body_len={})",
            self.0.id,
            self.0.state.as_str(),
            self.0.attempts,
            self.0.body.len()
        )
    }
}

/// Result of `verify`: the queue's invariant checked atomically.
#[pyclass(frozen, module = "redelay._native")]
pub struct VerifyReport(pub redelay::VerifyReport);

#[pymethods]
impl VerifyReport {
    /// Records checked.
    #[getter]
    fn records(&self) -> u64 {
        self.0.records
    }
    /// What is wrong (at most 50 lines); empty when the queue is consistent.
    #[getter]
    fn problems(&self) -> Vec<String> {
        self.0.problems.clone()
    }
    /// True when no problem was found.
    #[getter]
    fn ok(&self) -> bool {
        self.0.is_ok()
    }
    fn __repr__(&self) -> String {
        format!("VerifyReport(records={}, problems={:?})", self.0.records, self.0.problems)
    }
}

/// Counts kept by a subscription since it started.
#[pyclass(frozen, module = "redelay._native")]
pub struct Counters(pub redelay::Counters);

#[pymethods]
impl Counters {
    /// Messages leased by this subscription.
    #[getter]
    fn delivered(&self) -> u64 {
        self.0.delivered
    }
    /// Acknowledged after the handler returned (or by the handler itself).
    #[getter]
    fn acked(&self) -> u64 {
        self.0.acked
    }
    /// Nacked after the handler failed (retries and dead letters).
    #[getter]
    fn nacked(&self) -> u64 {
        self.0.nacked
    }
    /// Settles refused because the lease had been lost.
    #[getter]
    fn lease_lost(&self) -> u64 {
        self.0.lease_lost
    }
    /// Fetch or settle calls that failed (the subscription retries).
    #[getter]
    fn errors(&self) -> u64 {
        self.0.errors
    }
    fn __repr__(&self) -> String {
        let c = &self.0;
        format!(
            "Counters(delivered={}, acked={}, nacked={}, lease_lost={}, errors={})",
            c.delivered, c.acked, c.nacked, c.lease_lost, c.errors
        )
    }
}

/// A `Duration` result converted to `timedelta` when handed to Python.
pub struct PyTime(pub std::time::SystemTime);

impl<'py> IntoPyObject<'py> for PyTime {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.0)
    }
}
