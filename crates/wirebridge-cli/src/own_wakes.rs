//! Polling a task's own work with the wakes it gives itself kept inside
//! the poll.
//!
//! Parts of one task wake each other through channels. An exchange polls
//! hyper's client connection itself, with the response future and body on
//! it: the connection reads a response head and wakes the future waiting
//! for it, the body asks for data and wakes the connection. On the server
//! side, the exchange asks the client's request body for data, which wakes
//! hyper's dispatcher, polled by the same connection task. Each such wake
//! lands on the task that is running, and the runtime treats the task as one
//! that yields: it queues it behind the others and wakes a parked worker
//! thread to share the work, which takes a futex call, often an eventfd
//! write to unpark the I/O driver, and moves the exchange to the other
//! thread.
//!
//! [`OwnWakes::poll`] polls with a waker of its own: a wake that arrives
//! while the poll runs is noted and answered by polling again at once; one
//! that arrives later (the upstream's bytes, from the I/O driver) goes to the
//! task as before. The server polls each connection with it, and the
//! upstream client each exchange's connection and body (which WebSocket
//! sessions and background runs poll from tasks of their own).
//!
//! Measured with strace, 400 sequential Chat requests through the proxy:
//! 850 to 1,345 futex calls and 147 to 441 eventfd writes before; with the
//! upstream's polls alone, no eventfd write and a third fewer `epoll_wait`s
//! (2 a request, as a minimal hyper proxy), but as many futex calls; with
//! the connection's too (and the watchdog no longer woken, see
//! `server::watchdog`), 9 to 12 futex calls, as the minimal proxy's 15 for
//! 800 requests.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

/// How many times a poll is repeated for wakes it gave itself before the
/// task is left to the runtime's own scheduling, so that a connection that
/// keeps waking itself (a runtime's cooperative budget spent, say) cannot
/// hold the thread.
const REPEATS: usize = 4;

/// The waker the polls of one exchange's connection are given.
pub(crate) struct OwnWakes {
    shared: Arc<Shared>,
}

struct Shared {
    /// The task's own waker, from its latest poll.
    task: Mutex<Waker>,
    /// A poll is running: a wake now is answered by polling again.
    polling: AtomicBool,
    /// A wake arrived since the poll began.
    woken: AtomicBool,
}

impl Shared {
    fn task(&self) -> MutexGuard<'_, Waker> {
        // A waker is replaced whole: a panic elsewhere leaves none torn.
        self.task.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Noted before the check (both sequentially consistent): a wake
        // that misses a poll's end is either seen by it, or sees it ended
        // and wakes the task.
        self.woken.store(true, SeqCst);
        if !self.polling.load(SeqCst) {
            self.task().wake_by_ref();
        }
    }
}

impl OwnWakes {
    /// Wakes for the task that polls next.
    pub(crate) fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                // Replaced by the task's own at the first poll.
                task: Mutex::new(Waker::noop().clone()),
                polling: AtomicBool::new(false),
                woken: AtomicBool::new(false),
            }),
        }
    }

    /// Polls `poll` with this waker, again while it is pending and woke
    /// itself meanwhile.
    pub(crate) fn poll<T>(
        &self,
        cx: &mut Context<'_>,
        mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        {
            let mut task = self.shared.task();
            if !task.will_wake(cx.waker()) {
                task.clone_from(cx.waker());
            }
        }
        let waker = Waker::from(Arc::clone(&self.shared));
        let mut own = Context::from_waker(&waker);
        for _ in 0..REPEATS {
            self.shared.woken.store(false, SeqCst);
            self.shared.polling.store(true, SeqCst);
            let polled = poll(&mut own);
            self.shared.polling.store(false, SeqCst);
            if polled.is_ready() || !self.shared.woken.swap(false, SeqCst) {
                return polled;
            }
        }
        // Still waking itself: polled again when the runtime comes to it.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Counts the wakes that reach the task.
    struct Counted(AtomicUsize);

    impl Wake for Counted {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn task() -> (Arc<Counted>, Waker) {
        let counted = Arc::new(Counted(AtomicUsize::new(0)));
        (counted.clone(), Waker::from(counted))
    }

    #[test]
    fn a_wake_given_during_the_poll_polls_again_and_reaches_no_task() {
        let (counted, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let own = OwnWakes::new();
        let mut polls = 0;
        let polled = own.poll(&mut cx, |cx| {
            polls += 1;
            if polls < 3 {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(polls)
            }
        });
        assert_eq!(polled, Poll::Ready(3));
        assert_eq!(counted.0.load(SeqCst), 0);
    }

    #[test]
    fn a_wake_after_the_poll_reaches_the_task() {
        let (counted, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let own = OwnWakes::new();
        let mut kept = None;
        let polled: Poll<()> = own.poll(&mut cx, |cx| {
            kept = Some(cx.waker().clone());
            Poll::Pending
        });
        assert!(polled.is_pending());
        assert_eq!(counted.0.load(SeqCst), 0);
        kept.expect("kept").wake();
        assert_eq!(counted.0.load(SeqCst), 1);
    }

    #[test]
    fn a_poll_that_keeps_waking_itself_is_handed_back_to_the_runtime() {
        let (counted, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let own = OwnWakes::new();
        let mut polls = 0;
        let polled: Poll<()> = own.poll(&mut cx, |cx| {
            polls += 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        });
        assert!(polled.is_pending());
        assert_eq!(polls, REPEATS);
        assert_eq!(counted.0.load(SeqCst), 1);
    }

    #[test]
    fn the_latest_task_waker_is_woken() {
        let (first, first_waker) = task();
        let (second, second_waker) = task();
        let own = OwnWakes::new();
        let _: Poll<()> = own.poll(&mut Context::from_waker(&first_waker), |_| Poll::Pending);
        let mut kept = None;
        let _: Poll<()> = own.poll(&mut Context::from_waker(&second_waker), |cx| {
            kept = Some(cx.waker().clone());
            Poll::Pending
        });
        kept.expect("kept").wake_by_ref();
        assert_eq!((first.0.load(SeqCst), second.0.load(SeqCst)), (0, 1));
    }

    #[tokio::test]
    async fn a_channel_between_two_halves_of_one_poll_completes_in_it() {
        // The shape of the connection and its response future: one half
        // sends, waking the other, within the same poll.
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let mut tx = Some(tx);
        let mut rx = pin!(rx);
        let (counted, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let own = OwnWakes::new();
        let mut first = true;
        let polled = own.poll(&mut cx, |cx| {
            let received = rx.as_mut().poll(cx);
            if first {
                first = false;
                let _ = tx.take().expect("once").send(7);
            }
            received
        });
        assert_eq!(polled, Poll::Ready(Ok(7)));
        assert_eq!(counted.0.load(SeqCst), 0);
    }
}
