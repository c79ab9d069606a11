//! URLs in messages: the password never shows.

/// The URL with any password replaced by `***`, for messages. The user info ends at the last
/// `@`: a password may hold an unescaped `@`, which URL parsers (WHATWG's, the `url` crate redis
/// uses) still read as part of it, so the first `@` would show the rest of it.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((userinfo, host)) = rest.rsplit_once('@') else { return url.to_string() };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => format!("{scheme}://***@{host}"),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn the_password_never_shows() {
        let cases = [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            ("redis://default:secret@host:6379", "redis://default:***@host:6379"),
            ("redis://:secret@host", "redis://:***@host"),
            ("redis://secret@host", "redis://***@host"),
            ("rediss://user:s3cr@tP4ss@w0rd@host:6380/2", "rediss://user:***@host:6380/2"),
            ("redis://user:p:a:ss@host", "redis://user:***@host"),
            ("unix:///tmp/redis.sock", "unix:///tmp/redis.sock"),
            ("not a url", "not a url"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact(url), shown, "{url}");
        }
    }
}
