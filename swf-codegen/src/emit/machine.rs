//! The machine type: its constructor and public API (`run`, `start`, `step` and `advance`, or
//! `run_with`, `start_with`, `step_with` taking an `Io` when the workflow uses events or a
//! scheduled start), the event definitions as specs, and the `Machine` implementation a host
//! drives.

use super::fields::{Fields, Log};
use super::{Context, api, events, rt};
use crate::ir::{StartKind, TaskKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The machine's public items, and its private block (see `private_block`).
/// `public_methods` and `methods` are the scopes' public and private methods, moved in.
pub(super) fn emit(
    cx: &Context<'_>,
    public_methods: Vec<TokenStream>,
    methods: Vec<TokenStream>,
) -> (TokenStream, TokenStream) {
    let machine = cx.workflow_ident();
    let id = &cx.workflow.id.value;
    let name = &cx.workflow.name.value;
    let version = match &cx.workflow.version {
        Some(version) => {
            let version = &version.value;
            quote!(::core::option::Option::Some(#version))
        }
        None => quote!(::core::option::Option::None),
    };
    let hash = definition_hash(cx);
    let rt = rt();
    let api = if cx.uses_io() {
        io_api(cx)
    } else {
        plain_api(cx)
    };
    let specs = events::emit_specs(cx);
    let machine_impl = emit_machine_impl(cx);
    let begin = emit_begin(cx);
    let sub_flow = sub_flow_api(cx);
    let bounds = bounds(cx);
    let call_function = emit_call_function(cx, &bounds);
    let private = super::private_block::emit(
        &machine,
        &bounds,
        methods.into_iter().collect(),
        call_function,
    );
    let doc = format!(
        " The `{name}` workflow (id `{id}`), compiled to a state machine. `run` drives an \
         instance to its end; `start` and `step` (or `advance`, which never waits) let the caller \
         save the state between steps."
    );
    let doc = super::names::doc_text(&doc);
    // The workflow's own description comes first, line by line, then an empty line.
    let description = cx.workflow.description.as_deref().map(|text| {
        let lines = text
            .lines()
            .map(|line| super::names::doc_text(&format!(" {line}")));
        quote!(#(#[doc = #lines])* #[doc = ""])
    });
    // The diagram goes after an empty line, as its own Markdown block.
    let diagram = cx
        .names
        .diagram_doc
        .as_deref()
        .map(|svg| quote!(#[doc = ""] #[doc = #svg]));
    let public = quote! {
        #description
        #[doc = #doc]
        #diagram
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
            /// The workflow's `version`, if it has one.
            pub const VERSION: ::core::option::Option<&'static str> = #version;
            /// A hash of the definition this machine was compiled from: a saved instance records
            /// it, so that a host can tell an instance saved by another definition.
            pub const DEFINITION_HASH: &'static str = #hash;
            /// The workflow's id, name and version, as its traces name them.
            pub const INFO: #rt::WorkflowInfo = #rt::WorkflowInfo {
                id: Self::ID,
                name: Self::NAME,
                version: Self::VERSION,
            };

            /// A machine that calls `functions` for the workflow's actions.
            pub fn new(functions: F) -> Self {
                #machine { functions }
            }

            /// The functions implementation.
            pub fn functions(&self) -> &F {
                &self.functions
            }

            #api
            #begin
            #sub_flow
            #specs
            #(#public_methods)*
        }

        #machine_impl
    };
    (public, private)
}

/// The event specs of the machine, for the drivers that register what an instance listens for.
fn specs_or_none(cx: &Context<'_>) -> TokenStream {
    if cx.workflow.events.is_empty() {
        quote!(&[])
    } else {
        quote!(Self::event_specs())
    }
}

/// `run`, `start` and `step` for a workflow without events.
fn plain_api(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let specs = specs_or_none(cx);
    quote! {
        /// Runs one instance from `input` (a JSON object; `null` means `{}`) to its end.
        ///
        /// # Errors
        /// The refusal of the input, or the `WorkflowError` of a task that failed with no retry
        /// or onError left, with the data it had.
        pub async fn run(&self, input: #rt::Value) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
            let io = #rt::plain_run_io();
            let state = self.begin(input, &io)?;
            let run = #rt::run_to_end(Self::ID, state, &io, #specs, |state| self.advance(state, &io));
            #rt::traced_run(Self::INFO, &io, run)
                .await
                .map(#api::ScopeEnd::into_output)
        }

        /// The first state of an instance: the start task with its filtered input.
        ///
        /// # Errors
        /// The refusal of the input (not a JSON object), or of the start task's input filter.
        pub fn start(&self, input: #rt::Value) -> ::core::result::Result<#state, #rt::WorkflowError> {
            self.begin(input, &#rt::plain_run_io())
        }

        /// Runs the next step of `state`, waiting first as long as it must (a delay, a retry
        /// wait): the state after one step that ran. A state that has ended is returned
        /// unchanged.
        ///
        /// # Errors
        /// As [`Self::run`].
        pub async fn step(&self, state: #state) -> ::core::result::Result<#state, #rt::WorkflowError> {
            let io = #rt::plain_run_io();
            #rt::step_until_ran(Self::ID, state, &io, #specs, |state| self.advance(state, &io)).await
        }
    }
}

/// `run_with`, `start_with` and `step_with` for a workflow that uses events or a scheduled
/// start: the instance's `Io` carries its events, what it produces and the clock.
fn io_api(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let specs = specs_or_none(cx);
    quote! {
        /// Runs one instance from `input` (a JSON object; `null` means `{}`) to its end, with
        /// `io` as its events and clock.
        ///
        /// # Errors
        /// The refusal of the input or of a scheduled start, or the `WorkflowError` of a task
        /// that failed with no retry or onError left, with the data it had.
        pub async fn run_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
            let state = self.begin(input, io)?;
            let run = #rt::run_to_end(Self::ID, state, io, #specs, |state| self.advance(state, io));
            #rt::traced_run(Self::INFO, io, run)
                .await
                .map(#api::ScopeEnd::into_output)
        }

        /// The first state of an instance: the start task with its filtered input. A scheduled
        /// start refuses to create the instance outside its window (by `io`'s clock).
        ///
        /// # Errors
        /// The refusal of the input or of the scheduled start.
        pub fn start_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
            self.begin(input, io)
        }

        /// Runs the next step of `state`, waiting first as long as it must (for its events, a
        /// delay, a retry wait): the state after one step that ran. A state that has ended is
        /// returned unchanged.
        ///
        /// # Errors
        /// As [`Self::run_with`].
        pub async fn step_with(&self, state: #state, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #rt::learn_events(io, Self::ID, #specs, &state)?;
            #rt::step_until_ran(Self::ID, state, io, #specs, |state| self.advance(state, io)).await
        }
    }
}

/// `begin`: the first state of an instance created from `input`.
/// The machine calls its functions by their position in the workflow's `functions` (the
/// runtime's `CallFunction`), for the calls tasks describe by data (see `action`).
fn emit_call_function(cx: &Context<'_>, bounds: &TokenStream) -> TokenStream {
    if cx.workflow.functions.is_empty() {
        return TokenStream::new();
    }
    let rt = rt();
    let machine = cx.workflow_ident();
    let functions = cx.functions_ident();
    let arms = cx
        .names
        .functions
        .iter()
        .enumerate()
        .map(|(number, method)| {
            let method = super::names::ident(method);
            quote!(#number => #functions::#method(&self.functions, args).await,)
        });
    let count = cx.names.functions.len();
    let id = &cx.workflow.id.value;
    quote! {
        impl<F: #bounds> #rt::CallFunction for #machine<F> {
            const WORKFLOW: &'static str = #id;

            async fn call_function(
                &self,
                function: usize,
                args: #rt::Value,
            ) -> ::core::result::Result<#rt::Value, #rt::FunctionError> {
                match function {
                    #(#arms)*
                    // Generated calls name only the workflow's functions.
                    _ => ::core::result::Result::Err(#rt::FunctionError::new(::std::format!(
                        "no function number {function}: the workflow defines {}", #count
                    ))),
                }
            }
        }
    }
}

fn emit_begin(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let start_index = cx.start_index();
    let log = (Fields::of(cx, start_index).log == Log::Record)
        .then(|| quote!(#api::CompensationLog::new()));
    // `enter_call` writes what a transition in the private block writes (private paths); here
    // it lands in a public body, which the public-path pass does not walk.
    let enter = super::public_paths::in_body(super::scope::enter_call(
        cx,
        start_index,
        quote!(input),
        log,
    ));
    let start_task = cx.task(start_index);
    let start_name = &start_task.name.value;
    let schedule = match start_task.start.as_ref().map(|s| &s.kind) {
        Some(StartKind::Scheduled {
            interval: Some(interval),
        }) => {
            let window = super::public_paths::in_body(events::emit_schedule_window(interval));
            let id = &cx.workflow.id.value;
            quote! {
                if let ::core::result::Result::Err(error) = #rt::check_schedule(&#window, io) {
                    return ::core::result::Result::Err(#api::WorkflowError::new(#id, #start_name, error, input));
                }
            }
        }
        _ => TokenStream::new(),
    };
    let input_check = super::schema::workflow_input_check(cx, start_name);
    let specs = specs_or_none(cx);
    quote! {
        fn begin(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
            // A standalone `Io` learns the definitions here, and gives back the events it holds
            // that match none of them rather than let the run wait for nothing.
            if let ::core::result::Result::Err(error) = io.learn_events(Self::ID, #specs) {
                return ::core::result::Result::Err(#api::WorkflowError::new(Self::ID, #start_name, error, input));
            }
            #schedule
            let input = #rt::workflow_input(Self::ID, #start_name, input)?;
            #input_check
            #enter
        }
    }
}

/// How a calling workflow runs this one: `begin_subflow` (a scheduled start outside its window
/// completes at once with the input: the draft says the caller does not wait for the window)
/// and `run_detached`.
fn sub_flow_api(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let specs = specs_or_none(cx);
    let scheduled = super::scheduled_interval(&cx.workflow.scope).map(|interval| {
        let window = super::public_paths::in_body(events::emit_schedule_window(interval));
        quote! {
            if #rt::check_schedule(&#window, io).is_err() {
                return ::core::result::Result::Ok(::core::result::Result::Err(input));
            }
        }
    });
    quote! {
        #[doc(hidden)]
        pub fn begin_subflow(
            &self,
            input: #rt::Value,
            io: &#rt::Io,
        ) -> ::core::result::Result<::core::result::Result<#state, #rt::Value>, #rt::WorkflowError> {
            #scheduled
            self.begin(input, io).map(::core::result::Result::Ok)
        }

        #[doc(hidden)]
        pub async fn run_detached(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError> {
            let state = match self.begin_subflow(input, io)? {
                ::core::result::Result::Ok(state) => state,
                ::core::result::Result::Err(output) => {
                    return ::core::result::Result::Ok(#api::ScopeEnd::Completed(output));
                }
            };
            #rt::run_to_end(Self::ID, state, io, #specs, |state| self.advance(state, io)).await
        }
    }
}

/// `Machine`, so that a host can own instances of this workflow.
fn emit_machine_impl(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let machine = cx.workflow_ident();
    let bounds = bounds(cx);
    let events = specs_or_none(cx);
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
                ::core::option::Option::Some(#api::StartOnEvents {
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

            fn version(&self) -> ::core::option::Option<&'static str> {
                Self::VERSION
            }

            fn workflow_name(&self) -> &'static str {
                Self::NAME
            }

            fn definition_hash(&self) -> &'static str {
                Self::DEFINITION_HASH
            }

            fn events(&self) -> &'static [#rt::EventSpec] {
                #events
            }

            fn start_on_events(&self) -> ::core::option::Option<#rt::StartOnEvents> {
                #start_on_events
            }

            fn start(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
                self.begin(input, io)
            }

            fn step<'a>(
                &'a self,
                state: #state,
                io: &'a #rt::Io,
            ) -> impl ::core::future::Future<Output = ::core::result::Result<#rt::Progress<#state>, #rt::WorkflowError>> + ::core::marker::Send + 'a {
                self.advance(state, io)
            }

            fn output(state: &#state) -> ::core::option::Option<&#rt::Value> {
                state.output()
            }
        }
    }
}

