//! What `redelay serve` is started with.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

/// lmstfy's defaults for parameters a request leaves out (its `config/demo-conf.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LmstfyDefaults {
    /// Time to live of a published job, seconds (0 = forever).
    pub ttl_s: u64,
    /// Deliveries of a job.
    pub tries: u32,
    /// Lease of a consumed job, seconds.
    pub ttr_s: u64,
    /// Long-poll of a consume, seconds.
    pub timeout_s: u64,
}

impl Default for LmstfyDefaults {
    fn default() -> Self {
        LmstfyDefaults { ttl_s: 24 * 3600, tries: 1, ttr_s: 120, timeout_s: 0 }
    }
}

/// The server's settings (the Redis connection itself is the [`redelay::Client`] it is given).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The data listener: lmstfy's `/api/...` and the native `/v1/...`.
    pub listen: SocketAddr,
    /// The admin listener: lmstfy's token routes. None: not started.
    pub admin_listen: Option<SocketAddr>,
    /// The admin token (every namespace, writes, token management). None: no admin token.
    pub admin_token: Option<String>,
    /// Serve Prometheus text at `/metrics` without a token.
    pub metrics: bool,
    pub lmstfy: LmstfyDefaults,
    /// CA certificates (PEM) that webhooks to https URLs trust besides the WebPKI roots built
    /// into the binary, e.g. a private CA. None: the WebPKI roots only.
    pub webhook_ca_pem: Option<Vec<u8>>,
    /// Where webhooks may go although it is not public (loopback, private, link-local ..., see
    /// `webhook.rs`): address blocks such as `10.0.0.0/8` for receivers on the local network, or
    /// host names such as `hooks.internal` / `*.svc.cluster.local`, whatever they resolve to
    /// (`redelay serve --webhook-allow`). Empty: webhooks reach public addresses only.
    pub webhook_allow: Vec<WebhookAllow>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "127.0.0.1:7777".parse().unwrap(),
            admin_listen: Some("127.0.0.1:7778".parse().unwrap()),
            admin_token: None,
            metrics: false,
            lmstfy: LmstfyDefaults::default(),
            webhook_ca_pem: None,
            webhook_allow: Vec::new(),
        }
    }
}

/// One entry of [`ServerConfig::webhook_allow`]: a block of addresses, or a host name (or, as
/// `*.domain`, every name under a domain) allowed whatever it resolves to. Parsed from
/// `10.0.0.0/8`, `::1`, `hooks.internal` or `*.svc.cluster.local`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookAllow {
    /// These addresses, however a webhook's URL names them.
    Block(Cidr),
    /// This host name (lower case, no trailing dot; `*.` first: the names under that domain).
    Host(String),
}

impl WebhookAllow {
    /// The block of addresses, None for a host name.
    pub fn block(&self) -> Option<&Cidr> {
        match self {
            WebhookAllow::Block(c) => Some(c),
            WebhookAllow::Host(_) => None,
        }
    }

    /// Whether the host name `name` (as a URL gives it) is allowed by name.
    pub fn allows_name(&self, name: &str) -> bool {
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        match self {
            WebhookAllow::Block(_) => false,
            WebhookAllow::Host(h) => match h.strip_prefix('*') {
                Some(dot_domain) => name.len() > dot_domain.len() && name.ends_with(dot_domain),
                None => name == *h,
            },
        }
    }
}

impl std::fmt::Display for WebhookAllow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebhookAllow::Block(c) => c.fmt(f),
            WebhookAllow::Host(h) => f.write_str(h),
        }
    }
}

impl FromStr for WebhookAllow {
    type Err = String;

    /// A CIDR block or address, else a host name (`*.` first for a domain's names); the error
    /// names the text and the forms expected.
    fn from_str(s: &str) -> Result<WebhookAllow, String> {
        match s.parse::<Cidr>() {
            Ok(c) => Ok(WebhookAllow::Block(c)),
            Err(e) if s.contains('/') || s.contains(':') => Err(e),
            Err(_) => host_name(s).map(WebhookAllow::Host).ok_or_else(|| {
                format!(
                    "{s:?}: not an IP address, CIDR block or host name (like 10.0.0.0/8, ::1, \
                     hooks.internal or *.svc.cluster.local)"
                )
            }),
        }
    }
}

/// `s` as a host name in lower case without its trailing dot, `*.` allowed first; None when it
/// is not one: labels of 1 to 63 letters, digits and inner hyphens, 253 characters at most, and
/// a last label that is not all digits (`10.0.0.256` is a mistyped address, not a name).
fn host_name(s: &str) -> Option<String> {
    let s = s.strip_suffix('.').unwrap_or(s).to_ascii_lowercase();
    let name = s.strip_prefix("*.").unwrap_or(&s);
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let last = name.rsplit('.').next()?;
    let ok = name.len() <= 253 && name.split('.').all(label_ok) && !last.bytes().all(|b| b.is_ascii_digit());
    ok.then_some(s)
}

