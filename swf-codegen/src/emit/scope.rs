//! One scope's methods: `enter_*` and `run_*` per task, `step`, and for nested scopes the enum
//! and `drive`. Nested scopes are emitted recursively, each under its own method prefix.

use super::task::emit_run;
use super::{Context, compensation, drive_needs_io, rt, scheduled_interval, scope_needs_io};
use crate::emit_parts::path::path_ref;
use proc_macro2::TokenStream;
use quote::quote;

/// The methods of every scope, and the state enums of the nested ones.
pub(super) struct Emitted {
    pub methods: Vec<TokenStream>,
    pub enums: Vec<TokenStream>,
}

pub(super) fn emit_tree(root: &Context<'_>) -> Emitted {
    let mut emitted = Emitted {
        methods: Vec::new(),
        enums: Vec::new(),
    };
    emit_scope(root, &mut emitted);
    emitted
}

fn emit_scope(cx: &Context<'_>, out: &mut Emitted) {
    if !cx.root {
        out.enums.push(emit_nested_enum(cx));
        out.methods.push(emit_drive(cx));
    }
    out.methods.push(emit_step(cx));
    out.methods.extend(compensation::emit_method(cx));
    for index in 0..cx.scope.tasks.len() {
        out.methods.push(emit_enter(cx, index));
        out.methods.push(emit_run(cx, index));
        if matches!(cx.task(index).kind, crate::ir::TaskKind::ForEach { .. }) {
            out.methods
                .push(super::nested::emit_iteration_method(cx, index));
        }
        for (branch, scope) in cx.task(index).nested_scopes().into_iter().enumerate() {
            emit_scope(&cx.nested(index, branch, scope), out);
        }
    }
}

/// The state enum of a branch or foreach body: like the workflow's, but private and never
/// saved (a nested scope reruns from its start when its task is retried or resumed).
fn emit_nested_enum(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let variants = cx.scope.tasks.iter().enumerate().map(|(i, task)| {
        let variant = cx.variant(i);
        let doc = format!(" Task `{}` (line {}).", task.name.value, task.span.line);
        let retry = (!task.retry.is_empty()).then(|| quote!(retry: #rt::RetryProgress,));
        let log = compensation::field(cx);
        quote! {
            #[doc = #doc]
            #variant { data: #rt::Value, #retry #log }
        }
    });
    quote! {
        // A scope that never terminates (or never completes) leaves that variant unbuilt.
        #[allow(dead_code)]
        enum #state {
            #(#variants,)*
            Completed { output: #rt::Value },
            Terminated { output: #rt::Value },
        }
    }
}

/// `drive`: runs a nested scope from its start task to its end.
fn emit_drive(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let drive = cx.drive_fn();
    let step = cx.step_fn();
    let enter = cx.enter_fn(cx.start_index());
    let log = compensation::then_fresh(cx);
    let param = drive_needs_io(cx.scope).then(|| quote!(io: &#rt::Io,));
    let arg = scope_needs_io(cx.scope).then(|| quote!(, io));
    // The draft: a branch (or body) whose scheduled start is not active completes at once.
    let schedule = scheduled_interval(cx.scope).map(|interval| {
        let window = super::events::emit_schedule_window(interval);
        quote! {
            if #rt::check_schedule(&#window, io).is_err() {
                return ::core::result::Result::Ok(#rt::ScopeEnd::Completed(input));
            }
        }
    });
    quote! {
        async fn #drive(&self, input: #rt::Value, #param) -> ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError> {
            #schedule
            let mut state = Self::#enter(input #log)?;
            loop {
                state = match state {
                    #state::Completed { output } => {
                        return ::core::result::Result::Ok(#rt::ScopeEnd::Completed(output));
                    }
                    #state::Terminated { output } => {
                        return ::core::result::Result::Ok(#rt::ScopeEnd::Terminated(output));
                    }
                    other => self.#step(other #arg).await?,
                };
            }
        }
    }
}

/// `step`: runs the task a state names. At the root this is the public `step`.
fn emit_step(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let step = cx.step_fn();
    let (bind, pass) = (compensation::then_pass(cx), compensation::pass(cx));
    let dispatch = (0..cx.scope.tasks.len()).map(|i| {
        let variant = cx.variant(i);
        let run = cx.run_fn(i);
        let io = cx.task_takes_io(i).then(|| quote!(io));
        if cx.task(i).retry.is_empty() {
            quote!(#state::#variant { data #bind } => self.#run(data, #pass #io).await)
        } else {
            quote!(#state::#variant { data, retry #bind } => self.#run(data, retry, #pass #io).await)
        }
    });
    let io_param = if !cx.step_takes_io() {
        TokenStream::new()
    } else if (0..cx.scope.tasks.len()).any(|i| cx.task_takes_io(i)) {
        quote!(io: &#rt::Io)
    } else {
        quote!(_io: &#rt::Io)
    };
    let (visibility, doc) = if cx.root {
        (
            quote!(pub),
            quote! {
                /// Runs the task `state` names and returns the next state. A state that has ended
                /// is returned unchanged.
            },
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    quote! {
        #doc
        #visibility async fn #step(&self, state: #state, #io_param) -> ::core::result::Result<#state, #rt::WorkflowError> {
            match state {
                #(#dispatch,)*
                ended @ (#state::Completed { .. } | #state::Terminated { .. }) => {
                    ::core::result::Result::Ok(ended)
                }
            }
        }
    }
}

/// `enter_*`: the transition into a task applies its input filter.
fn emit_enter(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let task = cx.task(index);
    let enter = cx.enter_fn(index);
    let variant = cx.variant(index);
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
    let retry =
        (!task.retry.is_empty()).then(|| quote!(retry: ::core::default::Default::default(),));
    let (param, log) = (compensation::then_param(cx), compensation::pass(cx));
    quote! {
        fn #enter(data: #rt::Value #param) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #filter
            ::core::result::Result::Ok(#state::#variant { data, #retry #log })
        }
    }
}
