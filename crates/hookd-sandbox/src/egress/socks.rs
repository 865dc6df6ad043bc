//! SOCKS5 on the proxy's port, for clients that speak only it (`curl --socks5-hostname`,
//! `ALL_PROXY=socks5h://…`): no authentication, `CONNECT` only, a name or an address. A
//! request's first byte tells it from HTTP (5). SOCKS has no room for a reason: a refusal is
//! reply 2, "connection not allowed by ruleset", and the `network_request` event says why.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, TcpStream};

/// The SOCKS version this speaks.
pub(super) const VERSION: u8 = 5;

/// Read the greeting and the `CONNECT` request: the host (a name, or an address as text) and
/// the port.
pub(super) fn read_request(conn: &mut TcpStream) -> Result<(String, u16), String> {
    let mut two = [0u8; 2];
    conn.read_exact(&mut two)
        .map_err(|e| format!("reading the SOCKS greeting: {e}"))?;
    let mut methods = vec![0u8; usize::from(two[1])];
    conn.read_exact(&mut methods)
        .map_err(|e| format!("reading the SOCKS greeting: {e}"))?;
    if !methods.contains(&0) {
        let _ = conn.write_all(&[VERSION, 0xff]);
        return Err("the SOCKS client offers no method without authentication".into());
    }
    conn.write_all(&[VERSION, 0])
        .map_err(|e| format!("answering the SOCKS greeting: {e}"))?;
    let mut head = [0u8; 4];
    conn.read_exact(&mut head)
        .map_err(|e| format!("reading the SOCKS request: {e}"))?;
    if head[0] != VERSION || head[1] != 1 {
        return Err(format!("SOCKS command {} is not CONNECT", head[1]));
    }
    let host = match head[3] {
        1 => {
            let mut a = [0u8; 4];
            conn.read_exact(&mut a).map_err(|e| e.to_string())?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            conn.read_exact(&mut len).map_err(|e| e.to_string())?;
            let mut name = vec![0u8; usize::from(len[0])];
            conn.read_exact(&mut name).map_err(|e| e.to_string())?;
            String::from_utf8(name).map_err(|_| "the SOCKS host name is not text".to_string())?
        }
        4 => {
            let mut a = [0u8; 16];
            conn.read_exact(&mut a).map_err(|e| e.to_string())?;
            Ipv6Addr::from(a).to_string()
        }
        t => return Err(format!("SOCKS address type {t} is unknown")),
    };
    let mut port = [0u8; 2];
    conn.read_exact(&mut port).map_err(|e| e.to_string())?;
    Ok((host, u16::from_be_bytes(port)))
}

/// Answer a request: `code` is the HTTP status the proxy would have given (200 succeeded, 403
/// refused, 502 unreachable, anything else a general failure).
pub(super) fn reply(conn: &mut TcpStream, code: u16) -> std::io::Result<()> {
    let rep = match code {
        200 => 0,
        403 => 2,
        502 => 4,
        _ => 1,
    };
    conn.write_all(&[VERSION, rep, 0, 1, 0, 0, 0, 0, 0, 0])
}
