//! The LiteLLM proxy, as an optional route (`--litellm`): the client's
//! request translated by LiteLLM instead, in front of the same demo
//! upstream, its CPU time read the same way as the proxy's.
//!
//! LiteLLM is started once per direction, on a free loopback port, with a
//! configuration that sends every model to the demo the way the direction
//! needs: through its Responses-to-Chat bridge (`custom_openai/`, a
//! provider without a Responses API of its own) for Responses clients, and
//! through its Chat-to-Responses bridge (`openai/responses/`) for Chat
//! clients. It runs one worker process, reads no remote cost map, and logs
//! only errors, discarded.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;

use super::gateway::free_port;
use super::load::HttpClient;
use super::requests::Direction;

/// How long LiteLLM may take to start (it imports a great deal).
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// A LiteLLM proxy subprocess, killed when dropped.
pub(super) struct LiteLlm {
    child: Child,
    config: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub(super) url: String,
}

impl Drop for LiteLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

impl LiteLlm {
    /// Starts `executable` (the `litellm` command) translating `direction`
    /// in front of the demo at `demo_url`, and waits until it answers.
    pub(super) async fn start(
        executable: &Path,
        demo_url: &str,
        direction: Direction,
        client: &HttpClient,
    ) -> Result<Self, String> {
        let port = free_port()?;
        let config = std::env::temp_dir().join(format!(
            "wirebridge-bench-litellm-{}-{}.yaml",
            std::process::id(),
            direction.as_str()
        ));
        std::fs::write(&config, config_text(demo_url, direction))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let spawned = Command::new(executable)
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--num_workers", "1"])
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("LITELLM_LOG", "ERROR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_file(&config);
                return Err(format!(
                    "cannot start LiteLLM ({}): {e}; install it with \
                     `pip install 'litellm[proxy]'`, or pass --litellm PATH",
                    executable.display()
                ));
            }
        };
        let mut litellm = LiteLlm {
            child,
            config,
            url: format!("http://127.0.0.1:{port}"),
        };
        litellm.wait_until_live(client).await?;
        Ok(litellm)
    }

    /// The process id, whose CPU time is measured.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn wait_until_live(&mut self, client: &HttpClient) -> Result<(), String> {
        let started = Instant::now();
        let health: http::Uri = format!("{}/health/liveliness", self.url)
            .parse()
            .map_err(|e| format!("a bad LiteLLM address: {e}"))?;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("LiteLLM exited before answering ({status})"));
            }
            let request = http::Request::get(health.clone())
                .body(Full::new(Bytes::new()))
                .expect("a valid request");
            if let Ok(response) = client.request(request).await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "LiteLLM did not answer on {} within {} s",
                    self.url,
                    START_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Every model name to the demo, through the bridge `direction` needs.
fn config_text(demo_url: &str, direction: Direction) -> String {
    let model = match direction {
        // (Messages clients are not measured against LiteLLM: see
        // `Direction::has_peers`.)
        Direction::ResponsesToChat | Direction::MessagesToChat => "custom_openai/*",
        // (The stateful engine is not measured against LiteLLM.)
        Direction::ChatToResponses | Direction::ResponsesToResponses => "openai/responses/*",
    };
    format!(
        "model_list:\n\
         \x20 - model_name: \"*\"\n\
         \x20   litellm_params:\n\
         \x20     model: \"{model}\"\n\
         \x20     api_base: \"{demo_url}/v1\"\n\
         \x20     api_key: \"none\"\n\
         general_settings:\n\
         \x20 dangerously_permit_weak_or_unset_master_key: true\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_goes_through_its_bridge() {
        let r2c = config_text("http://127.0.0.1:9", Direction::ResponsesToChat);
        assert!(r2c.contains("model: \"custom_openai/*\""), "{r2c}");
        assert!(r2c.contains("api_base: \"http://127.0.0.1:9/v1\""), "{r2c}");
        let c2r = config_text("http://127.0.0.1:9", Direction::ChatToResponses);
        assert!(c2r.contains("model: \"openai/responses/*\""), "{c2r}");
    }
}
