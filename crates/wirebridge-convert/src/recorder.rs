//! [`LossRecorder`]: a translation's losses, collected under a policy.

use crate::error::ConvertError;
use crate::loss::{Loss, LossAction, LossKind, LossPolicy, LossReport};

/// Collects losses during a translation, applying the policy.
#[derive(Debug)]
pub(crate) struct LossRecorder<'p> {
    policy: &'p LossPolicy,
    report: LossReport,
}

impl<'p> LossRecorder<'p> {
    pub(crate) fn new(policy: &'p LossPolicy) -> Self {
        Self {
            policy,
            report: LossReport::default(),
        }
    }

    /// Records a loss, or fails if the policy rejects its kind.
    pub(crate) fn record(
        &mut self,
        kind: LossKind,
        path: impl Into<String>,
        reason: impl Into<String>,
    ) -> Result<(), ConvertError> {
        let loss = Loss {
            kind,
            path: path.into(),
            reason: reason.into(),
        };
        match self.policy.action(kind) {
            LossAction::Drop => {
                self.report.push(loss);
                Ok(())
            }
            LossAction::Reject => Err(ConvertError::Rejected(loss)),
        }
    }

    /// Whether a loss was recorded at `path` or around it (at
    /// `messages[0]` for `messages[0].content`): what lies inside a part
    /// already reported as lost needs no report of its own.
    pub(crate) fn covers(&self, path: &str) -> bool {
        self.report.iter().any(|loss| {
            path.strip_prefix(loss.path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    }

    pub(crate) fn finish(self) -> LossReport {
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorder_rejects_per_policy() {
        let policy = LossPolicy::default();
        let mut rec = LossRecorder::new(&policy);
        rec.record(LossKind::HostedTool, "tools[1]", "web_search is hosted")
            .unwrap();
        let err = rec
            .record(
                LossKind::StatefulFeature,
                "previous_response_id",
                "no store",
            )
            .unwrap_err();
        assert_eq!(err.param(), Some("previous_response_id"));
        assert_eq!(rec.finish().paths(), "tools[1]");
    }
}
