//! A three-node Redis Cluster on loopback (no replicas), made the way an
//! operator makes one: three `redis-server --cluster-enabled yes`, then
//! `redis-cli --cluster create` (`REDIS_CLI` may name `valkey-cli`).

use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{free_port, RedisServer};

/// The nodes of a running cluster, every slot assigned.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// A new cluster, stopped when dropped.
    pub fn start() -> Self {
        Self::start_nodes(None)
    }

    /// A new cluster on these ports, stopped when dropped.
    pub fn start_on(ports: [u16; 3]) -> Self {
        Self::start_nodes(Some(ports))
    }

    /// One cluster for every test of this process, stopped when it exits:
    /// making one takes redis-cli a few seconds.
    pub fn shared() -> &'static RedisCluster {
        static SHARED: OnceLock<RedisCluster> = OnceLock::new();
        SHARED.get_or_init(|| {
            let nodes = (0..3)
                .map(|_| RedisServer::start_for_the_process(&node_config(&free_port().to_string())))
                .collect();
            Self::create(nodes)
        })
    }

    fn start_nodes(ports: Option<[u16; 3]>) -> Self {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|n| {
                // The cluster bus gets a free port of its own: the default,
                // the port + 10000, may be taken or past 65535.
                let bus = free_port().to_string();
                match ports {
                    Some(ports) => RedisServer::start_on_with(ports[n], &node_config(&bus)),
                    None => RedisServer::start_with(&node_config(&bus)),
                }
            })
            .collect();
        Self::create(nodes)
    }

    /// `redis-cli --cluster create` of `nodes`, then waits until every node
    /// sees the cluster as whole.
    fn create(nodes: Vec<RedisServer>) -> Self {
        let cluster = Self { nodes };
        cluster.join();
        cluster
    }

    fn join(&self) {
        let cli = std::env::var("REDIS_CLI").unwrap_or_else(|_| "redis-cli".to_owned());
        let output = Command::new(&cli)
            .arg("--cluster")
            .arg("create")
            .args(self.ports().iter().map(|port| format!("127.0.0.1:{port}")))
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run `{cli}` ({e}): install it with `apt-get install -y redis-tools`")
            });
        assert!(
            output.status.success(),
            "{cli} --cluster create failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        for port in self.ports() {
            loop {
                let info = Command::new(&cli)
                    .args(["-p", &port.to_string(), "cluster", "info"])
                    .output()
                    .expect("run redis-cli");
                if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "node {port} does not see the cluster as ok"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// The nodes' ports.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// `redis+cluster://` with every node as a seed.
    pub fn url(&self) -> String {
        let seeds: Vec<String> = self
            .ports()
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect();
        format!("redis+cluster://{}", seeds.join(","))
    }
}

/// A cluster node's settings, its bus on port `bus`.
fn node_config(bus: &str) -> [&str; 6] {
    [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-port",
        bus,
    ]
}
