//! Stepping an instance inline, on the task of the host's router that routed an event to it,
//! instead of spawning a task for every event: as long as its step runs only the runtime's own
//! code (taking events, filters, state transitions). User code (a function, a custom condition)
//! may block or panic, and must not hold up routing: before it runs, [`leave_inline`] makes the
//! step pause, and the router hands the instance to a task of its own, where it goes on.

use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

thread_local! {
    /// Set while [`poll_inline`] polls a future on this thread.
    static INLINE: Cell<bool> = const { Cell::new(false) };
}

/// Polls `future` once on the calling thread, with user code kept out (see [`leave_inline`]).
/// `Pending`: it waits for something (a deadline, room in a channel, the tokio budget) or is
/// about to run user code; the caller spawns it, and its task's first poll goes on from there
/// (a poll checks readiness afresh, so the no-op waker of this poll loses nothing).
pub(crate) fn poll_inline<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            INLINE.set(self.0);
        }
    }
    let _restore = Restore(INLINE.replace(true));
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// A box for futures of one type that mostly end in their inline poll: one that ends there
/// leaves its allocation to the next, one that does not goes on in it on a task of its own.
pub(crate) struct Spare<F>(Option<Pin<Box<F>>>);

impl<F> Default for Spare<F> {
    fn default() -> Self {
        Self(None)
    }
}

impl<F: Future<Output = ()> + Send + 'static> Spare<F> {
    /// Polls the future `make` makes once inline ([`poll_inline`]), and spawns it unless it
    /// ended. A panic ends the future, as it would have ended its task, and not the caller
    /// (the router). Made where it is boxed (see `boxed::pinned`).
    pub(crate) fn run(&mut self, make: impl FnOnce() -> F) {
        let mut boxed = match self.0.take() {
            Some(mut spare) => {
                // Drops the ended future in place and writes the new one over it.
                spare.as_mut().set(make());
                spare
            }
            None => crate::boxed::pinned!(make()),
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| poll_inline(boxed.as_mut()))) {
            Ok(Poll::Ready(())) => self.0 = Some(boxed),
            Ok(Poll::Pending) => drop(tokio::spawn(boxed)),
            // Dropped: a future that panicked is not polled again.
            Err(_) => {}
        }
    }
}

/// Returns at once on a task of its own; inline (see `poll_inline`) it pauses once, so that
/// the code after it (user code) runs on the instance's own task. Generated code awaits it
/// before a custom condition; `ActionCall::call` before a function.
pub async fn leave_inline() {
    LeaveInline.await;
}

struct LeaveInline;

impl Future for LeaveInline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if INLINE.get() {
            // Woken, so that a combinator polling several futures (branches of a parallel
            // task) polls this one again once it runs on a task.
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    #[test]
    fn inline_polls_stop_before_user_code_and_a_later_poll_runs_it() {
        let ran = Cell::new(false);
        let mut step = pin!(async {
            leave_inline().await;
            ran.set(true);
        });
        assert!(poll_inline(step.as_mut()).is_pending());
        assert!(!ran.get(), "user code does not run inline");
        let polled = step.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_ready() && ran.get(), "outside, it goes on");
        assert!(!INLINE.get(), "the flag is restored");
    }

    #[test]
    fn a_future_without_user_code_completes_inline() {
        let mut step = pin!(async { 7 });
        assert_eq!(poll_inline(step.as_mut()), Poll::Ready(7));
    }

    #[test]
    fn a_panic_inline_still_restores_the_flag() {
        let mut step = pin!(async { panic!("a step that panics") });
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_inline(step.as_mut())));
        assert!(polled.is_err());
        assert!(!INLINE.get());
    }

    #[tokio::test]
    async fn a_spare_box_serves_the_next_future_until_one_goes_to_a_task() {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let step = |user_code: Option<tokio::sync::oneshot::Sender<()>>| {
            let ended = ended.clone();
            async move {
                if let Some(done) = user_code {
                    leave_inline().await;
                    assert!(done.send(()).is_ok());
                }
                ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        };
        let mut spare = Spare::default();
        spare.run(|| step(None));
        let first = spare.0.as_ref().map(|boxed| &raw const **boxed);
        spare.run(|| step(None));
        let second = spare.0.as_ref().map(|boxed| &raw const **boxed);
        assert!(first.is_some() && first == second, "the same box, reused");
        assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 2);
        spare.run(|| step(Some(sender)));
        assert!(spare.0.is_none(), "the box went to the task");
        assert!(receiver.await.is_ok(), "the task ran the rest");
        assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_future_that_panics_inline_ends_there() {
        let mut spare = Spare::default();
        spare.run(|| async { panic!("a step that panics") });
        assert!(spare.0.is_none(), "its box is not reused");
        assert!(!INLINE.get());
    }
}
