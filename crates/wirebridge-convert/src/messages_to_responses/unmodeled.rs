//! Fields of a Messages request the bridge does not read, through the
//! loss policy: reported by their JSON path, refused under a strict
//! policy, never dropped unseen.

use wirebridge_wire::messages::lenient::unmodeled_fields;

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Top-level fields of Anthropic's API that ask for a feature the bridge
/// does not implement, with what each asks for.
const UNSUPPORTED: [(&str, LossKind, &str); 1] = [(
    "safeguards",
    LossKind::UnsupportedParameter,
    "Anthropic's API checks tool calls with classifiers of its own; the backend runs no such check",
)];

/// Records each field of `body` the request types do not model, except
/// those inside a part already reported as lost (a hosted tool, a block
/// with no Responses equivalent).
pub(super) fn record(body: &[u8], losses: &mut LossRecorder<'_>) -> Result<(), ConvertError> {
    for path in unmodeled_fields(body) {
        if losses.covers(&path) {
            continue;
        }
        let (kind, reason) = match UNSUPPORTED.iter().find(|(name, ..)| *name == path) {
            Some((_, kind, reason)) => (*kind, *reason),
            None => (
                LossKind::UnsupportedParameter,
                "a field the bridge does not read: it is not carried to the backend",
            ),
        };
        losses.record(kind, path, reason)?;
    }
    Ok(())
}
