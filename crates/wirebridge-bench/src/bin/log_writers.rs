//! `log-writers`: what writing the exchange log line costs through the
//! proxy's own queued writer (`wirebridge-cli`'s `logging/writer.rs`, the
//! same source file) and through tracing-appender's non-blocking writer,
//! in the same run, rounds alternating.
//!
//! Both sit under the subscriber the proxy sets up off a terminal (the
//! plain fields of `logging/fields.rs`, no colours) and write to
//! `/dev/null`, so each write is a real system call that costs nothing
//! beyond itself. Each round logs N exchange lines, either back to back
//! (`burst`) or one every `--pace-us` microseconds (`paced`: a busy proxy's
//! rate, where the writer thread often has nothing to do between lines).
//! Per line, it reports the time of the thread that logs (its CPU time
//! over the burst; in paced mode, where it spins between lines, the wall
//! time spent in the logging calls), the CPU time of the writer thread, and
//! their sum; each the median over the rounds. CPU times are read from
//! `/proc/thread-self/schedstat` and `/proc/self/task/*/schedstat`
//! (nanoseconds), so the tool runs on Linux only.

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use tracing_subscriber::fmt::MakeWriter;

#[allow(dead_code)]
#[path = "../../../wirebridge-cli/src/logging/writer.rs"]
mod writer;

#[allow(dead_code)]
#[path = "../../../wirebridge-cli/src/logging/fields.rs"]
mod fields;

/// Times the exchange log line through the proxy's queued writer and
/// through tracing-appender's non-blocking writer.
#[derive(Debug, Parser)]
#[command(name = "log-writers")]
struct Flags {
    /// Lines per round, back to back: fewer than the queued writer holds
    /// (16,384), which it would otherwise drop.
    #[arg(long, default_value_t = 10_000)]
    burst_lines: u64,
    /// Lines per round, paced.
    #[arg(long, default_value_t = 20_000)]
    paced_lines: u64,
    /// Microseconds between two paced lines.
    #[arg(long, default_value_t = 50)]
    pace_us: u64,
    /// Rounds of each writer in each mode.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
}

/// The writers compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// `wirebridge-cli`'s queued writer.
    Queued,
    /// `tracing_appender::non_blocking` over the file.
    Appender,
    /// The same over a `BufWriter` of the file: its worker then writes
    /// what it drained in one call, as the queued writer does.
    AppenderBuffered,
}

impl Writer {
    const ALL: [Writer; 3] = [Writer::Queued, Writer::Appender, Writer::AppenderBuffered];

    fn name(self) -> &'static str {
        match self {
            Writer::Queued => "queued (hand-written)",
            Writer::Appender => "tracing-appender",
            Writer::AppenderBuffered => "tracing-appender + BufWriter",
        }
    }
}

/// `/dev/null`, counting the lines written to it.
struct Sink {
    file: File,
    lines: Arc<AtomicU64>,
}

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.file.write(bytes)?;
        let lines = bytes[..n].iter().filter(|&&b| b == b'\n').count();
        self.lines.fetch_add(lines as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// CPU nanoseconds of the calling thread.
fn thread_cpu() -> u64 {
    schedstat("/proc/thread-self/schedstat")
}

/// CPU nanoseconds of every thread of the process.
fn process_cpu() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(Result::ok)
        .map(|task| schedstat(&task.path().join("schedstat").to_string_lossy()))
        .sum()
}

