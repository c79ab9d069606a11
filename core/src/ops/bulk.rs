//! Bulk actions: cancel, reschedule, deliver now, respawn or purge many messages at once, named
//! by a list of ids or by a search. Each Redis call stays bounded (cancel, reschedule and deliver
//! now: one script per message, sent 64 at a time on the shared connection; respawn and purge:
//! one call per 1,000 ids and shard; a search in steps of ~500 records), so a bulk action
//! over a million messages never stalls Redis — and is not atomic: messages published or
//! changed meanwhile may or may not be included.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use crate::base::error::{Error, ErrorKind, Result};
use crate::base::limits;
use crate::base::message::Due;
use crate::base::options::RespawnExpiry;
use crate::base::wire;
use crate::ops::info::{Search, Select};
use crate::ops::queue::Queue;
use crate::ops::sharded::shard_of;

pub use crate::base::limits::MAX_BULK_IDS;

/// Messages acted on at once (pipelined on the shared connection).
const IN_FLIGHT: usize = 64;

/// What a bulk call does to each message it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BulkAction {
    /// Delete it, wherever it is (as `Queue::cancel`).
    Cancel,
    /// Give a waiting message the new due time `delay` / `at` (leased and dead ones are skipped,
    /// and so is one that would be due at or after its expiry, as `Queue::reschedule` refuses).
    Reschedule,
    /// Make a waiting message due now (leased and dead ones are skipped, and so is one whose
    /// expiry has passed: the next fetch dead-letters or drops it).
    DeliverNow,
    /// Bring a dead letter back (others are skipped).
    Respawn,
    /// Delete a dead letter for good (others are skipped).
    Purge,
}

impl BulkAction {
    /// Every action, in a stable order: what a binding names when it refuses another.
    pub const ALL: [BulkAction; 5] =
        [BulkAction::Cancel, BulkAction::Reschedule, BulkAction::DeliverNow, BulkAction::Respawn, BulkAction::Purge];

    /// The action's wire name (`deliver_now`), as options name it.
    pub fn name(self) -> &'static str {
        match self {
            BulkAction::Cancel => "cancel",
            BulkAction::Reschedule => "reschedule",
            BulkAction::DeliverNow => "deliver_now",
            BulkAction::Respawn => "respawn",
            BulkAction::Purge => "purge",
        }
    }
}

/// A bulk call: the action, its due time (reschedule only) or expiry (respawn only), and
/// exactly one of `ids` and `search`. Wire form: `{"action": "reschedule", "delay_ms": 60000,
/// "ids": ["a", "b"]}`, `{"action": "respawn", "expires_in_ms": 60000, "search": {…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkOptions {
    pub action: BulkAction,
    /// Reschedule: due this long from now. Excludes `at`.
    #[serde(default, rename = "delay_ms", with = "wire::opt_ms")]
    pub delay: Option<std::time::Duration>,
    /// Reschedule: due at this time. Excludes `delay`.
    #[serde(default, rename = "at_ms", with = "wire::opt_time_ms")]
    pub at: Option<SystemTime>,
    /// These messages (at most [`MAX_BULK_IDS`]).
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// Every message this search finds.
    #[serde(default)]
    pub search: Option<Search>,
    /// Respawn: a fresh expiry this long after the respawn (default: each keeps its own).
    /// Excludes `clear_expiry`.
    #[serde(default, rename = "expires_in_ms", with = "wire::opt_ms")]
    pub expires_in: Option<std::time::Duration>,
    /// Respawn: no expiry any more.
    #[serde(default)]
    pub clear_expiry: bool,
}

impl BulkOptions {
    /// `action` on these ids.
    pub fn ids(action: BulkAction, ids: Vec<String>) -> Self {
        BulkOptions { ids: Some(ids), ..Self::bare(action) }
    }

    /// `action` on what `search` finds.
    pub fn search(action: BulkAction, search: Search) -> Self {
        BulkOptions { search: Some(search), ..Self::bare(action) }
    }

    fn bare(action: BulkAction) -> Self {
        let (delay, at, ids, search, expires_in) = (None, None, None, None, None);
        BulkOptions { action, delay, at, ids, search, expires_in, clear_expiry: false }
    }

    /// The respawn's expiry (default: each message keeps its own).
    pub fn expiry(mut self, expiry: RespawnExpiry) -> Self {
        (self.expires_in, self.clear_expiry) = match expiry {
            RespawnExpiry::Keep => (None, false),
            RespawnExpiry::Clear => (None, true),
            RespawnExpiry::In(d) => (Some(d), false),
        };
        self
    }

