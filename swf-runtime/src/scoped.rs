//! Values that the code running inside a future reads (a branch's scope; a call's context is
//! set the same way by the action's own future, which also catches the call's panics), set for
//! every poll of that future and for its drop, as tokio's task-locals are.
//!
//! Why not tokio's task-locals: each poll of a `TaskLocalFuture` moves its value into the
//! thread-local and back out again, through a `RefCell`; here a poll sets a pointer to the
//! value where it lies in the pinned future and puts the previous pointer back after it
//! (issue 10: the two task-locals around a foreach iteration's call cost about 300
//! instructions per iteration).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pub(crate) use scoped_tls::{ScopedKey, scoped_thread_local};

/// What `reader` makes of the value `key` holds in the code running now, if it is set.
pub(crate) fn read<T, R>(key: &'static ScopedKey<T>, reader: impl FnOnce(&T) -> R) -> Option<R> {
    key.is_set().then(|| key.with(reader))
}

pin_project_lite::pin_project! {
    /// `future`, with `value` readable through `key` while it is polled and when it is dropped.
    pub(crate) struct Scoped<T: 'static, F> {
        key: &'static ScopedKey<T>,
        value: T,
        // Dropped inside the scope once it completes, or when the wrapper is dropped first (a
        // cancelled call), so that its destructors still read the value.
        #[pin]
        future: Option<F>,
    }

    impl<T: 'static, F> PinnedDrop for Scoped<T, F> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            let mut future = this.future;
            if future.is_some() {
                this.key.set(this.value, || future.set(None));
            }
        }
    }
}

impl<T: 'static, F> Scoped<T, F> {
    /// `future` with `value` readable through `key` inside it.
    pub(crate) fn new(key: &'static ScopedKey<T>, value: T, future: F) -> Self {
        Self {
            key,
            value,
            future: Some(future),
        }
    }
}

impl<T: 'static, F: Future> Future for Scoped<T, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let mut future = this.future;
        this.key.set(this.value, || {
            // Like `Fuse`, pending for ever once completed (it is never polled again so).
            let Some(running) = future.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            let poll = running.poll(context);
            if poll.is_ready() {
                future.set(None);
            }
            poll
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    scoped_thread_local!(static NAME: &'static str);

    /// Records what `NAME` holds when it is dropped.
    struct Witness<'a>(&'a RefCell<Vec<Option<&'static str>>>);

    impl Drop for Witness<'_> {
        fn drop(&mut self) {
            self.0.borrow_mut().push(read(&NAME, |name| *name));
        }
    }

    #[tokio::test]
    async fn nested_scopes_read_their_own_value_and_give_the_outer_one_back() {
        let inner = Scoped::new(&NAME, "inner", async {
            tokio::task::yield_now().await;
            read(&NAME, |name| *name)
        });
        let outer = Scoped::new(&NAME, "outer", async {
            let before = read(&NAME, |name| *name);
            let nested = inner.await;
            let after = read(&NAME, |name| *name);
            (before, nested, after)
        });
        assert_eq!(outer.await, (Some("outer"), Some("inner"), Some("outer")));
        assert_eq!(read(&NAME, |name| *name), None);
    }

    /// A future that completes at once and keeps its witness until it is dropped.
    struct Holding<'a> {
        _witness: Witness<'a>,
    }

    impl Future for Holding<'_> {
        type Output = ();

        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            Poll::Ready(())
        }
    }

    #[tokio::test]
    async fn a_future_completed_or_cancelled_is_dropped_inside_its_scope() {
        let dropped = RefCell::new(Vec::new());
        let completed = Scoped::new(
            &NAME,
            "completed",
            Holding {
                _witness: Witness(&dropped),
            },
        );
        completed.await;
        let witness = Witness(&dropped);
        let mut cancelled = Box::pin(Scoped::new(&NAME, "cancelled", async move {
            let _witness = witness;
            std::future::pending::<()>().await;
        }));
        let first = std::future::poll_fn(|context| Poll::Ready(cancelled.as_mut().poll(context)));
        assert!(first.await.is_pending());
        drop(cancelled);
        assert_eq!(*dropped.borrow(), [Some("completed"), Some("cancelled")]);
    }
}
