//! Boxing a future where it is made.

/// `Box::pin(future)`, except that the future is written into its box once the box exists
/// rather than made on the stack and copied in. A future's every byte is copied when it moves,
/// whatever it holds yet, and the runtime's futures hold every level of a step (a run's, a
/// branch's or an iteration's is a few hundred bytes to a few kilobytes): boxing the run of
/// `switch + 1 call` (1,712 bytes) with `Box::pin` cost 2.4% of its instructions (issue 10).
/// A macro rather than a function taking a closure, which measured less of the gain: the
/// expression must be made where the box is written. The box's type comes from the
/// expression: bind it before it is coerced to a `dyn Future`.
macro_rules! pinned {
    ($future:expr) => {
        ::std::boxed::Box::into_pin(::std::boxed::Box::write(
            ::std::boxed::Box::new_uninit(),
            $future,
        ))
    };
}

pub(crate) use pinned;
