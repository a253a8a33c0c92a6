//! Leaving a task: the output filter, then a transition (with its condition) or an end; and the
//! error path: retries first, then onError handlers, else the run fails with the task's data.
//!
//! Every piece here is an expression of type `Result<State, WorkflowError>` evaluated inside an
//! `async` block of the task's `run_*` method, so a `return` in it gives the block's value.

use super::fields::{Fields, Log};
use super::{Context, compensation, rt};
use crate::emit_parts::{expr::condition, path::path_ref};
use crate::ir::{EndKind, EndStatus, SwitchConditions, Task, TaskKind, Transition};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// A `WorkflowError` for `task` carrying `error` and `data`.
pub(super) fn fail(
    cx: &Context<'_>,
    task: TokenStream,
    error: TokenStream,
    data: TokenStream,
) -> TokenStream {
    let rt = rt();
    let id = &cx.workflow.id.value;
    quote!(#rt::WorkflowError::new(#id, #task, #error, #data))
}

/// The success arm: `data` holds the task data, `exit` the switch's choice.
pub(super) fn emit_exit_dispatch(cx: &Context<'_>, index: usize) -> TokenStream {
    exit_dispatch(cx, index, true)
}

/// The success arm of a task whose output filter its last call applied: `data` holds the
/// task's output (see the runtime's `Call::output`).
pub(super) fn emit_exit_dispatch_of_output(cx: &Context<'_>, index: usize) -> TokenStream {
    exit_dispatch(cx, index, false)
}

fn exit_dispatch(cx: &Context<'_>, index: usize, filters: bool) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let name = &task.name.value;
    // The filter's failure is the arm's value, not a `return`: a success that returns or
    // awaits nothing is the step of a plain task (see `task::emit_run`).
    let filter = task.data_filter.output.as_ref().filter(|_| filters);
    let filtered = filter.map(|path| {
        let path = path_ref(path);
        let id = &cx.workflow.id.value;
        quote!(#rt::filter_output(#path, data, #id, #name))
    });
    let record = compensation::record(cx, task);
    // Without a filter the task's data is its output: named `output` only where a
    // compensation record reads it.
    let named_output =
        (filtered.is_none() && !record.is_empty()).then(|| quote!(let output = data;));
    let output = if filtered.is_none() && named_output.is_none() {
        Ident::new("data", Span::call_site())
    } else {
        output_ident()
    };
    let leave = match &task.kind {
        TaskKind::Switch(switch) => {
            let transitions: Vec<&Transition> = match &switch.conditions {
                SwitchConditions::Data(conditions) => conditions
                    .iter()
                    .filter_map(|c| c.transition.as_ref())
                    .collect(),
                SwitchConditions::Event(conditions) => conditions
                    .iter()
                    .filter_map(|c| c.transition.as_ref())
                    .collect(),
            };
            let arms = transitions.iter().enumerate().map(|(i, t)| {
                let go = emit_transition(cx, index, t, &output, None);
                quote!(#i => { #go })
            });
            let default = match &switch.default {
                Some(t) => emit_transition(cx, index, t, &output, None),
                None => quote!(::core::unreachable!()),
            };
            quote! {
                match exit {
                    #(#arms)*
                    _ => { #default }
                }
            }
        }
        // The earlier drafts' event entries each have their transition: `exit` is the entry.
        TaskKind::Event { events_actions, .. } if dispatches_on_exit(task) => {
            let arms = events_actions.iter().enumerate().map(|(i, entry)| {
                let go = match &entry.transition {
                    Some(t) => emit_transition(cx, index, t, &output, None),
                    None => emit_leave(cx, index, &output),
                };
                quote!(#i => { #go })
            });
            let fallback = emit_leave(cx, index, &output);
            quote! {
                match exit {
                    #(#arms)*
                    _ => { #fallback }
                }
            }
        }
        _ => emit_leave(cx, index, &output),
    };
    match filtered {
        Some(filtered) => quote! {
            match #filtered {
                ::core::result::Result::Ok(output) => {
                    #record
                    #leave
                }
                ::core::result::Result::Err(failure) => ::core::result::Result::Err(failure),
            }
        },
        None => quote! {
            #named_output
            #record
            #leave
        },
    }
}

/// Whether the success arm looks at `exit`: a switch's choice, or the entry of an earlier
/// draft's event task whose entries have their own transitions.
pub(super) fn dispatches_on_exit(task: &Task) -> bool {
    match &task.kind {
        TaskKind::Switch(_) => true,
        TaskKind::Event { events_actions, .. } => {
            task.end.is_none() && events_actions.iter().any(|e| e.transition.is_some())
        }
        _ => false,
    }
}

/// `output` or `output: handled`: field init shorthand keeps generated code clippy-clean.
fn output_fields(data: &Ident) -> TokenStream {
    if *data == "output" {
        quote!(output)
    } else {
        quote!(output: #data)
    }
}

fn output_ident() -> Ident {
    Ident::new("output", Span::call_site())
}

/// The task's own transition or end, taking the data in `data`.
fn emit_leave(cx: &Context<'_>, index: usize, data: &Ident) -> TokenStream {
    let task = cx.task(index);
    if let Some(end) = &task.end {
        if end
            .status
            .as_ref()
            .is_some_and(|s| s.value == EndStatus::Failure)
        {
            // The first draft's END state with status FAILURE: the run fails with its data.
            let rt = rt();
            let name = &task.name.value;
            let message = format!("the workflow ended in END state `{name}` with status FAILURE");
            let error = quote!(#rt::ErrorObject::new(#rt::ErrorObject::END_FAILURE, #message));
            let failure = fail(cx, quote!(#name), error, quote!(#data));
            return quote!(::core::result::Result::Err(#failure));
        }
        if end.compensate && compensation::calls_compensation(cx, task) {
            let exit = compensation::exit_number(cx, index, None);
            return compensation::begin(cx, data, exit, None);
        }
        let leave = end_state(cx, index, data);
        return match Fields::of(cx, index).log {
            // The log ends with its scope.
            Log::Record => quote! {{
                ::core::mem::drop(compensations);
                #leave
            }},
            Log::None | Log::Compensating => leave,
        };
    }
    match &task.transition {
        Some(transition) => emit_transition(cx, index, transition, data, None),
        // Validation guarantees a transition or an end.
        None => end_state(cx, index, data),
    }
}

/// What an end of task `index` leads to, once any compensation it asked for ran: it produces
/// its event (an end of kind `event`), then the scope completes or terminates. A compensation
/// task's end goes on with the next compensation instead of ending the scope.
pub(super) fn end_state(cx: &Context<'_>, index: usize, data: &Ident) -> TokenStream {
    let state = cx.state_ident();
    let task = cx.task(index);
    let fields = output_fields(data);
    let terminates = matches!(task.end.as_ref().map(|e| &e.kind), Some(EndKind::Terminate));
    let ended = if terminates {
        quote!(::core::result::Result::Ok(#state::Terminated { #fields }))
    } else if Fields::of(cx, index).log == Log::Compensating {
        compensation::next_compensation(cx, data)
    } else {
        quote!(::core::result::Result::Ok(#state::Completed { #fields }))
    };
    match task.end.as_ref().map(|e| &e.kind) {
        Some(EndKind::Event {
            produce: Some(produce),
        }) => {
            let produce = super::events::emit_produce(cx, task, produce, data);
            quote! {{
                #produce
                #ended
            }}
        }
        _ => ended,
    }
}

/// Checks the transition's condition against `data`, then, when it asks for compensation,
/// starts the scope's compensation (which takes the rest of the transition once done); else
/// takes it. `cause` is the error an onError transition handles.
fn emit_transition(
    cx: &Context<'_>,
    index: usize,
    transition: &Transition,
    data: &Ident,
    cause: Option<&Ident>,
) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let id = &cx.workflow.id.value;
    let name = &task.name.value;
    let next = &transition.next.value;
    let guard = transition.condition.as_ref().map(|expression| {
        let view = Ident::new("condition_data", Span::call_site());
        let test = condition(expression, &view, &view);
        let body = &expression.body;
        let failure = fail(cx, quote!(#name), quote!(error), quote!(#data));
        quote! {
            let outcome = {
                let #view: &#rt::Value = &#data;
                #test
            };
            match outcome {
                ::core::result::Result::Ok(true) => {}
                ::core::result::Result::Ok(false) => {
                    return ::core::result::Result::Err(
                        #rt::transition_refused(#id, #name, #next, #body, #data),
                    );
                }
                ::core::result::Result::Err(error) => return ::core::result::Result::Err(#failure),
            }
        }
    });
    let go = if transition.compensate && compensation::calls_compensation(cx, task) {
        let exit = compensation::exit_number(cx, index, Some(transition));
        compensation::begin(cx, data, exit, cause)
    } else {
        let log = match Fields::of(cx, index).log {
            Log::None => None,
            Log::Record => Some(quote!(compensations)),
            Log::Compensating => Some(quote!(compensating)),
        };
        take_transition(cx, index, transition, data, log)
    };
    // Always one expression, so callers can `return` it or use it as a match arm.
    match guard {
        None => go,
        Some(guard) => quote! {{
            #guard
            #go
        }},
    }
}

/// The rest of a transition: it produces its event, then enters the next task with `data` and
/// the scope's compensation record `log`.
pub(super) fn take_transition(
    cx: &Context<'_>,
    index: usize,
    transition: &Transition,
    data: &Ident,
    log: Option<TokenStream>,
) -> TokenStream {
    let task = cx.task(index);
    let next = &transition.next.value;
    let Some(target) = cx.target(next) else {
        let message = format!("unknown transition target `{next}`");
        return quote!(::core::compile_error!(#message));
    };
    let enter = super::scope::enter_call(cx, target, quote!(#data), log);
    match &transition.produce_event {
        None => enter,
        Some(produce) => {
            let produce = super::events::emit_produce(cx, task, produce, data);
            quote! {{
                #produce
                #enter
            }}
        }
    }
}

/// The failure arm: `error` is the ErrorObject, `data` the task data when it failed; with
/// retries, `input` is the task's input and `retry` its progress.
pub(super) fn emit_error_path(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let name = &task.name.value;
    let failed = Ident::new("failed", Span::call_site());
    let scope = Ident::new("scope", Span::call_site());
    let condition_failure = fail(cx, quote!(#name), quote!(condition_error), quote!(data));

    // Binds `matched` to `expression` evaluated for the error: `$` paths see the task data with
    // the error merged in, bare names see the error object.
    let bind_matched = |expression: Option<&crate::ir::Expression>| match expression {
        Some(expression) => {
            let test = condition(expression, &failed, &scope);
            quote! {
                let outcome = #test;
                let matched = match outcome {
                    ::core::result::Result::Ok(matched) => matched,
                    ::core::result::Result::Err(condition_error) => {
                        return ::core::result::Result::Err(#condition_failure);
                    }
                };
            }
        }
        None => quote!(let matched = true;),
    };

    let retries = (!task.retry.is_empty()).then(|| {
        let choices = task.retry.iter().enumerate().map(|(i, retry)| {
            let bind = bind_matched(retry.condition.as_ref());
            quote! {
                #bind
                if matched {
                    break 'choice ::core::option::Option::Some(#i);
                }
            }
        });
        let policies = retry_policies(&task.retry);
        let again = super::scope::fresh_variant(cx, index, quote!(input), Some(quote!(retry)));
        // The first retry definition whose condition matches decides; once it is exhausted,
        // onError runs. A retry restarts the task from its input, as if entered again.
        quote! {
            #policies
            let choice: ::core::option::Option<usize> = 'choice: {
                #(#choices)*
                ::core::option::Option::None
            };
            let next = choice.and_then(|definition| {
                POLICIES
                    .get(definition)
                    .and_then(|policy| retry.next(definition, policy, io.now()))
            });
            if let ::core::option::Option::Some(retry) = next {
                return ::core::result::Result::Ok(#again);
            }
        }
    });

    // A handler that fails says which error it handled.
    let filter_failure = fail(
        cx,
        quote!(#name),
        quote!(filter_error.while_handling(&error)),
        quote!(data),
    );
    let merge_failure = fail(
        cx,
        quote!(#name),
        quote!(merge_error.while_handling(&error)),
        quote!(data),
    );
    let handlers: Vec<TokenStream> = task
        .on_error
        .iter()
        .map(|handler| {
            let bind = bind_matched(handler.condition.as_ref());
            let error_data = match &handler.error_data_filter {
                Some(path) => {
                    let path = path_ref(path);
                    quote! {
                        let mut error_data = error.wrapped();
                        if let ::core::result::Result::Err(filter_error) =
                            #rt::filter_in_place(#path, &mut error_data)
                        {
                            return ::core::result::Result::Err(#filter_failure);
                        }
                    }
                }
                None => quote!(let error_data = error.wrapped();),
            };
            let target = Ident::new("handled", Span::call_site());
            let go = match &handler.transition {
                Some(transition) => {
                    let error = Ident::new("error", Span::call_site());
                    emit_transition(cx, index, transition, &target, Some(&error))
                }
                // A handler without a transition ends the scope, without compensation.
                None => {
                    let state = cx.state_ident();
                    let fields = output_fields(&target);
                    let drop_log = (Fields::of(cx, index).log == Log::Record)
                        .then(|| quote!(::core::mem::drop(compensations);));
                    quote! {{
                        #drop_log
                        ::core::result::Result::Ok(#state::Completed { #fields })
                    }}
                }
            };
            // v0.1's error filter may place the error (`resultPath`) and select the output
            // (`outputPath`); otherwise the error data is merged in.
            let place = match &handler.error_results_path {
                Some(path) => {
                    let path = path_ref(path);
                    quote!(#path.write(&mut #target, error_data))
                }
                None => quote!(#rt::merge_data(&mut #target, error_data, #name, "error data")),
            };
            let select = handler.output_path.as_ref().map(|path| {
                let path = path_ref(path);
                quote! {
                    if let ::core::result::Result::Err(filter_error) =
                        #rt::filter_in_place(#path, &mut #target)
                    {
                        let data = #target;
                        return ::core::result::Result::Err(#filter_failure);
                    }
                }
            });
            // A retry's transition only takes the failures of its own action.
            let gate = handler.action.map(|position| {
                quote!(&& failed_action.load(::core::sync::atomic::Ordering::Relaxed) == #position)
            });
            quote! {
                #bind
                if matched #gate {
                    #error_data
                    let mut #target = data;
                    if let ::core::result::Result::Err(merge_error) = #place {
                        let data = #target;
                        return ::core::result::Result::Err(#merge_failure);
                    }
                    #select
                    return #go;
                }
            }
        })
        .collect();
    let uses_scope = !task.retry.is_empty() || !task.on_error.is_empty();
    let bindings = uses_scope.then(|| {
        quote! {
            let failed_data = #rt::data_with_error(&data, &error);
            let error_scope = error.to_json();
            let #failed: &#rt::Value = &failed_data;
            let #scope: &#rt::Value = &error_scope;
            // Conditions that read only bare names leave `failed` unused, and the other way round.
            let _ = (#failed, #scope);
        }
    });
    let final_failure = fail(cx, quote!(#name), quote!(error), quote!(data));
    quote! {
        #bindings
        #retries
        #(#handlers)*
        ::core::result::Result::Err(#final_failure)
    }
}

/// `const POLICIES`: the retry definitions' intervals, multipliers and attempts, indexed by
/// definition (a task's retries, or one action's).
pub(super) fn retry_policies(retries: &[crate::ir::Retry]) -> TokenStream {
    let rt = rt();
    let policies = retries.iter().map(|retry| {
        let interval = retry.interval.as_ref().map_or(0, |i| i.millis);
        let multiplier = retry.multiplier.as_ref().map_or(0, |m| m.millis);
        let attempts = retry.effective_attempts();
        quote! {
            #rt::RetryPolicy::new(
                #rt::Duration::from_millis(#interval),
                #rt::Duration::from_millis(#multiplier),
                #attempts,
            )
        }
    });
    let count = retries.len();
    quote!(const POLICIES: [#rt::RetryPolicy; #count] = [#(#policies),*];)
}
