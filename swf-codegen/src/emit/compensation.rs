//! Compensation: each scope that has something to compensate carries a `CompensationLog` in
//! every normal task's state, so that a saved state keeps it.
//!
//! - A task with `compensatedBy` records its name in the log when it completes (after its output
//!   filter, before it leaves).
//! - An end or a transition with `compensate: true` (an onError transition too) starts the
//!   scope's compensation: for every recorded task, most recent first, the task `compensatedBy`
//!   names is entered with the current data and steps through its transitions (which stay among
//!   compensation tasks) until it ends; its output is the data of the next one. Each step of a
//!   compensation task is a step of the instance like any other: the task's state carries the
//!   compensation in progress (`Compensating`: which task it compensates, the records left, the
//!   exit to take afterwards), so a saved instance resumes it. Once every record is compensated,
//!   the end or transition goes on (its event, its target) with an empty log.
//! - A compensation task that fails fails the run with its error, marked with the compensated
//!   task and, on an onError path, the error that led there. One that ends with `terminate` ends
//!   the whole instance with its output.
//!
//! The log belongs to one scope: a branch or foreach body compensates only its own tasks, and its
//! log is dropped when it ends. A scope where no task declares `compensatedBy`, or none asks for
//! compensation, keeps no log: every hook below is then empty.

use super::{Context, rt};
use crate::ir::{Task, Transition};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Whether the scope keeps a compensation log: a task declares `compensatedBy` and a normal task
/// asks for compensation.
/// Computed once per scope (`Context` keeps it): asked for each task, it made generation
/// quadratic in the number of tasks.
pub(super) fn in_use(cx: &Context<'_>) -> bool {
    cx.compensation_in_use
}

/// See [`in_use`]: the scan itself.
pub(super) fn scope_in_use(scope: &crate::ir::Scope) -> bool {
    let tasks = &scope.tasks;
    tasks.iter().any(|t| t.compensated_by.is_some()) && tasks.iter().any(asks_for_compensation)
}

/// Whether the task's end or one of its transitions asks for compensation. Compensation tasks
/// never do (validation), and are never treated as doing so: compensation does not nest.
fn asks_for_compensation(task: &Task) -> bool {
    !task.used_for_compensation
        && (task.end.as_ref().is_some_and(|e| e.compensate)
            || task.transitions().iter().any(|t| t.compensate))
}

/// Whether leaving the task may start the scope's compensation.
pub(super) fn calls_compensation(cx: &Context<'_>, task: &Task) -> bool {
    in_use(cx) && asks_for_compensation(task)
}

/// After a task completed: records it when it declares `compensatedBy`.
pub(super) fn record(cx: &Context<'_>, task: &Task) -> TokenStream {
    if !in_use(cx) || task.compensated_by.is_none() || task.used_for_compensation {
        return TokenStream::new();
    }
    let name = &task.name.value;
    quote! {
        let mut compensations = compensations;
        compensations.record(#name);
    }
}

/// The exits of the scope that ask for compensation, in document order (each task's end, then
/// its transitions): their position is the number a saved compensation resumes with.
fn compensating_exits<'a>(cx: &Context<'a>) -> Vec<(usize, Option<&'a Transition>)> {
    let mut exits = Vec::new();
    for (index, task) in cx.scope.tasks.iter().enumerate() {
        if !calls_compensation(cx, task) {
            continue;
        }
        if task.end.as_ref().is_some_and(|e| e.compensate) {
            exits.push((index, None));
        }
        for transition in task.transitions() {
            if transition.compensate {
                exits.push((index, Some(transition)));
            }
        }
    }
    exits
}

/// The number of task `index`'s end (`None`) or transition among the compensating exits.
pub(super) fn exit_number(cx: &Context<'_>, index: usize, transition: Option<&Transition>) -> u32 {
    let position = compensating_exits(cx).iter().position(|(task, exit)| {
        *task == index
            && match (exit, transition) {
                (None, None) => true,
                (Some(a), Some(b)) => std::ptr::eq(*a, b),
                _ => false,
            }
    });
    u32::try_from(position.unwrap_or(usize::MAX)).unwrap_or(u32::MAX)
}

fn compensate_fn(cx: &Context<'_>) -> Ident {
    format_ident!("{}compensate", cx.prefix)
}

