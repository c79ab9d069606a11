//! NativeClient and NativeQueue: every call takes `blocking` and either blocks with the GIL
//! released (sync API) or returns an awaitable (asyncio API). Options cross in the core's wire
//! form (JSON text, `*_ms` numbers) and results go back the same way: `redelay._api` builds
//! both, so no option or result field is mapped here.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde::Deserialize;

use crate::convert::{de, dur, rt, run, to_py_err, Json, Secs};
use crate::message::new_message;
use crate::subscribe::{NativeSubscription, PyWake};

/// A connection to one Redis (the core's Client).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeClient {
    c: redelay::Client,
}

#[pymethods]
impl NativeClient {
    /// Connects with `opts` (the core's ClientOptions); a NativeClient or an awaitable of one.
    #[staticmethod]
    fn connect<'py>(py: Python<'py>, url: String, opts: &str, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let o: redelay::ClientOptions = de(py, opts)?;
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

/// The scalar arguments of the queue's calls, by their wire names (options with a struct of
/// their own in the core are read as that struct).
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Args {
    id: String,
    token: String,
    reason: String,
    delay_ms: Option<f64>,
    at_ms: Option<f64>,
    retry_in_ms: Option<f64>,
    ttr_ms: Option<f64>,
    since_ms: f64,
    until_ms: f64,
    start_ms: f64,
    width_ms: f64,
    buckets: usize,
    step: Option<redelay::Step>,
    state: Option<redelay::State>,
    offset: usize,
    limit: usize,
    search: Option<redelay::Search>,
    cursor: Option<String>,
    on: bool,
}

/// Milliseconds from Python as a Duration; `field` names it in the error.
fn ms(v: Option<f64>, field: &str) -> PyResult<Option<Duration>> {
    dur(v.map(|m| Secs(m / 1000.0)), field)
}

fn time(v: f64, field: &str) -> PyResult<std::time::SystemTime> {
    Ok(UNIX_EPOCH + ms(Some(v), field)?.unwrap_or_default())
}

fn epoch_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[pymethods]
impl NativeQueue {
    #[getter]
    fn name(&self) -> &str {
        self.q.name()
    }

    /// Runs the queue call `op` with `args` (wire form) and `bodies` (publish); the result in
    /// its wire form.
    fn call<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        args: &str,
        bodies: Vec<Bound<'py, PyBytes>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.clone();
        let e = |e| to_py_err(py, e);
        macro_rules! go {
            ($f:expr) => {
                run(py, blocking, async move { $f.await.map(Json) })
            };
            ($a:ident: $t:ty => $f:expr) => {{
                let $a: $t = de(py, args)?;
                go!($f)
            }};
        }
        match op {
            "publish" => {
                let body = bodies.first().map(|b| b.as_bytes().to_vec()).unwrap_or_default();
                let m = de::<redelay::PublishOptions>(py, args)?.message(body).map_err(e)?;
                go!(q.publish(m))
            }
            "publish_batch" => {
                let opts: Vec<redelay::PublishOptions> = de(py, args)?;
                let msgs = redelay::batch_messages(bodies.iter().map(|b| b.as_bytes().to_vec()).zip(opts).collect())
                    .map_err(e)?;
                go!(q.publish_batch(msgs))
            }
            "ack" => go!(a: Args => q.ack(&a.id, &a.token)),
            "nack" => {
                let a = de::<Args>(py, args)?;
                let retry_in = ms(a.retry_in_ms, "retry_in")?;
                go!(q.nack(&a.id, &a.token, retry_in, &a.reason))
            }
            "extend" => {
                let a = de::<Args>(py, args)?;
                let ttr = ms(a.ttr_ms, "ttr")?.unwrap_or_default();
                go!(q.extend(&a.id, &a.token, ttr))
            }
            "cancel" => go!(a: Args => q.cancel(&a.id)),
            "reschedule" => {
                let a = de::<Args>(py, args)?;
                let at = a.at_ms.map(|t| time(t, "at")).transpose()?;
                let due = redelay::Due::from_parts(ms(a.delay_ms, "delay")?, at).map_err(e)?;
                go!(async move { q.reschedule(&a.id, due).await.map(epoch_ms) })
            }
            "peek" => go!(a: Args => q.peek(&a.id)),
            "stats" => go!(q.stats()),
            "dead_letters" => {
                let o: redelay::DeadLetterQuery = de(py, args)?;
                o.validate().map_err(e)?;
                go!(q.dead_letters(o.offset, o.limit))
            }
            "respawn" => go!(s: redelay::Select => q.respawn(s)),
            "purge_dead" => go!(s: redelay::Select => q.purge_dead(s)),
            "destroy" => go!(q.destroy()),
            "verify" => go!(q.verify()),
            "pause" => go!(q.pause()),
            "resume" => go!(q.resume()),
            "set_history" => go!(a: Args => q.set_history(a.on)),
            "history" => {
                let a = de::<Args>(py, args)?;
                let (since, until) = (time(a.since_ms, "since")?, time(a.until_ms, "until")?);
                go!(q.history(since, until, a.step.unwrap_or(redelay::Step::Minute)))
            }
            "history_totals" => go!(q.history_totals()),
            "upcoming" => {
                let a = de::<Args>(py, args)?;
                let (start, width) = (time(a.start_ms, "start")?, ms(Some(a.width_ms), "width")?.unwrap_or_default());
                let pairs = |v: Vec<_>| v.into_iter().map(|(t, n)| (epoch_ms(t), n)).collect::<Vec<_>>();
                go!(async move { q.upcoming(start, width, a.buckets).await.map(pairs) })
            }
            "list" => go!(a: Args => q.list(a.state.unwrap_or(redelay::State::Ready), a.offset, a.limit)),
            "search" => {
                let a = de::<Args>(py, args)?;
                let what = a.search.ok_or_else(|| e(redelay::Error::invalid("search: say what to look for")))?;
                go!(q.search(&what, a.cursor.as_deref()))
            }
            "bulk" => go!(o: redelay::BulkOptions => async move { q.bulk(&o).await }),
            _ => Err(pyo3::exceptions::PyValueError::new_err(format!("unknown queue call {op:?}"))),
        }
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
}

/// Starts a subscription of `queues` (in priority order, or by their weights when `weighted`)
/// on the core's bridge. `wake` given: called (from any thread) when deliveries wait, for an
/// event loop that then calls `take`; None: worker threads call `take_wait`. `closed` is called
/// once when the subscription closed.
#[pyfunction]
pub fn subscribe<'py>(
    py: Python<'py>,
    queues: Vec<(Py<NativeQueue>, u32)>,
    weighted: bool,
    wake: Option<Py<PyAny>>,
    closed: Option<Py<PyAny>>,
    opts: &str,
    blocking: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let o: redelay::SubscribeOptions = de(py, opts)?;
    let list: Vec<(redelay::Queue, u32)> = queues.iter().map(|(q, w)| (q.get().q.clone(), *w)).collect();
    let qs = if weighted {
        redelay::Queues::weighted(list)
    } else {
        redelay::Queues::priority(list.into_iter().map(|(q, _)| q).collect())
    };
    let qs = qs.map_err(|e| to_py_err(py, e))?;
    let w = Arc::new(PyWake { wake, closed });
    run(py, blocking, async move { qs.subscribe_foreign(w, o).await.map(NativeSubscription::from) })
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
