//! The types settings have, and how each is read: from the text of a flag
//! or an environment variable, or from a value in the settings file.

use std::net::SocketAddr;
use std::path::PathBuf;

use wirebridge_convert::profile::ReasoningOutput;
use wirebridge_convert::seal::{KeyError, SealKey};

use super::{LogFormat, MissingHistorySetting, UpstreamApi};

/// A type a setting can have.
pub(super) trait Value: Sized {
    /// What `--help` calls the flag's value.
    const VALUE_NAME: &'static str;
    /// A flag without a value: `--NAME` sets true, `--no-NAME` false.
    const SWITCH: bool = false;
    /// A flag that may be given more than once: its values are joined with
    /// commas, as a variable lists them.
    const REPEATED: bool = false;

    /// From a flag or an environment variable.
    fn parse(text: &str) -> Result<Self, String>;

    /// From the file, where a string is read as a flag's text is.
    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        match value {
            toml::Value::String(text) => Self::parse(text),
            other => Err(expected("a string", other)),
        }
    }

    /// The value when no source sets it: the declared default, read as a
    /// flag's text is. A setting that may be left unset (an `Option`)
    /// declares a description instead.
    fn unset(default: &str) -> Self {
        Self::parse(default).unwrap_or_else(|e| panic!("the default '{default}': {e}"))
    }

    /// The values it takes, when they are few.
    fn choices() -> Vec<String> {
        Vec::new()
    }
}

/// "expected a string, found an integer".
pub(super) fn expected(what: &str, found: &toml::Value) -> String {
    let found = found.type_str();
    let article = if found.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("expected {what}, found {article} {found}")
}

impl<T: Value> Value for Option<T> {
    const VALUE_NAME: &'static str = T::VALUE_NAME;
    const SWITCH: bool = T::SWITCH;

    fn parse(text: &str) -> Result<Self, String> {
        T::parse(text).map(Some)
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        T::from_toml(value).map(Some)
    }

    fn unset(_: &str) -> Self {
        None
    }

    fn choices() -> Vec<String> {
        T::choices()
    }
}

/// A list: comma-separated in a flag or a variable, an array in the file.
impl<T: Value> Value for Vec<T> {
    const VALUE_NAME: &'static str = "LIST";

    fn parse(text: &str) -> Result<Self, String> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(T::parse)
            .collect()
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        match value {
            toml::Value::Array(items) => items.iter().map(T::from_toml).collect(),
            other => Err(expected("an array", other)),
        }
    }

    fn unset(_: &str) -> Self {
        Vec::new()
    }
}

impl Value for String {
    const VALUE_NAME: &'static str = "TEXT";

    fn parse(text: &str) -> Result<Self, String> {
        Ok(text.to_owned())
    }
}

impl Value for PathBuf {
    const VALUE_NAME: &'static str = "FILE";

    fn parse(text: &str) -> Result<Self, String> {
        Ok(text.into())
    }
}

impl Value for SocketAddr {
    const VALUE_NAME: &'static str = "ADDR";

    fn parse(text: &str) -> Result<Self, String> {
        text.trim().parse().map_err(|e| format!("{e}: '{text}'"))
    }
}

impl Value for bool {
    const VALUE_NAME: &'static str = "true|false";
    const SWITCH: bool = true;

    fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(format!("'{text}' is not true or false")),
        }
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| expected("true or false", value))
    }
}

/// A whole number.
macro_rules! whole {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const VALUE_NAME: &'static str = "N";

            fn parse(text: &str) -> Result<Self, String> {
                text.trim()
                    .parse()
                    .map_err(|_| format!("'{text}' is not a whole number"))
            }

            fn from_toml(value: &toml::Value) -> Result<Self, String> {
                match value {
                    toml::Value::Integer(n) => {
                        <$t>::try_from(*n).map_err(|_| format!("{n} is not a whole number"))
                    }
                    other => Err(expected("a whole number", other)),
                }
            }
        }
    )*};
}
whole!(usize, u64);

/// A whole number from `MIN` to `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Count<const MIN: usize, const MAX: usize>(pub usize);

impl<const MIN: usize, const MAX: usize> Count<MIN, MAX> {
    fn checked(n: usize) -> Result<Self, String> {
        match (MIN..=MAX).contains(&n) {
            true => Ok(Self(n)),
            false if MAX == usize::MAX => Err(format!("it must be at least {MIN}")),
            false => Err(format!("{n} is not between {MIN} and {MAX}")),
        }
    }
}

impl<const MIN: usize, const MAX: usize> Value for Count<MIN, MAX> {
    const VALUE_NAME: &'static str = "N";

    fn parse(text: &str) -> Result<Self, String> {
        usize::parse(text).and_then(Self::checked)
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        usize::from_toml(value).and_then(Self::checked)
    }
}

/// A factor of at least 1: how far above the mean a replica's load may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LoadFactor(pub f64);

impl Value for LoadFactor {
    const VALUE_NAME: &'static str = "FACTOR";

    fn parse(text: &str) -> Result<Self, String> {
        let factor: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("'{text}' is not a number"))?;
        Self::checked(factor)
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        match value {
            toml::Value::Float(factor) => Self::checked(*factor),
            toml::Value::Integer(factor) => Self::checked(*factor as f64),
            toml::Value::String(text) => Self::parse(text),
            other => Err(expected("a number", other)),
        }
    }
}

impl LoadFactor {
    /// Below 1 no replica could take a request when all are equally busy;
    /// past 100 the bound bounds nothing.
    fn checked(factor: f64) -> Result<Self, String> {
        match (1.0..=100.0).contains(&factor) {
            true => Ok(Self(factor)),
            false => Err(format!("{factor} is not between 1 and 100")),
        }
    }
}

/// One of an enum's names.
macro_rules! one_of {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const VALUE_NAME: &'static str = "";

            fn parse(text: &str) -> Result<Self, String> {
                <$t as clap::ValueEnum>::from_str(text.trim(), false)
                    .map_err(|_| format!("'{text}' is not {}", alternatives(&Self::choices())))
            }

            fn choices() -> Vec<String> {
                <$t as clap::ValueEnum>::value_variants()
                    .iter()
                    .filter_map(clap::ValueEnum::to_possible_value)
                    .map(|value| value.get_name().to_owned())
                    .collect()
            }
        }
    )*};
}
one_of!(UpstreamApi, LogFormat, MissingHistorySetting);

/// "a, b or c".
fn alternatives(names: &[String]) -> String {
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl Value for ReasoningOutput {
    const VALUE_NAME: &'static str = "";

    fn parse(text: &str) -> Result<Self, String> {
        text.trim().parse()
    }

    fn choices() -> Vec<String> {
        [Self::Auto, Self::Summary, Self::Text]
            .map(|output| output.as_str().to_owned())
            .into()
    }
}

/// Error messages never repeat the key.
impl Value for SealKey {
    const VALUE_NAME: &'static str = "KEY";

    fn parse(text: &str) -> Result<Self, String> {
        text.trim().parse().map_err(|e: KeyError| e.to_string())
    }
}