fn schedstat(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The line `wirebridge_cli::logging::log_exchange` writes, with the
/// values of a translated 3 KB request.
fn log_exchange(i: u64) {
    tracing::info!(
        method = "POST",
        transport = "http",
        path = %"/v1/responses",
        direction = "responses_to_chat",
        model = %"qwen3-coder",
        stream = true,
        status = 200u16,
        outcome = "completed",
        input_tokens = 2_913u64 + (i & 7),
        output_tokens = 41u64,
        tool_calls = 1usize,
        ttfb_us = Some(812u64),
        total_us = 1_530u64,
        translation_us = 21u64,
        dropped = %"",
        trace_id = Some(tracing::field::display("4bf92f3577b34da6a3ce929d0e0e4736")),
        "exchange"
    );
}

/// One round's figures, per line.
#[derive(Debug, Clone, Copy)]
struct Round {
    caller_ns: f64,
    writer_ns: f64,
    dropped: u64,
}

fn round(writer: Writer, lines: u64, pace: Option<Duration>) -> Round {
    let written = Arc::new(AtomicU64::new(0));
    let sink = Sink {
        file: File::options()
            .write(true)
            .open("/dev/null")
            .expect("/dev/null"),
        lines: Arc::clone(&written),
    };
    match writer {
        Writer::Queued => {
            let (make, flush) = writer::QueuedWriter::spawn(sink);
            let r = measure(make, lines, pace, &written);
            drop(flush);
            r
        }
        Writer::Appender => {
            let (make, guard) = tracing_appender::non_blocking(sink);
            let r = measure(make, lines, pace, &written);
            drop(guard);
            r
        }
        Writer::AppenderBuffered => {
            let (make, guard) = tracing_appender::non_blocking(io::BufWriter::new(sink));
            let r = measure(make, lines, pace, &written);
            drop(guard);
            r
        }
    }
}

fn measure<W>(make: W, lines: u64, pace: Option<Duration>, written: &AtomicU64) -> Round
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    // As `wirebridge_cli::logging::init` sets it up off a terminal.
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .fmt_fields(fields::PlainFields)
        .with_writer(make)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        // The writer thread is up and idle.
        std::thread::sleep(Duration::from_millis(20));
        let process_before = process_cpu();
        let thread_before = thread_cpu();
        let mut caller = 0u64;
        match pace {
            None => {
                for i in 0..lines {
                    log_exchange(i);
                }
                caller = thread_cpu() - thread_before;
            }
            Some(pace) => {
                // Wall time in each call: reading the thread's CPU time
                // around each would cost more than the call.
                let start = Instant::now();
                for i in 0..lines {
                    let before = Instant::now();
                    log_exchange(i);
                    caller += u64::try_from(before.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    let due = start + pace * u32::try_from(i + 1).unwrap_or(u32::MAX);
                    while Instant::now() < due {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        // Every line written, or none for a while (both writers drop lines
        // when their queue is full): the writer's work is done.
        let mut seen = written.load(Ordering::Relaxed);
        let mut still = Instant::now();
        while seen < lines && still.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(1));
            let now = written.load(Ordering::Relaxed);
            if now != seen {
                seen = now;
                still = Instant::now();
            }
        }
        let own = thread_cpu().saturating_sub(thread_before);
        let others = process_cpu()
            .saturating_sub(process_before)
            .saturating_sub(own);
        Round {
            caller_ns: caller as f64 / lines as f64,
            writer_ns: others as f64 / lines as f64,
            // The queued writer's note that it dropped lines is a line.
            dropped: lines.saturating_sub(seen.min(lines)),
        }
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let flags = Flags::parse();
    let modes = [
        ("burst", flags.burst_lines, None),
        (
            "paced",
            flags.paced_lines,
            Some(Duration::from_micros(flags.pace_us)),
        ),
    ];
    println!(
        "| mode | writer | caller ns/line | writer thread ns/line | total ns/line [min, max] | total ÷ queued | lines dropped |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (mode, lines, pace) in modes {
        let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); Writer::ALL.len()];
        // A round of each before the measured ones: threads, caches, page
        // faults.
        for writer in Writer::ALL {
            round(writer, lines / 10, pace);
        }
        for _ in 0..flags.rounds {
            for (i, writer) in Writer::ALL.into_iter().enumerate() {
                rounds[i].push(round(writer, lines, pace));
            }
        }
        let totals: Vec<f64> = rounds
            .iter()
            .map(|r| median(r.iter().map(|r| r.caller_ns + r.writer_ns).collect()))
            .collect();
        for (i, writer) in Writer::ALL.into_iter().enumerate() {
            let caller = median(rounds[i].iter().map(|r| r.caller_ns).collect());
            let thread = median(rounds[i].iter().map(|r| r.writer_ns).collect());
            let dropped: u64 = rounds[i].iter().map(|r| r.dropped).sum();
            let each = rounds[i].iter().map(|r| r.caller_ns + r.writer_ns);
            let min = each.clone().fold(f64::INFINITY, f64::min);
            let max = each.fold(0.0, f64::max);
            println!(
                "| {mode} | {} | {caller:.0} | {thread:.0} | {:.0} [{min:.0}, {max:.0}] | {:.2} | {dropped} |",
                writer.name(),
                totals[i],
                totals[i] / totals[0]
            );
        }
    }
}
