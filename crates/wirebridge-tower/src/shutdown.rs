//! [`Shutdown`]: ending open translated streams in their own dialect when
//! the server stops.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;

/// What a translated stream is told when the server stops waiting for it.
pub(crate) const SHUTDOWN_MESSAGE: &str = "the server is shutting down";

/// A signal, given to a layer with
/// [`TranslateLayer::shutdown`](crate::TranslateLayer::shutdown), that ends
/// every stream still open in its own dialect: a Responses stream with
/// `response.failed`, a Chat stream with its error chunk, a
/// WebSocket connection with close code 1001, each keeping what was
/// already sent. A server triggers it when its grace period is over, so
/// that clients learn why their stream ended instead of seeing it cut.
///
/// ```
/// use wirebridge_tower::{ResponsesToChatLayer, Shutdown};
///
/// let (trigger, shutdown) = Shutdown::new();
/// let layer = ResponsesToChatLayer::new().shutdown(shutdown);
/// // … serve, then when the grace period is over:
/// trigger.trigger();
/// # drop(layer);
/// ```
#[derive(Clone)]
pub struct Shutdown {
    receiver: watch::Receiver<bool>,
}

/// Sets off a [`Shutdown`].
#[derive(Debug)]
pub struct ShutdownTrigger {
    sender: watch::Sender<bool>,
}

impl Shutdown {
    /// A signal and its trigger.
    pub fn new() -> (ShutdownTrigger, Shutdown) {
        let (sender, receiver) = watch::channel(false);
        (ShutdownTrigger { sender }, Shutdown { receiver })
    }

    /// Whether it was triggered.
    pub fn is_triggered(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Completes once triggered (at once if it was), or never if the
    /// trigger is dropped untriggered.
    pub(crate) fn triggered(&self) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let mut receiver = self.receiver.clone();
        Box::pin(async move {
            if receiver.wait_for(|triggered| *triggered).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shutdown")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

impl ShutdownTrigger {
    /// Ends the streams still open.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_trigger_completes_every_wait() {
        let (trigger, shutdown) = Shutdown::new();
        let waiting = shutdown.triggered();
        assert!(!shutdown.is_triggered());
        trigger.trigger();
        waiting.await;
        shutdown.triggered().await;
        assert!(shutdown.is_triggered());
    }
}
