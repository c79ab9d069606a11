//! NativeClient and NativeQueue: every call takes `blocking` and either blocks with the GIL
//! released (sync API) or returns an awaitable (asyncio API).

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{
    body_arg, duration_arg, headers_arg, invalid, opt_duration_arg, run, time_arg, u32_arg, usize_arg,
};
use crate::message::{new_message, new_sync_message};
use crate::subscribe::{make_handler, NativeSubscription};
use crate::types::{MessageInfo, Published, PyTime, Stats, VerifyReport};

/// Deliveries handed to Python as a list of (asyncio) `Message`s.
struct AsyncDeliveries(Vec<redelay::Delivery>);

impl<'py> IntoPyObject<'py> for AsyncDeliveries {
    type Target = PyList;
    type Output = Bound<'py, PyList>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for d in self.0 {
            list.append(new_message(py, d)?)?;
        }
        Ok(list)
    }
}

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
    fn connect<'py>(
        py: Python<'py>,
        url: String,
        blocking: bool,
        prefix: Option<String>,
        max_body_bytes: Option<i64>,
        connect_timeout: Option<&Bound<'py, PyAny>>,
        response_timeout: Option<&Bound<'py, PyAny>>,
        default_max_attempts: Option<&Bound<'py, PyAny>>,
        default_ttr: Option<&Bound<'py, PyAny>>,
        default_backoff: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
        wait_for_replicas: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut b = redelay::Client::builder(&url);
        if let Some(p) = prefix {
            b = b.prefix(p);
        }
        if let Some(n) = max_body_bytes {
            b = b.max_body_bytes(usize_arg(py, n, "max_body_bytes")?);
        }
        if let Some(t) = opt_duration_arg(connect_timeout, "connect_timeout")? {
            b = b.connect_timeout(t);
        }
        if let Some(t) = opt_duration_arg(response_timeout, "response_timeout")? {
            b = b.response_timeout(t);
        }
        if let Some(n) = default_max_attempts.filter(|o| !o.is_none()) {
            b = b.default_max_attempts(u32_arg(n, "default_max_attempts")?);
        }
        if let Some(t) = opt_duration_arg(default_ttr, "default_ttr")? {
            b = b.default_ttr(t);
        }
        if let Some((base, max)) = default_backoff {
            b = b.default_backoff(
                duration_arg(&base, "default_backoff base")?,
                duration_arg(&max, "default_backoff max")?,
            );
        }
        if let Some((n, timeout)) = wait_for_replicas {
            b = b.wait_for_replicas(
                u32_arg(&n, "wait_for_replicas replicas")?,
                duration_arg(&timeout, "wait_for_replicas timeout")?,
            );
        }
        run(py, blocking, async move { b.connect().await.map(|c| NativeClient { c }) })
    }

    /// A handle to the queue `name`.
    fn queue(&self, py: Python<'_>, name: &str) -> PyResult<NativeQueue> {
        // Queue::new spawns the settle task: do it inside the runtime.
        let _guard = crate::convert::rt().enter();
        self.c.queue(name).map(|q| NativeQueue { q }).map_err(|e| crate::convert::to_py_err(py, e))
    }

    /// The key prefix.
    #[getter]
    fn prefix(&self) -> &str {
        self.c.prefix()
    }

    /// Names of the queues published to under this prefix.
    fn queues<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.clone();
        run(py, blocking, async move { c.queues().await })
    }

    /// Round trip to Redis.
    fn ping<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.clone();
        run(py, blocking, async move { c.ping().await })
    }
}

/// A handle to one queue (the core's Queue).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeQueue {
    q: redelay::Queue,
}

const ITEM_KEYS: &[&str] = &["body", "delay", "at", "id", "headers", "max_attempts", "ttr", "backoff", "replace"];

#[allow(clippy::too_many_arguments)]
fn build_message<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    delay: Option<&Bound<'py, PyAny>>,
    at: Option<&Bound<'py, PyAny>>,
    id: Option<&Bound<'py, PyAny>>,
    headers: Option<&Bound<'py, PyAny>>,
    max_attempts: Option<&Bound<'py, PyAny>>,
    ttr: Option<&Bound<'py, PyAny>>,
    backoff: Option<&Bound<'py, PyAny>>,
    replace: bool,
) -> PyResult<redelay::Message> {
    let some = |o: Option<&Bound<'py, PyAny>>| o.filter(|o| !o.is_none()).cloned();
    let mut m = redelay::Message::new(body_arg(body)?);
    match (some(delay), some(at)) {
        (Some(_), Some(_)) => return Err(invalid(py, "delay and at: give one or the other, not both")),
        (Some(d), None) => m = m.delay(duration_arg(&d, "delay")?),
        (None, Some(t)) => m = m.at(time_arg(&t, "at")?),
        (None, None) => {}
    }
    if let Some(id) = some(id) {
        let id: String = id.extract().map_err(|_| PyTypeError::new_err("id: expected str"))?;
        m = m.id(id);
    }
    let h = headers_arg(headers)?;
    if !h.is_empty() {
        m = m.headers(h);
    }
    if let Some(n) = some(max_attempts) {
        m = m.max_attempts(u32_arg(&n, "max_attempts")?);
    }
    if let Some(t) = some(ttr) {
        m = m.ttr(duration_arg(&t, "ttr")?);
    }
    if let Some(b) = some(backoff) {
        let (base, max): (Bound<'py, PyAny>, Bound<'py, PyAny>) = b
            .extract()
            .map_err(|_| PyTypeError::new_err("backoff: expected a (base, max) pair of seconds or timedeltas"))?;
        m = m.backoff(duration_arg(&base, "backoff base")?, duration_arg(&max, "backoff max")?);
    }
    Ok(m.replace(replace))
}

