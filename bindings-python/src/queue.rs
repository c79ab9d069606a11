//! NativeClient and NativeQueue: every call takes `blocking` and either blocks with the GIL
//! released (sync API) or returns an awaitable (asyncio API). Options cross in the core's wire
//! form (JSON text, `*_ms` numbers) and results go back the same way: `redelay._api` builds
//! both, so no option or result field is mapped here.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::convert::{de, rt, run, to_py_err, Homed, Secs, Weight};
use crate::message::new_message;
use crate::subscribe::{NativeSubscription, PyWake};

/// A connection to one Redis (the core's Client).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeClient {
    c: Homed<redelay::Client>,
}

#[pymethods]
impl NativeClient {
    /// Connects with `opts` (the core's ClientOptions); a NativeClient or an awaitable of one.
    #[staticmethod]
    fn connect<'py>(py: Python<'py>, url: String, opts: &str, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let o: redelay::ClientOptions = de(py, opts)?;
        // Globals built now, with the GIL held, so that no fork (`os.fork` needs the GIL) finds
        // one half-built by another thread (the child would wait for it for ever).
        redelay::init_globals();
        crate::convert::helpers(py)?;
        run(py, blocking, async move {
            redelay::Client::connect_with(&url, o).await.map(|c| NativeClient { c: Homed::new(c) })
        })
    }

    fn queue(&self, py: Python<'_>, name: &str, opts: &str) -> PyResult<NativeQueue> {
        let (o, c) = (de::<redelay::QueueOptions>(py, opts)?, self.c.get(py, CLIENT)?);
        let _guard = rt().enter(); // Queue::new spawns the settle task
        let q = c.queue_with(name, o).map_err(|e| to_py_err(py, e))?;
        Ok(NativeQueue { q: self.c.with(q), c: self.c.with(c.clone()) })
    }

    #[getter]
    fn prefix(&self) -> &str {
        self.c.peek().prefix()
    }

    /// `queues` or `ping` (the core's `Client::call`); the result in its wire form (JSON text).
    fn call<'py>(&self, py: Python<'py>, op: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.get(py, CLIENT)?.clone();
        run(py, blocking, async move { c.call(&op).await.map(text) })
    }

    /// Starts a subscription of `queues` (name, shard count or None for the count stored in
    /// Redis), in priority order or by `weights` (one per queue), on the core's bridge. `wake`
    /// given: called (from any thread) when deliveries wait, for an event loop that then calls
    /// `take`; None: worker threads call `take_wait`. `closed` is called once when the
    /// subscription closed.
    #[allow(clippy::too_many_arguments)]
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        queues: Vec<(String, Option<u32>)>,
        weights: Option<Vec<Weight>>,
        wake: Option<Py<PyAny>>,
        closed: Option<Py<PyAny>>,
        opts: &str,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (o, c) = (de::<redelay::SubscribeOptions>(py, opts)?, self.c.get(py, CLIENT)?.clone());
        let refused = |q: &str, big| to_py_err(py, redelay::Queues::weight_refused(q, big));
        let weights =
            weights.map(|ws| ws.into_iter().zip(&queues).map(|(Weight(w), q)| w.map_err(|b| refused(&q.0, b))));
        let weights = weights.map(Iterator::collect::<PyResult<Vec<_>>>).transpose()?;
        let w = Arc::new(PyWake::new(wake, closed));
        run(py, blocking, async move {
            let qs = c.queues_named(queues, weights).await?;
            qs.subscribe_foreign(w, o).await.map(NativeSubscription::from)
        })
    }

    /// Up to `max` leased deliveries from the first of `queues` (names in priority order, each
    /// opened with the shard count stored in Redis) that has due messages: the core's
    /// `Client::fetch_first_wire`, `args` its fetch arguments in wire form (as `NativeQueue::fetch`).
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        queues: Vec<String>,
        args: &str,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (c, args) = (self.c.get(py, CLIENT)?.clone(), de(py, args)?);
        run(py, blocking, async move { c.fetch_first_wire(&queues, args).await.map(|v| Deliveries::new(v, blocking)) })
    }

    /// The core's close: every subscription drains, then the connections close. `timeout`
    /// bounds the wait (used at interpreter exit).
    #[pyo3(signature = (blocking, timeout=None))]
    fn close<'py>(&self, py: Python<'py>, blocking: bool, timeout: Option<Secs>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.c.get(py, CLIENT)?.clone();
        crate::convert::close(py, blocking, timeout, async move { c.close().await })
    }
}

/// A handle to one queue (the core's Queue).
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeQueue {
    q: Homed<redelay::Queue>,
    c: Homed<redelay::Client>,
}