fn resume_fn(cx: &Context<'_>) -> Ident {
    format_ident!("{}after_compensation", cx.prefix)
}

/// Starts the compensation of the scope's log over `data`, to take exit `exit` afterwards;
/// `cause` is the error an onError transition handles.
pub(super) fn begin(
    cx: &Context<'_>,
    data: &Ident,
    exit: u32,
    cause: Option<&Ident>,
) -> TokenStream {
    let compensate = compensate_fn(cx);
    let cause = match cause {
        Some(error) => quote!(::core::option::Option::Some(::core::clone::Clone::clone(&#error))),
        None => quote!(::core::option::Option::None),
    };
    quote!(self.#compensate(#data, compensations, #exit, #cause, io).await)
}

/// From the end of a compensation task: goes on with the next record, or takes the exit.
pub(super) fn next_compensation(cx: &Context<'_>, data: &Ident) -> TokenStream {
    let rt = rt();
    let compensate = compensate_fn(cx);
    quote! {{
        let #rt::Compensating { remaining, resume, cause, .. } = compensating;
        self.#compensate(#data, remaining, resume, cause, io).await
    }}
}

/// The scope's `compensate` (enter the compensation of the latest record, or take the exit once
/// none is left) and `after_compensation` (the rest of each compensating exit), when it keeps a
/// log.
pub(super) fn emit_methods(cx: &Context<'_>) -> Option<TokenStream> {
    if !in_use(cx) {
        return None;
    }
    let rt = rt();
    let state = cx.state_ident();
    let compensate = compensate_fn(cx);
    let resume = resume_fn(cx);
    let id = &cx.workflow.id.value;
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
        let enter = super::scope::enter_call(cx, *target, quote!(data), Some(quote!(compensating)));
        quote!(#(#names)|* => #enter.map_err(|failure| marking.mark(failure)))
    });
    let data = format_ident!("data");
    let exits = compensating_exits(cx)
        .into_iter()
        .enumerate()
        .map(|(number, (index, exit))| {
            let number = u32::try_from(number).unwrap_or(u32::MAX);
            let go = match exit {
                None => super::exit::end_state(cx, index, &data),
                Some(transition) => super::exit::take_transition(
                    cx,
                    index,
                    transition,
                    &data,
                    Some(quote!(#rt::CompensationLog::new())),
                ),
            };
            quote!(#number => #go,)
        });
    let unknown_resume = super::exit::fail(
        cx,
        quote!(""),
        quote!(#rt::ErrorObject::new(
            #rt::COMPENSATION_ERROR,
            ::std::format!("a saved compensation resumes with exit {exit}, which this workflow does not have"),
        )),
        quote!(data),
    );
    let doc = format!(
        " Compensates the latest task recorded in `remaining` in {}, or, once none is left, \
         takes the exit that asked for the compensation.",
        if cx.root {
            "the workflow".to_owned()
        } else {
            format!("the scope of `{}`", cx.prefix.trim_end_matches('_'))
        }
    );
    let doc = super::names::doc_text(&doc);
    Some(quote! {
        #[doc = #doc]
        async fn #compensate(
            &self,
            data: #rt::Value,
            mut remaining: #rt::CompensationLog,
            resume: u32,
            cause: ::core::option::Option<#rt::ErrorObject>,
            io: &#rt::Io,
        ) -> ::core::result::Result<#state, #rt::WorkflowError> {
            let ::core::option::Option::Some(task) = remaining.pop_latest() else {
                return self.#resume(resume, data, io).await;
            };
            let compensating = #rt::Compensating { task: task.clone(), remaining, resume, cause };
            let marking = compensating.clone();
            match task.as_str() {
                #(#arms,)*
                _ => ::core::result::Result::Err(marking.mark(#rt::WorkflowError::new(
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
                ))),
            }
        }

        /// The rest of the end or transition that asked for a compensation, once it is done.
        async fn #resume(
            &self,
            exit: u32,
            data: #rt::Value,
            io: &#rt::Io,
        ) -> ::core::result::Result<#state, #rt::WorkflowError> {
            let _ = io;
            match exit {
                #(#exits)*
                _ => ::core::result::Result::Err(#unknown_resume),
            }
        }
    })
}
