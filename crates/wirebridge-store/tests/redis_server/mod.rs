//! A real `redis-server` (or `valkey-server`, through `REDIS_SERVER`) for the
//! tests: started on a loopback port in a temporary directory, persisting
//! nothing, killed when dropped.

use std::fs::{self, File};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running server.
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// A server on a free port.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server on a free port, with `config` added to its command line
    /// (e.g. `["--maxmemory", "2mb"]`).
    pub fn start_with(config: &[&str]) -> Self {
        let mut last_error = String::new();
        for _ in 0..5 {
            match Self::try_start(free_port(), config) {
                Ok(server) => return server,
                // Another process may have taken the port meanwhile.
                Err(e) => last_error = e,
            }
        }
        panic!("redis-server did not start: {last_error}");
    }

    /// A server on `port`, e.g. in place of one that was killed.
    pub fn start_on(port: u16) -> Self {
        Self::try_start(port, &[])
            .unwrap_or_else(|e| panic!("redis-server did not start on port {port}: {e}"))
    }

    /// `redis://127.0.0.1:{port}/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server at once (SIGKILL) and waits until it is gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
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
        let status = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} failed");
    }

    fn try_start(port: u16, config: &[&str]) -> Result<Self, String> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let dir = temp_dir(port);
        let log = File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
        let spawned = Command::new(&binary)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .args(config)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                cannot_run(&binary, &e)
            }
        };
        let mut server = Self { child, port, dir };
        server.wait_until_ready()?;
        Ok(server)
    }

    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited ({status}): {}", self.log()));
            }
            if ping(self.port) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "it did not answer PING within 10 s: {}",
            self.log()
        ))
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
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

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

fn free_port() -> u16 {
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
