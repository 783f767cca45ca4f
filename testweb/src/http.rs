//! HTTP/1.1 wire format: finding and parsing a request head, and serializing a response head.

use crate::{Request, Response};

/// Largest request head accepted; a longer one is answered 400.
pub const MAX_HEAD: usize = 64 * 1024;

/// A parsed request head plus what the connection needs to know about it.
pub struct Head {
    pub request: Request,
    /// The client wants the connection kept open after this exchange.
    pub keep_alive: bool,
    /// The request line said HTTP/1.0.
    pub http10: bool,
    /// Bytes of request body to skip (from `Content-Length`).
    pub body_len: u64,
}

/// Length of the head at the start of `buf` (through its blank line), once it is all there.
/// `from` is where the previous scan stopped, so repeated calls stay linear.
pub fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from.saturating_sub(3);
    while let Some(off) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + off;
        let rest = &buf[nl + 1..];
        if rest.starts_with(b"\n") {
            return Some(nl + 2);
        }
        if rest.starts_with(b"\r\n") {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}

/// Parses a complete head (as delimited by [`head_end`]). `Err` carries whatever method and
/// target could be read, for the log.
pub fn parse_head(head: &[u8]) -> Result<Head, (String, String)> {
    let text = std::str::from_utf8(head).map_err(|_| (String::new(), String::new()))?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) => (m, t, v),
        _ => return Err((String::new(), String::new())),
    };
    let fail = || (method.to_string(), target.to_string());
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
    };
    if !token(method) || target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(fail());
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(fail()),
    };
    let mut headers = Vec::new();
    for l in lines.filter(|l| !l.is_empty()) {
        let (k, v) = l.split_once(':').ok_or_else(fail)?;
        if !token(k) {
            return Err(fail()); // also rejects obsolete line folding (leading whitespace)
        }
        headers.push((k.to_string(), v.trim_matches([' ', '\t']).to_string()));
    }
    let request = Request {
        method: method.into(),
        target: target.into(),
        headers,
    };
    let has_token = |name: &str, tok: &str| {
        request
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .any(|(_, v)| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(tok)))
    };
    let keep_alive = if http10 {
        has_token("connection", "keep-alive")
    } else {
        !has_token("connection", "close")
    };
    if request.header("transfer-encoding").is_some() {
        return Err(fail()); // chunked request bodies are not supported
    }
    let body_len = match request.header("content-length") {
        None => 0,
        Some(v) => v.parse().map_err(|_| fail())?,
    };
    Ok(Head {
        request,
        keep_alive,
        http10,
        body_len,
    })
}

/// Serializes status line and headers of `resp` (a `Body::Bytes` one) into `out`, adding
/// `Content-Length` and `Connection` where the handler did not set them.
/// Returns whether the body is to be sent (not for HEAD, 1xx, 204, 304).
pub fn write_head(
    out: &mut Vec<u8>,
    resp: &Response,
    body_len: usize,
    head_only: bool,
    keep_alive: bool,
    http10: bool,
) -> bool {
    let s = resp.status;
    let bodyless = (100..200).contains(&s) || s == 204 || s == 304;
    out.extend_from_slice(format!("HTTP/1.1 {s} {}\r\n", reason(s)).as_bytes());
    let has = |name: &str| {
        resp.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(name))
    };
    for (k, v) in &resp.headers {
        for part in [k.as_bytes(), b": ", v.as_bytes(), b"\r\n"] {
            out.extend_from_slice(part);
        }
    }
    if !bodyless && !has("content-length") && !has("transfer-encoding") {
        out.extend_from_slice(format!("Content-Length: {body_len}\r\n").as_bytes());
    }
    if !has("connection") {
        if !keep_alive {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if http10 {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
    !head_only && !bodyless
}

/// Whether the handler's headers ask to close the connection.
pub fn says_close(resp: &Response) -> bool {
    resp.headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close"))
}

/// The reason phrase for common status codes.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
