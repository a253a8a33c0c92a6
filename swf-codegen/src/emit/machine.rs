//! The machine type: its constructor and public API (`run`, `start`, `step`, or their `_with`
//! forms taking an `Io` when the workflow uses events or a scheduled start), the event
//! definitions as specs, and the `Machine` implementation a `Host` drives.

use super::scope::Emitted;
use super::{Context, events, rt};
use crate::ir::{StartKind, TaskKind};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit(cx: &Context<'_>, scopes: &Emitted) -> TokenStream {
    let machine = cx.workflow_ident();
    let id = &cx.workflow.id.value;
    let name = &cx.workflow.name.value;
    let methods = &scopes.methods;
    let api = if cx.uses_io() {
        io_api(cx)
    } else {
        plain_api(cx)
    };
    let specs = events::emit_specs(cx);
    let machine_impl = emit_machine_impl(cx);
    let sub_flow = drive_subflow(cx);
    let bounds = bounds(cx);
    let doc = format!(
        " The `{name}` workflow (id `{id}`), compiled to a state machine. `run` drives an \
         instance to its end; `start` and `step` let the caller save the state between tasks."
    );
    quote! {
        #[doc = #doc]
        pub struct #machine<F> {
            functions: F,
        }

        // The generated API is a library surface: a binary that uses part of it must not warn.
        #[allow(dead_code)]
        impl<F: #bounds> #machine<F> {
            /// The workflow's `id`.
            pub const ID: &'static str = #id;
            /// The workflow's `name`.
            pub const NAME: &'static str = #name;

            /// A machine that calls `functions` for the workflow's actions.
            pub fn new(functions: F) -> Self {
                #machine { functions }
            }

            /// The functions implementation.
            pub fn functions(&self) -> &F {
                &self.functions
            }

            #api
            #sub_flow
            #specs
            #(#methods)*
        }

        #machine_impl
    }
}

/// `run`, `start` (and `step`, emitted with the root scope) for a workflow without events.
fn plain_api(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let start = start_body(cx, false);
    quote! {
        /// Runs one instance from `input` (a JSON object; `null` means `{}`) to its end.
        pub async fn run(&self, input: #rt::Value) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
            let mut state = self.start(input)?;
            loop {
                match state {
                    #state::Completed { output } | #state::Terminated { output } => {
                        return ::core::result::Result::Ok(output);
                    }
                    other => state = self.step(other).await?,
                }
            }
        }

        /// The first state of an instance: the start task with its filtered input.
        pub fn start(&self, input: #rt::Value) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #start
        }
    }
}

/// `run_with`, `start_with` (and `step_with`) for a workflow that uses events or a scheduled
/// start: the instance's `Io` carries its events, what it produces and the clock.
fn io_api(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let start = start_body(cx, true);
    quote! {
        /// Runs one instance from `input` (a JSON object; `null` means `{}`) to its end, with
        /// `io` as its events and clock.
        pub async fn run_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
            let mut state = self.start_with(input, io)?;
            loop {
                match state {
                    #state::Completed { output } | #state::Terminated { output } => {
                        return ::core::result::Result::Ok(output);
                    }
                    other => state = self.step_with(other, io).await?,
                }
            }
        }

        /// The first state of an instance: the start task with its filtered input. A scheduled
        /// start refuses to create the instance outside its window (by `io`'s clock).
        pub fn start_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #start
        }
    }
}

fn start_body(cx: &Context<'_>, with_io: bool) -> TokenStream {
    let rt = rt();
    let start_index = cx.start_index();
    let enter = cx.enter_fn(start_index);
    let log = super::compensation::then_fresh(cx);
    let start_task = cx.task(start_index);
    let start_name = &start_task.name.value;
    let schedule = match start_task.start.as_ref().map(|s| &s.kind) {
        Some(StartKind::Scheduled {
            interval: Some(interval),
        }) if with_io => {
            let window = super::events::emit_schedule_window(interval);
            let id = &cx.workflow.id.value;
            quote! {
                if let ::core::result::Result::Err(error) = #rt::check_schedule(&#window, io) {
                    return ::core::result::Result::Err(#rt::WorkflowError::new(#id, #start_name, error, input));
                }
            }
        }
        _ if with_io => quote!(let _ = io;),
        _ => TokenStream::new(),
    };
    quote! {
        #schedule
        let input = #rt::workflow_input(Self::ID, #start_name, input)?;
        Self::#enter(input #log)
    }
}

