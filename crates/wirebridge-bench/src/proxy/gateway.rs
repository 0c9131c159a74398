//! Any other gateway, as a route (`--gateway NAME=CMD`), and the minimal
//! hyper proxy every run measures (the `minimal` route).
//!
//! A gateway is a command run by `sh -c` (as `exec CMD`, so that the
//! process whose CPU time is read is the gateway itself, not a shell), once
//! per direction measured, with these words replaced first:
//!
//! - `{port}`: the loopback port it is to listen on;
//! - `{upstream}`: the demo upstream's base URL, `http://127.0.0.1:PORT/v1`;
//! - `{origin}`: the same without `/v1`;
//! - `{upstream_api}`: the API the demo speaks to it, `chat` or
//!   `responses` (the direction's upstream).
//!
//! It is live once its port takes a connection. A gateway is sent the
//! client's request (as `translated` is); the minimal proxy, which does not
//! translate, the upstream's (as `passthrough` is). Only the process started
//! is measured: a gateway that forks workers needs a command that does not.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::child;
use super::requests::Direction;

/// How long a gateway may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A gateway named on the command line.
#[derive(Debug, Clone)]
pub struct GatewaySpec {
    /// Its route's name.
    pub name: &'static str,
    /// The command, with its `{…}` words.
    pub command: String,
}

impl GatewaySpec {
    /// Reads `NAME=CMD`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, command) = text
            .split_once('=')
            .filter(|(name, command)| !name.is_empty() && !command.trim().is_empty())
            .ok_or_else(|| format!("--gateway takes NAME=COMMAND, not {text:?}"))?;
        if RESERVED.contains(&name) {
            return Err(format!("--gateway: {name} is a route of the bench's own"));
        }
        Ok(GatewaySpec {
            name: Box::leak(name.to_owned().into_boxed_str()),
            command: command.to_owned(),
        })
    }

    /// The minimal hyper proxy at `binary`.
    pub(super) fn minimal(binary: &Path) -> Self {
        GatewaySpec {
            name: "minimal",
            command: format!("'{}' 127.0.0.1:{{port}} {{origin}}", binary.display()),
        }
    }
}

/// Route names a gateway cannot take.
const RESERVED: [&str; 8] = [
    "direct",
    "upstream",
    "passthrough",
    "translated",
    "minimal",
    "litellm",
    "stored",
    "store_none",
];

/// A gateway subprocess, killed when dropped.
pub(super) struct Gateway {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(super) url: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Gateway {
    /// Starts `spec` in front of the demo at `demo_url` for `direction`,
    /// and waits until its port takes a connection.
    pub(super) async fn start(
        spec: &GatewaySpec,
        demo_url: &str,
        direction: Direction,
        pin: Option<&str>,
    ) -> Result<Self, String> {
        let port = free_port()?;
        let command = spec
            .command
            .replace("{port}", &port.to_string())
            .replace("{upstream}", &format!("{demo_url}/v1"))
            .replace("{origin}", demo_url)
            .replace("{upstream_api}", direction.upstream_api());
        let child = child::command("sh", pin)
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the gateway {}: {e}", spec.name))?;
        let mut gateway = Gateway {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = gateway.child.try_wait() {
                return Err(format!(
                    "the gateway {} exited before listening ({status}): {command}",
                    spec.name
                ));
            }
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Ok(gateway);
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "the gateway {} did not listen on port {port} within {} s: {command}",
                    spec.name,
                    START_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The process id, whose CPU time is measured.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A loopback port nothing listens on now.
pub(super) fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_is_named_and_its_command_kept_whole() {
        let spec = GatewaySpec::parse("busbar=busbar --port {port} --to {upstream}=x").unwrap();
        assert_eq!(spec.name, "busbar");
        assert_eq!(spec.command, "busbar --port {port} --to {upstream}=x");
        assert!(GatewaySpec::parse("busbar").is_err());
        assert!(GatewaySpec::parse("=cmd").is_err());
        assert!(GatewaySpec::parse("x= ").is_err());
        assert!(GatewaySpec::parse("translated=cmd").is_err());
        assert!(GatewaySpec::parse("store_none=cmd").is_err());
    }
}
