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

/// An error with a kind and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The running totals of a long run this error stopped ([`Error::so_far`]).
    so_far: Option<Vec<(&'static str, u64)>>,
}

/// `Result` with redelay's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), so_far: None }
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
        Self::new(ErrorKind::Connection, CLIENT_CLOSED)
    }

    /// True for [`client_closed`](Self::client_closed)'s error: the caller closed the client,
    /// nothing is out of reach and nothing may have run.
    pub(crate) fn is_client_closed(&self) -> bool {
        self.kind == ErrorKind::Connection && self.message.contains(CLIENT_CLOSED)
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

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        // A call on a connection `Client::close` let go of (`storage::connection`).
        if e.is_io_error() && e.to_string().contains(CLIENT_CLOSED) {
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
