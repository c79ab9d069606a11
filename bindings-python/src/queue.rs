//! NativeClient and NativeQueue: every call takes `blocking` and either blocks with the GIL
//! released (sync API) or returns an awaitable (asyncio API). Arguments map one to one onto
//! the core's option structs; None keeps the core's default.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::convert::{dur, rt, run, to_py_err, At, Body, Secs};
use crate::message::new_message;
use crate::subscribe::{NativeSubscription, PyWake};
use crate::types::{ToPy, VerifyReport};

/// A connection to one Redis (the core's Client).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeClient {
    c: redelay::Client,
}

#[pymethods]
impl NativeClient {
    /// Connects; returns a NativeClient (blocking) or an awaitable of one.
    #[staticmethod]
    #[pyo3(signature = (url, blocking, prefix=None, max_body_bytes=None, connect_timeout=None, response_timeout=None, default_max_attempts=None, default_ttr=None, default_backoff=None, wait_for_replicas=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect(
        py: Python<'_>,
        url: String,
        blocking: bool,
        prefix: Option<String>,
        max_body_bytes: Option<usize>,
        connect_timeout: Option<Secs>,
        response_timeout: Option<Secs>,
        default_max_attempts: Option<u32>,
        default_ttr: Option<Secs>,
        default_backoff: Option<(Secs, Secs)>,
        wait_for_replicas: Option<(u32, Secs)>,
    ) -> PyResult<Bound<'_, PyAny>> {
        let mut o = redelay::ClientOptions::default();
        o.prefix = prefix.unwrap_or(o.prefix);
        o.max_body_bytes = max_body_bytes.unwrap_or(o.max_body_bytes);
        o.connect_timeout = dur(connect_timeout, "connect_timeout")?.unwrap_or(o.connect_timeout);
        o.response_timeout = dur(response_timeout, "response_timeout")?.unwrap_or(o.response_timeout);
        o.default_max_attempts = default_max_attempts.unwrap_or(o.default_max_attempts);
        o.default_ttr = dur(default_ttr, "default ttr")?.unwrap_or(o.default_ttr);
        if let Some((base, max)) = default_backoff {
            o.default_backoff_base = dur(Some(base), "default backoff base")?.unwrap_or_default();
            o.default_backoff_max = dur(Some(max), "default backoff max")?.unwrap_or_default();
        }
        if let Some((n, t)) = wait_for_replicas {
            o.wait_for_replicas = Some((n, dur(Some(t), "wait_for_replicas timeout")?.unwrap_or_default()));
        }
        run(py, blocking, async move { redelay::Client::connect_with(&url, o).await.map(|c| NativeClient { c }) })
    }

    fn queue(&self, py: Python<'_>, name: &str) -> PyResult<NativeQueue> {
        let _guard = rt().enter(); // Queue::new spawns the settle task
        self.c.queue(name).map(|q| NativeQueue { q }).map_err(|e| to_py_err(py, e))
    }

    #[getter]
    fn prefix(&self) -> &str {
        self.c.prefix()
    }

    fn queues<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.clone();
        run(py, blocking, async move { c.queues().await })
    }

    fn ping<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.clone();
        run(py, blocking, async move { c.ping().await })
    }

    /// The core's close: every subscription drains, then the connections close. `timeout`
    /// bounds the wait (used at interpreter exit).
    #[pyo3(signature = (blocking, timeout=None))]
    fn close<'py>(&self, py: Python<'py>, blocking: bool, timeout: Option<Secs>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.clone();
        crate::convert::close(py, blocking, timeout, async move { c.close().await })
    }
}

/// A handle to one queue (the core's Queue).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeQueue {
    q: redelay::Queue,
}

