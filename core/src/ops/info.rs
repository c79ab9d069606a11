//! What the inspection calls return: [`Stats`], [`MessageInfo`], [`VerifyReport`], and the
//! [`Select`]ion of dead letters to act on.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::base::limits;
use crate::base::options::RespawnExpiry;
use crate::base::record::{self, Record};
use crate::base::time::ms_to_time;
use crate::base::wire;
use serde::{Deserialize, Serialize};

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Waiting for its due time.
    Scheduled,
    /// Due, waiting for a consumer.
    Ready,
    /// Delivered to a consumer, lease running.
    Leased,
    /// Out of attempts; kept until respawned or purged.
    Dead,
}

impl State {
    /// Lower-case name: `scheduled`, `ready`, `leased`, `dead`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Scheduled => "scheduled",
            State::Ready => "ready",
            State::Leased => "leased",
            State::Dead => "dead",
        }
    }
}

/// A stored message, as `peek` and `dead_letters` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageInfo {
    pub id: String,
    pub state: State,
    #[serde(with = "serde_bytes")]
    pub body: Vec<u8>,
    pub headers: BTreeMap<String, String>,
    /// Failed or expired attempts so far.
    pub attempts: u32,
    pub max_attempts: u32,
    #[serde(rename = "ttr_ms", with = "wire::ms")]
    pub ttr: Duration,
    #[serde(rename = "published_at_ms", with = "wire::time_ms")]
    pub published_at: SystemTime,
    #[serde(rename = "due_at_ms", with = "wire::time_ms")]
    pub due_at: SystemTime,
    /// While leased: when the lease runs out.
    #[serde(rename = "lease_deadline_ms", with = "wire::opt_time_ms")]
    pub lease_deadline: Option<SystemTime>,
    /// While dead: when it died.
    #[serde(rename = "died_at_ms", with = "wire::opt_time_ms")]
    pub died_at: Option<SystemTime>,
    /// When it expires, if it does (see `Message::expires_in`).
    #[serde(rename = "expires_at_ms", with = "wire::opt_time_ms")]
    pub expires_at: Option<SystemTime>,
    /// The reason of the last failure (for a dead letter: why it died).
    pub last_error: Option<String>,
}

impl MessageInfo {
    pub(crate) fn from_raw(id: String, state: State, raw: &[u8], blob: Option<&[u8]>, score_ms: i64) -> MessageInfo {
        let at = |s: State| (state == s && score_ms >= 0).then(|| ms_to_time(score_ms));
        let when = (at(State::Leased), at(State::Dead));
        match record::decode(&id, raw, blob) {
            Ok(r) => Self::from_record(id, state, r, when),
            Err(e) => MessageInfo {
                id,
                state,
                body: raw.to_vec(),
                headers: BTreeMap::new(),
                attempts: 0,
                max_attempts: 0,
                ttr: Duration::ZERO,
                published_at: ms_to_time(0),
                due_at: ms_to_time(0),
                lease_deadline: when.0,
                died_at: when.1,
                expires_at: None,
                last_error: Some(e.message().to_string()),
            },
        }
    }

    /// A message whose state is read from its record (a search): dead, leased, or waiting —
    /// ready when due by `now_ms`; `when_ms` its time of death or lease deadline (-1: none).
    pub(crate) fn from_raw_any(id: String, raw: &[u8], blob: Option<&[u8]>, now_ms: i64, when_ms: i64) -> MessageInfo {
        let state = match record::decode(&id, raw, blob) {
            Ok(r) if r.flags & record::F_DEAD != 0 => State::Dead,
            Ok(r) if r.token.0 != [0; 8] => State::Leased,
            Ok(r) if r.due_at_ms <= now_ms => State::Ready,
            Ok(_) => State::Scheduled,
            Err(_) => State::Dead,
        };
        Self::from_raw(id, state, raw, blob, when_ms)
    }

    fn from_record(id: String, state: State, r: Record, when: (Option<SystemTime>, Option<SystemTime>)) -> MessageInfo {
        MessageInfo {
            id,
            state,
            body: r.body,
            headers: r.headers,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            ttr: Duration::from_millis(r.ttr_ms),
            published_at: ms_to_time(r.published_at_ms),
            due_at: ms_to_time(r.due_at_ms),
            lease_deadline: when.0,
            died_at: when.1,
            expires_at: (r.expire_at_ms > 0).then(|| ms_to_time(r.expire_at_ms)),
            last_error: r.last_error,
        }
    }
}

