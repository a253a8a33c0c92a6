//! The machine type and one `run_*` method per task. Each task body runs as one attempt whose
//! error goes through the task's retry and onError definitions.

use super::exit::{emit_error_path, emit_exit_dispatch, fail};
use super::{Context, action, rt};
use crate::emit_parts::{path::path_ref, value::json};
use crate::ir::{Operator, SwitchConditions, Task, TaskKind};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit_machine(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let machine = cx.workflow_ident();
    let functions = cx.functions_ident();
    let id = &cx.workflow.id.value;
    let name = &cx.workflow.name.value;
    let start_index = cx
        .workflow
        .scope
        .tasks
        .iter()
        .position(|t| t.start.is_some())
        .unwrap_or(0);
    let start_enter = cx.enter_fn(start_index);
    let start_name = &cx.task(start_index).name.value;
    let dispatch = (0..cx.workflow.scope.tasks.len()).map(|i| {
        let variant = cx.variant(i);
        let run = cx.run_fn(i);
        if cx.task(i).retry.is_empty() {
            quote!(#state::#variant { data } => self.#run(data).await)
        } else {
            quote!(#state::#variant { data, retry } => self.#run(data, retry).await)
        }
    });
    let enters = (0..cx.workflow.scope.tasks.len()).map(|i| emit_enter(cx, i));
    let runs = (0..cx.workflow.scope.tasks.len()).map(|i| emit_run(cx, i));
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
        impl<F: #functions> #machine<F> {
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
                let input = #rt::workflow_input(Self::ID, #start_name, input)?;
                Self::#start_enter(input)
            }

            /// Runs the task `state` names and returns the next state. A state that has ended is
            /// returned unchanged.
            pub async fn step(&self, state: #state) -> ::core::result::Result<#state, #rt::WorkflowError> {
                match state {
                    #(#dispatch,)*
                    ended @ (#state::Completed { .. } | #state::Terminated { .. }) => {
                        ::core::result::Result::Ok(ended)
                    }
                }
            }

            #(#enters)*
            #(#runs)*
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
        let failure = fail(cx, quote!(#name), quote!(error), quote!(data));
        quote! {
            let mut data = data;
            if let ::core::result::Result::Err(error) = #rt::filter_in_place(#path, &mut data) {
                return ::core::result::Result::Err(#failure);
            }
        }
    });
    let retry =
        (!task.retry.is_empty()).then(|| quote!(retry: ::core::default::Default::default(),));
    quote! {
        fn #enter(data: #rt::Value) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #filter
            ::core::result::Result::Ok(#state::#variant { data, #retry })
        }
    }
}

fn emit_run(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let task = cx.task(index);
    let run = cx.run_fn(index);
    let has_retry = !task.retry.is_empty();
    let params = if has_retry {
        quote!(data: #rt::Value, retry: #rt::RetryProgress)
    } else {
        quote!(data: #rt::Value)
    };
    let wait = has_retry.then(|| quote!(retry.wait().await; let input = data.clone();));
    let body = emit_body(cx, task);
    let mutates = match &task.kind {
        TaskKind::Operation { actions, .. } => !actions.is_empty(),
        TaskKind::Inject { data } => !injects_nothing(data),
        _ => false,
    };
    let data_binding = if mutates {
        quote!(let mut data = data;)
    } else {
        TokenStream::new()
    };
    let exit_binding = if matches!(task.kind, TaskKind::Switch(_)) {
        quote!(exit)
    } else {
        quote!(_)
    };
    let success = emit_exit_dispatch(cx, index);
    let failure = emit_error_path(cx, index);
    let doc = format!(" Runs task `{}` once.", task.name.value);
    quote! {
        #[doc = #doc]
        async fn #run(&self, #params) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #wait
            #data_binding
            let attempt: ::core::result::Result<usize, #rt::ErrorObject> = async { #body }.await;
            match attempt {
                ::core::result::Result::Ok(#exit_binding) => { #success }
                ::core::result::Result::Err(error) => { #failure }
            }
        }
    }
}

/// The attempt itself: evaluates to `Ok(exit index)` (which switch transition; 0 otherwise).
fn emit_body(cx: &Context<'_>, task: &Task) -> TokenStream {
    let rt = rt();
    let name = &task.name.value;
    match &task.kind {
        TaskKind::Operation {
            action_mode,
            actions,
        } => {
            let run = action::emit_actions(cx, task, actions, *action_mode);
            quote! { #run ::core::result::Result::Ok(0) }
        }
        // Injecting nothing leaves the data as it is, whatever its kind (a filter may have made
        // it an array).
        TaskKind::Inject { data } if injects_nothing(data) => quote!(::core::result::Result::Ok(0)),
        TaskKind::Inject { data } => {
            let value = json(data);
            quote! {
                #rt::merge_data(&mut data, #value, #name, "inject data")?;
                ::core::result::Result::Ok(0)
            }
        }
        TaskKind::Delay { time_delay } => {
            let millis = time_delay.as_ref().map_or(0, |d| d.millis);
            quote! {
                #rt::tokio::time::sleep(#rt::Duration::from_millis(#millis)).await;
                ::core::result::Result::Ok(0)
            }
        }
        TaskKind::Switch(switch) => match &switch.conditions {
            SwitchConditions::Data(conditions) => {
                let tests = conditions.iter().enumerate().map(|(i, condition)| {
                    let test = emit_data_condition(cx, task, condition);
                    quote! {
                        let matched = #test;
                        if matched {
                            return ::core::result::Result::Ok(#i);
                        }
                    }
                });
                let default = conditions.len();
                quote! {
                    #(#tests)*
                    ::core::result::Result::Ok(#default)
                }
            }
            // Event conditions are refused by `check_supported` before emission.
            SwitchConditions::Event(_) => quote!(::core::result::Result::Ok(0)),
        },
        // Refused by `check_supported` before emission.
        _ => quote!(::core::result::Result::Ok(0)),
    }
}

fn injects_nothing(data: &serde_json::Value) -> bool {
    data.as_object().is_some_and(serde_json::Map::is_empty) || data.is_null()
}

/// One data condition: `bool`, inside the attempt (errors propagate with `?`).
fn emit_data_condition(
    cx: &Context<'_>,
    task: &Task,
    condition: &crate::ir::DataCondition,
) -> TokenStream {
    let rt = rt();
    let Some(path) = &condition.path else {
        return quote!(false);
    };
    let path_text = &path.text;
    let path = path_ref(path);
    let value = condition.value.as_ref().map_or("", |v| v.value.as_str());
    let op = match condition.operator.value {
        Operator::Exists => quote!(Exists),
        Operator::NotExists => quote!(NotExists),
        Operator::Null => quote!(Null),
        Operator::NotNull => quote!(NotNull),
        Operator::Equals => quote!(Equals),
        Operator::NotEquals => quote!(NotEquals),
        Operator::LessThan => quote!(LessThan),
        Operator::LessThanOrEquals => quote!(LessThanOrEquals),
        Operator::GreaterThan => quote!(GreaterThan),
        Operator::GreaterThanOrEquals => quote!(GreaterThanOrEquals),
        Operator::Matches => quote!(Matches),
        Operator::NotMatches => quote!(NotMatches),
        Operator::Custom => {
            let name = &task.name.value;
            let metadata = json(
                condition
                    .metadata
                    .as_ref()
                    .unwrap_or(&serde_json::Value::Null),
            );
            let _ = cx;
            return quote! {{
                let selected = #path.select(&data)?;
                let metadata = #metadata;
                self.functions.custom_condition(#rt::CustomCondition {
                    task: #name,
                    path: #path_text,
                    selected: selected.as_ref(),
                    value: #value,
                    metadata: &metadata,
                })
            }};
        }
    };
    let regex = if matches!(
        condition.operator.value,
        Operator::Matches | Operator::NotMatches
    ) {
        quote! {{
            static REGEX: #rt::expr::LazyRegex = #rt::expr::LazyRegex::new(#value);
            ::core::option::Option::Some(&REGEX)
        }}
    } else {
        quote!(::core::option::Option::None)
    };
    quote! {
        #rt::switch::data_condition(
            #rt::switch::ConditionOp::#op,
            #rt::switch::Comparison::Auto,
            #path.select(&data)?.as_ref(),
            #value,
            #regex,
        )?
    }
}
