//! SSE frames of a scripted stream, and where a scripted fault cuts them.

use bytes::Bytes;

/// How many content deltas a failing stream sends before it fails.
pub(crate) const FAULT_AFTER_DELTAS: usize = 3;

/// The role of a frame in its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Opens the stream (Chat role chunk; Responses created / in_progress).
    Head,
    /// Carries a content fragment (text, reasoning, arguments).
    Delta,
    /// Anything else (item and part boundaries, finish, usage, terminal events).
    Other,
}

/// One encoded SSE frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Its role.
    pub kind: Kind,
    /// The encoded bytes, blank line included.
    pub bytes: Bytes,
}

impl Frame {
    /// `data: JSON\n\n` (Chat).
    pub(crate) fn data(kind: Kind, json: &str) -> Self {
        Frame {
            kind,
            bytes: Bytes::from(format!("data: {json}\n\n")),
        }
    }

    /// `event: NAME\ndata: JSON\n\n` (Responses).
    pub(crate) fn event(kind: Kind, name: &str, json: &str) -> Self {
        Frame {
            kind,
            bytes: Bytes::from(format!("event: {name}\ndata: {json}\n\n")),
        }
    }

    /// `data: [DONE]\n\n`.
    pub(crate) fn done() -> Self {
        Frame {
            kind: Kind::Other,
            bytes: Bytes::from_static(b"data: [DONE]\n\n"),
        }
    }
}

/// How many leading frames a failing stream keeps: up to and including its
/// [`FAULT_AFTER_DELTAS`]-th delta, or its last delta when it has fewer, or
/// its head when it has none.
pub(crate) fn fault_point(frames: &[Frame]) -> usize {
    let deltas: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == Kind::Delta)
        .map(|(i, _)| i)
        .collect();
    match deltas.get(FAULT_AFTER_DELTAS - 1).or(deltas.last()) {
        Some(&i) => i + 1,
        None => frames.iter().take_while(|f| f.kind == Kind::Head).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(kinds: &[Kind]) -> Vec<Frame> {
        kinds.iter().map(|&k| Frame::data(k, "{}")).collect()
    }

    #[test]
    fn cuts_after_the_third_delta() {
        use Kind::*;
        let f = frames(&[Head, Other, Delta, Delta, Other, Delta, Delta, Other]);
        assert_eq!(fault_point(&f), 6);
        assert_eq!(fault_point(&frames(&[Head, Delta, Other])), 2);
        assert_eq!(fault_point(&frames(&[Head, Head, Other])), 2);
    }

    #[test]
    fn encodings() {
        assert_eq!(&Frame::data(Kind::Head, "{}").bytes[..], b"data: {}\n\n");
        assert_eq!(
            &Frame::event(Kind::Other, "e", "{}").bytes[..],
            b"event: e\ndata: {}\n\n"
        );
    }
}
