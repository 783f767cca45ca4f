//! Text shown on one line (the URL log's columns, a seed's error, a hunt's match): control
//! characters escaped, so that hostile text can neither break a column nor drive a terminal.

/// Escapes control characters (tabs and newlines included) so a hostile header or URL can
/// neither break the columns nor drive a terminal.
pub fn sanitize(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    push_sanitized(&mut out, text);
    String::from_utf8(out).expect("UTF-8 in, UTF-8 out")
}

/// `sanitize`, appended to `out`; text without control characters is copied as it is.
pub fn push_sanitized(out: &mut Vec<u8>, text: &str) {
    if !text.chars().any(char::is_control) {
        out.extend_from_slice(text.as_bytes());
        return;
    }
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default().map(|c| c as u8));
        } else {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }
}
