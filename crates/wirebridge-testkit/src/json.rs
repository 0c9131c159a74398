//! Small JSON text helpers.

/// Remove insignificant whitespace from JSON text without re-ordering keys or
/// touching string contents and number spellings.
pub(crate) fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::minify;

    #[test]
    fn minify_keeps_strings_and_order() {
        let text = "{\n  \"z\": [1, 2.50],\n  \"a\": \"x y \\\" \\\\\" , \"b\" : { }\n}";
        assert_eq!(
            minify(text),
            "{\"z\":[1,2.50],\"a\":\"x y \\\" \\\\\",\"b\":{}}"
        );
        let v: serde_json::Value = serde_json::from_str(&minify(text)).unwrap();
        assert_eq!(v, serde_json::from_str::<serde_json::Value>(text).unwrap());
    }
}
