//! A proxy nested in another sandbox reaches its hosts through the outer one: a confined agent
//! (`hookd run --confine`) has no network but its own proxy at [`super::PROXY_ADDR`], so the
//! proxy of a command it runs (`hookd exec`, inside) cannot resolve names or connect itself. It
//! judges the host by its own list, then asks the outer proxy for a `CONNECT host:port` tunnel;
//! the outer proxy judges the host again by its (wider) list, resolves it and refuses local
//! addresses as it does for any command. A host reached is therefore allowed by both lists.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The longest answer head read from the outer proxy.
const MAX_ANSWER: usize = 16 * 1024;

/// A tunnel to `host:port` through the HTTP proxy at `via`, or the HTTP status and reason to
/// answer the client (the outer proxy's own refusal passed on as it said it).
pub(super) fn connect(
    via: SocketAddr,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<TcpStream, (u16, String)> {
    let unreachable = |e: std::io::Error| {
        (
            502,
            format!("hookd could not reach the proxy it is nested in ({via}): {e}"),
        )
    };
    let mut s = TcpStream::connect_timeout(&via, timeout).map_err(unreachable)?;
    s.set_read_timeout(Some(timeout)).map_err(unreachable)?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let ask = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    s.write_all(ask.as_bytes()).map_err(unreachable)?;
    let head = read_answer(&mut s).map_err(|e| (502, e))?;
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.splitn(3, ' ');
    let code = parts.nth(1).and_then(|c| c.parse::<u16>().ok());
    let reason = parts.next().unwrap_or_default().trim();
    match code {
        Some(200) => {
            s.set_read_timeout(None).map_err(unreachable)?;
            Ok(s)
        }
        Some(code) => Err((
            code,
            format!("the proxy hookd is nested in (the confined agent's) refused it: {reason}"),
        )),
        None => Err((
            502,
            format!("the proxy hookd is nested in answered `{line}`"),
        )),
    }
}

/// The answer's head, up to its blank line, read byte by byte: nothing after it is consumed
/// (the tunnel's first bytes stay in the socket).
fn read_answer(s: &mut TcpStream) -> Result<String, String> {
    let mut buf = Vec::with_capacity(256);
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if buf.len() > MAX_ANSWER {
            return Err("the outer proxy's answer is too long".into());
        }
        match s.read(&mut byte) {
            Ok(0) => return Err("the outer proxy closed without answering".into()),
            Ok(_) => buf.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the outer proxy's answer: {e}")),
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