fn item_message<'py>(py: Python<'py>, item: &Bound<'py, PyAny>) -> PyResult<redelay::Message> {
    let Ok(d) = item.cast::<PyDict>() else {
        return build_message(py, item, None, None, None, None, None, None, None, false);
    };
    for k in d.keys() {
        let k: String = k.extract()?;
        if !ITEM_KEYS.contains(&k.as_str()) {
            return Err(PyTypeError::new_err(format!("unknown key {k:?}; expected some of {}", ITEM_KEYS.join(", "))));
        }
    }
    let body = d.get_item("body")?.ok_or_else(|| PyTypeError::new_err("missing key \"body\""))?;
    let get = |k: &str| d.get_item(k);
    let replace = match get("replace")? {
        Some(r) => r.is_truthy()?,
        None => false,
    };
    build_message(
        py,
        &body,
        get("delay")?.as_ref(),
        get("at")?.as_ref(),
        get("id")?.as_ref(),
        get("headers")?.as_ref(),
        get("max_attempts")?.as_ref(),
        get("ttr")?.as_ref(),
        get("backoff")?.as_ref(),
        replace,
    )
}

/// Which dead letters: exactly one of ids, oldest, all.
fn select(py: Python<'_>, ids: Option<Vec<String>>, oldest: Option<i64>, all: bool) -> PyResult<redelay::Select> {
    match (ids, oldest, all) {
        (Some(ids), None, false) => Ok(redelay::Select::Ids(ids)),
        (None, Some(n), false) => Ok(redelay::Select::Oldest(usize_arg(py, n, "oldest")?)),
        (None, None, true) => Ok(redelay::Select::All),
        _ => Err(invalid(py, "select: give exactly one of ids, oldest=N or all=True")),
    }
}

#[pymethods]
impl NativeQueue {
    /// The queue's name.
    #[getter]
    fn name(&self) -> &str {
        self.q.name()
    }

