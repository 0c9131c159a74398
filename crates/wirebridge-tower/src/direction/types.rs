//! What the types the directions name do for the exchange: the settings
//! each direction has, the stored state a Responses request continues, and
//! the response a reply leaves for the store.

use wirebridge_convert::cache_diagnostics::{CacheDiagnosis, Verdict};
use wirebridge_convert::responses_to_chat::compaction::CompactRequest;
use wirebridge_convert::responses_to_chat::{self, Finished, ParsedRequest, ResponsesContext};
use wirebridge_convert::responses_to_responses::{self, NativeContext};
use wirebridge_convert::{
    chat_to_responses, messages_to_responses, responses_to_messages, ConvertError, LossPolicy,
};
use wirebridge_wire::responses::strict::ResponseEcho;

use super::messages_over_responses::MessagesRequest;
use super::sealed::{ClientRequest, KeptStream, ReplyContext, Settings, TranslatedReply};
use super::{Continues, ReplyParts};
use crate::settings::{ChatSettings, MessagesSettings, ResponsesSettings};

impl Settings for ResponsesSettings {
    fn policy_mut(&mut self) -> &mut LossPolicy {
        &mut self.convert.policy
    }

    fn responses(&self) -> Option<&ResponsesSettings> {
        Some(self)
    }

    fn responses_mut(&mut self) -> Option<&mut ResponsesSettings> {
        Some(self)
    }
}

impl Settings for ChatSettings {
    fn policy_mut(&mut self) -> &mut LossPolicy {
        &mut self.convert.policy
    }
}

impl Settings for MessagesSettings {
    fn policy_mut(&mut self) -> &mut LossPolicy {
        &mut self.convert.policy
    }
}

/// A Responses request, over either backend.
impl<'a> ClientRequest<'a> for ParsedRequest<'a> {
    fn continues(&self) -> Result<Continues<'_>, ConvertError> {
        Ok(match (self.conversation()?, self.previous_response_id()) {
            (Some(conversation), _) => Continues::Conversation(conversation),
            (None, Some(previous)) => Continues::Response(previous),
            (None, None) => Continues::Nothing,
        })
    }

    fn item_references(&self) -> Vec<&str> {
        ParsedRequest::item_references(self)
    }

    fn named_affinity(&self) -> Option<crate::Affinity> {
        if let Ok(Some(conversation)) = self.conversation() {
            return Some(crate::Affinity::conversation(&conversation));
        }
        self.prompt_cache_key()
            .map(crate::Affinity::prompt_cache_key)
    }

    fn cache_diagnosis(
        &self,
        history: &responses_to_chat::History<'_>,
    ) -> Result<Option<CacheDiagnosis>, ConvertError> {
        ParsedRequest::cache_diagnosis(self, history)
    }

    fn compaction_trigger_at(&self) -> Option<usize> {
        ParsedRequest::compaction_trigger_at(self)
    }

    fn compacting(self) -> Result<Box<ParsedRequest<'a>>, Self> {
        match self.names_compaction() {
            true => Ok(Box::new(self)),
            false => Err(self),
        }
    }
}

/// A request to `/responses/compact`: it continues a response, never a
/// conversation (the endpoint has no `conversation`).
impl<'a> ClientRequest<'a> for CompactRequest<'a> {
    fn continues(&self) -> Result<Continues<'_>, ConvertError> {
        Ok(match self.previous_response_id() {
            Some(previous) => Continues::Response(previous),
            None => Continues::Nothing,
        })
    }

    fn item_references(&self) -> Vec<&str> {
        CompactRequest::item_references(self)
    }
}

/// A Chat request, parsed where it is translated.
impl<'a> ClientRequest<'a> for &'a [u8] {}

impl<'a> ClientRequest<'a> for MessagesRequest<'a> {}

impl ReplyContext for ResponsesContext {
    fn echo_unread(&mut self) {
        self.echo = ResponseEcho::default();
    }

    fn not_stored(&mut self) {
        self.echo.store = false;
    }

    fn diagnosed(&mut self, verdict: &Verdict) {
        self.echo.prompt_cache_diagnostics = Some(responses_diagnostics(verdict));
    }

    fn reply_id(&self) -> Option<String> {
        Some(self.ids.response())
    }
}

impl ReplyContext for NativeContext {
    fn echo_unread(&mut self) {
        self.echo = ResponseEcho::default();
    }

    fn not_stored(&mut self) {
        self.echo.store = false;
    }

    fn diagnosed(&mut self, verdict: &Verdict) {
        self.echo.prompt_cache_diagnostics = Some(responses_diagnostics(verdict));
    }

    fn reply_id(&self) -> Option<String> {
        Some(self.ids.response())
    }
}

impl ReplyContext for responses_to_messages::ExchangeContext {
    fn echo_unread(&mut self) {
        self.native.echo = ResponseEcho::default();
    }

    fn not_stored(&mut self) {
        self.native.echo.store = false;
    }

    fn diagnosed(&mut self, verdict: &Verdict) {
        self.native.diagnosed(verdict);
    }

    fn reply_id(&self) -> Option<String> {
        self.native.reply_id()
    }
}

/// A verdict as a `Response`'s `prompt_cache_diagnostics`.
fn responses_diagnostics(verdict: &Verdict) -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string(verdict.responses_json())
        .expect("a verdict is written as JSON")
}

impl ReplyContext for chat_to_responses::ChatContext {}

impl ReplyContext for messages_to_responses::MessagesContext {
    fn diagnosed_below(&mut self, verdict: Verdict) {
        if let Some(asked) = &mut self.diagnostics {
            asked.verdict = Some(verdict);
        }
    }
}

/// A `Response`, from either backend.
impl TranslatedReply for responses_to_chat::TranslatedBody {
    fn into_parts(self) -> ReplyParts {
        ReplyParts {
            body: self.body,
            losses: self.losses,
            summary: self.summary,
        }
    }

    fn kept(&self) -> Option<Finished<'_>> {
        Some(self.finished())
    }
}

impl TranslatedReply for chat_to_responses::TranslatedBody {
    fn into_parts(self) -> ReplyParts {
        ReplyParts {
            body: self.body,
            losses: self.losses,
            summary: self.summary,
        }
    }
}

impl TranslatedReply for messages_to_responses::TranslatedBody {
    fn into_parts(self) -> ReplyParts {
        ReplyParts {
            body: self.body,
            losses: self.losses,
            summary: self.summary,
        }
    }
}

impl KeptStream for responses_to_chat::StreamTranslator {
    fn kept(&self) -> Option<Finished<'_>> {
        self.finished()
    }
}

impl KeptStream for responses_to_responses::StreamTranslator {
    fn kept(&self) -> Option<Finished<'_>> {
        self.finished()
    }
}

impl KeptStream for responses_to_messages::StreamTranslator {
    fn kept(&self) -> Option<Finished<'_>> {
        self.finished()
    }
}

impl KeptStream for chat_to_responses::StreamTranslator {}

impl KeptStream for messages_to_responses::StreamTranslator {}
