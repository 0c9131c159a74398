//! Background responses (`background: true`): answered at once with a
//! `queued` response, run by the bridge itself, polled with `GET
//! …/responses/{id}`, followed as a stream (resumed with `starting_after`),
//! and cancelled with `POST …/responses/{id}/cancel`.

mod follow;
mod lease;
mod respond;
mod routes;
mod run;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::refusal::background::TooManyBackgroundResponses;
use crate::replies::Refused;
pub(crate) use crate::stateful::{status_of, with_status};
pub(crate) use follow::Follower;
pub(crate) use lease::renew as renew_lease;
pub(crate) use respond::{event_stream, json, response_id, with_output};
pub(crate) use routes::{route, Route};
use run::EventBudget;
pub(crate) use run::{Run, Stop};

/// How long a finished run's events stay for a stream that resumes.
const KEEP_FINISHED: Duration = Duration::from_secs(300);
/// Finished runs kept for resuming, at most.
const MAX_FINISHED: usize = 256;

/// The background runs of a layer: how many may run at once, and the runs
/// themselves. Given to the Responses layers with `.background(runs)`;
/// without it, `background: true` is not run (it is reported lost, and
/// refused under the default policy).
///
/// A run is the exchange a request would be, run by the bridge while the
/// client polls: it survives the client's disconnection, and ends as the
/// response it makes, `cancelled` when the client cancels it, or `failed`
/// (with the reason) when the upstream fails or the server shuts down. Its
/// response is kept in the layer's store, so that with a shared store any
/// replica answers the poll.
///
/// ```
/// use wirebridge_tower::{BackgroundRuns, ResponsesToChatLayer};
/// use wirebridge_store::MemoryStore;
///
/// let runs = BackgroundRuns::new().max_runs(64).max_runs_per_tenant(8);
/// let layer = ResponsesToChatLayer::new().store(MemoryStore::new()).background(runs.clone());
/// // At shutdown, after the shutdown signal: `runs.settled().await`.
/// # drop(layer);
/// ```
#[derive(Clone)]
pub struct BackgroundRuns {
    inner: Arc<Registry>,
}

struct Registry {
    limits: Limits,
    events: EventBudget,
    table: Mutex<Table>,
    /// The number of runs in flight.
    running: watch::Sender<usize>,
}

#[derive(Debug, Clone, Copy)]
struct Limits {
    max_runs: usize,
    max_runs_per_tenant: usize,
    max_event_bytes: usize,
    max_event_bytes_total: usize,
    lease: Duration,
}

#[derive(Default)]
struct Table {
    runs: HashMap<(String, String), Arc<Run>>,
    per_tenant: HashMap<String, usize>,
    /// Finished runs, oldest first, with when they finished.
    finished: VecDeque<(Instant, (String, String))>,
}

impl BackgroundRuns {
    /// The default bound on runs in flight: 256.
    pub const DEFAULT_MAX_RUNS: usize = 256;
    /// The default bound on one tenant's runs in flight: 32.
    pub const DEFAULT_MAX_RUNS_PER_TENANT: usize = 32;
    /// The default bound on the events a run keeps for its followers:
    /// 16 MiB (the oldest are dropped beyond it).
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 << 20;
    /// The default bound on the events all runs keep together: 256 MiB.
    pub const DEFAULT_MAX_EVENT_BYTES_TOTAL: usize = 256 << 20;
    /// The default length of a run's lease in a shared store: 30 s.
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

    /// Runs within the default bounds.
    pub fn new() -> Self {
        Self::within(Limits {
            max_runs: Self::DEFAULT_MAX_RUNS,
            max_runs_per_tenant: Self::DEFAULT_MAX_RUNS_PER_TENANT,
            max_event_bytes: Self::DEFAULT_MAX_EVENT_BYTES,
            max_event_bytes_total: Self::DEFAULT_MAX_EVENT_BYTES_TOTAL,
            lease: Self::DEFAULT_LEASE,
        })
    }

    fn within(limits: Limits) -> Self {
        Self {
            inner: Arc::new(Registry {
                limits,
                events: EventBudget::new(limits.max_event_bytes, limits.max_event_bytes_total),
                table: Mutex::default(),
                running: watch::Sender::new(0),
            }),
        }
    }

    fn with_limits(self, change: impl FnOnce(&mut Limits)) -> Self {
        let mut limits = self.inner.limits;
        change(&mut limits);
        Self::within(limits)
    }

    /// At most `n` runs in flight; one more is a 429. They are shared: a
    /// tenant holds at most `n / (others + 2)` of them (at least one),
    /// `others` being the tenants running some too, so that no tenant
    /// takes them all and the next to ask finds room.
    pub fn max_runs(self, n: usize) -> Self {
        self.with_limits(|l| l.max_runs = n)
    }

    /// At most `n` runs in flight per tenant; one more is a 429.
    pub fn max_runs_per_tenant(self, n: usize) -> Self {
        self.with_limits(|l| l.max_runs_per_tenant = n)
    }

    /// A run keeps at most `n` bytes of events for streams that follow or
    /// resume it; a stream resuming before what is kept is refused.
    pub fn max_event_bytes(self, n: usize) -> Self {
        self.with_limits(|l| l.max_event_bytes = n)
    }

    /// All runs, finished ones kept for resuming included, keep at most `n`
    /// bytes of events together: a run that adds events to a full budget
    /// loses its own oldest.
    pub fn max_event_bytes_total(self, n: usize) -> Self {
        self.with_limits(|l| l.max_event_bytes_total = n)
    }