    #[pyo3(signature = (body, blocking, delay=None, at=None, id=None, headers=None, max_attempts=None, ttr=None, backoff=None, replace=false))]
    #[allow(clippy::too_many_arguments)]
    fn publish<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
        blocking: bool,
        delay: Option<&Bound<'py, PyAny>>,
        at: Option<&Bound<'py, PyAny>>,
        id: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        max_attempts: Option<&Bound<'py, PyAny>>,
        ttr: Option<&Bound<'py, PyAny>>,
        backoff: Option<&Bound<'py, PyAny>>,
        replace: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = build_message(py, body, delay, at, id, headers, max_attempts, ttr, backoff, replace)?;
        let q = self.q.clone();
        run(py, blocking, async move { q.publish(m).await.map(Published::from) })
    }

    fn publish_batch<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut msgs = Vec::new();
        for (i, item) in items.try_iter()?.enumerate() {
            let item = item?;
            let m = item_message(py, &item).map_err(|e| {
                let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
                let prefixed = format!("message {i}: {text}");
                if e.is_instance_of::<PyTypeError>(py) {
                    PyTypeError::new_err(prefixed)
                } else {
                    invalid(py, prefixed)
                }
            })?;
            msgs.push(m);
        }
        let q = self.q.clone();
        run(py, blocking, async move {
            q.publish_batch(msgs).await.map(|v| v.into_iter().map(Published::from).collect::<Vec<_>>())
        })
    }

    #[pyo3(signature = (max, wait, ttr, blocking))]
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        max: i64,
        wait: Option<&Bound<'py, PyAny>>,
        ttr: Option<&Bound<'py, PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let max = usize_arg(py, max, "max")?;
        let wait = opt_duration_arg(wait, "wait")?.unwrap_or(Duration::ZERO);
        let ttr = opt_duration_arg(ttr, "ttr")?;
        let q = self.q.clone();
        if blocking {
            let v = crate::convert::block_on(py, async move { q.fetch_leasing(max, wait, ttr).await })?
                .map_err(|e| crate::convert::to_py_err(py, e))?;
            let list = PyList::empty(py);
            for d in v {
                list.append(new_sync_message(py, d)?)?;
            }
            Ok(list.into_any())
        } else {
            crate::convert::into_awaitable(
                py,
                async move { q.fetch_leasing(max, wait, ttr).await.map(AsyncDeliveries) },
            )
        }
    }

    fn ack<'py>(&self, py: Python<'py>, id: String, token: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        run(py, blocking, async move { q.ack(&id, &token).await })
    }

    #[pyo3(signature = (id, token, retry_in, reason, blocking))]
    fn nack<'py>(
        &self,
        py: Python<'py>,
        id: String,
        token: String,
        retry_in: Option<&Bound<'py, PyAny>>,
        reason: String,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let retry_in = opt_duration_arg(retry_in, "retry_in")?;
        let q = self.q.clone();
        run(py, blocking, async move { q.nack(&id, &token, retry_in, &reason).await })
    }

    fn extend<'py>(
        &self,
        py: Python<'py>,
        id: String,
        token: String,
        ttr: &Bound<'py, PyAny>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ttr = duration_arg(ttr, "ttr")?;
        let q = self.q.clone();
        run(py, blocking, async move { q.extend(&id, &token, ttr).await })
    }

    fn cancel<'py>(&self, py: Python<'py>, id: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        run(py, blocking, async move { q.cancel(&id).await })
    }

    #[pyo3(signature = (id, delay, at, blocking))]
    fn reschedule<'py>(
        &self,
        py: Python<'py>,
        id: String,
        delay: Option<&Bound<'py, PyAny>>,
        at: Option<&Bound<'py, PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let due = match (delay.filter(|d| !d.is_none()), at.filter(|a| !a.is_none())) {
            (Some(d), None) => redelay::Due::In(duration_arg(d, "delay")?),
            (None, Some(a)) => redelay::Due::At(time_arg(a, "at")?),
            _ => return Err(invalid(py, "delay and at: give exactly one")),
        };
        let q = self.q.clone();
        run(py, blocking, async move { q.reschedule(&id, due).await.map(PyTime) })
    }

    fn peek<'py>(&self, py: Python<'py>, id: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        run(py, blocking, async move { q.peek(&id).await.map(|o| o.map(MessageInfo)) })
    }

    fn stats<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        run(py, blocking, async move { q.stats().await.map(Stats) })
    }

    fn dead_letters<'py>(
        &self,
        py: Python<'py>,
        limit: i64,
        offset: i64,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = usize_arg(py, limit, "limit")?;
        let offset = usize_arg(py, offset, "offset")?;
        let q = self.q.clone();
        run(py, blocking, async move {
            q.dead_letters(offset, limit).await.map(|v| v.into_iter().map(MessageInfo).collect::<Vec<_>>())
        })
    }

    #[pyo3(signature = (ids, oldest, all, blocking))]
    fn respawn<'py>(
        &self,
        py: Python<'py>,
        ids: Option<Vec<String>>,
        oldest: Option<i64>,
        all: bool,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sel = select(py, ids, oldest, all)?;
        let q = self.q.clone();
        run(py, blocking, async move { q.respawn(sel).await })
    }

    #[pyo3(signature = (ids, oldest, all, blocking))]
    fn purge_dead<'py>(
        &self,
        py: Python<'py>,
        ids: Option<Vec<String>>,
        oldest: Option<i64>,
        all: bool,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sel = select(py, ids, oldest, all)?;
        let q = self.q.clone();
        run(py, blocking, async move { q.purge_dead(sel).await })
    }

    fn verify<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        run(py, blocking, async move { q.verify().await.map(VerifyReport) })
    }

    /// Starts a subscription. `event_loop` given: `handler` is async and runs on that loop;
    /// None: `handler` is a plain function run on the blocking thread pool.
    #[pyo3(signature = (handler, event_loop, concurrency, prefetch, ttr, drain_timeout, max_idle, blocking))]
    #[allow(clippy::too_many_arguments)]
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        handler: Py<PyAny>,
        event_loop: Option<Py<PyAny>>,
        concurrency: i64,
        prefetch: Option<i64>,
        ttr: Option<&Bound<'py, PyAny>>,
        drain_timeout: Option<&Bound<'py, PyAny>>,
        max_idle: Option<&Bound<'py, PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut opts = redelay::SubscribeOptions::concurrency(usize_arg(py, concurrency, "concurrency")?);
        if let Some(p) = prefetch {
            opts.prefetch = Some(usize_arg(py, p, "prefetch")?);
        }
        opts.ttr = opt_duration_arg(ttr, "ttr")?;
        if let Some(d) = opt_duration_arg(drain_timeout, "drain_timeout")? {
            opts.drain_timeout = d;
        }
        if let Some(d) = opt_duration_arg(max_idle, "max_idle")? {
            opts.max_idle = d;
        }
        let h = make_handler(py, handler, event_loop)?;
        let q = self.q.clone();
        run(
            py,
            blocking,
            async move { q.subscribe_arc(h, opts).await.map(|s| NativeSubscription { sub: Arc::new(s) }) },
        )
    }
}
