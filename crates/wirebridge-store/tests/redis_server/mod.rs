//! A real `redis-server` (or `valkey-server`, through `REDIS_SERVER`) for the
//! tests: started on a loopback port in a temporary directory, persisting
//! nothing, killed when dropped; over TLS with certificates made at test
//! time, or as the nodes of a Redis Cluster.

#![allow(dead_code)] // Each test binary uses its own part.

pub mod certs;
pub mod cluster;

use std::fs::{self, File};
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use certs::Certificates;

/// A running server.
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    tls: bool,
    /// For a server that lives as long as the test process: the pipe whose
    /// closing (when the process exits, however it exits) stops it.
    lifeline: Option<ChildStdin>,
}

/// How a server is started.
#[derive(Clone, Copy)]
struct Options<'a> {
    config: &'a [&'a str],
    tls: Option<&'a Certificates>,
    for_the_process: bool,
}

impl RedisServer {
    /// A server on a free port.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server on a free port, with `config` added to its command line
    /// (e.g. `["--maxmemory", "2mb"]`).
    pub fn start_with(config: &[&str]) -> Self {
        Self::start_free(Options {
            config,
            tls: None,
            for_the_process: false,
        })
    }

    /// A server that accepts only TLS, with the server certificate of
    /// `certificates`, asking clients for a certificate only when `config`
    /// says so (`--tls-auth-clients yes`).
    pub fn start_tls(certificates: &Certificates, config: &[&str]) -> Self {
        Self::start_free(Options {
            config,
            tls: Some(certificates),
            for_the_process: false,
        })
    }

    /// A server that lives until the test process exits, not until it is
    /// dropped: for one shared by every test of a binary.
    pub fn start_for_the_process(config: &[&str]) -> Self {
        Self::start_free(Options {
            config,
            tls: None,
            for_the_process: true,
        })
    }

    fn start_free(options: Options<'_>) -> Self {
        let mut last_error = String::new();
        for _ in 0..5 {
            match Self::try_start(free_port(), options) {
                Ok(server) => return server,
                // Another process may have taken the port meanwhile.
                Err(e) => last_error = e,
            }
        }
        panic!("redis-server did not start: {last_error}");
    }

    /// A server on `port`, e.g. in place of one that was killed.
    pub fn start_on(port: u16) -> Self {
        Self::start_on_with(port, &[])
    }

    /// A server on `port`, with `config` added to its command line.
    pub fn start_on_with(port: u16, config: &[&str]) -> Self {
        let options = Options {
            config,
            tls: None,
            for_the_process: false,
        };
        Self::try_start(port, options)
            .unwrap_or_else(|e| panic!("redis-server did not start on port {port}: {e}"))
    }

    /// `redis://127.0.0.1:{port}/`, or `rediss://…` over TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// What the server has logged.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server at once (SIGKILL) and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(lifeline) = self.lifeline.take() {
            // The shell in between kills the server when its input closes.
            drop(lifeline);
        } else {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Undoes [`pause`](Self::pause).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        assert!(self.lifeline.is_none(), "the shell in between would get it");
        let status = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} failed");
    }

    fn try_start(port: u16, options: Options<'_>) -> Result<Self, String> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let dir = temp_dir(port);
        let log = File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
        let mut command = if options.for_the_process {
            // `sh` starts the server, then waits for its own input to close:
            // the test process holds the other end until it exits.
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(
                    r#"server="$1"; shift; "$server" "$@" </dev/null & pid=$!
cat >/dev/null; kill -9 "$pid"; wait "$pid"; rm -rf "$PWD""#,
                )
                .arg("sh")
                .arg(&binary)
                .stdin(Stdio::piped());
            command
        } else {
            let mut command = Command::new(&binary);
            command.stdin(Stdio::null());
            command
        };
        command.args(listen_args(port, options.tls));
        command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(options.config)
            .current_dir(&dir)
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                cannot_run(&binary, &e)
            }
        };
        let lifeline = child.stdin.take();
        let mut server = Self {
            child,
            port,
            dir,
            tls: options.tls.is_some(),
            lifeline,
        };
        server.wait_until_ready()?;
        Ok(server)
    }

    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited ({status}): {}", self.log()));
            }
            let ready = if self.tls {
                self.log().contains("Ready to accept connections")
            } else {
                ping(self.port)
            };
            if ready {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "it did not answer PING within 10 s: {}",
            self.log()
        ))
    }
}

/// The port arguments: plain on `port`, or TLS only on `port`.
fn listen_args(port: u16, tls: Option<&Certificates>) -> Vec<String> {
    let port = port.to_string();
    let Some(certificates) = tls else {
        return vec!["--port".into(), port];
    };
    let path = |file: &str| certificates.path(file).display().to_string();
    vec![
        "--port".into(),
        "0".into(),
        "--tls-port".into(),
        port,
        "--tls-cert-file".into(),
        path("server.crt"),
        "--tls-key-file".into(),
        path("server.key"),
        "--tls-ca-cert-file".into(),
        path("ca.crt"),
        "--tls-auth-clients".into(),
        "no".into(),
    ]
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A new empty directory, removed when the value is dropped: e.g. for
/// certificates.
pub fn scratch_dir() -> RemoveOnDrop {
    RemoveOnDrop(temp_dir(0))
}

/// Removes `dir` when dropped.
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

impl AsRef<Path> for RemoveOnDrop {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

fn cannot_run(binary: &str, e: &std::io::Error) -> ! {
    if e.kind() == ErrorKind::NotFound {
        panic!(
            "`{binary}` is not installed, and the Redis store tests need a real server: \
             install it with `apt-get install -y redis-server` (or point REDIS_SERVER at a \
             redis-server or valkey-server binary)"
        );
    }
    panic!("cannot run `{binary}`: {e}");
}

/// Whether the server answers: `PONG`, or that it wants a password first.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = String::new();
    stream.write_all(b"PING\r\n").is_ok()
        && BufReader::new(stream).read_line(&mut reply).is_ok()
        && (reply == "+PONG\r\n" || reply.starts_with("-NOAUTH"))
}

/// A loopback port no one listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

fn temp_dir(port: u16) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "wirebridge-store-redis-{}-{port}-{n}",
        std::process::id()
    ));
    fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

/// The calls of `command` the server has counted, from `INFO commandstats`.
pub async fn calls(connection: &mut redis::aio::MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// A plain connection to `server`, to look at what a store wrote.
pub async fn raw(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(server.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

/// Sets `field` of hash `key` behind the store's back.
pub async fn hset(
    connection: &mut redis::aio::MultiplexedConnection,
    key: &str,
    field: &str,
    value: &str,
) {
    let _: () = redis::cmd("HSET")
        .arg(key)
        .arg(field)
        .arg(value)
        .query_async(connection)
        .await
        .unwrap();
}
