//! Request paths against the endpoints the layer serves: what follows an
//! endpoint, for the routes under it (`/responses/{id}`, …).

/// What follows the last `{endpoint}/` in `path`, if it holds one (found
/// without building the marker: this runs for every request).
pub(crate) fn after_endpoint<'p>(path: &'p str, endpoint: &str) -> Option<&'p str> {
    let (bytes, wanted) = (path.as_bytes(), endpoint.as_bytes());
    let last = bytes.len().checked_sub(wanted.len() + 1)?;
    (0..=last)
        .rev()
        .find(|&at| bytes[at + wanted.len()] == b'/' && bytes[at..].starts_with(wanted))
        // After an ASCII `/`: a character boundary.
        .map(|at| &path[at + wanted.len() + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_follows_the_last_endpoint_is_found() {
        let cases = [
            ("/v1/responses/resp_1", "/responses", Some("resp_1")),
            (
                "/v1/responses/resp_1/cancel",
                "/responses",
                Some("resp_1/cancel"),
            ),
            ("/responses/a/responses/b", "/responses", Some("b")),
            ("/v1/responses/", "/responses", Some("")),
            ("/v1/responses", "/responses", None),
            ("/responses", "/responses", None),
            ("/v1/responsesx/a", "/responses", None),
            ("", "/responses", None),
            ("/é/chat/completions/id", "/chat/completions", Some("id")),
            ("/aa/aa/x", "/aa", Some("x")),
        ];
        for (path, endpoint, rest) in cases {
            assert_eq!(after_endpoint(path, endpoint), rest, "{path}");
            // As the marker searched for directly would find it.
            let marker = format!("{endpoint}/");
            let expected = path.rfind(&marker).map(|at| &path[at + marker.len()..]);
            assert_eq!(after_endpoint(path, endpoint), expected, "{path}");
        }
    }
}
