//! Duration settings: `"10s"`, `"500ms"`, `"2m"`, or a number of seconds
//! (in the file, also a bare number).

use std::time::Duration;

use super::types::{expected, Value};

/// The longest duration a setting takes. Longer ones are almost certainly a
/// unit mistake, and deadlines this far out are never useful.
const MAX: Duration = Duration::from_secs(24 * 60 * 60);

impl Value for Duration {
    const VALUE_NAME: &'static str = "DURATION";

    fn parse(text: &str) -> Result<Self, String> {
        parse(text)
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        match value {
            toml::Value::String(text) => parse(text),
            toml::Value::Integer(secs) => u64::try_from(*secs)
                .map_err(|_| format!("{secs} is negative"))
                .and_then(|secs| checked(Duration::from_secs(secs), &secs.to_string())),
            toml::Value::Float(secs) => seconds(*secs, &secs.to_string()),
            other => Err(expected("a duration such as \"10s\" or \"500ms\"", other)),
        }
    }
}

/// `"10s"`, `"500ms"`, `"1.5m"`, `"1h"`, or a bare number of seconds.
fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(not_a_duration(text)),
    };
    // Only digits and one dot reach here: no exponent, sign, inf or NaN.
    let number: f64 = number.parse().map_err(|_| not_a_duration(text))?;
    seconds(number * scale, text)
}

fn seconds(secs: f64, text: &str) -> Result<Duration, String> {
    let duration = Duration::try_from_secs_f64(secs).map_err(|_| not_a_duration(text))?;
    checked(duration, text)
}

/// A zero timeout would close every connection at once: refused, as is
/// anything beyond [`MAX`].
fn checked(duration: Duration, text: &str) -> Result<Duration, String> {
    if duration.is_zero() {
        Err(format!("'{text}' is zero; a timeout must be positive"))
    } else if duration > MAX {
        Err(format!("'{text}' is longer than the 24h maximum"))
    } else {
        Ok(duration)
    }
}

fn not_a_duration(text: &str) -> String {
    format!("'{text}' is not a duration (such as 10s, 500ms, 2m or a number of seconds)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_seconds() {
        let ms = |t: &str| parse(t).map(|d| d.as_millis());
        assert_eq!(ms("10s"), Ok(10_000));
        assert_eq!(ms("500ms"), Ok(500));
        assert_eq!(ms(" 1.5m "), Ok(90_000));
        assert_eq!(ms("1h"), Ok(3_600_000));
        assert_eq!(ms("30"), Ok(30_000));
        assert_eq!(ms("0.25"), Ok(250));
        assert_eq!(ms("2 s"), Ok(2_000));
    }

    #[test]
    fn refuses_nonsense_zero_and_huge() {
        for text in [
            "", "s", "ten", "10x", "-1s", "1e3", "inf", "NaN", "1.2.3s", "0", "0ms", "25h",
        ] {
            assert!(parse(text).is_err(), "{text:?} was accepted");
        }
        assert!(parse("0s").unwrap_err().contains("positive"));
    }
}
