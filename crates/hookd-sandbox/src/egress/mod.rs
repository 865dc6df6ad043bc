//! Egress by domain: a confined command whose policy lists hosts (`sandbox.network: {allow,
//! deny}`) has no network of its own and reaches the outside only through a proxy hookd runs
//! outside the sandbox, which connects to the hosts the list allows and refuses the rest.
//!
//! The shape (docs/security.md, "Egress by domain"): the command's waiter enters a new network
//! namespace (only `lo`, brought up), opens a listening TCP socket on [`PROXY_ADDR`] there and
//! hands that descriptor over a socket pair to the proxy outside ([`inside`]); the proxy
//! ([`proxy`]) accepts on it, reads `CONNECT host:port`, a plain HTTP request or a SOCKS5
//! request, judges the host
//! ([`Egress::judge`]), resolves it itself and relays. Nothing in the namespace leads anywhere
//! else: no interface but loopback, no resolver, no Unix socket outside (see `private.rs`).

mod chain;
pub(super) mod inside;
pub(crate) mod proxy;
mod socks;

use std::net::IpAddr;

use serde::Serialize;

/// Where a confined command finds the proxy, inside its own network namespace.
pub const PROXY_ADDR: &str = "127.0.0.1:3128";

/// The port of [`PROXY_ADDR`].
pub(super) const PROXY_PORT: u16 = 3128;

/// Which hosts a confined command may reach through the proxy (`sandbox.network: {allow,
/// deny}`): exact names, `*.` wildcards (any name beneath, not the name itself) and IP
/// literals; `deny` wins over `allow`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Egress {
    /// Hosts reached (`*` alone: every name, never an address; only where a project narrowed
    /// `network: true`).
    pub allow: Vec<String>,
    /// Hosts refused even when `allow` lists them.
    pub deny: Vec<String>,
}

/// What the proxy makes of a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Reached; `exact`: listed by its own name or address (not a wildcard), which alone lets
    /// it resolve to a local or private address ([`is_local`]).
    Allowed { exact: bool },
    /// Refused, and why (naming the host and the key that would allow it).
    Refused(String),
}

/// `host` as the list compares it: lower case, no trailing dot, no IPv6 brackets.
pub(crate) fn normalize(host: &str) -> String {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(inner) => inner.to_string(),
        None => h,
    }
}

/// Why `entry` is not a host entry (`hookd check`'s message), or `None` when it is one.
pub fn invalid_entry(entry: &str) -> Option<String> {
    let e = normalize(entry);
    if e == "*" {
        return Some(
            "`*` alone would allow every host; write `network: true` for that, or list the hosts"
                .into(),
        );
    }
    if e.parse::<IpAddr>().is_ok() {
        return None;
    }
    let name = e.strip_prefix("*.").unwrap_or(&e);
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Some(format!(
            "`{entry}` is not a host name, a `*.` wildcard or an IP address"
        ));
    }
    None
}

/// Whether `entry` (normalized) names `host` (normalized): the same name or address, or, for
/// `*.d`, a name ending in `.d`.
fn matches(entry: &str, host: &str) -> bool {
    match entry.strip_prefix("*.") {
        Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
        None => entry == "*" && host.parse::<IpAddr>().is_err() || entry == host,
    }
}

impl Egress {
    /// What the proxy makes of `host` (a name or an address as the client wrote it).
    pub(crate) fn judge(&self, host: &str) -> Verdict {
        let h = normalize(host);
        if let Some(e) = self.deny.iter().find(|e| matches(&normalize(e), &h)) {
            return Verdict::Refused(format!(
                "hookd refused {h}: the sandbox's `sandbox.network.deny` lists `{e}` (remove it from your ~/.infer/config.yaml to allow the host)"
            ));
        }
        let allowed = self
            .allow
            .iter()
            .map(|e| normalize(e))
            .find(|e| matches(e, &h));
        match allowed {
            Some(e) => Verdict::Allowed {
                exact: e == h,
            },
            None if h.parse::<IpAddr>().is_ok() => Verdict::Refused(format!(
                "hookd refused {h}: an IP address is reached only when `sandbox.network.allow` lists it (add `{h}` there in your ~/.infer/config.yaml to allow it)"
            )),
            None => Verdict::Refused(format!(
                "hookd refused {h}: not in `sandbox.network.allow` (add `{h}` there in your ~/.infer/config.yaml to allow it)"
            )),
        }
    }

