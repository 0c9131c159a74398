//! Fields of a Responses or Chat request that the bridge does not read,
//! through the loss policy: reported by their JSON path, refused under a
//! strict policy, never dropped unseen.

use wirebridge_wire::responses::lenient::{Input, InputItem, ItemKind};

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Why a field the bridge does not read is a loss.
const NOT_READ: &str = "a field the bridge does not read: it is not carried to the backend";

/// Records each of `paths` (from a walk of the request body), except
/// those inside a part already reported as lost (a hosted tool, an item
/// with no equivalent) and those `left_out` says nothing is lost by.
/// Called once the rest of the request is translated, so that what lies
/// inside a lost part is not reported twice.
pub(crate) fn record(
    paths: Vec<String>,
    left_out: impl Fn(&str) -> bool,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    for path in paths {
        if losses.covers(&path) || left_out(&path) {
            continue;
        }
        losses.record(LossKind::UnsupportedParameter, path, NOT_READ)?;
    }
    Ok(())
}

/// The indices of a Responses request's `configuration_update` items:
/// settings recorded in the history for the client's own use, which no
/// backend is sent, so that nothing in them is lost.
pub(crate) fn settings_items(input: Option<&Input<'_>>) -> Vec<usize> {
    let Some(Input::Items(items)) = input else {
        return Vec::new();
    };
    settings_indices(items)
}

/// [`settings_items`], for items already taken out of the request.
pub(crate) fn settings_indices(items: &[InputItem<'_>]) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.classify() == ItemKind::ConfigurationUpdate)
        .map(|(i, _)| i)
        .collect()
}

/// Whether `path` lies inside one of the `items` of `input`.
pub(crate) fn inside_items(path: &str, items: &[usize]) -> bool {
    let Some(rest) = path.strip_prefix("input[") else {
        return false;
    };
    let index = rest.split(']').next().and_then(|n| n.parse().ok());
    index.is_some_and(|n: usize| items.contains(&n))
}

/// Whether `path` names a top-level field (`seed`, not `input[0].seed`).
pub(crate) fn is_top_level(path: &str) -> bool {
    !path.contains(['.', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_items_are_told_by_index() {
        assert!(inside_items("input[2].reasoning", &[2]));
        assert!(inside_items("input[12].x.y", &[0, 12]));
        assert!(!inside_items("input[1].reasoning", &[2, 12]));
        assert!(!inside_items("tools[2].x", &[2]));
        assert!(is_top_level("seed"));
        assert!(!is_top_level("text.x"));
        assert!(!is_top_level("input[0]"));
    }
}