/// A block of IP addresses in CIDR notation: an address and how many of its leading bits every
/// address of the block shares (`10.0.0.0/8`, `::1/128`). Parsed from that notation, or from a
/// bare address (the block of that address alone); bits past the prefix are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// The IPv4 block `a.b.c.d/prefix`.
    pub const fn v4(octets: [u8; 4], prefix: u8) -> Cidr {
        Cidr { addr: IpAddr::V4(Ipv4Addr::new(octets[0], octets[1], octets[2], octets[3])), prefix }
    }

    /// The IPv6 block of these eight 16-bit groups, `/prefix`.
    pub const fn v6(s: [u16; 8], prefix: u8) -> Cidr {
        Cidr { addr: IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])), prefix }
    }

    /// The block of `addr` alone (`/32` or `/128`).
    pub fn single(addr: IpAddr) -> Cidr {
        Cidr { addr, prefix: bits_of(addr) }
    }

    /// Whether `ip` is in the block (an address of the other family never is).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let (net, ip, width) = match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => (u128::from(n.to_bits()), u128::from(i.to_bits()), 32),
            (IpAddr::V6(n), IpAddr::V6(i)) => (n.to_bits(), i.to_bits(), 128),
            _ => return false,
        };
        // (A shift by the full width of u128 would overflow: /0 holds every address.)
        self.prefix == 0 || (net ^ ip) >> (width - u32::from(self.prefix)) == 0
    }
}

/// Bits of an address of `addr`'s family: 32 or 128.
fn bits_of(addr: IpAddr) -> u8 {
    if addr.is_ipv4() {
        32
    } else {
        128
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for Cidr {
    type Err = String;

    /// `ADDRESS/PREFIX` or `ADDRESS`; the error names the text and what was expected.
    fn from_str(s: &str) -> Result<Cidr, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| {
            format!("{s:?}: not an IP address or CIDR block (like 10.0.0.0/8, 127.0.0.1/32 or ::1/128)")
        })?;
        let width = bits_of(addr);
        let prefix = match prefix {
            None => width,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= width)
                .ok_or_else(|| format!("{s:?}: the prefix length after / must be 0 to {width}"))?,
        };
        Ok(Cidr { addr, prefix })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_cidr_holds_the_addresses_of_its_prefix() {
        for (block, inside, outside) in [
            ("10.0.0.0/8", "10.255.1.2", "11.0.0.0"),
            ("127.0.0.1/32", "127.0.0.1", "127.0.0.2"),
            ("127.0.0.1", "127.0.0.1", "127.0.0.2"),
            ("172.16.0.0/12", "172.31.255.255", "172.32.0.0"),
            ("10.9.9.9/8", "10.0.0.1", "9.255.255.255"),
            ("0.0.0.0/0", "203.0.113.9", "::1"),
            ("::1/128", "::1", "::2"),
            ("fc00::/7", "fdff::1", "fe00::"),
            ("::/0", "2001:db8::1", "127.0.0.1"),
        ] {
            let c: Cidr = block.parse().unwrap();
            assert!(c.contains(ip(inside)), "{block} holds {inside}");
            assert!(!c.contains(ip(outside)), "{block} does not hold {outside}");
        }
        assert_eq!("127.0.0.1".parse::<Cidr>().unwrap().to_string(), "127.0.0.1/32");
        assert_eq!(Cidr::single(ip("::1")), "::1/128".parse().unwrap());
    }

    #[test]
    fn a_webhook_allow_entry_is_a_block_or_a_host_name() {
        let allow = |s: &str| s.parse::<WebhookAllow>().unwrap();
        assert_eq!(allow("10.0.0.0/8"), WebhookAllow::Block("10.0.0.0/8".parse().unwrap()));
        assert_eq!(allow("::1"), WebhookAllow::Block("::1/128".parse().unwrap()));
        assert_eq!(allow("Hooks.Internal."), WebhookAllow::Host("hooks.internal".into()));
        // (entry, names it allows, names it does not)
        for (entry, yes, no) in [
            ("localhost", &["localhost", "LOCALHOST", "localhost."][..], &["localhost.evil.com", "host"][..]),
            (
                "*.svc.local",
                &["a.svc.local", "b.c.svc.local", "A.SVC.LOCAL."],
                &["svc.local", "asvc.local", "a.svc.local.x"],
            ),
            ("10.0.0.0/8", &[], &["10.0.0.1", "localhost"]),
        ] {
            for name in yes {
                assert!(allow(entry).allows_name(name), "{entry} allows {name}");
            }
            for name in no {
                assert!(!allow(entry).allows_name(name), "{entry} does not allow {name}");
            }
        }
        refused::<WebhookAllow>(&[
            ("10.0.0.256", "not an IP address, CIDR block or host name"),
            ("-bad.example", "not an IP address, CIDR block or host name"),
            ("a..b", "not an IP address, CIDR block or host name"),
            ("under_score.example", "not an IP address, CIDR block or host name"),
            ("*", "not an IP address, CIDR block or host name"),
            ("", "not an IP address, CIDR block or host name"),
            ("10.0.0.0/33", "the prefix length after / must be 0 to 32"),
            ("fe80::1%eth0", "not an IP address or CIDR block"),
        ]);
    }

    /// Each text of `table` is refused as a `T`, naming the text and saying why.
    fn refused<T: FromStr<Err = String> + std::fmt::Debug>(table: &[(&str, &str)]) {
        for (bad, why) in table {
            let e = bad.parse::<T>().unwrap_err();
            assert!(e.starts_with(&format!("{bad:?}: ")) && e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bad_cidr_is_refused_naming_it() {
        refused::<Cidr>(&[
            ("localhost", "not an IP address or CIDR block"),
            ("10.0.0/8", "not an IP address or CIDR block"),
            ("", "not an IP address or CIDR block"),
            ("10.0.0.0/33", "the prefix length after / must be 0 to 32"),
            ("::1/129", "the prefix length after / must be 0 to 128"),
            ("10.0.0.0/", "the prefix length after / must be 0 to 32"),
            ("10.0.0.0/x", "the prefix length after / must be 0 to 32"),
        ]);
    }
}
