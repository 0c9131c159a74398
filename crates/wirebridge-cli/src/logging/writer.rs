//! A log writer that does not write on the thread that logs.
//!
//! Each event is formatted into a buffer of its own and handed to a writer
//! thread, which writes whatever has queued up in one `write`: a worker
//! serving exchanges never waits on stderr, and under load many lines
//! leave in one system call. While lines keep coming, the writer looks for
//! them every [`LINGER`] instead of waiting to be woken, so that queueing
//! a line costs the worker no system call. The queue is bounded; when stderr cannot keep
//! up, lines are dropped rather than stalling the proxy, and the writer
//! says how many once it catches up.
//!
//! Kept rather than tracing-appender's non-blocking writer, whose writer
//! thread waits on its channel and so is woken by each line of a proxy
//! that logs one every few tens of microseconds. Measured in the same runs
//! (`log-writers`, in wirebridge-bench; five runs, medians of nine rounds
//! each; see docs/performance-journal.md), one exchange line every 50 µs to
//! `/dev/null`: this writer cost 0.88–1.09 µs of CPU a line, logging thread
//! and writer thread together (0.71–0.84 µs on the logging thread);
//! tracing-appender 2.3–15.6 µs (2.1–17.8 times as much; 1.3–7.0 µs on the
//! logging thread), and 1.2–16.1 µs over a `BufWriter`. Logged back to
//! back, where its writer thread is never idle, tracing-appender was
//! within the noise of this one (0.87–1.41 times).

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// Lines queued at most: a few MB of log, seconds of a busy proxy's.
const QUEUE: usize = 16 * 1024;

/// Bytes written at most in one `write`.
const BATCH: usize = 64 * 1024;

/// How long the writer waits between two writes while lines keep coming:
/// the most a line waits on a busy proxy.
const LINGER: Duration = Duration::from_millis(10);

/// Hands each formatted event to the writer thread.
#[derive(Clone)]
pub struct QueuedWriter {
    queue: SyncSender<Vec<u8>>,
    dropped: Arc<AtomicU64>,
}

/// Ends the writer thread once everything queued is written; dropped at
/// the end of `main`.
pub struct Flush {
    thread: Option<JoinHandle<()>>,
    stop: SyncSender<Vec<u8>>,
}

impl QueuedWriter {
    /// A writer thread writing to `out`, and what stops it.
    pub fn spawn<W: Write + Send + 'static>(out: W) -> (Self, Flush) {
        let (queue, lines) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&dropped);
        let thread = std::thread::Builder::new()
            .name("wirebridge-log".into())
            .spawn(move || write_lines(out, lines, counted))
            .ok();
        let stop = queue.clone();
        (Self { queue, dropped }, Flush { thread, stop })
    }
}

impl Drop for Flush {
    fn drop(&mut self) {
        // The subscriber keeps its sender for good, so the thread cannot
        // see the queue close: an empty line, after every other, stops it.
        if let Some(thread) = self.thread.take() {
            let _ = self.stop.send(Vec::new());
            let _ = thread.join();
        }
    }
}

fn write_lines<W: Write>(mut out: W, lines: Receiver<Vec<u8>>, dropped: Arc<AtomicU64>) {
    let mut batch = Vec::with_capacity(BATCH);
    // Idle: wait for a line (the thread that sends it wakes this one).
    while let Ok(first) = lines.recv() {
        let mut stop = first.is_empty();
        batch.extend_from_slice(&first);
        loop {
            stop |= drain(&lines, &mut batch);
            note_dropped(&dropped, &mut batch);
            let _ = out.write_all(&batch);
            let _ = out.flush();
            batch.clear();
            if stop {
                return;
            }
            // Busy: look again after a moment rather than wait. A thread
            // that queues a line then has no one to wake, and a busy
            // proxy's lines leave together.
            std::thread::sleep(LINGER);
            stop = drain(&lines, &mut batch);
            if batch.is_empty() && !stop {
                break;
            }
        }
    }
}

/// Moves what is queued into `batch`, up to [`BATCH`] bytes; whether the
/// stop line was among it.
fn drain(lines: &Receiver<Vec<u8>>, batch: &mut Vec<u8>) -> bool {
    let mut stop = false;
    while batch.len() < BATCH {
        match lines.try_recv() {
            Ok(line) => {
                stop |= line.is_empty();
                batch.extend_from_slice(&line);
            }
            Err(_) => break,
        }
    }
    stop
}

fn note_dropped(dropped: &AtomicU64, batch: &mut Vec<u8>) {
    let lost = dropped.swap(0, Ordering::Relaxed);
    if lost > 0 {
        let note = format!("wirebridge: {lost} log lines dropped: stderr could not keep up\n");
        batch.extend_from_slice(note.as_bytes());
    }
}

/// One event's text, queued when the event is done.
pub struct Line {
    text: Vec<u8>,
    writer: QueuedWriter,
}

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        match self.writer.queue.try_send(text) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.writer.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

impl<'a> MakeWriter<'a> for QueuedWriter {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line {
            text: Vec::with_capacity(512),
            writer: self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_arrive_whole_and_in_order() {
        let out = Shared::default();
        let (writer, flush) = QueuedWriter::spawn(out.clone());
        for i in 0..1000 {
            let mut line = writer.make_writer();
            write!(line, "line ").unwrap();
            writeln!(line, "{i}").unwrap();
        }
        drop(flush);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let expected: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        assert_eq!(text, expected);
    }

    #[test]
    fn lines_arrive_whether_the_writer_waits_or_looks() {
        let out = Shared::default();
        let (writer, flush) = QueuedWriter::spawn(out.clone());
        let send = |i: usize| {
            let mut line = writer.make_writer();
            writeln!(line, "line {i}").unwrap();
        };
        // Lines further apart than LINGER find the writer waiting; closer
        // ones find it looking; the last one is queued just before the
        // stop.
        let pauses = [30, 1, 2, 15, 0, 5, 40, 3, 0];
        for (i, pause) in pauses.iter().enumerate() {
            send(i);
            std::thread::sleep(Duration::from_millis(*pause));
        }
        let written_before_stop = out.0.lock().unwrap().len();
        send(pauses.len());
        drop(flush);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let expected: String = (0..=pauses.len()).map(|i| format!("line {i}\n")).collect();
        assert_eq!(text, expected);
        assert!(written_before_stop > 0, "lines are written before the end");
    }
}