/// `publish`'s keyword arguments (the ones given), mapped onto the core's PublishOptions.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Opts {
    #[pyo3(default)]
    delay: Option<Secs>,
    #[pyo3(default)]
    at: Option<Py<PyAny>>,
    #[pyo3(default)]
    id: Option<String>,
    #[pyo3(default)]
    headers: Option<BTreeMap<String, String>>,
    #[pyo3(default)]
    max_attempts: Option<u32>,
    #[pyo3(default)]
    ttr: Option<Secs>,
    #[pyo3(default)]
    backoff: Option<(Secs, Secs)>,
    replace: bool,
}

fn options(py: Python<'_>, o: Option<Opts>) -> PyResult<redelay::PublishOptions> {
    let Some(o) = o else { return Ok(Default::default()) };
    let (backoff_base, backoff_max) = match o.backoff {
        Some((b, m)) => (dur(Some(b), "backoff base")?, dur(Some(m), "backoff max")?),
        None => (None, None),
    };
    Ok(redelay::PublishOptions {
        id: o.id,
        delay: dur(o.delay, "delay")?,
        at: o.at.map(|a| a.bind(py).extract::<At>()).transpose()?.map(|a| a.0),
        headers: o.headers.unwrap_or_default(),
        max_attempts: o.max_attempts,
        ttr: dur(o.ttr, "ttr")?,
        backoff_base,
        backoff_max,
        replace: o.replace,
        ..Default::default()
    })
}

/// Which dead letters: the core's Select from (ids, oldest, all).
fn select(py: Python<'_>, ids: Option<Vec<String>>, oldest: Option<usize>, all: bool) -> PyResult<redelay::Select> {
    match (ids, oldest, all) {
        (Some(ids), None, false) => Ok(redelay::Select::Ids(ids)),
        (None, Some(n), false) => Ok(redelay::Select::Oldest(n)),
        (None, None, true) => Ok(redelay::Select::All),
        _ => Err(to_py_err(py, redelay::Error::invalid("select: give exactly one of ids, oldest=N or all=True"))),
    }
}

macro_rules! call {
    ($self:ident, $py:ident, $blocking:expr, |$q:ident| $body:expr) => {{
        let $q = $self.q.clone();
        run($py, $blocking, async move { $body })
    }};
}

#[pymethods]
impl NativeQueue {
    #[getter]
    fn name(&self) -> &str {
        self.q.name()
    }

