mod parsing_error;
mod redis_error;
mod server_error;

pub use parsing_error::*;
pub use redis_error::*;
pub use server_error::*;

macro_rules! invalid_type_error_inner {
    ($v:expr, $det:expr) => {
        ParsingError::from(format!("{:?} (value was {:?})", $det, $v))
    };
}

macro_rules! invalid_type_error {
    ($det:expr) => {{ fail!(crate::errors::ParsingError::from(format!("{:?}", $det))) }};
    ($v:expr, $det:expr) => {{ fail!(crate::errors::invalid_type_error_inner!($v, $det)) }};
}

pub(crate) use {invalid_type_error, invalid_type_error_inner};

// A consistent error value for connections closed without a reason.
#[cfg(any(feature = "aio", test))]
pub(crate) fn closed_connection_error() -> RedisError {
    use std::io;

    RedisError::from(io::Error::from(io::ErrorKind::BrokenPipe))
}

#[cfg(feature = "aio")]
/// [redelay patch] The message of [`request_not_sent_error`]: a request refused because its
/// connection had closed before it was handed to it, so that none of it reached the server.
pub(crate) const REQUEST_NOT_SENT: &str = "connection closed before the request was sent";

#[cfg(feature = "aio")]
/// [redelay patch] A request refused because its connection had closed before it was handed to
/// it: a broken pipe (so it counts as a dropped connection everywhere) that a caller can tell
/// apart, by its message, from one where the request may have reached the server.
pub(crate) fn request_not_sent_error() -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        REQUEST_NOT_SENT,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_closed_connection_error() {
        let err = closed_connection_error();
        assert!(err.is_connection_dropped());
        assert!(err.is_unrecoverable_error());
        assert!(err.is_io_error());
    }
}
