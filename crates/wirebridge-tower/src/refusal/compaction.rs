//! Refusals of compaction: where it does not run.

use thiserror::Error;

use super::refusal;

/// Compaction seals each summary: without a seal key it cannot run.
#[derive(Debug, Error)]
#[error(
    "compaction is not available on this bridge: it seals each summary into the compaction item \
     it hands back, and no seal key is configured"
)]
pub(crate) struct CompactionUnavailable;
refusal!(
    CompactionUnavailable,
    NOT_IMPLEMENTED,
    "compaction_unavailable",
    kind = "server_error"
);

/// The compaction endpoint of a layer that does not compact.
#[derive(Debug, Error)]
#[error("there is no compaction here")]
pub(crate) struct NoCompactionRoute;
refusal!(NoCompactionRoute, NOT_FOUND, "not_found");

/// A compaction request on an endpoint whose layer does not compact.
#[derive(Debug, Error)]
#[error("compaction is not served on this endpoint")]
pub(crate) struct CompactionNotServed;
refusal!(CompactionNotServed, BAD_REQUEST, "unsupported_parameter");