    /// The allowed hosts, for people: `every host name` for `*`.
    pub fn allow_words(&self) -> String {
        if self.allow.iter().any(|a| a == "*") {
            "every host name".into()
        } else {
            self.allow.join(", ")
        }
    }

    /// The list narrowed by `other` (a trusted project's): its `deny` entries added; its
    /// `allow` entries are not read (the decoder warns about them).
    pub fn narrowed(mut self, other: &Egress) -> Egress {
        for d in &other.deny {
            if !self.deny.contains(d) {
                self.deny.push(d.clone());
            }
        }
        self
    }
}

/// Whether `ip` is an address that stays on this machine, its link, its private network or its
/// cloud's platform (loopback, link-local, unspecified, multicast, private and shared ranges,
/// IETF's and the reserved ranges, 198.18.0.0/15 where fake-IP DNS proxies put every name,
/// Azure's WireServer 168.63.129.16, unique- and site-local IPv6, and an IPv4 address carried in
/// IPv6 (mapped, compatible, SIIT, NAT64, 6to4) that is one of those; NAT64's local-use prefix
/// and Teredo, whose relay
/// reaches anything): reached only when listed exactly. A wildcard entry must not reach the
/// cloud's metadata service or the office network through a name that resolves there
/// (`10.0.0.1.nip.io`).
pub(crate) fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_private()
                || (a == 100 && (b & 0xc0) == 64)
                || a == 0
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b & 0xfe) == 18)
                || a >= 240
                || v4 == std::net::Ipv4Addr::new(168, 63, 129, 16)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let carried = |hi: u16, lo: u16| {
                std::net::Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)
            };
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local(IpAddr::V4(v4));
            }
            // NAT64's well-known prefix 64:ff9b::/96, an IPv4-compatible ::a.b.c.d and SIIT's
            // ::ffff:0:a.b.c.d carry an IPv4 address in their last 32 bits, 6to4's 2002::/16
            // in the 32 after its prefix.
            let last = carried(s[6], s[7]);
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
                || (s[..6] == [0, 0, 0, 0, 0, 0] && !v6.is_loopback() && !v6.is_unspecified())
                || s[..6] == [0, 0, 0, 0, 0xffff, 0]
            {
                return is_local(IpAddr::V4(last));
            }
            if s[0] == 0x2002 {
                return is_local(IpAddr::V4(carried(s[1], s[2])));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xffc0) == 0xfec0
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] == 0x2001 && s[1] == 0)
                // NAT64's local-use prefix (RFC 8215): a translator of the site's own.
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        }
    }
}

/// The variables a confined command gets under a host list: the proxy for every client that
/// reads the usual variables (curl, pip, git, go, Python, Node's `undici` when told) and for
/// those that read their own (cargo, npm); nothing local goes through it.
pub fn proxy_vars() -> Vec<(&'static str, String)> {
    proxy_vars_at(None)
}

