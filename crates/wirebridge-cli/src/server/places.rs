//! Places under the connection cap, and at shutdown the wait for the
//! connections holding them to end.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::{OpenGauge, Opened};

/// The places of the connections served at once: one per connection.
#[derive(Clone)]
pub struct Places {
    slots: Arc<Semaphore>,
    max: usize,
    open_connections: OpenGauge,
}

/// A connection's place under the cap, counted in the open-connections
/// gauge; given up when the connection (or the WebSocket session it became)
/// ends.
pub struct Place {
    _permit: OwnedSemaphorePermit,
    _opened: Opened,
}

/// A place taken for a connection not accepted yet.
pub struct Reserved(OwnedSemaphorePermit);

impl Places {
    /// `max` places; connections holding one are counted in
    /// `open_connections`.
    pub fn new(max: usize, open_connections: OpenGauge) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
            open_connections,
        }
    }

    /// How many connections may be served at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A free place, if there is one now.
    pub fn try_reserve(&self) -> Option<Reserved> {
        Arc::clone(&self.slots)
            .try_acquire_owned()
            .ok()
            .map(Reserved)
    }

    /// Waits for a free place. Cancel-safe.
    pub async fn reserve(&self) -> Reserved {
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        Reserved(permit)
    }

    /// The reserved place, taken by an accepted connection.
    pub fn occupy(&self, reserved: Reserved) -> Place {
        Place {
            _permit: reserved.0,
            _opened: self.open_connections.open(),
        }
    }

    /// Waits until every place is free, every connection served having
    /// ended, for at most `grace`; whether they all ended.
    pub async fn drain(&self, grace: Duration) -> bool {
        let all = u32::try_from(self.max).unwrap_or(u32::MAX);
        tokio::time::timeout(grace, self.slots.acquire_many(all))
            .await
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    #[tokio::test]
    async fn places_are_counted_and_drained() {
        let metrics = Metrics::new(0);
        let places = Places::new(2, metrics.open_connections());
        let first = places.occupy(places.try_reserve().unwrap());
        let second = places.occupy(places.reserve().await);
        assert!(places.try_reserve().is_none());
        assert_eq!(metrics.open_connections().get(), 2);
        assert!(!places.drain(Duration::from_millis(20)).await);
        drop(first);
        let draining = tokio::spawn({
            let places = places.clone();
            async move { places.drain(Duration::from_secs(5)).await }
        });
        drop(second);
        assert!(draining.await.unwrap());
        assert_eq!(metrics.open_connections().get(), 0);
    }
}