    /// The reschedule's due time (`delay` or `at`).
    pub fn due(mut self, due: Due) -> Self {
        (self.delay, self.at) = match due {
            Due::In(d) => (Some(d), None),
            Due::At(t) => (None, Some(t)),
        };
        self
    }

    pub fn validate(&self) -> Result<()> {
        match (&self.ids, &self.search) {
            (Some(ids), None) if ids.len() > MAX_BULK_IDS => {
                return Err(Error::invalid(format!("ids: at most {MAX_BULK_IDS} per bulk call, got {}", ids.len())))
            }
            (Some(ids), None) => ids.iter().try_for_each(|id| limits::check_id_any(id))?,
            (None, Some(_)) => {}
            _ => return Err(Error::invalid("ids/search: give exactly one of them")),
        }
        let expiry = RespawnExpiry::from_parts(self.expires_in, self.clear_expiry)?;
        if self.action != BulkAction::Respawn && expiry != RespawnExpiry::Keep {
            return Err(Error::invalid("expires_in/clear_expiry: only respawn takes an expiry"));
        }
        let timed = self.delay.is_some() || self.at.is_some();
        match self.action {
            BulkAction::Reschedule => Due::required(self.delay, self.at).map(|_| ()),
            _ if timed => Err(Error::invalid("delay/at: only reschedule takes a due time")),
            _ => Ok(()),
        }
    }
}

/// What a bulk call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BulkReport {
    /// Messages named (ids given, or search matches).
    pub matched: u64,
    /// Messages the action was applied to (an id named twice is acted on, and counted, once).
    pub done: u64,
    /// Records a search looked at (0 for a list of ids).
    pub scanned: u64,
}

/// `matched 1500, done 1200 (scanned 2000)`.
impl std::fmt::Display for BulkReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "matched {}, done {} (scanned {})", self.matched, self.done, self.scanned)
    }
}

impl BulkReport {
    /// The error of a run that stopped here: saying how far it got (see [`Error::so_far`]) once
    /// a step had ended or a message was acted on; else as it is.
    fn stopped(self, e: Error, steps: u64) -> Error {
        if steps == 0 && self.done == 0 {
            return e;
        }
        e.stopped(&self.to_string(), vec![("matched", self.matched), ("done", self.done), ("scanned", self.scanned)])
    }
}

impl Queue {
    /// Applies one action to many messages (see [`BulkOptions`]); messages the action does not
    /// apply to (gone, leased, not dead…) are skipped and not counted in `done`.
    pub async fn bulk(&self, opts: &BulkOptions) -> Result<BulkReport> {
        self.bulk_with_progress(opts, |_| {}).await
    }

