//! Result objects: Published, Stats, MessageInfo, VerifyReport, Counters — plain values,
//! converted once when handed to Python.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{datetime, opt_datetime};

/// The outcome of publishing one message.
#[pyclass(frozen, get_all, module = "redelay._native")]
pub struct Published {
    /// The message id (generated when none was given).
    id: String,
    /// "stored", "duplicate" (an existing id; nothing changed) or "replaced".
    status: &'static str,
    /// True when a message with this id already existed and nothing was changed.
    duplicate: bool,
}

impl From<redelay::Published> for Published {
    fn from(p: redelay::Published) -> Self {
        use redelay::PublishStatus::*;
        let status = match p.status {
            Stored => "stored",
            Duplicate => "duplicate",
            Replaced => "replaced",
        };
        Published { id: p.id, status, duplicate: status == "duplicate" }
    }
}

#[pymethods]
impl Published {
    fn __repr__(&self) -> String {
        format!("Published(id={:?}, status={:?})", self.id, self.status)
    }
}

/// Counts of one queue, read atomically.
#[pyclass(frozen, get_all, module = "redelay._native")]
pub struct Stats {
    /// Redis time of the reading (aware UTC datetime).
    now: Py<PyAny>,
    /// All stored messages (scheduled + ready + leased + dead).
    total: u64,
    /// Messages waiting for their due time.
    scheduled: u64,
    /// Due messages waiting for a consumer.
    ready: u64,
    /// Messages delivered and not yet settled.
    leased: u64,
    /// Dead letters.
    dead: u64,
    /// Due time of the next scheduled message, or None.
    next_due: Option<Py<PyAny>>,
    /// Due time of the oldest message due but not picked up, or None.
    oldest_ready_due: Option<Py<PyAny>>,
}

#[pymethods]
impl Stats {
    fn __repr__(&self) -> String {
        let s = self;
        format!(
            "Stats(total={}, scheduled={}, ready={}, leased={}, dead={})",
            s.total, s.scheduled, s.ready, s.leased, s.dead
        )
    }
}

/// A stored message as `peek` and `dead_letters` show it.
#[pyclass(frozen, get_all, module = "redelay._native")]
pub struct MessageInfo {
    /// The message id.
    id: String,
    /// "scheduled", "ready", "leased" or "dead".
    state: &'static str,
    /// The body, byte for byte as published.
    body: Py<PyBytes>,
    /// The headers as published.
    headers: Py<PyDict>,
    /// Failed or expired attempts so far.
    attempts: u32,
    /// Deliveries allowed before the message goes to the dead letters.
    max_attempts: u32,
    /// Lease length of each delivery.
    ttr: std::time::Duration,
    /// When Redis stored the message.
    published_at: Py<PyAny>,
    /// When the message is (or was) due.
    due_at: Py<PyAny>,
    /// While leased: when the lease runs out; otherwise None.
    lease_deadline: Option<Py<PyAny>>,
    /// While dead: when it died; otherwise None.
    died_at: Option<Py<PyAny>>,
    /// The reason of the last failure (for a dead letter: why it died), or None.
    last_error: Option<String>,
}

#[pymethods]
impl MessageInfo {
    fn __repr__(&self, py: Python<'_>) -> String {
        let n = self.body.bind(py).as_bytes().len();
        format!("MessageInfo(id={:?}, state={:?}, attempts={}, body_len={n})", self.id, self.state, self.attempts)
    }
}

/// Result of `verify`: the queue's invariant checked atomically.
#[pyclass(frozen, get_all, module = "redelay._native")]
pub struct VerifyReport {
    /// Records checked.
    records: u64,
    /// What is wrong (at most 50 lines); empty when the queue is consistent.
    problems: Vec<String>,
    /// True when no problem was found.
    ok: bool,
}

#[pymethods]
impl VerifyReport {
    fn __repr__(&self) -> String {
        format!("VerifyReport(records={}, problems={:?})", self.records, self.problems)
    }
}

/// Counts kept by a subscription since it started.
#[pyclass(frozen, get_all, module = "redelay._native")]
pub struct Counters {
    /// Messages leased by this subscription.
    delivered: u64,
    /// Acknowledged after the handler returned (or by the handler itself).
    acked: u64,
    /// Nacked after the handler failed (retries and dead letters).
    nacked: u64,
    /// Settles refused because the lease had been lost.
    lease_lost: u64,
    /// Fetch or settle calls that failed (the subscription retries).
    errors: u64,
}

#[pymethods]
impl Counters {
    fn __repr__(&self) -> String {
        let c = self;
        format!(
            "Counters(delivered={}, acked={}, nacked={}, lease_lost={}, errors={})",
            c.delivered, c.acked, c.nacked, c.lease_lost, c.errors
        )
    }
}

impl From<redelay::Counters> for Counters {
    fn from(c: redelay::Counters) -> Self {
        Counters {
            delivered: c.delivered,
            acked: c.acked,
            nacked: c.nacked,
            lease_lost: c.lease_lost,
            errors: c.errors,
        }
    }
}

impl From<redelay::VerifyReport> for VerifyReport {
    fn from(r: redelay::VerifyReport) -> Self {
        VerifyReport { ok: r.is_ok(), records: r.records, problems: r.problems }
    }
}

/// A core value converted to its Python class (needs the GIL for datetimes and bytes).
pub struct ToPy<T>(pub T);

impl<'py> IntoPyObject<'py> for ToPy<redelay::Stats> {
    type Target = Stats;
    type Output = Bound<'py, Stats>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, Stats>> {
        let s = self.0;
        let t = |t| opt_datetime(py, t).map(|o| o.map(Bound::unbind));
        let (next_due, oldest_ready_due) = (t(s.next_due)?, t(s.oldest_ready_due)?);
        let now = datetime(py, s.now)?.unbind();
        let (total, scheduled, ready, leased, dead) = (s.total, s.scheduled, s.ready, s.leased, s.dead);
        Bound::new(py, Stats { now, total, scheduled, ready, leased, dead, next_due, oldest_ready_due })
    }
}

impl<'py> IntoPyObject<'py> for ToPy<redelay::MessageInfo> {
    type Target = MessageInfo;
    type Output = Bound<'py, MessageInfo>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, MessageInfo>> {
        let m = self.0;
        let t = |t| opt_datetime(py, t).map(|o| o.map(Bound::unbind));
        Bound::new(
            py,
            MessageInfo {
                state: m.state.as_str(),
                body: PyBytes::new(py, &m.body).unbind(),
                headers: m.headers.into_pyobject(py)?.unbind(),
                attempts: m.attempts,
                max_attempts: m.max_attempts,
                ttr: m.ttr,
                published_at: datetime(py, m.published_at)?.unbind(),
                due_at: datetime(py, m.due_at)?.unbind(),
                lease_deadline: t(m.lease_deadline)?,
                died_at: t(m.died_at)?,
                last_error: m.last_error,
                id: m.id,
            },
        )
    }
}

impl<'py> IntoPyObject<'py> for ToPy<std::time::SystemTime> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime(py, self.0)
    }
}
