//! The one error type of redelay. Every binding maps [`ErrorKind`] to its own exception types.

use std::fmt;

/// What went wrong, independent of the message text. Bindings expose the same kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Bad input, refused before anything was written. The message names the field and the limit.
    InvalidArgument,
    /// Redis could not be reached, the connection broke, or the server cannot serve the call
    /// for now: a cluster failover or resharding in progress (MOVED, ASK, TRYAGAIN, CLUSTERDOWN,
    /// MASTERDOWN once the cluster client's own redirects are used up), a former master that
    /// became a replica (READONLY), a server still loading its data (LOADING). Trying again
    /// later is the remedy for all of them.
    Connection,
    /// Redis did not answer in time.
    Timeout,
    /// The lease token is not the message's current lease (it expired and the message was
    /// redelivered, or the message was settled, cancelled or replaced). Nothing was changed by
    /// this call. (On Redis Cluster, a settle whose connection dropped after it ran is sent
    /// again by the cluster client and reports this: the first run did settle; see
    /// RELIABILITY.md, "A lost reply".)
    LeaseLost,
    /// No message with that id.
    NotFound,
    /// Redis answered with an error (ACL refusal, out of memory, a script error ...).
    Redis,
    /// A message handler failed.
    Handler,
}

impl ErrorKind {
    /// Every kind, in a stable order.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::InvalidArgument,
        ErrorKind::Connection,
        ErrorKind::Timeout,
        ErrorKind::LeaseLost,
        ErrorKind::NotFound,
        ErrorKind::Redis,
        ErrorKind::Handler,
    ];

    /// Stable code of the kind, the same in every binding (Node's `err.code`, Python's and
    /// Kotlin's `code`): `ERR_REDELAY_INVALID_ARGUMENT`, `ERR_REDELAY_LEASE_LOST`, ...
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "ERR_REDELAY_INVALID_ARGUMENT",
            ErrorKind::Connection => "ERR_REDELAY_CONNECTION",
            ErrorKind::Timeout => "ERR_REDELAY_TIMEOUT",
            ErrorKind::LeaseLost => "ERR_REDELAY_LEASE_LOST",
            ErrorKind::NotFound => "ERR_REDELAY_NOT_FOUND",
            ErrorKind::Redis => "ERR_REDELAY_REDIS",
            ErrorKind::Handler => "ERR_REDELAY_HANDLER",
        }
    }

    /// The kind whose [`name`](Self::name) or [`code`](Self::code) this is.
    pub fn from_name(s: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == s || k.code() == s)
    }

    /// Stable name of the kind, as used by every binding (`InvalidArgument`, `LeaseLost`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "InvalidArgument",
            ErrorKind::Connection => "Connection",
            ErrorKind::Timeout => "Timeout",
            ErrorKind::LeaseLost => "LeaseLost",
            ErrorKind::NotFound => "NotFound",
            ErrorKind::Redis => "Redis",
            ErrorKind::Handler => "Handler",
        }
    }
}

/// The message of [`Error::client_closed`].
pub(crate) const CLIENT_CLOSED: &str = "client is closed";

/// The payload of the I/O error that a call on a closed client's connection gets
/// (`storage::connection`): [`Error::from`] knows it by its type when it comes back through
/// redis-rs, whatever the text around it.
#[derive(Debug)]
pub(crate) struct ClientClosed;

impl fmt::Display for ClientClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(CLIENT_CLOSED)
    }
}

impl std::error::Error for ClientClosed {}

/// What an error says beyond its kind and text, for the callers that act on it: never matched
/// by the message, which may be reworded or wrapped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Condition {
    /// [`Error::client_closed`].
    ClientClosed,
    /// [`Error::shard_count_mismatch`]: the queue of that name.
    ShardCount(String),
}

/// An error with a kind and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The running totals of a long run this error stopped ([`Error::so_far`]).
    so_far: Option<Vec<(&'static str, u64)>>,
    condition: Option<Condition>,
}