    /// [`bulk`](Self::bulk), telling `progress` the report so far after each step: each page
    /// of a search (~500 records looked at), or the whole list of ids (one step). What a run
    /// did before it failed or was dropped stays done: the last report `progress` got says how
    /// much, and the error of a run that failed after a step ended or after acting on a
    /// message says how far it got (its message, and [`Error::so_far`]: `matched`, `done`,
    /// `scanned`, the messages acted on in the failed step included). On a sharded queue a
    /// failed shard stops only its own part and the run goes on with the other shards to their
    /// end — a list of ids, and a search (which goes through the shards one after another: a
    /// shard whose search or action fails is left there, the next one is searched) — and the
    /// error names the first failed shard (by index), its totals counting everything done.
    pub async fn bulk_with_progress(
        &self,
        opts: &BulkOptions,
        mut progress: impl FnMut(BulkReport) + Send,
    ) -> Result<BulkReport> {
        opts.validate()?;
        let due = match opts.action {
            BulkAction::Reschedule => Some(Due::required(opts.delay, opts.at)?),
            BulkAction::DeliverNow => Some(Due::In(std::time::Duration::ZERO)),
            _ => None,
        };
        let mut report = BulkReport::default();
        if let Some(ids) = &opts.ids {
            report.matched = ids.len() as u64;
            // Once per message: a reschedule named twice would run twice, at once.
            let mut seen = std::collections::HashSet::new();
            let ids = ids.iter().filter(|id| seen.insert(id.as_str())).cloned().collect();
            let (done, failed) = self.apply(opts, due, ids).await;
            report.done = done;
            if let Some(e) = failed {
                return Err(report.stopped(e, 0));
            }
            progress(report);
            return Ok(report);
        }
        let search = opts.search.as_ref().expect("validated: ids or search");
        // A sharded queue's shards one after another, each searched to its end: a shard whose
        // search or action fails stops there and the next one goes on, as a list of ids does;
        // the error is the first failed shard's (by index, naming it), with the totals of all.
        // One call at a time: a shard out of reach costs one failed call, not a burst of them.
        let mut failed: Option<Error> = None;
        let mut steps = 0;
        for (s, part) in self.parts().iter().enumerate() {
            let mut cursor: Option<String> = None;
            loop {
                // The shard count is the queue's, not a shard's: a check that fails stops the run.
                // Read only: a bulk acts on messages that exist, and stores no count.
                if let Err(e) = self.check_shards_to_read().await {
                    return Err(report.stopped(failed.unwrap_or(e), steps));
                }
                let page = match part.search_here(search, cursor.as_deref()).await {
                    Ok(page) => page,
                    Err(e) => {
                        failed.get_or_insert(self.part_error(s, e));
                        break;
                    }
                };
                report.scanned += page.scanned;
                report.matched += page.items.len() as u64;
                let ids = page.items.into_iter().map(|m| m.id).collect();
                let (done, e) = self.apply(opts, due, ids).await;
                report.done += done;
                if let Some(e) = e {
                    failed.get_or_insert(e); // named by `apply`
                    break;
                }
                progress(report);
                steps += 1;
                match page.cursor {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
            }
        }
        match failed {
            Some(e) => Err(report.stopped(e, steps)),
            None => Ok(report),
        }
    }

    /// The action on `ids`: how many it was done to, and the error that stopped it (those done
    /// before it are counted). On a sharded queue a failed shard stops only its own ids.
    async fn apply(&self, opts: &BulkOptions, due: Option<Due>, ids: Vec<String>) -> (u64, Option<Error>) {
        let respawn = match opts.action {
            BulkAction::Respawn => match RespawnExpiry::from_parts(opts.expires_in, opts.clear_expiry) {
                Ok(expiry) => Some(Some(expiry)),
                Err(e) => return (0, Some(e)),
            },
            BulkAction::Purge => Some(None),
            _ => None,
        };
        if let Some(respawn) = respawn {
            return match self.dead_run(respawn, Select::Ids(ids), |_| {}).await {
                Ok(n) => (n, None),
                Err((e, n)) => (n.unwrap_or(0), Some(e)),
            };
        }
        if self.is_sharded() {
            if let Err(e) = self.check_shards_to_read().await {
                return (0, Some(e));
            }
        }
        // Each shard's messages are its own: a call that fails stops only its shard's (a plain
        // queue's: all), the other shards go on, and every call sent is waited for, so `done`
        // counts what Redis did (none dropped under way, its answer unread). The error is the
        // first failed shard's (by index), naming it. Each shard's first message goes first (all
        // shards' at once), the rest only to the shards that answered: a shard out of reach
        // costs one failed call, not as many as are in flight to it.
        let n = self.shards();
        let stopped: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let mut failed: Vec<Option<Error>> = vec![None; n as usize];
        let mut done = 0;
        let mut seen = vec![false; n as usize];
        let (first, rest): (Vec<String>, Vec<String>) =
            ids.into_iter().partition(|id| !std::mem::replace(&mut seen[shard_of(id, n) as usize], true));
        for ids in [first, rest] {
            let mut each = stream::iter(ids)
                .filter(|id| std::future::ready(!stopped[shard_of(id, n) as usize].load(Ordering::Relaxed)))
                .map(|id| async move {
                    let s = shard_of(&id, n) as usize;
                    let done = match due {
                        None => self.on_shard_of(&id, |q| q.cancel_here(&id), || Ok(false)).await,
                        Some(due) => {
                            let r =
                                self.on_shard_of(&id, |q| q.reschedule_here(&id, due), || Err(Error::not_found(&id)));
                            match r.await {
                                Ok(_) => Ok(true),
                                // gone, leased or dead meanwhile: skipped (not a handle refused
                                // for its shard count)
                                Err(e)
                                    if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::InvalidArgument)
                                        && e.shard_count_mismatch().is_none() =>
                                {
                                    Ok(false)
                                }
                                Err(e) => Err(e),
                            }
                        }
                    };
                    (s, done.map(u64::from))
                })
                .buffer_unordered(IN_FLIGHT);
            while let Some((s, one)) = each.next().await {
                match one {
                    Ok(d) => done += d,
                    Err(e) => {
                        stopped[s].store(true, Ordering::Relaxed);
                        failed[s].get_or_insert(e);
                    }
                }
            }
        }
        let failed = failed.into_iter().enumerate().find_map(|(s, e)| Some(self.part_error(s, e?)));
        (done, failed)
    }

    /// The error of a call to part `s`: on a sharded queue naming the shard ([`Queue::in_shard`]).
    fn part_error(&self, s: usize, e: Error) -> Error {
        if self.is_sharded() {
            self.in_shard(s, e)
        } else {
            e
        }
    }
}
