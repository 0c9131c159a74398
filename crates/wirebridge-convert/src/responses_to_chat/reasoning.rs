//! A request's `reasoning` settings, and its `include` of sealed
//! reasoning: what the backend is asked for, how reasoning is shown, and
//! what is replayed.

use std::borrow::Cow;

use wirebridge_wire::responses::lenient::{CreateResponse, Reasoning};

use super::{Options, ReasoningOutput};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::profile::BackendProfile;
use crate::recorder::LossRecorder;

/// The `include` value that asks for sealed reasoning.
pub(super) const INCLUDE_ENCRYPTED: &str = "reasoning.encrypted_content";

/// What a request's reasoning settings come to.
pub(super) struct ReasoningPlan<'a> {
    /// The `reasoning_effort` to send.
    pub(super) effort: Option<Cow<'a, str>>,
    /// How reasoning is shown: `Text` or `Summary`.
    pub(super) output: ReasoningOutput,
    /// Whether reasoning is sealed into `encrypted_content`.
    pub(super) seal: bool,
}

/// Whether the reasoning of every turn is replayed, not only the current
/// turn's: the client asked for `all_turns` and the profile replays.
pub(super) fn replays_all_turns(reasoning: &Reasoning<'_>, profile: &BackendProfile) -> bool {
    profile.replay_reasoning && reasoning.context.as_deref() == Some("all_turns")
}

pub(super) fn plan<'a>(
    request: &CreateResponse<'a>,
    reasoning: &Reasoning<'a>,
    options: &Options,
    losses: &mut LossRecorder<'_>,
) -> Result<ReasoningPlan<'a>, ConvertError> {
    let profile = &options.profile;
    let effort = match reasoning.effort.clone() {
        None => None,
        Some(_) if !profile.reasoning_effort => {
            losses.record(
                LossKind::ReasoningSetting,
                "reasoning.effort",
                "the backend takes no reasoning effort",
            )?;
            None
        }
        Some(requested) => match profile.clamp_effort(&requested) {
            None => Some(requested.into_cow()),
            Some(nearest) => {
                losses.record(
                    LossKind::ReasoningSetting,
                    "reasoning.effort",
                    format!("'{requested}' is sent as '{nearest}', the nearest effort this backend accepts"),
                )?;
                Some(Cow::Owned(nearest.to_owned()))
            }
        },
    };

    let summary = reasoning
        .summary
        .as_deref()
        .or(reasoning.generate_summary.as_deref())
        .filter(|s| *s != "none");
    let configured = match options.reasoning_output {
        ReasoningOutput::Auto => profile.reasoning_output,
        set => set,
    };
    let output = match configured {
        ReasoningOutput::Auto if summary.is_some() => ReasoningOutput::Summary,
        ReasoningOutput::Auto => ReasoningOutput::Text,
        set => set,
    };
    if let (Some(summary), ReasoningOutput::Text) = (summary, output) {
        losses.record(
            LossKind::ReasoningSetting,
            "reasoning.summary",
            format!("a summary was asked for ('{summary}'), and the backend's reasoning is returned as reasoning text (reasoning output: text)"),
        )?;
    }

    // Honoured where the profile replays reasoning (see `Replay`). Where
    // it replays none, the setting is no loss of its own: no turn's
    // reasoning reaches the backend, and each item withheld is reported by
    // itself (a `reasoning_history` loss, and `input_transformations`).
    match reasoning.context.as_deref() {
        None | Some("auto" | "current_turn" | "all_turns") => {}
        Some(other) => {
            let expected = "expected auto, current_turn or all_turns";
            return Err(ConvertError::invalid(
                "reasoning.context",
                format!("unknown reasoning context '{other}' ({expected})"),
            ));
        }
    }

    let wants_sealed = request
        .include
        .iter()
        .flatten()
        .position(|entry| entry == INCLUDE_ENCRYPTED);
    let seal = match wants_sealed {
        Some(_) if options.seal.is_some() => true,
        Some(i) => {
            losses.record(
                LossKind::IncludeOption,
                format!("include[{i}]"),
                "reasoning can be handed back sealed only when the bridge has a seal key",
            )?;
            false
        }
        None => false,
    };

    Ok(ReasoningPlan {
        effort,
        output,
        seal,
    })
}
