//! The oracle the tests and the fuzz target hold the completion reader to:
//! whatever it reads, serde reads the same.

use crate::chat::lenient::ChatCompletion;

/// When [`ChatCompletion::read`] read `body`, what it read (as text to
/// compare), after panicking unless serde reads the same; `None` when the
/// reader left the body to serde.
pub fn read_as_serde(body: &[u8]) -> Option<String> {
    let read = format!("{:?}", ChatCompletion::read(body)?);
    let serde = serde_json::from_slice::<ChatCompletion<'_>>(body)
        .map(|c| format!("{c:?}"))
        .unwrap_or_else(|e| format!("serde refuses it: {e}"));
    assert_eq!(read, serde, "{}", String::from_utf8_lossy(body));
    Some(read)
}