/// The functions trait, and `Clone + 'static` when a detached sub-flow (here or further down the
/// sub-flows this workflow waits for) must own a copy of the functions.
pub(super) fn bounds(cx: &Context<'_>) -> TokenStream {
    let functions = cx.functions_ident();
    if cx.names.owning.contains(&cx.workflow.id.value) {
        quote!(#functions + ::core::clone::Clone + 'static)
    } else {
        quote!(#functions)
    }
}

/// A hash of what the workflow does (its id, version, functions, events and tasks, not the
/// file it came from), as 16 hex digits: FNV-1a over their serialized form, stable across
/// builds and platforms.
fn definition_hash(cx: &Context<'_>) -> String {
    let workflow = cx.workflow;
    let described = (
        &workflow.id.value,
        // Its text alone, as before it had a span: the hash of every definition stays.
        workflow.version.as_ref().map(|version| &version.value),
        &workflow.functions,
        &workflow.events,
        &workflow.scope,
    );
    // The workflow's own schemas count only when it has some, so that the hash of every
    // workflow without stays what it was. The JSON is hashed as it is written, not kept.
    const EMPTY: u64 = 0xcbf2_9ce4_8422_2325;
    let mut hash = Fnv1a(EMPTY);
    let written = if workflow.schemas.is_empty() {
        serde_json::to_writer(&mut hash, &described)
    } else {
        serde_json::to_writer(&mut hash, &(described, &workflow.schemas))
    };
    // The IR serializes to JSON without fail (string keys, finite numbers).
    let hash = if written.is_ok() { hash.0 } else { EMPTY };
    format!("{hash:016x}")
}

/// The 64-bit FNV-1a hash of the bytes written.
struct Fnv1a(u64);

impl std::io::Write for Fnv1a {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
