//! Finding the tool calls a user message asks for:
//! `call get_weather with city=Paris and get_time with tz=UTC`.

/// One tool call asked for by name, with its arguments as a JSON object text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestedCall {
    /// The tool's name (one of the offered tools).
    pub name: String,
    /// The arguments, a JSON object in the order the user wrote them.
    pub arguments: String,
}

/// The calls `text` asks for. Nothing unless the word `call` occurs; after
/// it, every word equal to an offered tool name starts a call, and the
/// `key=value` words that follow it are its arguments. Other words (`with`,
/// `and`, …) are ignored.
pub(crate) fn requested_calls(text: &str, offered: &[String]) -> Vec<RequestedCall> {
    let words = split_words(text);
    let Some(start) = words
        .iter()
        .position(|w| clean(w).eq_ignore_ascii_case("call"))
    else {
        return Vec::new();
    };
    let mut calls: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for word in &words[start + 1..] {
        let name = clean(word);
        if offered.iter().any(|t| t == name) {
            calls.push((name.to_string(), Vec::new()));
        } else if let (Some(call), Some((k, v))) = (calls.last_mut(), word.split_once('=')) {
            let key = clean(k);
            if !key.is_empty() {
                call.1.push((key.to_string(), v.to_string()));
            }
        }
    }
    calls
        .into_iter()
        .map(|(name, args)| RequestedCall {
            name,
            arguments: arguments_json(&args),
        })
        .collect()
}

/// Split on whitespace, keeping double-quoted stretches (`city="New York"`)
/// inside one word.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in text.chars() {
        if c == '"' {
            quoted = !quoted;
            cur.push(c);
        } else if c.is_whitespace() && !quoted {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// A word without surrounding punctuation and quotes.
fn clean(word: &str) -> &str {
    word.trim_matches(|c: char| {
        matches!(
            c,
            ',' | '.' | ';' | ':' | '!' | '?' | '`' | '\'' | '"' | '(' | ')'
        )
    })
}

/// The JSON object text for `key=value` pairs. A double-quoted value is a
/// string; `true`, `false`, `null` and JSON numbers are themselves; anything
/// else is a string (trailing `,` `;` `.` removed).
fn arguments_json(args: &[(String, String)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in args.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(k));
        out.push(':');
        out.push_str(&json_value(v));
    }
    out.push('}');
    out
}

fn json_value(raw: &str) -> String {
    let trimmed = raw.trim_end_matches([',', ';']);
    if let Some(inner) = trimmed
        .strip_prefix('"')
        .and_then(|s| s.trim_end_matches('.').strip_suffix('"'))
    {
        return json_string(inner);
    }
    let plain = trimmed.trim_end_matches('.');
    let literal = matches!(plain, "true" | "false" | "null")
        || serde_json::from_str::<serde_json::Number>(plain).is_ok();
    if literal {
        plain.to_string()
    } else {
        json_string(plain)
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["get_weather".into(), "get_time".into()]
    }

    #[test]
    fn one_call_with_arguments() {
        let calls = requested_calls("Please call get_weather with city=Paris.", &offered());
        assert_eq!(
            calls,
            vec![RequestedCall {
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into()
            }]
        );
    }

    #[test]
    fn two_calls_and_value_types() {
        let calls = requested_calls(
            r#"call `get_weather` with city="New York", days=3 and get_time with tz=UTC exact=true"#,
            &offered(),
        );
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].arguments, r#"{"city":"New York","days":3}"#);
        assert_eq!(calls[1].name, "get_time");
        assert_eq!(calls[1].arguments, r#"{"tz":"UTC","exact":true}"#);
    }

    #[test]
    fn nothing_without_call_or_offered_name() {
        assert!(requested_calls("get_weather with city=Paris", &offered()).is_empty());
        assert!(requested_calls("call get_stock with s=X", &offered()).is_empty());
        assert!(requested_calls("call get_weather", &[]).is_empty());
        let calls = requested_calls("call get_time", &offered());
        assert_eq!(calls[0].arguments, "{}");
    }
}