/// `Result` with redelay's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), so_far: None, condition: None }
    }

    /// Bad input: `message` names the field and the limit.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    pub(crate) fn lease_lost(id: &str) -> Self {
        Self::new(
            ErrorKind::LeaseLost,
            format!("lease lost for message {id:?}: it expired, was settled, or the message was cancelled"),
        )
    }

    pub(crate) fn not_found(id: &str) -> Self {
        Self::new(ErrorKind::NotFound, format!("no message with id {id:?}"))
    }

    /// The error of every call after `Client::close`.
    pub(crate) fn client_closed() -> Self {
        Error { condition: Some(Condition::ClientClosed), ..Self::new(ErrorKind::Connection, CLIENT_CLOSED) }
    }

    /// True for [`client_closed`](Self::client_closed)'s error: the caller closed the client,
    /// nothing is out of reach and nothing may have run.
    pub(crate) fn is_client_closed(&self) -> bool {
        self.condition == Some(Condition::ClientClosed)
    }

    /// The InvalidArgument of a handle whose shard count is not the one of queue `queue` in
    /// Redis ([`shard_count_mismatch`](Self::shard_count_mismatch)).
    pub(crate) fn shard_count(queue: &str, message: String) -> Self {
        Error { condition: Some(Condition::ShardCount(queue.to_string())), ..Self::invalid(message) }
    }

    /// The name of the queue, when this error refused a handle whose shard count is not the
    /// queue's in Redis: another count is stored, the queue holds unsharded messages (for a
    /// sharded handle), or it is sharded (for a plain one). The kind is `InvalidArgument` and
    /// the message names both counts. It comes before anything is written, whether the handle
    /// was opened with the wrong count or the queue was destroyed and made again with another
    /// count by another client since the handle checked it (a handle trusts its check for 5 s).
    /// A caller that opened the queue with the count stored in Redis
    /// ([`Client::queue_stored`](crate::Client::queue_stored)) can open it so again and send
    /// the call once more, as the gateway does; the message is for people, this is for code.
    pub fn shard_count_mismatch(&self) -> Option<&str> {
        match &self.condition {
            Some(Condition::ShardCount(queue)) => Some(queue),
            _ => None,
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How far a long run got before this error stopped it, when it had got anywhere (a step
    /// had ended, or a message was acted on): the run's totals so far by their wire names, in
    /// the order of its report — `count` for a respawn or purge of dead letters
    /// (`Queue::respawn_with_progress`, `purge_dead_with_progress` and the calls built on
    /// them), `matched`, `done` and `scanned` for a bulk action (`Queue::bulk`). None for any
    /// other error. The kind is the failure's own, and the message says the same totals
    /// (`…; stopped: purged 2000 so far, and that stays done …`).
    pub fn so_far(&self) -> Option<&[(&'static str, u64)]> {
        self.so_far.as_deref()
    }

    /// This error as the end of a long run that had done `said` (`purged 2000`), whose totals
    /// by wire name are `counts`: the message says so, and [`so_far`](Self::so_far) gives them.
    pub(crate) fn stopped(self, said: &str, counts: Vec<(&'static str, u64)>) -> Self {
        let message = format!(
            "{}; stopped: {said} so far, and that stays done (the step under way may have been done too)",
            self.message
        );
        Error { message, so_far: Some(counts), ..self }
    }

    /// The same error with the field it names spelled the way of a binding's language
    /// ([`Spelling`](crate::Spelling): `maxAttempts` for `max_attempts`); only bad input names
    /// fields, so other kinds are unchanged.
    pub fn spelled(self, spelling: crate::Spelling) -> Self {
        match self.kind {
            ErrorKind::InvalidArgument => {
                Error { message: crate::base::spelling::respell(&self.message, spelling), ..self }
            }
            _ => self,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A server's refusal that says "not here, not now" rather than "never": the cluster is moving
/// slots or failing over, the server is a replica since a failover, or it is loading its data.
fn unavailable_for_now(e: &redis::RedisError) -> bool {
    use redis::ServerErrorKind as S;
    e.is_cluster_error()
        || matches!(e.kind(), redis::ErrorKind::ClusterConnectionNotFound)
        || matches!(e.kind(), redis::ErrorKind::Server(S::MasterDown | S::ReadOnly | S::BusyLoading))
}

/// True for the error of a call on a closed client's connection: an I/O error whose payload is
/// [`ClientClosed`]. redis-rs keeps an I/O error behind an `Arc` (its `source`); both forms are
/// looked at, so that a redis-rs that hands the `io::Error` itself still matches.
fn is_client_closed(e: &redis::RedisError) -> bool {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let Some(inner) = std::error::Error::source(e) else { return false };
    let io = match inner.downcast_ref::<Shared>() {
        Some(shared) => shared.downcast_ref::<std::io::Error>(),
        None => inner.downcast_ref::<std::io::Error>(),
    };
    io.and_then(std::io::Error::get_ref).is_some_and(|p| p.is::<ClientClosed>())
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        // A call on a connection `Client::close` let go of (`storage::connection`).
        if is_client_closed(&e) {
            return Error::client_closed();
        }
        let kind = if e.is_timeout() {
            ErrorKind::Timeout
        } else if unavailable_for_now(&e) {
            return Error::new(ErrorKind::Connection, format!("redis unavailable for now (failover or loading): {e}"));
        } else if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || matches!(e.kind(), redis::ErrorKind::AuthenticationFailed | redis::ErrorKind::InvalidClientConfig)
        {
            ErrorKind::Connection
        } else {
            ErrorKind::Redis
        };
        let what = match kind {
            ErrorKind::Connection => "redis connection",
            ErrorKind::Timeout => "redis timeout",
            _ => "redis",
        };
        Error::new(kind, format!("{what}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed client's error is known by its type through redis-rs, not by its text: an
    /// I/O error that only says the same words is a connection error like any other.
    #[test]
    fn a_closed_client_is_known_by_type() {
        let closed = redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::NotConnected, ClientClosed));
        let e = Error::from(closed);
        assert!(e.is_client_closed());
        assert_eq!((e.kind(), e.message()), (ErrorKind::Connection, CLIENT_CLOSED));
        let lookalike = redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::NotConnected, CLIENT_CLOSED));
        let e = Error::from(lookalike);
        assert!(!e.is_client_closed(), "{e}");
        assert_eq!(e.kind(), ErrorKind::Connection);
        assert!(!Error::new(ErrorKind::Connection, CLIENT_CLOSED).is_client_closed());
    }

    /// A shard count refusal says its queue to code; other errors say nothing, whatever their text.
    #[test]
    fn a_shard_count_mismatch_names_its_queue() {
        let e = Error::shard_count("orders", "shards: queue \"orders\" has 2 shards in Redis".into());
        assert_eq!((e.kind(), e.shard_count_mismatch()), (ErrorKind::InvalidArgument, Some("orders")));
        assert_eq!(e.clone().spelled(crate::Spelling::SnakeMs).shard_count_mismatch(), Some("orders"));
        assert_eq!(Error::invalid(e.message()).shard_count_mismatch(), None);
    }
}
