//! The settings a layer hands to every service it makes.

use std::fmt;

use crate::direction::sealed::Direction;
use crate::settings::Common;

/// Everything a layer was configured with, shared by its services.
pub(crate) struct Shared<D: Direction> {
    pub(crate) common: Common,
    pub(crate) direction: D::Settings,
}

impl<D: Direction> Clone for Shared<D> {
    fn clone(&self) -> Self {
        Self {
            common: self.common.clone(),
            direction: self.direction.clone(),
        }
    }
}

impl<D: Direction> Default for Shared<D> {
    fn default() -> Self {
        Self {
            common: Common::default(),
            direction: D::Settings::default(),
        }
    }
}

impl<D: Direction> fmt::Debug for Shared<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("body_limit", &self.common.body_limit)
            .field("max_event_size", &self.common.max_event_size)
            .field("max_reply_size", &self.common.max_reply_size)
            .field("stream_idle_timeout", &self.common.stream_idle_timeout)
            .field("keepalive_interval", &self.common.keepalive_interval)
            .field("client_endpoint", &self.common.client_endpoint)
            .field("catalog", &self.common.catalog)
            .field("direction", &self.direction)
            .finish_non_exhaustive()
    }
}
