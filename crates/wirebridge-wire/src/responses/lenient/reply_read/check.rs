//! The oracle the tests and the fuzz target hold the body reader to: whatever it reads, serde
//! reads the same.

use crate::responses::lenient::ResponseBody;

/// When [`ResponseBody::read`] read `body`, what it read (as text to
/// compare), after panicking unless serde reads the same; `None` when the
/// reader left the body to serde.
pub fn body_as_serde(body: &[u8]) -> Option<String> {
    let read = format!("{:?}", ResponseBody::read(body)?);
    let serde = serde_json::from_slice::<ResponseBody<'_>>(body)
        .map(|r| format!("{r:?}"))
        .unwrap_or_else(|e| format!("serde refuses it: {e}"));
    assert_eq!(read, serde, "{}", String::from_utf8_lossy(body));
    Some(read)
}
