//! A stream's frames as the client sees them: the server-sent events its
//! body carries, and the time between one arriving and the next.
//!
//! An event arrives when the read that holds its end (the blank line)
//! returns. Events that end in the same read arrive together: the gap
//! before every one after the first is zero. So a proxy that sends several
//! events in one write is measured as the client sees it, not as if each
//! had come on its own.

use std::time::Instant;

/// Counts a stream's events, and the gaps between them, as its body's
/// reads arrive.
#[derive(Debug, Default)]
pub(super) struct FrameClock {
    /// Whether the last byte read, carriage returns aside, ended a line.
    line_ended: bool,
    /// When the last event arrived.
    last: Option<Instant>,
    /// Events seen.
    frames: usize,
}

impl FrameClock {
    /// Reads one body read that arrived `at`, pushing the gap before every
    /// event it ends, in microseconds, onto `gaps` (nothing for the
    /// stream's first event).
    pub(super) fn read(&mut self, data: &[u8], at: Instant, gaps: &mut Vec<f64>) {
        for &byte in data {
            match byte {
                b'\r' => {}
                b'\n' if self.line_ended => {
                    self.line_ended = false;
                    self.frames += 1;
                    if let Some(last) = self.last {
                        gaps.push((at - last).as_secs_f64() * 1e6);
                    }
                    self.last = Some(at);
                }
                b'\n' => self.line_ended = true,
                _ => self.line_ended = false,
            }
        }
    }

    /// Events seen.
    pub(super) fn frames(&self) -> usize {
        self.frames
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn events_split_across_reads_arrive_with_the_read_that_ends_them() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut clock = FrameClock::default();
        let mut gaps = Vec::new();
        clock.read(b"data: {\"a\":1}\n\ndata: {\"b\"", at(0), &mut gaps);
        clock.read(b":2}\n", at(3), &mut gaps);
        clock.read(b"\n", at(5), &mut gaps);
        clock.read(
            b"event: x\r\ndata: 3\r\n\r\ndata: 4\n\ndata: [DONE]\n\n",
            at(9),
            &mut gaps,
        );
        assert_eq!(clock.frames(), 5);
        assert_eq!(gaps, [5000.0, 4000.0, 0.0, 0.0]);
    }

    #[test]
    fn a_body_without_a_blank_line_has_no_frames() {
        let mut clock = FrameClock::default();
        let mut gaps = Vec::new();
        clock.read(
            b"{\"id\":\"resp_1\",\n\"output\":[]}\n",
            Instant::now(),
            &mut gaps,
        );
        assert_eq!(clock.frames(), 0);
        assert!(gaps.is_empty());
    }
}
