//! URLs in messages: the password never shows.

/// The URL with any password replaced by `***`, for messages.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((userinfo, host)) = rest.split_once('@') {
            if let Some((user, _)) = userinfo.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
            return format!("{scheme}://***@{host}");
        }
    }
    url.to_string()
}
