//! Which rules the checker applies: all of them, or the strict rules minus
//! the documented deviations of real recorded streams.

/// Knobs for [`check_with`](super::check_with). [`CheckOptions::strict`]
/// (the default) is what a translator must emit;
/// [`CheckOptions::recorded_openai`] relaxes exactly the documented points
/// where real OpenAI streams deviate from the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// Require `name` on `response.function_call_arguments.done`. The spec
    /// marks it required, but real OpenAI streams (2025–2026 recordings) omit
    /// it. When present it must always equal the item's name.
    pub require_arguments_done_name: bool,
    /// Require a failed response to close the items it opened and list them
    /// in `response.failed.response.output`. The bridge does, so the client
    /// keeps what was said; an upstream may stop mid-item instead.
    pub failure_closes_items: bool,
}

impl CheckOptions {
    /// Every rule, including spec-required fields real OpenAI omits.
    pub fn strict() -> Self {
        CheckOptions {
            require_arguments_done_name: true,
            failure_closes_items: true,
        }
    }

    /// The strict rules minus the documented deviations of real OpenAI
    /// streams (`function_call_arguments.done` without `name`) and of
    /// upstreams in general (a failure that leaves an item open).
    pub fn recorded_openai() -> Self {
        CheckOptions {
            require_arguments_done_name: false,
            failure_closes_items: false,
        }
    }
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self::strict()
    }
}
