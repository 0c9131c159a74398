//! Where a Responses request this process wrote holds its function tools:
//! noted by the writer ([`ResponsesRequest::write_json_noting`]), taken by
//! the reader of the same bytes ([`CreateResponse::read_written`]) in
//! place of reading the tools again.
//!
//! A request's tools are most of a Claude Code request's structure: the
//! Messages layer writes them into the Responses request it hands on, and
//! the Responses side, reading that request, would find each tool's
//! fields key by key (about 20 K of the hub request's 50 K second read,
//! callgrind, `hub/request`). With the note it reads none of them.
//!
//! [`ResponsesRequest::write_json_noting`]: super::strict::ResponsesRequest::write_json_noting
//! [`CreateResponse::read_written`]: super::lenient::CreateResponse::read_written

use std::ops::Range;

/// The `tools` array of a written request, and each tool's fields, as
/// byte ranges of the body; kept only when every tool is a function tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenTools {
    /// The array, brackets included.
    pub array: Range<usize>,
    /// Each tool, in order.
    pub tools: Vec<WrittenTool>,
}

/// One function tool's fields: the string literals of its name and
/// description and the text of its schema, quotes and all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenTool {
    /// `name`'s literal.
    pub name: Range<usize>,
    /// `description`'s literal, when written.
    pub description: Option<Range<usize>>,
    /// `parameters`' text; `None` when written as `null`.
    pub parameters: Option<Range<usize>>,
    /// `strict`; `None` when written as `null`.
    pub strict: Option<bool>,
}
