//! Refusals of background responses: admitting a run, and following one.

use thiserror::Error;

use super::refusal;

/// A background run that would pass one of the bounds on runs: the
/// server's, the credential's own, or its fair share of the server's.
#[derive(Debug, Error)]
pub(crate) enum TooManyBackgroundResponses {
    /// The server runs as many as it may.
    #[error(
        "{running} background responses are running, the most this server runs at once; retry \
         when one has finished"
    )]
    Server {
        /// Runs running.
        running: usize,
    },
    /// The credential runs as many as one may.
    #[error(
        "{own} of your background responses are running, the most one credential may run at \
         once; retry when one has finished"
    )]
    Tenant {
        /// The credential's runs.
        own: usize,
    },
    /// The credential runs its share while others run theirs.
    #[error(
        "{own} of your background responses are running, your share of the {max_runs} this server \
         runs at once while {others} other credentials run theirs; retry when one has finished"
    )]
    Share {
        /// The credential's runs.
        own: usize,
        /// The server's bound.
        max_runs: usize,
        /// Other credentials running some.
        others: usize,
    },
}
refusal!(
    TooManyBackgroundResponses,
    TOO_MANY_REQUESTS,
    "too_many_background_responses",
    kind = "rate_limit_error",
    param = |_: &TooManyBackgroundResponses| Some("background"),
    retry_soon = true
);

/// A stream of a response's events asked for, where they are not kept.
#[derive(Debug, Error)]
#[error(
    "the events of response {id} are not kept here (it was not run in the background by this \
     server, or finished more than five minutes ago); retrieve it without `stream`"
)]
pub(crate) struct EventsNotKept {
    /// The response's id.
    pub(crate) id: String,
}
refusal!(
    EventsNotKept,
    BAD_REQUEST,
    "stream_unavailable",
    param = |_: &EventsNotKept| Some("stream")
);
