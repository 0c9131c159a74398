//! What a request says about compaction (`context_management` and a
//! `compaction_trigger`), checked, and reported when nothing acts on it.

use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{CreateResponse, Input, ItemKind};
use wirebridge_wire::Str;

use super::Mode;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// The smallest `compact_threshold` the API accepts.
pub const MIN_THRESHOLD: u64 = 1000;

/// `context_management`, checked: each entry's index and threshold.
pub(in crate::responses_to_chat) fn entries(
    request: &CreateResponse<'_>,
) -> Result<Vec<(usize, Option<u64>)>, ConvertError> {
    #[derive(Deserialize)]
    struct Entry<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<Str<'a>>,
        #[serde(borrow)]
        compact_threshold: Option<&'a RawValue>,
    }
    let Some(raw) = request.context_management.filter(|r| r.get() != "null") else {
        return Ok(Vec::new());
    };
    let list: Vec<Entry<'_>> = serde_json::from_str(raw.get())
        .map_err(|e| ConvertError::from_parse_at("context_management", e))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        match entry.kind.as_deref() {
            Some("compaction") => {}
            Some(other) => {
                return Err(ConvertError::invalid(
                    format!("context_management[{i}].type"),
                    format!("unknown context management type '{other}' (expected compaction)"),
                ))
            }
            None => {
                return Err(ConvertError::MissingField(format!(
                    "context_management[{i}].type"
                )))
            }
        }
        let threshold = match entry.compact_threshold.filter(|r| r.get() != "null") {
            None => None,
            Some(raw) => match raw.get().parse::<u64>() {
                Ok(n) if n >= MIN_THRESHOLD => Some(n),
                _ => {
                    return Err(ConvertError::invalid(
                        format!("context_management[{i}].compact_threshold"),
                        format!(
                            "must be an integer of at least {MIN_THRESHOLD} (a token count), or \
                             null; got {}",
                            raw.get()
                        ),
                    ))
                }
            },
        };
        out.push((i, threshold));
    }
    Ok(out)
}

/// What a translation that does not compact cannot do: a final
/// `compaction_trigger` is reported under the loss policy (a caller that
/// compacts acts on it instead).
fn report_trigger(
    request: &CreateResponse<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    let Some(Input::Items(items)) = &request.input else {
        return Ok(());
    };
    for (i, item) in items.iter().enumerate() {
        if item.classify() == ItemKind::CompactionTrigger {
            losses.record(
                LossKind::UnsupportedItem,
                format!("input[{i}]"),
                "compaction needs the bridge's layer and a seal key; the request is answered \
                 without compacting",
            )?;
        }
    }
    Ok(())
}

/// `context_management` entries without a threshold, when the caller
/// compacts: reported, since nothing tells when to compact.
fn report_unset_thresholds(
    request: &CreateResponse<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    for (i, threshold) in entries(request)? {
        if threshold.is_none() {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("context_management[{i}].compact_threshold"),
                "without a threshold the bridge never compacts: it does not know the backend's \
                 context window",
            )?;
        }
    }
    Ok(())
}

/// Reports what a translation in `mode` cannot act on: a trigger when the
/// caller does not compact, thresholds left unset when it does.
pub(in crate::responses_to_chat) fn report(
    request: &CreateResponse<'_>,
    mode: Mode<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    match mode.compacts {
        true => report_unset_thresholds(request, losses),
        false => report_trigger(request, losses),
    }
}
