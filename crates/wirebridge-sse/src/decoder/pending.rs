//! The fields of the event being assembled, line by line.

/// Where the data of the event being assembled lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Data {
    /// No `data:` line yet.
    Absent,
    /// Exactly one `data:` line, still inside the input buffer. Most events
    /// have a single data line, and this spares copying it.
    Input { start: usize, end: usize },
    /// Several lines, joined in `PendingEvent::joined`.
    Joined,
}

/// The fields of the event being assembled.
#[derive(Debug)]
pub(super) struct PendingEvent {
    pub(super) data: Data,
    pub(super) joined: Vec<u8>,
    pub(super) name: Vec<u8>,
    pub(super) retry: Option<u64>,
}

impl PendingEvent {
    pub(super) fn new() -> Self {
        PendingEvent {
            data: Data::Absent,
            joined: Vec::new(),
            name: Vec::new(),
            retry: None,
        }
    }

    pub(super) fn data_len(&self) -> usize {
        match self.data {
            Data::Absent => 0,
            Data::Input { start, end } => end - start,
            Data::Joined => self.joined.len(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.data_len() + self.name.len()
    }

    pub(super) fn is_dispatchable(&self) -> bool {
        self.data != Data::Absent || !self.name.is_empty()
    }

    /// Copies single-line data out of `input`, which is about to move.
    pub(super) fn detach(&mut self, input: &[u8]) {
        if let Data::Input { start, end } = self.data {
            self.joined.clear();
            self.joined.extend_from_slice(&input[start..end]);
            self.data = Data::Joined;
        }
    }

    pub(super) fn push_data(&mut self, input: &[u8], start: usize, end: usize) {
        match self.data {
            Data::Absent => self.data = Data::Input { start, end },
            Data::Input { .. } => {
                self.detach(input);
                self.push_data(input, start, end);
            }
            Data::Joined => {
                self.joined.push(b'\n');
                self.joined.extend_from_slice(&input[start..end]);
            }
        }
    }

    pub(super) fn clear(&mut self) {
        self.data = Data::Absent;
        self.joined.clear();
        self.name.clear();
        self.retry = None;
    }
}