/// Counts of one queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Redis time of the reading.
    #[serde(rename = "now_ms", with = "wire::time_ms")]
    pub now: SystemTime,
    /// All stored messages (scheduled + ready + leased + dead).
    pub total: u64,
    pub scheduled: u64,
    pub ready: u64,
    /// Delivered and not yet settled, `lapsed` included.
    pub leased: u64,
    /// The part of `leased` whose lease deadline has passed (Redis clock): its consumer did not
    /// settle or extend it in time (died, most likely), and the next fetch of the queue takes it
    /// back as a failed attempt (delivered again, or dead at its last attempt). Live leases are
    /// `leased - lapsed`.
    pub lapsed: u64,
    pub dead: u64,
    /// Due time of the next scheduled message.
    #[serde(rename = "next_due_ms", with = "wire::opt_time_ms")]
    pub next_due: Option<SystemTime>,
    /// Due time of the oldest message still waiting in `scheduled` although due; its age is
    /// how far consumers lag behind.
    #[serde(rename = "oldest_ready_due_ms", with = "wire::opt_time_ms")]
    pub oldest_ready_due: Option<SystemTime>,
    /// Consumers receive nothing until `resume` (`Queue::pause`).
    pub paused: bool,
}

/// Result of `verify`: the invariant of docs/architecture.md checked atomically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Records checked.
    pub records: u64,
    /// What is wrong (at most 50 lines); empty when the queue is consistent.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// True when no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The step of a history: per minute (kept 2 days), per hour (kept 90 days) or per UTC day
/// (the sum of its hours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    Minute,
    Hour,
    Day,
}

impl Step {
    /// Every step, in the order of their length.
    pub const ALL: [Step; 3] = [Step::Minute, Step::Hour, Step::Day];

    /// The step's length in ms.
    pub const fn millis(self) -> i64 {
        match self {
            Step::Minute => 60_000,
            Step::Hour => 3_600_000,
            Step::Day => 86_400_000,
        }
    }

    /// Most points of this step one history call gives: [`limits::MAX_HISTORY_POINTS`], or
    /// [`limits::MAX_HISTORY_DAYS`] by day.
    pub const fn max_points(self) -> usize {
        match self {
            Step::Day => limits::MAX_HISTORY_DAYS,
            _ => limits::MAX_HISTORY_POINTS,
        }
    }

    /// Its name in the wire form: `minute`, `hour` or `day`.
    pub const fn name(self) -> &'static str {
        match self {
            Step::Minute => "minute",
            Step::Hour => "hour",
            Step::Day => "day",
        }
    }

    /// The counters a point of this step sums: the history script's unit (`m` minutes, `h`
    /// hours) and how many of them make one point.
    pub(crate) const fn units(self) -> (&'static str, usize) {
        match self {
            Step::Minute => ("m", 1),
            Step::Hour => ("h", 1),
            Step::Day => ("h", 24),
        }
    }
}

/// Upper bounds (ms, exclusive) of the lateness buckets of [`HistoryPoint::lateness`]: under
/// 1 ms, under 2, 4, … 16,384 ms, and the last one unbounded.
pub const LATENESS_BUCKETS_MS: [f64; 16] =
    [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, f64::INFINITY];

/// Counters per unit of the history script: p d a r x e, the 16 lateness buckets, the lateness
/// sum (`history.lua`).
pub(crate) const HIST_COUNTERS: usize = 23;

/// One point of a queue's history (or its totals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryPoint {
    /// Start of the minute or hour (for totals: when they were read).
    #[serde(rename = "at_ms", with = "wire::time_ms")]
    pub at: SystemTime,
    /// Messages stored or replaced (a duplicate id counts nothing).
    pub published: u64,
    pub delivered: u64,
    pub acked: u64,
    /// Failed attempts that will be tried again (nacks and expired leases).
    pub retried: u64,
    /// Messages that became dead letters out of attempts (an expired one counts under
    /// `expired` only, though `Stats::dead` counts it while it is kept).
    pub dead: u64,
    /// Messages that expired before delivery (dead-lettered or dropped).
    pub expired: u64,
    /// Deliveries per lateness bucket (see [`LATENESS_BUCKETS_MS`]).
    pub lateness: [u64; 16],
    /// The sum of the deliveries' lateness, ms.
    pub lateness_sum_ms: u64,
}

impl HistoryPoint {
    /// The upper bound (ms, exclusive; infinite for the last bucket) of the lateness bucket
    /// holding the quantile `q` (0 to 1) of the deliveries; None without deliveries.
    pub fn lateness_bound_ms(&self, q: f64) -> Option<f64> {
        let n: u64 = self.lateness.iter().sum();
        if n == 0 {
            return None;
        }
        let target = ((n as f64 * q.clamp(0.0, 1.0)).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in self.lateness.iter().enumerate() {
            seen += c;
            if seen >= target {
                return Some(LATENESS_BUCKETS_MS[i]);
            }
        }
        Some(f64::INFINITY)
    }

    /// Adds `other`'s counts to this point's (its time is kept): several minutes as one.
    pub fn add(&mut self, other: &HistoryPoint) {
        self.published += other.published;
        self.delivered += other.delivered;
        self.acked += other.acked;
        self.retried += other.retried;
        self.dead += other.dead;
        self.expired += other.expired;
        for (a, b) in self.lateness.iter_mut().zip(other.lateness) {
            *a += b;
        }
        self.lateness_sum_ms += other.lateness_sum_ms;
    }

    pub(crate) fn from_counts(at: SystemTime, c: &[u64]) -> HistoryPoint {
        let mut lateness = [0u64; 16];
        lateness.copy_from_slice(&c[6..22]);
        HistoryPoint {
            at,
            published: c[0],
            delivered: c[1],
            acked: c[2],
            retried: c[3],
            dead: c[4],
            expired: c[5],
            lateness,
            lateness_sum_ms: c[22],
        }
    }
}

/// A page of [`Queue::list`](crate::Queue::list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListPage {
    /// Messages in that state now.
    pub total: u64,
    /// This page, in the state's order (due time, lease deadline, or time of death).
    pub items: Vec<MessageInfo>,
}

