//! Responses event stream → Chat chunk stream.

use super::ChatContext;

/// Translates a Responses event stream into a Chat Completions chunk stream.
#[derive(Debug)]
pub struct StreamTranslator {
    ctx: ChatContext,
}

impl StreamTranslator {
    /// A translator for one completion.
    pub fn new(ctx: ChatContext) -> Self {
        Self { ctx }
    }

    /// The context.
    pub fn context(&self) -> &ChatContext {
        &self.ctx
    }
}
