//! Compensation: each scope that has something to compensate carries a `CompensationLog` in
//! every state of its enum, so that a saved state keeps it.
//!
//! - A task with `compensatedBy` records its name in the log when it completes (after its output
//!   filter, before it leaves).
//! - An end or a transition with `compensate: true` (an onError transition too) first runs, for
//!   every recorded task, most recent first, a compensation chain: the task `compensatedBy`
//!   names, entered with the current data and stepped through its transitions (which stay among
//!   compensation tasks) until it ends; its output is the data of the next chain, and the last
//!   output is the data the end or transition continues with. The log is then empty.
//! - A chain that fails fails the run with the chain's error, marked with the compensated task and,
//!   on an onError path, the error that led there. A chain that ends with `terminate` ends the
//!   whole instance with its output.
//!
//! The log belongs to one scope: a branch or foreach body compensates only its own tasks, and its
//! log is dropped when it ends. A scope where no task declares `compensatedBy`, or none asks for
//! compensation, keeps no log: every hook below is then empty, so such workflows compile to the
//! same code as before compensation existed.

use super::{Context, rt};
use crate::ir::{End, Task, Transition};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Whether the scope keeps a compensation log: a task declares `compensatedBy` and a normal task
/// asks for compensation.
pub(super) fn in_use(cx: &Context<'_>) -> bool {
    let tasks = &cx.scope.tasks;
    tasks.iter().any(|t| t.compensated_by.is_some()) && tasks.iter().any(asks_for_compensation)
}

/// Whether the task's end or one of its transitions asks for compensation. Compensation tasks
/// never do (validation), and are never treated as doing so: compensation does not nest.
fn asks_for_compensation(task: &Task) -> bool {
    !task.used_for_compensation
        && (task.end.as_ref().is_some_and(|e| e.compensate)
            || task.transitions().iter().any(|t| t.compensate))
}

/// Whether running the task calls the scope's compensation method.
pub(super) fn calls_compensation(cx: &Context<'_>, task: &Task) -> bool {
    in_use(cx) && asks_for_compensation(task)
}