/// What [`Queue::search`](crate::Queue::search) looks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Search {
    /// Ids starting with this.
    IdPrefix(String),
    /// A header with this name and exactly this value.
    Header(String, String),
    /// Bodies containing these bytes (bodies kept apart from their record and longer than 64 KiB
    /// are not searched).
    Body(#[serde(with = "serde_bytes")] Vec<u8>),
    /// Last errors containing this text.
    Error(String),
}

/// One step of [`Queue::search`](crate::Queue::search).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchPage {
    /// What matched in this step (a message may show up twice over a whole search, when the
    /// queue changes meanwhile).
    pub items: Vec<MessageInfo>,
    /// Records looked at in this step.
    pub scanned: u64,
    /// Pass to the next call; None when the whole queue was scanned.
    pub cursor: Option<String>,
}

impl Select {
    /// The selection from the parts every binding's arguments take: exactly one of `ids`,
    /// `oldest` and `all`.
    pub fn from_parts(ids: Option<Vec<String>>, oldest: Option<usize>, all: bool) -> crate::Result<Select> {
        match (ids, oldest, all) {
            (Some(ids), None, false) => Ok(Select::Ids(ids)),
            (None, Some(n), false) => Ok(Select::Oldest(n)),
            (None, None, true) => Ok(Select::All),
            _ => Err(crate::Error::invalid("ids/oldest/all: give exactly one of them")),
        }
    }
}

/// The wire form of a [`Select`]: exactly one of `ids`, `oldest`, `all`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectParts {
    ids: Option<Vec<String>>,
    oldest: Option<usize>,
    #[serde(default)]
    all: bool,
}

impl TryFrom<SelectParts> for Select {
    type Error = crate::Error;

    fn try_from(p: SelectParts) -> crate::Result<Select> {
        Select::from_parts(p.ids, p.oldest, p.all)
    }
}

/// Which dead letters to respawn or purge.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "SelectParts")]
pub enum Select {
    /// These ids (ids that are not dead are skipped).
    Ids(Vec<String>),
    /// The `n` that died first.
    Oldest(usize),
    /// All of them (done in bounded steps of 1000).
    All,
}

/// A respawn: which dead letters, and what becomes of their expiry. Wire form: the selection's
/// fields (exactly one of `ids`, `oldest`, `all`) with `expires_in_ms` or `clear_expiry`
/// (neither: each keeps its own), e.g. `{"oldest": 10, "expires_in_ms": 60000}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RespawnParts")]
pub struct RespawnOptions {
    pub select: Select,
    pub expiry: RespawnExpiry,
}

/// The wire form of [`RespawnOptions`]. It repeats [`SelectParts`]' three fields instead of
/// flattening them in: serde's `flatten` cannot be combined with `deny_unknown_fields`, and an
/// unknown field must stay an error naming it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RespawnParts {
    ids: Option<Vec<String>>,
    oldest: Option<usize>,
    #[serde(default)]
    all: bool,
    #[serde(default, rename = "expires_in_ms", with = "wire::opt_ms")]
    expires_in: Option<Duration>,
    #[serde(default)]
    clear_expiry: bool,
}

impl TryFrom<RespawnParts> for RespawnOptions {
    type Error = crate::Error;

    fn try_from(p: RespawnParts) -> crate::Result<RespawnOptions> {
        Ok(RespawnOptions {
            select: Select::from_parts(p.ids, p.oldest, p.all)?,
            expiry: RespawnExpiry::from_parts(p.expires_in, p.clear_expiry)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_bounds_and_adding_points() {
        let mut p = HistoryPoint::from_counts(SystemTime::UNIX_EPOCH, &[0; 23]);
        assert_eq!(p.lateness_bound_ms(0.99), None);
        p.lateness[0] = 98; // under 1 ms
        p.lateness[3] = 1; // under 8 ms
        p.lateness[15] = 1; // 16 s and more
        p.delivered = 100;
        assert_eq!(p.lateness_bound_ms(0.5), Some(1.0));
        assert_eq!(p.lateness_bound_ms(0.99), Some(8.0));
        assert_eq!(p.lateness_bound_ms(1.0), Some(f64::INFINITY));
        let q = p.clone();
        p.add(&q);
        assert_eq!((p.delivered, p.lateness[0], p.lateness_bound_ms(0.99)), (200, 196, Some(8.0)));
    }
}
