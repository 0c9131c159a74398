//! The Responses-only fields of a request to a Chat backend: forwarded
//! when the backend's profile says it takes them, otherwise reported or
//! refused under the loss policy; and the options of the stream the
//! bridge itself writes.

use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::ChatRequest;
use wirebridge_wire::responses::lenient::CreateResponse;
use wirebridge_wire::RawObject;

use super::compaction_items::Mode;
use super::echo::non_null;
use super::history::History;
use super::Options;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Responses-only fields: forwarded when the profile says the backend takes
/// them, otherwise dropped or rejected per the policy.
pub(super) fn passthrough<'a>(
    request: &CreateResponse<'a>,
    history: &History<'_>,
    chat: &mut ChatRequest<'a>,
    options: &Options,
    mode: Mode<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    let profile = &options.profile;
    let unsupported = "the backend does not accept it";

    if let Some(user) = &request.user {
        if profile.passes("user") {
            chat.user = Some(user.clone().into());
        } else {
            losses.record(LossKind::UnsupportedParameter, "user", unsupported)?;
        }
    }
    if let Some(id) = &request.safety_identifier {
        if profile.passes("safety_identifier") {
            chat.safety_identifier = Some(id.clone().into());
        } else {
            losses.record(
                LossKind::UnsupportedParameter,
                "safety_identifier",
                unsupported,
            )?;
        }
    }
    if let Some(metadata) = non_null(request.metadata) {
        if profile.passes("metadata") {
            chat.metadata = Some(metadata);
        } else {
            losses.record(LossKind::UnsupportedParameter, "metadata", unsupported)?;
        }
    }
    if let Some(store) = request.store {
        if profile.passes("store") {
            chat.store = Some(store);
        } else if store && !options.store {
            losses.record(
                LossKind::UnsupportedParameter,
                "store",
                "this bridge keeps no responses, and the backend cannot store them",
            )?;
        }
    }
    if let Some(key) = &request.prompt_cache_key {
        if profile.passes("prompt_cache_key") {
            chat.prompt_cache_key = Some(key.clone().into());
        } else {
            losses.record(
                LossKind::UnsupportedParameter,
                "prompt_cache_key",
                unsupported,
            )?;
        }
    }
    if let Some(retention) = non_null(request.prompt_cache_retention) {
        if profile.passes("prompt_cache_retention") {
            chat.prompt_cache_retention = Some(retention);
        } else {
            losses.record(
                LossKind::UnsupportedParameter,
                "prompt_cache_retention",
                unsupported,
            )?;
        }
    }
    if let Some(tier) = &request.service_tier {
        if profile.passes("service_tier") {
            chat.service_tier = Some(tier.clone().into());
        } else {
            losses.record(LossKind::UnsupportedParameter, "service_tier", unsupported)?;
        }
    }

    if request.previous_response_id.is_some() && history.previous_response_id().is_none() {
        losses.record(
            LossKind::StatefulFeature,
            "previous_response_id",
            "continuing a stored response needs a response store; send the whole conversation in `input` instead",
        )?;
    }
    let conversation = request
        .conversation
        .filter(|_| history.conversation().is_none());
    let stateful: [(&str, Option<&RawValue>, &str); 3] = [
        (
            "conversation",
            conversation,
            "conversations need a response store that keeps them",
        ),
        (
            "prompt",
            request.prompt,
            "stored prompt templates live on the server",
        ),
        (
            "background",
            request
                .background
                .filter(|b| b.get() == "true" && !options.background),
            "background responses need a server that keeps running them",
        ),
    ];
    for (field, value, reason) in stateful {
        if non_null(value).is_some() {
            losses.record(LossKind::StatefulFeature, field, reason)?;
        }
    }
    // `max_tool_calls` bounds calls to hosted tools, which a Chat backend
    // never makes: it holds without being sent.
    // Compaction is the layer's to run: with it, `context_management` is
    // acted on, not lost.
    let context_management = match mode.compacts {
        true => None,
        false => request.context_management,
    };
    let dropped: [(&str, Option<&RawValue>); 3] = [
        ("context_management", context_management),
        ("moderation", request.moderation),
        ("client_metadata", request.client_metadata),
    ];
    crate::cache_diagnostics::record_cache_options(
        non_null(request.prompt_cache_options),
        "Chat Completions has no equivalent",
        losses,
    )?;
    for (field, value) in dropped {
        if non_null(value).is_some() {
            losses.record(
                LossKind::UnsupportedParameter,
                field,
                "Chat Completions has no equivalent",
            )?;
        }
    }
    stream_options(request.stream_options, losses)
}

/// `stream_options`: options of the stream the bridge writes, not of the
/// backend's. What holds in that stream is no loss:
///
/// - `include_obfuscation: false`: the bridge pads no delta (`true`, the
///   padding against length side channels, is lost);
/// - `reasoning_summary_delivery` (Codex's; `sequential_cutoff`): how
///   summary events are scheduled against the answer. The bridge sends each
///   reasoning item whole, in order, before the answer that follows it, and
///   cuts none short, which every schedule allows; nothing is lost.
///
/// Any other option is reported under its own path.
fn stream_options(
    raw: Option<&RawValue>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    let Some(raw) = non_null(raw) else {
        return Ok(());
    };
    let no_equivalent = "Chat Completions has no equivalent";
    let Ok(options) = RawObject::parse(raw) else {
        return losses.record(
            LossKind::UnsupportedParameter,
            "stream_options",
            no_equivalent,
        );
    };
    for (key, value) in options.fields() {
        match (key, value.get()) {
            ("include_obfuscation", "false" | "null") | ("reasoning_summary_delivery", _) => {}
            ("include_obfuscation", _) => losses.record(
                LossKind::UnsupportedParameter,
                "stream_options.include_obfuscation",
                "the bridge adds no obfuscation padding to stream events",
            )?,
            (other, _) => losses.record(
                LossKind::UnsupportedParameter,
                format!("stream_options.{other}"),
                no_equivalent,
            )?,
        }
    }
    Ok(())
}
