//! Where the request writer notes what it wrote: the values it copied
//! whole, and each function tool's fields.

use std::ops::Range;

use crate::responses::written::{WrittenTool, WrittenTools};

/// Where the writer notes the values it copies whole, for a reader in this
/// process to step over: nowhere, for [`ResponsesRequest::write_json`](super::ResponsesRequest::write_json).
pub(super) struct Copies<'c> {
    pub(super) ranges: Option<&'c mut Vec<Range<usize>>>,
    /// Whether only strings are noted.
    pub(super) strings_only: bool,
    /// Where the function tools' fields are noted, when they are; `None`
    /// inside once a tool of another type was written.
    pub(super) tools: Option<&'c mut Option<WrittenTools>>,
}

impl Copies<'_> {
    /// Notes a function tool's fields, written.
    pub(super) fn tool(&mut self, tool: WrittenTool) {
        if let Some(Some(tools)) = self.tools.as_deref_mut() {
            tools.tools.push(tool);
        }
    }

    /// A tool of another type was written: the tools are not noted.
    pub(super) fn tool_unnoted(&mut self) {
        if let Some(tools) = self.tools.as_deref_mut() {
            *tools = None;
        }
    }

    /// The `tools` array was written at `array`.
    pub(super) fn tools_written(&mut self, array: Range<usize>) {
        if let Some(Some(tools)) = self.tools.as_deref_mut() {
            tools.array = array;
        }
    }

    /// Notes `value`, just written: it ends at `end`.
    pub(super) fn note(&mut self, end: usize, value: &serde_json::value::RawValue) {
        let Some(ranges) = self.ranges.as_deref_mut() else {
            return;
        };
        if !self.strings_only || value.get().starts_with('"') {
            ranges.push(end - value.get().len()..end);
        }
    }
}
