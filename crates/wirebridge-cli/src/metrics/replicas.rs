//! The series of each replica, when the upstream is several: registered
//! only then, so that a single upstream's `/metrics` is what it was.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::labels::ReplicaLabels;

/// Each replica's counters and gauges, by its index in the upstream list.
#[derive(Default)]
pub(super) struct ReplicaSeries {
    requests: Family<ReplicaLabels, Counter>,
    in_flight: Family<ReplicaLabels, Gauge>,
    ejections: Family<ReplicaLabels, Counter>,
    spills: Family<ReplicaLabels, Counter>,
    failovers: Family<ReplicaLabels, Counter>,
    in_set: Family<ReplicaLabels, Gauge>,
    prompt_tokens: Family<ReplicaLabels, Counter>,
    cached_prompt_tokens: Family<ReplicaLabels, Counter>,
}

impl ReplicaSeries {
    /// The series of `count` replicas, each at zero from the start.
    pub(super) fn register(registry: &mut Registry, count: usize) -> Self {
        let this = Self::default();
        registry.register(
            "replica_requests",
            "Requests sent to each upstream replica (by its index in the upstream list)",
            this.requests.clone(),
        );
        registry.register(
            "replica_in_flight",
            "Requests in flight on each upstream replica, streams until they end",
            this.in_flight.clone(),
        );
        registry.register(
            "replica_ejections",
            "Times each upstream replica was ejected after failures in a row",
            this.ejections.clone(),
        );
        registry.register(
            "replica_spills",
            "Requests of a conversation kept on a replica sent elsewhere because it was \
             past the bound on load by more than the move slack, by the replica passed over",
            this.spills.clone(),
        );
        registry.register(
            "replica_failovers",
            "Requests that could not be sent to a replica (its connection failed) and went \
             to the next, by the replica that failed",
            this.failovers.clone(),
        );
        registry.register(
            "replica_in_set",
            "1 while the index is a replica of the set, 0 once it left (an upstream name \
             resolved again no longer gives its address)",
            this.in_set.clone(),
        );
        registry.register(
            "replica_prompt_tokens",
            "Prompt tokens of the answers each upstream replica gave, as their usage counts them",
            this.prompt_tokens.clone(),
        );
        registry.register(
            "replica_cached_prompt_tokens",
            "Prompt tokens each upstream replica served from its cache, as its answers' usage \
             says (cached_tokens, or a Messages backend's cache reads): with replica_prompt_tokens, \
             how much of each conversation's prefix its replica kept",
            this.cached_prompt_tokens.clone(),
        );
        for replica in 0..count {
            let labels = ReplicaLabels::of(replica);
            drop(this.requests.get_or_create(&labels));
            drop(this.in_flight.get_or_create(&labels));
            drop(this.ejections.get_or_create(&labels));
            drop(this.spills.get_or_create(&labels));
            drop(this.failovers.get_or_create(&labels));
            this.in_set.get_or_create(&labels).set(1);
            drop(this.prompt_tokens.get_or_create(&labels));
            drop(this.cached_prompt_tokens.get_or_create(&labels));
        }
        this
    }

    pub(super) fn started(&self, replica: usize) {
        let labels = ReplicaLabels::of(replica);
        self.requests.get_or_create(&labels).inc();
        self.in_flight.get_or_create(&labels).inc();
    }

    pub(super) fn finished(&self, replica: usize) {
        self.in_flight
            .get_or_create(&ReplicaLabels::of(replica))
            .dec();
    }

    /// The prompt tokens of an answer `replica` gave, and how many of them
    /// it served from its cache.
    pub(super) fn tokens(&self, replica: usize, prompt: u64, cached: u64) {
        let labels = ReplicaLabels::of(replica);
        self.prompt_tokens.get_or_create(&labels).inc_by(prompt);
        self.cached_prompt_tokens
            .get_or_create(&labels)
            .inc_by(cached);
    }

    pub(super) fn ejected(&self, replica: usize) {
        self.ejections
            .get_or_create(&ReplicaLabels::of(replica))
            .inc();
    }

    pub(super) fn spilled(&self, from: usize) {
        self.spills.get_or_create(&ReplicaLabels::of(from)).inc();
    }

    pub(super) fn in_set(&self, replica: usize, present: bool) {
        self.in_set
            .get_or_create(&ReplicaLabels::of(replica))
            .set(i64::from(present));
    }

    pub(super) fn failed_over(&self, from: usize) {
        self.failovers.get_or_create(&ReplicaLabels::of(from)).inc();
    }
}