    /// A run holds a lease of `length` in a store shared between processes
    /// (Redis), renewed every third of it: a response still `queued` or
    /// `in_progress` whose lease has expired, its process gone without a
    /// word (killed), reads `failed` from then on.
    pub fn lease(self, length: Duration) -> Self {
        self.with_limits(|l| l.lease = length.max(Duration::from_millis(30)))
    }

    /// The length of a run's lease.
    pub(crate) fn lease_length(&self) -> Duration {
        self.inner.limits.lease
    }

    /// The runs in flight.
    pub fn in_flight(&self) -> usize {
        *self.inner.running.borrow()
    }

    /// Completes once no run is in flight: at shutdown, after the layer's
    /// shutdown signal has stopped them, so that each has written its
    /// final state (`failed`, with the reason) before the process exits.
    pub async fn settled(&self) {
        let mut running = self.inner.running.subscribe();
        let _ = running.wait_for(|n| *n == 0).await;
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.inner
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a new run of `tenant` (one that `streams` its events or
    /// not), or the 429 that says which bound is reached.
    pub(crate) fn admit(&self, tenant: &str, id: &str, streams: bool) -> Result<Arc<Run>, Refused> {
        let limits = self.inner.limits;
        let mut table = self.table();
        table.forget_finished(Instant::now(), &self.inner.events);
        let running = *self.inner.running.borrow();
        let own = table.per_tenant.get(tenant).copied().unwrap_or(0);
        if running >= limits.max_runs {
            return Err(TooManyBackgroundResponses::Server { running }.into());
        }
        if own >= limits.max_runs_per_tenant {
            return Err(TooManyBackgroundResponses::Tenant { own }.into());
        }
        let others = table.per_tenant.len() - usize::from(own > 0);
        let share = fair_share(limits.max_runs, others);
        if own >= share {
            return Err(TooManyBackgroundResponses::Share {
                own,
                max_runs: limits.max_runs,
                others,
            }
            .into());
        }
        let run = Arc::new(Run::new(tenant.to_owned(), id.to_owned(), streams));
        table
            .runs
            .insert((tenant.to_owned(), id.to_owned()), Arc::clone(&run));
        *table.per_tenant.entry(tenant.to_owned()).or_default() += 1;
        drop(table);
        self.inner.running.send_modify(|n| *n += 1);
        Ok(run)
    }

    /// A run is over: it no longer counts, and stays a while for streams
    /// that resume it.
    pub(crate) fn finished(&self, run: &Run) {
        run.finish();
        let mut table = self.table();
        if let Some(n) = table.per_tenant.get_mut(&run.tenant) {
            *n -= 1;
            if *n == 0 {
                table.per_tenant.remove(&run.tenant);
            }
        }
        table
            .finished
            .push_back((Instant::now(), (run.tenant.clone(), run.id.clone())));
        table.forget_finished(Instant::now(), &self.inner.events);
        drop(table);
        self.inner.running.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// The run `id` of `tenant`, in flight or finished a short while ago,
    /// if this process runs (or ran) it.
    fn find(&self, tenant: &str, id: &str) -> Option<Arc<Run>> {
        let mut table = self.table();
        table.forget_finished(Instant::now(), &self.inner.events);
        table.runs.get(&(tenant.to_owned(), id.to_owned())).cloned()
    }

    /// What the events of runs may hold.
    pub(crate) fn event_budget(&self) -> &EventBudget {
        &self.inner.events
    }
}

impl Table {
    fn forget_finished(&mut self, now: Instant, budget: &EventBudget) {
        while let Some((at, _)) = self.finished.front() {
            let stale =
                now.duration_since(*at) > KEEP_FINISHED || self.finished.len() > MAX_FINISHED;
            if !stale {
                break;
            }
            if let Some((_, key)) = self.finished.pop_front() {
                if let Some(run) = self.runs.remove(&key) {
                    run.release(budget);
                }
            }
        }
    }
}

impl Default for BackgroundRuns {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for BackgroundRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundRuns")
            .field("max_runs", &self.inner.limits.max_runs)
            .field(
                "max_runs_per_tenant",
                &self.inner.limits.max_runs_per_tenant,
            )
            .field("max_event_bytes", &self.inner.limits.max_event_bytes)
            .field(
                "max_event_bytes_total",
                &self.inner.limits.max_event_bytes_total,
            )
            .field("lease", &self.inner.limits.lease)
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

/// The runs one tenant may hold while `others` tenants hold runs too: an
/// equal part of `max_runs` shared with them and with one more tenant yet
/// to come, so that whoever asks next finds room (a tenant alone holds
/// half at most), and never less than one run.
fn fair_share(max_runs: usize, others: usize) -> usize {
    (max_runs / others.saturating_add(2)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(runs: &BackgroundRuns, tenant: &str, n: usize) -> usize {
        (0..n)
            .filter(|i| runs.admit(tenant, &format!("{tenant}-{i}"), false).is_ok())
            .count()
    }

    #[test]
    fn one_tenant_never_holds_every_run_the_server_allows() {
        let runs = BackgroundRuns::new().max_runs(8).max_runs_per_tenant(8);
        assert_eq!(admitted(&runs, "a", 8), 4, "a tenant alone holds half");
        // The next finds room, and the one after it too.
        assert_eq!(admitted(&runs, "b", 8), 2);
        assert_eq!(admitted(&runs, "c", 8), 2);
        assert_eq!(runs.in_flight(), 8);
    }

    #[test]
    fn a_share_is_never_less_than_one_run() {
        assert_eq!(fair_share(1, 0), 1);
        assert_eq!(fair_share(4, 10), 1);
        assert_eq!(fair_share(256, 0), 128);
        assert_eq!(fair_share(256, 6), 32);
    }
}
