//! Work that must run on one runtime, whichever runtime asks for it.
//!
//! The Redis client drives each of its connections from a task spawned on
//! the runtime that opened it, and its commands wait on that task. With a
//! current-thread runtime per worker thread, a connection opened from one
//! worker would stall every other worker's commands while that worker is
//! busy, and die with it at shutdown. Store calls and readiness checks are
//! therefore sent to one home runtime, which serves no connections.

use std::future::Future;

use tokio::runtime::Handle;

/// Where work that must stay on one runtime runs.
#[derive(Debug, Clone, Default)]
pub struct Home {
    /// `None`: where it is asked for, the only runtime there is.
    runtime: Option<Handle>,
}

/// The home runtime has shut down, or the work panicked there.
#[derive(Debug, thiserror::Error)]
#[error("the runtime that owns the response store's connections has stopped")]
pub struct HomeGone;

impl Home {
    /// Work runs where it is asked for: there is one runtime.
    pub fn here() -> Self {
        Self::default()
    }

    /// Work runs on the runtime of `runtime`.
    pub fn on(runtime: Handle) -> Self {
        Self {
            runtime: Some(runtime),
        }
    }

    /// Whether work is sent to another runtime.
    pub fn is_remote(&self) -> bool {
        self.runtime.is_some()
    }

    /// Runs `work` at home and waits for its result.
    pub async fn run<F>(&self, work: F) -> Result<F::Output, HomeGone>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.runtime {
            None => Ok(work.await),
            Some(runtime) => runtime.spawn(work).await.map_err(|_| HomeGone),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_home_runtime() {
        let home_runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let home = Home::on(home_runtime.handle().clone());
        // The home thread keeps driving its runtime until told to stop.
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let id = std::thread::current().id();
            home_runtime.block_on(async move {
                let _ = stopped.await;
            });
            id
        });
        let worker = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let ran_on = worker
            .block_on(home.run(async { std::thread::current().id() }))
            .unwrap();
        stop.send(()).unwrap();
        assert_eq!(ran_on, thread.join().unwrap());
        assert_ne!(ran_on, std::thread::current().id());
    }

    #[test]
    fn a_stopped_home_is_gone() {
        let home_runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let home = Home::on(home_runtime.handle().clone());
        drop(home_runtime);
        let worker = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(worker.block_on(home.run(async { 1 })).is_err());
    }
}
