//! The flags of `wirebridge serve`, built from the settings' declarations.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Arg, ArgMatches, Command};

use super::declare::Declared;
use super::settings::Settings;

/// The flags of `wirebridge serve`: the text of each setting given on the
/// command line, read when the settings are.
#[derive(Debug, Default, Clone)]
pub struct ServeFlags {
    /// `--config`.
    pub(super) config: Option<PathBuf>,
    /// By setting: the flag as written, and its text.
    given: BTreeMap<&'static str, (String, String)>,
}

impl ServeFlags {
    /// By setting: the flag as written, and its text.
    pub(super) fn given(&self) -> &BTreeMap<&'static str, (String, String)> {
        &self.given
    }
}

impl clap::Args for ServeFlags {
    fn augment_args(cmd: Command) -> Command {
        let config = Arg::new("config")
            .long("config")
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .help("Settings file (TOML) [env: WIREBRIDGE_CONFIG]");
        let declared = Settings::DECLARED.iter().filter(|d| d.flag);
        cmd.arg(config).args(declared.flat_map(Declared::args))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ServeFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        if let Some(path) = matches.get_one::<PathBuf>("config") {
            self.config = Some(path.clone());
        }
        for declared in Settings::DECLARED.iter().filter(|d| d.flag) {
            if let Some(given) = declared.given(matches) {
                self.given.insert(declared.key, given);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
impl ServeFlags {
    /// The flags of `wirebridge serve ARGS`.
    pub(crate) fn parse(args: &[&str]) -> Self {
        use clap::{Args, FromArgMatches};
        let command = Self::augment_args(Command::new("serve"));
        let matches = command
            .try_get_matches_from(std::iter::once("serve").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        Self::from_arg_matches(&matches).unwrap()
    }
}
