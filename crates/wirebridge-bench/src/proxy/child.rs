//! The proxy under test: `wirebridge serve` as a subprocess, and the CPU
//! time it spends.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The proxy subprocess, killed when dropped.
pub(super) struct Proxy {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(super) url: String,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU `--pin` runs the proxies (and the gateways) on.
pub(super) const PROXY_CPU: &str = "1";

/// The CPU `--pin` runs the bench itself on: its load and the demo.
pub(super) const BENCH_CPU: &str = "0";

/// A command running `program`, under `taskset -c CPUS` when `pin` names
/// CPUs. `taskset` executes the program in its own process, so the child's
/// id is the program's, whose CPU time is read.
pub(super) fn command(program: impl AsRef<OsStr>, pin: Option<&str>) -> Command {
    match pin {
        Some(cpus) => {
            let mut command = Command::new("taskset");
            command.args(["-c", cpus]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// Pins this process, and the threads it starts from now on, to `cpus`
/// (`taskset -c -p CPUS PID`): called before the runtime starts its
/// threads, which inherit the main thread's affinity.
pub(super) fn pin_self(cpus: &str) -> Result<(), String> {
    let status = Command::new("taskset")
        .args(["-c", "-p", cpus, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("--pin needs `taskset` (util-linux): {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("`taskset -c -p {cpus}` failed ({status})")),
    }
}

/// How a proxy is started.
pub(super) struct ProxySpec<'a> {
    pub(super) upstream_api: &'a str,
    pub(super) profile: Option<&'a str>,
    /// Its `RUST_LOG`.
    pub(super) log: &'a str,
    /// More arguments for `serve`.
    pub(super) extra: &'a [String],
    /// The CPUs it runs on (`--pin`).
    pub(super) pin: Option<&'a str>,
}

impl Proxy {
    /// Starts `binary serve --upstream-api API` in front of the demo, with
    /// `extra` arguments, and waits for its address. Its settings are
    /// otherwise the defaults (a memory store), logs filtered by `log` and
    /// discarded; no `WIREBRIDGE_*` variable of this process reaches it.
    pub(super) fn start(binary: &Path, demo_url: &str, spec: &ProxySpec) -> Result<Self, String> {
        let (upstream_api, profile, log, extra) =
            (spec.upstream_api, spec.profile, spec.log, spec.extra);
        let mut command = command(binary, spec.pin);
        command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--upstream-api",
                upstream_api,
            ])
            .arg("--upstream")
            .arg(format!("{demo_url}/v1"));
        if let Some(profile) = profile {
            command.args(["--profile", profile]);
        }
        command
            .args(extra)
            .env("RUST_LOG", log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("WIREBRIDGE_") {
                command.env_remove(key);
            }
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the proxy {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let mut proxy = Proxy {
            child,
            url: String::new(),
        };
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("cannot read the proxy's output: {e}"))?;
            if let Some(url) = line.strip_prefix("listening on ") {
                proxy.url = url.trim().to_owned();
                return Ok(proxy);
            }
        }
        Err("the proxy exited before listening".to_owned())
    }

    /// The process id, whose CPU time [`CpuClock::process_time`] reads.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Context switches the threads of process `pid` have made so far, voluntary
/// (a thread waiting for work) and not (one preempted), summed over
/// `/proc/<pid>/task/*/status`. Threads that have exited are not
/// counted; a proxy's threads live as long as it does.
pub(super) fn process_context_switches(pid: u32) -> Result<u64, String> {
    let dir = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
    let mut switches = 0;
    for task in tasks.flatten() {
        // A thread that exits meanwhile has no status left to read.
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        switches += context_switches(&status);
    }
    Ok(switches)
}

/// `voluntary_ctxt_switches + nonvoluntary_ctxt_switches` of a thread's
/// `status` file.
fn context_switches(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(
                key,
                "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches"
            )
            .then(|| value.trim().parse::<u64>().ok())?
        })
        .sum()
}

/// Reads a process's CPU time from `/proc/<pid>/stat`.
///
/// Why that file: its `utime` and `stime` count every thread of the
/// process, those that have exited too, whereas `/proc/<pid>/schedstat` is
/// the main thread's alone and summing `task/*/schedstat` misses threads
/// that exit between two readings (tokio's blocking threads do). Its unit
/// is the clock tick, `sysconf(_SC_CLK_TCK)`, which `getconf CLK_TCK`
/// prints; it is read once, so the conversion is exact. Its resolution is
/// one tick (10 ms at 100 ticks a second): each of `utime` and `stime` is
/// cut to whole ticks, so a difference of two readings is off by less than
/// two ticks, 20 ms, 1% of a proxy busy for two seconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuClock {
    /// Clock ticks per second.
    pub(super) ticks_per_second: u64,
}

impl CpuClock {
    /// The system's clock tick, from `getconf CLK_TCK`.
    pub(super) fn from_system() -> Result<Self, String> {
        let output = Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .map_err(|e| format!("cannot run `getconf CLK_TCK` for the clock tick: {e}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        match text.trim().parse::<u64>() {
            Ok(ticks) if output.status.success() && ticks > 0 => Ok(Self {
                ticks_per_second: ticks,
            }),
            _ => Err(format!(
                "`getconf CLK_TCK` printed '{}', not a clock tick",
                text.trim()
            )),
        }
    }

    /// CPU time process `pid` has used so far, user and system, all its
    /// threads.
    pub(super) fn process_time(&self, pid: u32) -> Result<Duration, String> {
        let path = format!("/proc/{pid}/stat");
        let stat = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {path} (--proxy measures CPU on Linux): {e}"))?;
        self.cpu_time(&stat)
    }

    /// `utime + stime` of a `/proc/<pid>/stat` line.
    fn cpu_time(&self, stat: &str) -> Result<Duration, String> {
        // The second field, the command name in parentheses, may hold
        // spaces and parentheses itself: fields are counted after the last
        // ')'. The fields after it start with the third, `state`; `utime`
        // and `stime` are the 14th and 15th.
        let rest = stat
            .rfind(')')
            .map(|at| &stat[at + 1..])
            .ok_or_else(|| format!("an unexpected stat line: {stat}"))?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| -> Result<u64, String> {
            fields
                .get(n - 3)
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| format!("field {n} of the stat line is not a number: {stat}"))
        };
        let ticks = field(14)? + field(15)?;
        Ok(Duration::from_nanos(
            ticks * 1_000_000_000 / self.ticks_per_second,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime_in_ticks() {
        let clock = CpuClock {
            ticks_per_second: 100,
        };
        let stat = "4242 (wire bridge (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    250 31 0 0 20 0 3 0 77 100000 500 18446744073709551615";
        assert_eq!(clock.cpu_time(stat).unwrap(), Duration::from_millis(2_810));
    }

    #[test]
    fn context_switches_are_both_kinds_summed() {
        let status = "Name:\twirebridge\nThreads:\t4\nvoluntary_ctxt_switches:\t120\n\
                      nonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(context_switches(status), 127);
        assert_eq!(context_switches("Name:\tx\n"), 0);
    }
}