/// `compensations: CompensationLog,`: a field of each task variant, a parameter of `run_*`.
pub(super) fn field(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    if in_use(cx) {
        quote!(compensations: #rt::CompensationLog,)
    } else {
        TokenStream::new()
    }
}

/// `, compensations: CompensationLog`: the parameter of `enter_*`.
pub(super) fn then_param(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    if in_use(cx) {
        quote!(, compensations: #rt::CompensationLog)
    } else {
        TokenStream::new()
    }
}

/// `compensations,`: the argument to `run_*`, the field init in `enter_*`.
pub(super) fn pass(cx: &Context<'_>) -> TokenStream {
    if in_use(cx) {
        quote!(compensations,)
    } else {
        TokenStream::new()
    }
}

/// `, compensations`: in patterns, in calls of `enter_*`, in the retry state.
pub(super) fn then_pass(cx: &Context<'_>) -> TokenStream {
    if in_use(cx) {
        quote!(, compensations)
    } else {
        TokenStream::new()
    }
}

/// `, CompensationLog::new()`: where a scope starts, nothing has completed yet.
pub(super) fn then_fresh(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    if in_use(cx) {
        quote!(, #rt::CompensationLog::new())
    } else {
        TokenStream::new()
    }
}

/// After a task completed: records it when it declares `compensatedBy`.
pub(super) fn record(cx: &Context<'_>, task: &Task) -> TokenStream {
    if !in_use(cx) || task.compensated_by.is_none() {
        return TokenStream::new();
    }
    let name = &task.name.value;
    quote! {
        let mut compensations = compensations;
        compensations.record(#name);
    }
}

/// Before a transition is taken: runs the compensation when it asks for it, leaving its output in
/// `data` and an empty log. `cause` is the error being handled on an onError path.
pub(super) fn before_transition(
    cx: &Context<'_>,
    task: &Task,
    transition: &Transition,
    data: &Ident,
    cause: Option<&Ident>,
) -> Option<TokenStream> {
    if !transition.compensate || !calls_compensation(cx, task) {
        return None;
    }
    let rt = rt();
    let run = run(cx, data, cause);
    Some(quote! {
        #run
        let compensations = #rt::CompensationLog::new();
    })
}

/// Around an end (`leave` builds the final state from `data`): runs the compensation first when
/// the end asks for it, else drops the log, which ends with its scope. `end` is `None` for an
/// onError handler without a transition, which ends the scope without compensation.
pub(super) fn around_end(
    cx: &Context<'_>,
    task: &Task,
    end: Option<&End>,
    data: &Ident,
    leave: TokenStream,
) -> TokenStream {
    if !in_use(cx) {
        return leave;
    }
    let before = if end.is_some_and(|e| e.compensate) && calls_compensation(cx, task) {
        run(cx, data, None)
    } else {
        quote!(::core::mem::drop(compensations);)
    };
    quote! {{
        #before
        #leave
    }}
}

/// Runs the scope's compensation over `data`; a chain that terminates ends the instance here.
fn run(cx: &Context<'_>, data: &Ident, cause: Option<&Ident>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let compensate = method(cx);
    let cause = match cause {
        Some(error) => quote!(::core::option::Option::Some(&#error)),
        None => quote!(::core::option::Option::None),
    };
    let io = cx.step_takes_io().then(|| quote!(, io));
    quote! {
        let #data = match self.#compensate(#data, compensations, #cause #io).await? {
            #rt::ScopeEnd::Completed(compensated) => compensated,
            #rt::ScopeEnd::Terminated(output) => {
                return ::core::result::Result::Ok(#state::Terminated { output });
            }
        };
    }
}

fn method(cx: &Context<'_>) -> Ident {
    format_ident!("{}compensate", cx.prefix)
}

/// The scope's compensation method, when it keeps a log. It is boxed because the chains run
/// through the scope's `step`, which runs the task that called it.
pub(super) fn emit_method(cx: &Context<'_>) -> Option<TokenStream> {
    if !in_use(cx) {
        return None;
    }
    let rt = rt();
    let state = cx.state_ident();
    let compensate = method(cx);
    let step = cx.step_fn();
    let id = &cx.workflow.id.value;
    let (io_param, io_arg) = if cx.step_takes_io() {
        (quote!(io: &'a #rt::Io,), quote!(, io))
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    // One arm per compensation task, naming every task it compensates, in document order.
    let mut arms: Vec<(usize, Vec<&str>)> = Vec::new();
    for task in &cx.scope.tasks {
        let Some(target) = task
            .compensated_by
            .as_ref()
            .and_then(|t| cx.target(&t.value))
        else {
            continue;
        };
        match arms.iter_mut().find(|(t, _)| *t == target) {
            Some((_, names)) => names.push(task.name.as_str()),
            None => arms.push((target, vec![task.name.as_str()])),
        }
    }
    let arms = arms.iter().map(|(target, names)| {
        let enter = cx.enter_fn(*target);
        quote!(#(#names)|* => Self::#enter(data, #rt::CompensationLog::new()))
    });
    let doc = format!(
        " Runs the compensation of every task in `compensations`, most recent first, over \
         `data`, in {}.",
        if cx.root {
            "the workflow".to_owned()
        } else {
            format!("the scope of `{}`", cx.prefix.trim_end_matches('_'))
        }
    );
    Some(quote! {
        #[doc = #doc]
        fn #compensate<'a>(
            &'a self,
            data: #rt::Value,
            compensations: #rt::CompensationLog,
            cause: ::core::option::Option<&'a #rt::ErrorObject>,
            #io_param
        ) -> ::core::pin::Pin<::std::boxed::Box<dyn ::core::future::Future<Output = ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError>> + ::core::marker::Send + 'a>> {
            ::std::boxed::Box::pin(async move {
                let mut data = data;
                for task in compensations.into_latest_first() {
                    let entered = match task.as_str() {
                        #(#arms,)*
                        _ => ::core::result::Result::Err(#rt::WorkflowError::new(
                            #id,
                            task.as_str(),
                            #rt::ErrorObject::new(
                                #rt::COMPENSATION_ERROR,
                                ::std::format!(
                                    "the compensation record names task `{}`, which has no compensation in this workflow",
                                    task
                                ),
                            ),
                            data,
                        )),
                    };
                    let mut state = entered.map_err(|failure| failure.with_compensation(&task, cause))?;
                    data = loop {
                        state = match state {
                            #state::Completed { output } => break output,
                            #state::Terminated { output } => {
                                return ::core::result::Result::Ok(#rt::ScopeEnd::Terminated(output));
                            }
                            other => self
                                .#step(other #io_arg)
                                .await
                                .map_err(|failure| failure.with_compensation(&task, cause))?,
                        };
                    };
                }
                ::core::result::Result::Ok(#rt::ScopeEnd::Completed(data))
            })
        }
    })
}
