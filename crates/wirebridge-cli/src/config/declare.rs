//! What makes one declaration enough: the `settings!` macro, each
//! declared setting's flag (built in `flags`), and the order the sources of
//! a setting are read in.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use clap::{Arg, ArgAction, ArgMatches};

use super::types::Value;
use super::{value, ConfigError};

/// Declares each setting once, with its doc comment (the help text), file
/// key, type, value name in `--help` (`as "BYTES"`; the type's otherwise),
/// and default: a value's text, or for an `Option` what leaving it unset
/// means. `secret` keeps a setting off the command line, which every user
/// of the machine can read. Then the file's `@tables`, which are file-only.
///
/// Makes the file's struct (`FileConfig`), the resolved `Settings` and
/// `Settings::DECLARED`, from which the flags come.
macro_rules! settings {
    (@flag) => { true };
    (@flag secret) => { false };
    (@name $name:literal; $ty:ty) => { $name };
    (@name ; $ty:ty) => { <$ty as $crate::config::types::Value>::VALUE_NAME };
    (
        $(
            $(#[doc = $doc:literal])*
            $key:ident: $ty:ty $(as $name:literal)? = $default:literal $(, $secret:ident)?;
        )*
        @tables {
            $( $(#[$meta:meta])* $table:ident: $table_ty:ty, )*
        }
    ) => {
        /// The settings file, as written. Every key is optional.
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FileConfig {
            $( $key: Option<toml::Spanned<toml::Value>>, )*
            $( $(#[$meta])* pub(super) $table: $table_ty, )*
        }

        /// Each declared setting's value, and where it came from.
        pub(super) struct Settings {
            $( pub(super) $key: $crate::config::declare::Got<$ty>, )*
        }

        impl Settings {
            /// Every declared setting, in order.
            pub(super) const DECLARED: &'static [$crate::config::declare::Declared] = &[$(
                $crate::config::declare::Declared {
                    key: stringify!($key),
                    doc: concat!($($doc),*),
                    default: $default,
                    flag: settings!(@flag $($secret)?),
                    switch: <$ty as $crate::config::types::Value>::SWITCH,
                    repeated: <$ty as $crate::config::types::Value>::REPEATED,
                    value_name: settings!(@name $($name)?; $ty),
                    choices: <$ty as $crate::config::types::Value>::choices,
                },
            )*];

            /// Each setting from the first source that sets it.
            pub(super) fn resolve(
                file: &FileConfig,
                sources: &$crate::config::declare::Sources<'_>,
            ) -> Result<Self, $crate::config::ConfigError> {
                Ok(Self {
                    $( $key: sources.get(stringify!($key), file.$key.as_ref())?, )*
                })
            }
        }
    };
}
pub(super) use settings;

/// One setting, as declared.
#[derive(Debug)]
pub(super) struct Declared {
    /// The file key. The flag is `--` and the key with `-` for `_`; the
    /// environment variable `WIREBRIDGE_` and the key in capitals.
    pub key: &'static str,
    /// The help text.
    pub doc: &'static str,
    /// What `--help` gives as the default.
    pub default: &'static str,
    /// Whether it has a flag.
    pub flag: bool,
    /// Whether its flags take no value (`--NAME`, `--no-NAME`).
    pub switch: bool,
    /// Whether its flag may be given more than once.
    pub repeated: bool,
    /// What `--help` calls the flag's value, when it takes any text.
    pub value_name: &'static str,
    /// The values it takes, when they are few.
    pub choices: fn() -> Vec<String>,
}

impl Declared {
    /// Its flag, without the leading `--`.
    pub(super) fn flag_name(&self) -> String {
        self.key.replace('_', "-")
    }

    /// Its environment variable.
    pub(super) fn env_var(&self) -> String {
        format!("WIREBRIDGE_{}", self.key.to_ascii_uppercase())
    }

    /// Its flag (or for a switch, the pair of them).
    pub(super) fn args(&self) -> Vec<Arg> {
        let flag = self.flag_name();
        let doc = self.doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let doc = doc.strip_suffix('.').unwrap_or(&doc);
        let help = format!(
            "{doc} [default: {}] [env: {}]",
            self.default,
            self.env_var()
        );
        let arg = Arg::new(self.key).long(flag.clone()).help(help);
        if !self.switch {
            let choices = (self.choices)();
            let name = match choices.is_empty() {
                true => self.value_name.to_owned(),
                false => choices.join("|"),
            };
            let action = match self.repeated {
                true => ArgAction::Append,
                false => ArgAction::Set,
            };
            return vec![arg.action(action).value_name(name)];
        }
        let no = format!("no-{flag}");
        vec![
            arg.action(ArgAction::SetTrue).overrides_with(no.clone()),
            Arg::new(no.clone())
                .long(no)
                .action(ArgAction::SetTrue)
                .overrides_with(self.key)
                .help(format!("The opposite of --{flag}")),
        ]
    }

    /// The flag given and its text, if one was.
    pub(super) fn given(&self, matches: &ArgMatches) -> Option<(String, String)> {
        let flag = self.flag_name();
        if self.repeated {
            let texts: Vec<&str> = matches
                .get_many::<String>(self.key)?
                .map(String::as_str)
                .collect();
            return Some((format!("--{flag}"), texts.join(",")));
        }
        if !self.switch {
            let text = matches.get_one::<String>(self.key)?;
            return Some((format!("--{flag}"), text.clone()));
        }
        let no = format!("no-{flag}");
        match (matches.get_flag(self.key), matches.get_flag(&no)) {
            (true, _) => Some((format!("--{flag}"), "true".into())),
            (_, true) => Some((format!("--{no}"), "false".into())),
            _ => None,
        }
    }
}

/// A setting's value, and where it came from.
pub(super) struct Got<T> {
    /// The setting.
    pub key: &'static str,
    /// Its value.
    pub value: T,
    /// Where it came from, as error messages add it: ` (--listen)`,
    /// ` (environment WIREBRIDGE_LISTEN)`, ` (bridge.toml line 3)`, or
    /// nothing for the default.
    pub at: String,
}

impl<T> Got<T> {
    /// The setting cannot be used as it is.
    pub(super) fn invalid(&self, message: impl Into<String>) -> ConfigError {
        value(self.key, &self.at, message)
    }
}

/// Where settings are read from.
pub(super) struct Sources<'a> {
    /// The command line's settings: by setting, the flag as written and
    /// its text.
    pub given: &'a BTreeMap<&'static str, (String, String)>,
    /// What is declared.
    pub declared: &'static [Declared],
    /// The environment.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The file.
    pub origin: Origin<'a>,
}

impl Sources<'_> {
    /// The flag, else the environment, else the file, else the default.
    pub(super) fn get<T: Value>(
        &self,
        key: &'static str,
        file: Option<&toml::Spanned<toml::Value>>,
    ) -> Result<Got<T>, ConfigError> {
        let declared = self
            .declared
            .iter()
            .find(|d| d.key == key)
            .expect("a declared setting");
        let var = declared.env_var();
        let (parsed, at) = if let Some((flag, text)) = self.given.get(key) {
            (T::parse(text), format!(" ({flag})"))
        } else if let Some(text) = (self.env)(&var) {
            (T::parse(&text), format!(" (environment {var})"))
        } else if let Some(spanned) = file {
            (
                T::from_toml(spanned.get_ref()),
                self.origin.at(spanned.span()),
            )
        } else {
            let value = T::unset(declared.default);
            let at = String::new();
            return Ok(Got { key, value, at });
        };
        match parsed {
            Ok(value) => Ok(Got { key, value, at }),
            Err(message) => Err(super::value(key, &at, message)),
        }
    }
}

/// The settings file, for naming where a value stands in it.
pub(super) struct Origin<'a> {
    /// Its path, if there is one.
    pub file: Option<&'a Path>,
    /// Its text.
    pub source: &'a str,
}

impl Origin<'_> {
    /// ` (bridge.toml line 3)`.
    pub(super) fn at(&self, span: Range<usize>) -> String {
        let Some(file) = self.file else {
            return String::new();
        };
        let line = self.source[..span.start.min(self.source.len())]
            .matches('\n')
            .count()
            + 1;
        format!(" ({} line {line})", file.display())
    }
}