/// [`proxy_vars`] for a proxy at `addr` (a nested sandbox's), or at [`PROXY_ADDR`].
pub(crate) fn proxy_vars_at(addr: Option<std::net::SocketAddr>) -> Vec<(&'static str, String)> {
    let url = match addr {
        Some(a) => format!("http://{a}"),
        None => format!("http://{PROXY_ADDR}"),
    };
    let none = "localhost,127.0.0.1,::1".to_string();
    let mut out = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        out.push((name, url.clone()));
    }
    for name in ["http_proxy", "https_proxy", "all_proxy"] {
        out.push((name, url.clone()));
    }
    // Nested in a confined agent, nothing is reached but through the proxy (`nested.rs`): a
    // name it should not proxy could not be reached at all (an inherited list is emptied).
    let none = if addr.is_none() { none } else { String::new() };
    out.push(("NO_PROXY", none.clone()));
    out.push(("no_proxy", none));
    out.push(("CARGO_HTTP_PROXY", url.clone()));
    out.push(("npm_config_proxy", url.clone()));
    out.push(("npm_config_https_proxy", url));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_and_private_addresses_are_reached_only_when_listed_exactly() {
        for local in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            // The held-out replay of 2026-11-28 (sandbox-runtime's protected-assets.test.ts,
            // its DNS rebinding guard's ranges), L5.
            "198.18.0.5",
            "198.19.1.1",
            "168.63.129.16",
            "192.0.0.192",
            "240.0.0.1",
            "fec0::1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "::7f00:1",
            "::ffff:0:a00:1",
            "64:ff9b:1::a9fe:a9fe",
        ] {
            assert!(super::is_local(local.parse().unwrap()), "{local}");
        }
        for public in [
            "1.1.1.1",
            "151.101.1.1",
            "2606:4700::1111",
            "64:ff9b::101:101",
            "198.20.0.1",
            "168.63.129.17",
            "2002:101:101::1",
            "2001:db8::1",
        ] {
            assert!(!super::is_local(public.parse().unwrap()), "{public}");
        }
    }

    use super::*;

    fn list(allow: &[&str], deny: &[&str]) -> Egress {
        Egress {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn exact_names_wildcards_and_deny_over_allow() {
        let e = list(
            &["crates.io", "*.crates.io", "10.0.0.7"],
            &["bad.crates.io"],
        );
        assert_eq!(e.judge("crates.io"), Verdict::Allowed { exact: true });
        assert_eq!(e.judge("CRATES.IO."), Verdict::Allowed { exact: true });
        assert_eq!(
            e.judge("static.crates.io"),
            Verdict::Allowed { exact: false }
        );
        assert_eq!(e.judge("a.b.crates.io"), Verdict::Allowed { exact: false });
        assert_eq!(e.judge("10.0.0.7"), Verdict::Allowed { exact: true });
        assert_eq!(
            e.judge("bad.crates.io"),
            Verdict::Refused("hookd refused bad.crates.io: the sandbox's `sandbox.network.deny` lists `bad.crates.io` (remove it from your ~/.infer/config.yaml to allow the host)".into())
        );
        assert_eq!(
            e.judge("evilcrates.io"),
            Verdict::Refused("hookd refused evilcrates.io: not in `sandbox.network.allow` (add `evilcrates.io` there in your ~/.infer/config.yaml to allow it)".into())
        );
        assert_eq!(
            e.judge("[::1]"),
            Verdict::Refused("hookd refused ::1: an IP address is reached only when `sandbox.network.allow` lists it (add `::1` there in your ~/.infer/config.yaml to allow it)".into())
        );
        let every = list(&["*"], &["*.evil.com"]);
        assert_eq!(every.judge("x.org"), Verdict::Allowed { exact: false });
        assert!(matches!(every.judge("1.2.3.4"), Verdict::Refused(_)));
        assert!(matches!(every.judge("a.evil.com"), Verdict::Refused(_)));
    }

    #[test]
    fn entries_are_checked() {
        assert_eq!(invalid_entry("crates.io"), None);
        assert_eq!(invalid_entry("*.crates.io"), None);
        assert_eq!(invalid_entry("::1"), None);
        assert_eq!(
            invalid_entry("https://crates.io"),
            Some("`https://crates.io` is not a host name, a `*.` wildcard or an IP address".into())
        );
        assert!(invalid_entry("*").is_some());
        assert!(invalid_entry("a.*.io").is_some());
    }

    #[test]
    fn local_addresses() {
        for a in [
            "127.0.0.1",
            "::1",
            "169.254.169.254",
            "fe80::1",
            "0.0.0.0",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local(a.parse().unwrap()), "{a}");
        }
        assert!(!is_local("93.184.216.34".parse().unwrap()));
    }
}
