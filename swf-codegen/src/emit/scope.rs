//! One scope's items: its state enum, and its methods: `enter_*` and `run_*` per task,
//! `advance` (one step of the scope), for nested scopes `begin`, and the compensation methods.
//! Nested scopes are emitted recursively, each under its own method prefix.

use super::fields::{Fields, Log, Progress};
use super::task::{RunKind, emit_run};
use super::{Context, compensation, events, rt, scheduled_interval};
use crate::emit_parts::path::path_ref;
use crate::ir::{SwitchConditions, TaskKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The methods of every scope (in the machine's `impl`), and the types of every scope.
pub(super) struct Emitted {
    /// Public API: the workflow's `advance`.
    pub public_methods: Vec<TokenStream>,
    /// Everything else, for the machine's private block (see `private_block`).
    pub methods: Vec<TokenStream>,
    pub types: Vec<TokenStream>,
}

pub(super) fn emit_tree(root: &Context<'_>) -> Emitted {
    let mut emitted = Emitted {
        public_methods: Vec::new(),
        methods: Vec::new(),
        types: Vec::new(),
    };
    emit_scope(root, &mut emitted);
    emitted
}

fn emit_scope(cx: &Context<'_>, out: &mut Emitted) {
    out.types.push(super::state::emit(cx));
    let (runs, kinds): (Vec<_>, Vec<_>) = (0..cx.scope.tasks.len())
        .map(|index| emit_run(cx, index))
        .unzip();
    if cx.root {
        out.public_methods.push(emit_advance(cx, &kinds));
    } else {
        out.methods.push(emit_begin(cx));
        out.methods.push(emit_advance(cx, &kinds));
    }
    out.methods.extend(compensation::emit_methods(cx));
    for (index, run) in runs.into_iter().enumerate() {
        if !enters_inline(cx, index) {
            out.methods.push(emit_enter(cx, index));
        }
        out.methods.push(run);
        let task = cx.task(index);
        if let TaskKind::Parallel { branches, .. } = &task.kind {
            for (b, branch) in branches.iter().enumerate() {
                let nested = cx.nested(index, b, &branch.scope);
                emit_scope(&nested, out);
                if !branch.wait_for_completion {
                    out.methods.push(emit_drive_detached(&nested));
                }
            }
        }
        if let TaskKind::ForEach { scope, .. } = &task.kind {
            emit_scope(&cx.nested(index, 0, scope), out);
        }
    }
}

/// `advance`: one step of the scope, running the task its state is at (`kinds` says, per
/// task, whether its `run_*` is `async`).
fn emit_advance(cx: &Context<'_>, kinds: &[RunKind]) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let advance = cx.advance_fn();
    // The tasks that are their calls and a transition share one `await` (see the runtime's
    // `CallStep`): the others' arms return their step.
    let shares_calls = kinds.contains(&RunKind::Calls);
    let leave = shares_calls.then(|| quote!(return));
    let dispatch = (0..cx.scope.tasks.len()).map(|i| {
        let variant = cx.variant(i);
        let run = cx.run_fn(i);
        let names = Fields::of(cx, i).names();
        let step = match kinds[i] {
            RunKind::Calls => return quote!(#state::#variant { data } => Self::#run(data)),
            RunKind::Async => quote!(self.#run(#(#names,)* io).await),
            RunKind::Sync => quote!(self.#run(#(#names,)* io)),
            RunKind::Associated => quote!(Self::#run(#(#names,)* io)),
        };
        quote!(#state::#variant { #(#names),* } => #leave #step)
    });
    let (visibility, doc) = if cx.root {
        (
            quote!(pub),
            quote! {
                /// Runs one step of an instance: the task `state` is at, if it can run now.
                ///
                /// A step never waits for an event or a deadline: when the task cannot run yet
                /// (its event has not arrived, its delay or retry wait has not passed) it
                /// returns `Progress::Waiting` with the state unchanged and what it waits for,
                /// having done nothing. Save the state after every `Progress::Ran` to resume
                /// the instance later, in this process or another. A state that has ended is
                /// returned unchanged.
                ///
                /// # Errors
                /// The `WorkflowError` of a task that failed with no retry or onError left,
                /// with the data it had.
            },
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    // The root's `advance` is public: its body names the public path itself.
    let progress = if cx.root { super::api() } else { rt };
    let step = quote! {
        match state {
            #(#dispatch,)*
            ended @ (#state::Completed { .. } | #state::Terminated { .. }) => {
                #leave ::core::result::Result::Ok(#progress::Progress::Ran(ended))
            }
        }
    };
    // The shared calls run in this future, not in one of their own that it would copy as it
    // starts it (see the runtime's `run_call_step!`).
    let step = if shares_calls {
        quote! {
            let calls = #step;
            #rt::run_call_step!(calls, self, io)
        }
    } else {
        step
    };
    let body = match super::schema::workflow_output_check(cx) {
        None => step,
        Some(checked) => {
            // Checked whichever arm the step leaves by: the shared form's arms `return`.
            let step = if shares_calls {
                quote!(async { #step }.await)
            } else {
                step
            };
            quote! {
                let task = state.task_name();
                let step = #step;
                #checked
            }
        }
    };
    // Not an `async fn`, which would hold `state` twice in the future that the driver copies
    // as it starts each step (and that a branch or iteration boxes). A nested scope's is in the
    // private block, which allows it already.
    let allow = cx.root.then(|| quote!(#[allow(clippy::manual_async_fn)]));
    quote! {
        #doc
        #allow
        #visibility fn #advance<'a>(
            &'a self,
            state: #state,
            io: &'a #rt::Io,
        ) -> impl ::core::future::Future<Output = ::core::result::Result<#rt::Progress<#state>, #rt::WorkflowError>> + 'a {
            async move { #body }
        }
    }
}

/// `begin` of a nested scope: its start task entered with `input`, or `Err(input)` when its start
/// is scheduled and not active now (the draft: the scope then completes at once with its input).
fn emit_begin(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let begin = cx.begin_fn();
    let start = cx.start_index();
    let log =
        (Fields::of(cx, start).log == Log::Record).then(|| quote!(#rt::CompensationLog::new()));
    // `Ok(variant).map(Ok)` would be clippy's unnecessary_map_on_constructor.
    let entered = if log.is_none() && enters_inline(cx, start) {
        let variant = inline_variant(cx, start, quote!(input));
        quote!(::core::result::Result::Ok(::core::result::Result::Ok(#variant)))
    } else {
        let enter = enter_call(cx, start, quote!(input), log);
        quote!(#enter.map(::core::result::Result::Ok))
    };
    let schedule = scheduled_interval(cx.scope).map(|interval| {
        let window = events::emit_schedule_window(interval);
        quote! {
            if #rt::check_schedule(&#window, io).is_err() {
                return ::core::result::Result::Ok(::core::result::Result::Err(input));
            }
        }
    });
    quote! {
        fn #begin(
            input: #rt::Value,
            io: &#rt::Io,
        ) -> ::core::result::Result<::core::result::Result<#state, #rt::Value>, #rt::WorkflowError> {
            let _ = io;
            #schedule
            #entered
        }
    }
}

/// The driver of a branch the parallel task does not wait for: it runs on its own tokio task,
/// to its end.
fn emit_drive_detached(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let drive = quote::format_ident!("{}drive_detached", cx.prefix);
    let begin = cx.begin_fn();
    let advance = cx.advance_fn();
    quote! {
        async fn #drive(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError> {
            let state = match Self::#begin(input, io)? {
                ::core::result::Result::Ok(state) => state,
                ::core::result::Result::Err(output) => {
                    return ::core::result::Result::Ok(#rt::ScopeEnd::Completed(output));
                }
            };
            #rt::run_to_end(Self::ID, state, io, &[], |state| self.#advance(state, io)).await
        }
    }
}

/// Whether entering task `index` reads the clock: a delay, or a wait for events whose deadline
/// starts then.
pub(super) fn enter_takes_io(cx: &Context<'_>, index: usize) -> bool {
    matches!(
        Fields::of(cx, index).progress,
        Progress::DelayEnd | Progress::WaitEnd | Progress::Resume { wait_end: true }
    )
}

/// A call of `enter_*` of task `index` with `data` and the scope's compensation record `log`.
pub(super) fn enter_call(
    cx: &Context<'_>,
    index: usize,
    data: TokenStream,
    log: Option<TokenStream>,
) -> TokenStream {
    if log.is_none() && enters_inline(cx, index) {
        let variant = fresh_variant(cx, index, data, None);
        return quote!(::core::result::Result::Ok(#variant));
    }
    let enter = cx.enter_fn(index);
    let log = log.map(|log| quote!(, #log));
    let io = enter_takes_io(cx, index).then(|| quote!(, io));
    quote!(Self::#enter(#data #log #io))
}

/// The variant that entering task `index` builds, when it enters inline.
fn inline_variant(cx: &Context<'_>, index: usize, data: TokenStream) -> TokenStream {
    fresh_variant(cx, index, data, None)
}

/// Whether entering task `index` only builds its variant (no input filter, no compensation
/// record, no clock): then it is written where it happens, and the task has no `enter_*`.
pub(super) fn enters_inline(cx: &Context<'_>, index: usize) -> bool {
    cx.task(index).data_filter.input.is_none()
        && Fields::of(cx, index).log == Log::None
        && !enter_takes_io(cx, index)
}

/// `enter_*`: the transition into a task applies its input filter.
fn emit_enter(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let task = cx.task(index);
    let enter = cx.enter_fn(index);
    let name = &task.name.value;
    let filter = task.data_filter.input.as_ref().map(|path| {
        let path = path_ref(path);
        let failure = super::exit::fail(cx, quote!(#name), quote!(error), quote!(data));
        quote! {
            let mut data = data;
            if let ::core::result::Result::Err(error) = #rt::filter_in_place(#path, &mut data) {
                return ::core::result::Result::Err(#failure);
            }
        }
    });
    let log = match Fields::of(cx, index).log {
        Log::None => None,
        Log::Record => Some(quote!(, compensations: #rt::CompensationLog)),
        Log::Compensating => Some(quote!(, compensating: #rt::Compensating)),
    };
    let io = enter_takes_io(cx, index).then(|| quote!(, io: &#rt::Io));
    let variant = fresh_variant(cx, index, quote!(data), None);
    quote! {
        fn #enter(data: #rt::Value #log #io) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #filter
            ::core::result::Result::Ok(#variant)
        }
    }
}

/// Task `index`'s variant as it is when the task becomes active, with `data`, and with `retry`
/// (the local of that name, a `RetryProgress`) when a retry restarts it: nothing started yet,
/// its deadline counted from now, or from when the retry's attempt starts. The compensation
/// record is the local of the same name.
pub(super) fn fresh_variant(
    cx: &Context<'_>,
    index: usize,
    data: TokenStream,
    retry: Option<TokenStream>,
) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let variant = cx.variant(index);
    let fields = Fields::of(cx, index);
    // Shorthand when the value is the local `retry`, as clippy wants in the user's crate.
    let retried = retry.is_some();
    let retry = fields.retry.then(|| match &retry {
        Some(retry) if retry.to_string() == "retry" => quote!(retry,),
        Some(retry) => quote!(retry: #retry,),
        None => quote!(retry: ::core::default::Default::default(),),
    });
    // `until` from `duration` (an `Option` when `optional`).
    let until = |duration: TokenStream, optional: bool| match (retried, optional) {
        (false, false) => quote!(until: #rt::deadline(io, #duration),),
        (false, true) => quote!(until: #rt::deadline_of(io, #duration),),
        (true, false) => quote!(until: #rt::retried_deadline(io, &retry, #duration),),
        (true, true) => quote!(until: #rt::retried_deadline_of(io, &retry, #duration),),
    };
    let log = match fields.log {
        Log::None => TokenStream::new(),
        Log::Record => quote!(compensations,),
        Log::Compensating => quote!(compensating,),
    };
    let progress = match &fields.progress {
        Progress::None => TokenStream::new(),
        Progress::DelayEnd => {
            let millis = match &cx.task(index).kind {
                TaskKind::Delay { time_delay } => time_delay.as_ref().map_or(0, |d| d.millis),
                _ => 0,
            };
            until(quote!(#rt::Duration::from_millis(#millis)), false)
        }
        Progress::WaitEnd => until(wait_timeout(cx, index), true),
        Progress::Resume { wait_end } => {
            let until = wait_end.then(|| until(wait_timeout(cx, index), true));
            quote!(#until resume: ::core::option::Option::None,)
        }
        Progress::Callback => quote!(phase: #rt::CallbackPhase::Call,),
        Progress::Branches(_) => quote!(branches: ::core::option::Option::None,),
        Progress::Iterations(_) => quote!(each: ::core::option::Option::None,),
        Progress::Child(_) => quote!(child: ::core::option::Option::None,),
    };
    // Shorthand when the value is the local `data`, as clippy wants in the user's crate.
    let data = if data.to_string() == "data" {
        data
    } else {
        quote!(data: #data)
    };
    if retried {
        // The deadline reads the retry before the field takes it (fields are evaluated in
        // the order written).
        quote!(#state::#variant { #data, #progress #retry #log })
    } else {
        quote!(#state::#variant { #data, #retry #log #progress })
    }
}

/// The timeout of a task's wait for events, from when it becomes active: an event task's
/// `timeout` (ignored on the workflow's start task, where the host applies the draft's starting
/// rules; for the earlier drafts' entries, the earliest entry timeout), a switch's
/// `eventTimeout`.
fn wait_timeout(cx: &Context<'_>, index: usize) -> TokenStream {
    let task = cx.task(index);
    let duration = match &task.kind {
        TaskKind::Event {
            timeout,
            events_actions,
            ..
        } => {
            if events_actions.iter().any(events::has_own_exit) {
                events::earliest_entry_timeout(events_actions).map(|(millis, _)| millis)
            } else if cx.root && task.start.is_some() {
                None
            } else {
                timeout.as_ref().map(|t| t.millis)
            }
        }
        TaskKind::Switch(switch) if matches!(switch.conditions, SwitchConditions::Event(_)) => {
            switch.event_timeout.as_ref().map(|t| t.millis)
        }
        _ => None,
    };
    let rt = rt();
    match duration {
        Some(millis) => quote!(::core::option::Option::Some(#rt::Duration::from_millis(#millis))),
        None => quote!(::core::option::Option::None),
    }
}