/// `Machine`, so that a `Host` can own instances of this workflow.
fn emit_machine_impl(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let machine = cx.workflow_ident();
    let bounds = bounds(cx);
    let (start, step) = if cx.uses_io() {
        (
            quote!(self.start_with(input, io)),
            quote!(self.step_with(state, io)),
        )
    } else {
        (
            quote! {
                let _ = io;
                #machine::start(self, input)
            },
            quote! {
                let _ = io;
                #machine::step(self, state)
            },
        )
    };
    let events = if cx.workflow.events.is_empty() {
        quote!(&[])
    } else {
        quote!(Self::event_specs())
    };
    let start_task = cx.task(cx.start_index());
    let start_on_events = match &start_task.kind {
        TaskKind::Event {
            exclusive,
            events_actions,
            timeout,
        } => {
            let indices: Vec<usize> = events::event_indices(cx, events_actions);
            let timeout = super::duration_option(timeout.as_ref());
            quote! {
                ::core::option::Option::Some(#rt::StartOnEvents {
                    events: &[#(#indices),*],
                    exclusive: #exclusive,
                    timeout: #timeout,
                })
            }
        }
        _ => quote!(::core::option::Option::None),
    };
    quote! {
        impl<F: #bounds + 'static> #rt::Machine for #machine<F> {
            type State = #state;

            fn workflow_id(&self) -> &'static str {
                Self::ID
            }

            fn events(&self) -> &'static [#rt::EventSpec] {
                #events
            }

            fn start_on_events(&self) -> ::core::option::Option<#rt::StartOnEvents> {
                #start_on_events
            }

            fn start(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
                #start
            }

            fn step<'a>(
                &'a self,
                state: #state,
                io: &'a #rt::Io,
            ) -> impl ::core::future::Future<Output = ::core::result::Result<#state, #rt::WorkflowError>> + ::core::marker::Send + 'a {
                #step
            }

            fn output(state: &#state) -> ::core::option::Option<&#rt::Value> {
                state.output()
            }
        }
    }
}

/// The functions trait, and `Clone + 'static` when a detached sub-flow (here or further down the
/// sub-flows this workflow waits for) must own a copy of the functions.
fn bounds(cx: &Context<'_>) -> TokenStream {
    let functions = cx.functions_ident();
    if cx.names.owning.contains(&cx.workflow.id.value) {
        quote!(#functions + ::core::clone::Clone + 'static)
    } else {
        quote!(#functions)
    }
}

/// `drive_subflow`: how a calling workflow runs this one. A scheduled start outside its window
/// completes at once with the input (the draft: the caller does not wait for the window).
fn drive_subflow(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let scheduled = super::scheduled_interval(&cx.workflow.scope).is_some();
    // Only a scheduled start needs the input again (to complete with it when refused).
    let input = if scheduled {
        quote!(input.clone())
    } else {
        quote!(input)
    };
    let (start, step, param) = if cx.uses_io() {
        (
            quote!(self.start_with(#input, io)),
            quote!(self.step_with(other, io)),
            quote!(io: &#rt::Io),
        )
    } else {
        (
            quote!(self.start(#input)),
            quote!(self.step(other)),
            quote!(_io: &#rt::Io),
        )
    };
    let first = if scheduled {
        quote! {
            match #start {
                ::core::result::Result::Ok(state) => state,
                ::core::result::Result::Err(refused) if refused.error().name == #rt::SCHEDULE_ERROR => {
                    return ::core::result::Result::Ok(#rt::ScopeEnd::Completed(input));
                }
                ::core::result::Result::Err(failure) => return ::core::result::Result::Err(failure),
            }
        }
    } else {
        quote!(#start?)
    };
    quote! {
        #[doc(hidden)]
        pub async fn drive_subflow(&self, input: #rt::Value, #param) -> ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError> {
            let mut state = #first;
            loop {
                state = match state {
                    #state::Completed { output } => {
                        return ::core::result::Result::Ok(#rt::ScopeEnd::Completed(output));
                    }
                    #state::Terminated { output } => {
                        return ::core::result::Result::Ok(#rt::ScopeEnd::Terminated(output));
                    }
                    other => #step.await?,
                };
            }
        }
    }
}