/// What a forked child's refusal names.
const CLIENT: &str = "client was created";
const QUEUE: &str = "queue was created";

/// A result's wire form as JSON text (`redelay._results` reads it into its dataclass).
fn text<T: serde::Serialize>(v: T) -> String {
    redelay::wire::to_json(&v).to_string()
}

#[pymethods]
impl NativeQueue {
    #[getter]
    fn name(&self) -> &str {
        self.q.peek().name()
    }

    #[getter]
    fn shards(&self) -> u32 {
        self.q.peek().shards()
    }

    /// The client of this queue.
    #[getter]
    fn client(&self, py: Python<'_>) -> PyResult<NativeClient> {
        Ok(NativeClient { c: self.c.with(self.c.get(py, QUEUE)?.clone()) })
    }

    /// Runs the queue call `op` with `args` (wire form, JSON text) and `bodies` (publish): the
    /// core's `Queue::call`, or its publish calls; the result in its wire form (JSON text).
    fn call<'py>(
        &self,
        py: Python<'py>,
        op: String,
        args: &str,
        bodies: Vec<Bound<'py, PyBytes>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let q = self.q.get(py, QUEUE)?.clone();
        let mut bodies = bodies.iter().map(|b| b.as_bytes().to_vec()).collect::<Vec<_>>();
        match op.as_str() {
            "publish" => {
                let m = de::<redelay::PublishOptions>(py, args)?.message(bodies.pop().unwrap_or_default());
                let m = m.map_err(|e| to_py_err(py, e))?;
                run(py, blocking, async move { q.publish(m).await.map(text) })
            }
            "publish_batch" => {
                let msgs = redelay::batch_from_wire(bodies, de(py, args)?).map_err(|e| to_py_err(py, e))?;
                run(py, blocking, async move { q.publish_batch(msgs).await.map(text) })
            }
            _ => {
                let args = de(py, args)?;
                run(py, blocking, async move { q.call(&op, args).await.map(text) })
            }
        }
    }

    /// Up to `max` leased deliveries (`args`: the core's fetch arguments in wire form).
    fn fetch<'py>(&self, py: Python<'py>, args: &str, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let (q, args) = (self.q.get(py, QUEUE)?.clone(), de(py, args)?);
        run(py, blocking, async move { q.fetch_wire(args).await.map(|v| Deliveries::new(v, blocking)) })
    }

    /// The core's message stream of this queue (`opts`: its `MessagesOptions` in wire form).
    fn messages(&self, py: Python<'_>, opts: &str) -> PyResult<NativeMessages> {
        let (q, o) = (self.q.get(py, QUEUE)?, de::<redelay::MessagesOptions>(py, opts)?);
        let m = q.messages(o).map_err(|e| to_py_err(py, e))?;
        Ok(NativeMessages { m: self.q.with(m) })
    }
}

/// A queue's message stream (the core's `Messages`). Dropped, it releases what it fetched and
/// did not hand out, as `close` does.
#[pyclass(frozen, module = "redelay._native")]
pub struct NativeMessages {
    m: Homed<redelay::Messages>,
}

#[pymethods]
impl NativeMessages {
    /// The next message as a list of one, or an empty list once the stream is closed: a
    /// `Deliveries`, so that one whose caller is gone when it comes is released (by the core's
    /// handover, or `_runtime.settle` for a cancelled asyncio call).
    fn next<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let m = self.m.get(py, QUEUE)?.clone();
        run(py, blocking, async move { Ok(Deliveries::new(m.next().await?.into_iter().collect(), blocking)) })
    }

    /// The core's close: the stream ends at once (a waiting `next` ends empty, as every later
    /// one does), and what was fetched and not handed out is released, waited for.
    fn close<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let release = self.m.get(py, QUEUE)?.close();
        run(py, blocking, async move {
            release.await;
            Ok(())
        })
    }
}

/// Deliveries handed to Python as a list of `Message`s (asyncio) or `SyncMessage`s. Dropped
/// before that (a signal raised instead, an event loop gone), they are released (due now, no
/// attempt counted) by the core's `Handover`, instead of staying leased to nobody.
struct Deliveries(redelay::Handover, bool);

impl Deliveries {
    /// Made on the runtime (inside the call's future), where the handover releases on drop.
    fn new(v: Vec<redelay::Delivery>, blocking: bool) -> Self {
        Deliveries(redelay::Handover::new(v), blocking)
    }
}

impl<'py> IntoPyObject<'py> for Deliveries {
    type Target = PyList;
    type Output = Bound<'py, PyList>;
    type Error = PyErr;
    fn into_pyobject(mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = self.0.take().into_iter().map(|d| new_message(py, d, self.1)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, v)
    }
}