    #[pyo3(signature = (body, opts, blocking))]
    fn publish<'py>(
        &self,
        py: Python<'py>,
        body: Body,
        opts: Option<Opts>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = options(py, opts)?.message(body.0).map_err(|e| to_py_err(py, e))?;
        call!(self, py, blocking, |q| q.publish(m).await.map(crate::types::Published::from))
    }

    fn publish_batch<'py>(
        &self,
        py: Python<'py>,
        items: Vec<(Body, Option<Opts>)>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let items = items.into_iter().map(|(b, o)| Ok((b.0, options(py, o)?))).collect::<PyResult<Vec<_>>>()?;
        let msgs = redelay::batch_messages(items).map_err(|e| to_py_err(py, e))?;
        call!(self, py, blocking, |q| q
            .publish_batch(msgs)
            .await
            .map(|v| v.into_iter().map(crate::types::Published::from).collect::<Vec<_>>()))
    }

    fn fetch<'py>(
        &self,
        py: Python<'py>,
        max: usize,
        wait: Option<Secs>,
        ttr: Option<Secs>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (wait, ttr) = (dur(wait, "wait")?.unwrap_or_default(), dur(ttr, "ttr")?);
        let q = self.q.clone();
        let fut = async move { q.fetch_leasing(max, wait, ttr).await.map(|v| Deliveries(v, blocking)) };
        run(py, blocking, fut)
    }

    fn ack<'py>(&self, py: Python<'py>, id: String, token: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.ack(&id, &token).await)
    }

    fn nack<'py>(
        &self,
        py: Python<'py>,
        id: String,
        token: String,
        retry_in: Option<Secs>,
        reason: String,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let retry_in = dur(retry_in, "retry_in")?;
        call!(self, py, blocking, |q| q.nack(&id, &token, retry_in, &reason).await)
    }

    fn extend<'py>(
        &self,
        py: Python<'py>,
        id: String,
        token: String,
        ttr: Secs,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ttr = dur(Some(ttr), "ttr")?.unwrap_or_default();
        call!(self, py, blocking, |q| q.extend(&id, &token, ttr).await)
    }

    fn cancel<'py>(&self, py: Python<'py>, id: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.cancel(&id).await)
    }

    fn reschedule<'py>(
        &self,
        py: Python<'py>,
        id: String,
        delay: Option<Secs>,
        at: Option<At>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let due = redelay::Due::from_parts(dur(delay, "delay")?, at.map(|a| a.0)).map_err(|e| to_py_err(py, e))?;
        call!(self, py, blocking, |q| q.reschedule(&id, due).await.map(ToPy))
    }

    fn peek<'py>(&self, py: Python<'py>, id: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.peek(&id).await.map(|o| o.map(ToPy)))
    }

    fn stats<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.stats().await.map(ToPy))
    }

    fn dead_letters<'py>(
        &self,
        py: Python<'py>,
        limit: Option<usize>,
        offset: Option<usize>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut o = redelay::DeadLetterQuery::default();
        (o.limit, o.offset) = (limit.unwrap_or(o.limit), offset.unwrap_or(o.offset));
        o.validate().map_err(|e| to_py_err(py, e))?;
        call!(self, py, blocking, |q| q
            .dead_letters(o.offset, o.limit)
            .await
            .map(|v| v.into_iter().map(ToPy).collect::<Vec<_>>()))
    }

    fn respawn<'py>(
        &self,
        py: Python<'py>,
        ids: Option<Vec<String>>,
        oldest: Option<usize>,
        all: bool,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sel = select(py, ids, oldest, all)?;
        call!(self, py, blocking, |q| q.respawn(sel).await)
    }

    fn purge_dead<'py>(
        &self,
        py: Python<'py>,
        ids: Option<Vec<String>>,
        oldest: Option<usize>,
        all: bool,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sel = select(py, ids, oldest, all)?;
        call!(self, py, blocking, |q| q.purge_dead(sel).await)
    }

    fn destroy<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.destroy().await)
    }

    fn verify<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        call!(self, py, blocking, |q| q.verify().await.map(VerifyReport::from))
    }

    /// Starts a subscription on the core's bridge. `wake` given: called (from any thread) when
    /// deliveries wait, for an event loop that then calls `take`; None: worker threads call
    /// `take_wait`.
    #[pyo3(signature = (wake, closed, blocking, concurrency=None, prefetch=None, ttr=None, drain_timeout=None, max_idle=None))]
    #[allow(clippy::too_many_arguments)]
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        wake: Option<Py<PyAny>>,
        closed: Option<Py<PyAny>>,
        blocking: bool,
        concurrency: Option<usize>,
        prefetch: Option<usize>,
        ttr: Option<Secs>,
        drain_timeout: Option<Secs>,
        max_idle: Option<Secs>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut o = redelay::SubscribeOptions::default();
        o.concurrency = concurrency.unwrap_or(o.concurrency);
        o.prefetch = prefetch;
        o.ttr = dur(ttr, "ttr")?;
        o.drain_timeout = dur(drain_timeout, "drain_timeout")?.unwrap_or(o.drain_timeout);
        o.max_idle = dur(max_idle, "max_idle")?.unwrap_or(o.max_idle);
        let w = Arc::new(PyWake { wake, closed });
        call!(self, py, blocking, |q| q.subscribe_foreign(w, o).await.map(NativeSubscription::from))
    }
}

/// Deliveries handed to Python as a list of `Message`s (asyncio) or `SyncMessage`s.
struct Deliveries(Vec<redelay::Delivery>, bool);

impl<'py> IntoPyObject<'py> for Deliveries {
    type Target = PyList;
    type Output = Bound<'py, PyList>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = self.0.into_iter().map(|d| new_message(py, d, self.1)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, v)
    }
}
