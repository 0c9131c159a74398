//! `wirebridge`: a proxy that lets Responses API clients use Chat Completions
//! backends, and Chat Completions clients use Responses backends.

#![forbid(unsafe_code)]

/// mimalloc rather than the system's allocator: see the `mimalloc` feature
/// in Cargo.toml for what it was measured to save.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod admin;
mod config;
mod convert_cmd;
mod demo;
mod idle_body;
mod logging;
mod metrics;
mod own_wakes;
mod readiness;
mod serve;
mod server;
mod signal;
mod store;
mod upstream;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Translates between the OpenAI Chat Completions and Responses APIs.
#[derive(Debug, Parser)]
#[command(name = "wirebridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the proxy. Both /v1/responses and /v1/chat/completions are
    /// served: the API the upstream speaks passes through, the other is
    /// translated. Each setting is taken from its flag, else its WIREBRIDGE_*
    /// environment variable, else the TOML file (--config), else its default.
    Serve(Box<config::ServeFlags>),
    /// Run the deterministic demo upstream on its own.
    Demo {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8788")]
        listen: SocketAddr,
        /// The API(s) it speaks: chat, responses, both (chat and responses),
        /// messages (Anthropic's), or all.
        #[arg(long, default_value = "both")]
        api: wirebridge_demo::Api,
        /// Answer every request with this recorded stream.
        #[arg(long, value_name = "FILE")]
        replay: Option<PathBuf>,
    },
    /// Translate a captured body or stream offline. Losses go to stderr.
    Convert {
        /// What the input is.
        #[arg(long, value_enum)]
        from: convert_cmd::Kind,
        /// What to produce [default: the same kind in the other API].
        #[arg(long, value_enum)]
        to: Option<convert_cmd::Kind>,
        /// The input file, or - for stdin.
        input: Option<PathBuf>,
    },
    /// Print a new random seal key (for `seal_key` / WIREBRIDGE_SEAL_KEY;
    /// share it between replicas).
    Keygen,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(flags) => serve(*flags),
        Command::Keygen => {
            println!(
                "{}",
                wirebridge_convert::seal::SealKey::generate().to_base64()
            );
            ExitCode::SUCCESS
        }
        Command::Demo {
            listen,
            api,
            replay,
        } => {
            let flush = logging::init(config::LogFormat::Pretty);
            let result = runtime().block_on(demo::run(listen, api, replay));
            // What was logged comes before the failure's message.
            drop(flush);
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(1, &format!("demo upstream: {e}")),
            }
        }
        Command::Convert { from, to, input } => {
            let result = convert_cmd::read_input(&input).and_then(|bytes| {
                convert_cmd::convert(from, to.unwrap_or(from.counterpart()), &bytes)
            });
            match result {
                Ok(converted) => {
                    for loss in &converted.losses {
                        eprintln!("dropped {loss}");
                    }
                    let mut stdout = std::io::stdout().lock();
                    let _ = stdout.write_all(&converted.output);
                    if !converted.output.ends_with(b"\n") {
                        let _ = stdout.write_all(b"\n");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => fail(1, &e.to_string()),
            }
        }
    }
}

fn serve(flags: config::ServeFlags) -> ExitCode {
    let config = match config::Config::load(&flags, &|name| std::env::var(name).ok()) {
        Ok(config) => config,
        Err(e) => return fail(2, &e.to_string()),
    };
    let flush = logging::init(config.log_format);
    let result = serve::run(config);
    drop(flush);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(1, &e.to_string()),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the runtime starts")
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("wirebridge: {message}");
    ExitCode::from(code)
}
