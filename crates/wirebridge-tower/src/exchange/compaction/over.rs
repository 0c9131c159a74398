//! What a compacting turn does differently over each upstream: how the
//! request is translated around the summary. The summary itself is asked
//! for and read the same way over both ([`Upstream`](super::Upstream)).

use wirebridge_convert::responses_to_chat::compaction::Summary;
use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest, TranslatedRequest};
use wirebridge_convert::{responses_to_responses, ConvertError};

use crate::direction::responses_over_messages::messages;
use crate::direction::sealed::Direction;
use crate::direction::{
    Prepared, ResponsesOverChat, ResponsesOverMessages, ResponsesOverResponses,
};
use crate::settings::ResponsesSettings;

/// A direction whose Responses clients' turns compact.
pub(crate) trait Compacts: Direction<Settings = ResponsesSettings> {
    /// The request as it is sent when nothing compacts it (no seal key):
    /// what it asks of compaction reported.
    fn plain<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError>;

    /// The request, its compaction acted on by the caller: what a
    /// threshold is measured on, and what is sent when it is not passed.
    fn compacting<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError>;

    /// The request, its conversation compacted into `summary`.
    fn compacted<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
        summary: &Summary,
    ) -> Result<Prepared<Self::Context>, ConvertError>;
}

impl Compacts for ResponsesOverChat {
    fn plain<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        parsed.translate(history, options).map(chat)
    }

    fn compacting<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        parsed.translate_compacting(history, options).map(chat)
    }

    fn compacted<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
        summary: &Summary,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        parsed
            .translate_compacted(history, options, summary)
            .map(chat)
    }
}

impl Compacts for ResponsesOverResponses {
    fn plain<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        responses_to_responses::translate_request(parsed, history, options).map(native)
    }

    fn compacting<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        responses_to_responses::translate_compacting(parsed, history, options).map(native)
    }

    fn compacted<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
        summary: &Summary,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        responses_to_responses::translate_compacted(parsed, history, options, summary).map(native)
    }
}

impl Compacts for ResponsesOverMessages {
    fn plain<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let whole = responses_to_responses::translate_request(parsed, history, options)?;
        messages(whole, options).map(foreground)
    }

    fn compacting<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let whole = responses_to_responses::translate_compacting(parsed, history, options)?;
        messages(whole, options).map(foreground)
    }

    fn compacted<'a>(
        parsed: ParsedRequest<'a>,
        history: &History<'a>,
        options: &Options,
        summary: &Summary,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let whole = responses_to_responses::translate_compacted(parsed, history, options, summary)?;
        messages(whole, options).map(foreground)
    }
}

/// A compacting turn runs in the foreground: its caller answers it.
fn foreground<C>(prepared: Prepared<C>) -> Prepared<C> {
    Prepared {
        copies: Default::default(),
        verdict: None,
        background: None,
        ..prepared
    }
}

fn chat(t: TranslatedRequest) -> Prepared<<ResponsesOverChat as Direction>::Context> {
    Prepared {
        copies: Default::default(),
        verdict: None,
        stream: t.context.stream,
        model: t.context.model.clone(),
        body: t.body,
        context: t.context,
        losses: t.losses,
        turn: t.turn,
        background: None,
    }
}

fn native(
    t: responses_to_responses::TranslatedRequest,
) -> Prepared<<ResponsesOverResponses as Direction>::Context> {
    Prepared {
        copies: Default::default(),
        verdict: None,
        stream: t.context.stream,
        model: t.context.model.clone(),
        body: t.body,
        context: t.context,
        losses: t.losses,
        turn: t.turn,
        background: None,
    }
}
