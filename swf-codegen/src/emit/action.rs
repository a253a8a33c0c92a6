//! Actions: select the action's input, build the function's arguments, call the function (with
//! its timeout), then write the result at its results path or merge it into the task data.

use super::{Context, rt};
use crate::emit_parts::{path::path_ref, value::json};
use crate::ir::{Action, ActionMode, Param, Task};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Statements running `actions` inside a task attempt; `data` is the mutable task data.
pub(super) fn emit_actions(
    cx: &Context<'_>,
    task: &Task,
    actions: &[Action],
    mode: ActionMode,
) -> TokenStream {
    match mode {
        ActionMode::Sequential => {
            let steps = actions.iter().enumerate().map(|(i, action)| {
                let call = emit_call(cx, task, action, i);
                let place = emit_place(task, action, i, &quote!(result));
                quote! {{
                    let result = #call.await?;
                    #place
                }}
            });
            quote!(#(#steps)*)
        }
        ActionMode::Parallel if actions.is_empty() => TokenStream::new(),
        ActionMode::Parallel => {
            let results: Vec<_> = (0..actions.len())
                .map(|i| format_ident!("result_{}", i))
                .collect();
            let calls = actions
                .iter()
                .enumerate()
                .map(|(i, action)| emit_call(cx, task, action, i));
            let rt = rt();
            // Results are merged in document order, whatever order the calls finish in.
            let places = actions.iter().enumerate().map(|(i, action)| {
                let result = &results[i];
                let place = emit_place(task, action, i, &quote!(#result));
                quote! {
                    let #result = #result?;
                    #place
                }
            });
            quote! {
                let (#(#results,)*) = #rt::tokio::join!(#(#calls),*);
                #(#places)*
            }
        }
    }
}

fn action_label(action: &Action, index: usize) -> String {
    match &action.name {
        Some(name) => name.value.clone(),
        None => format!("action {}", index + 1),
    }
}

/// An `async` block resolving to `Result<Value, ErrorObject>`: the call of the action's function.
fn emit_call(cx: &Context<'_>, task: &Task, action: &Action, index: usize) -> TokenStream {
    let rt = rt();
    let task_name = &task.name.value;
    let label = action_label(action, index);
    let Some(function) = &action.function else {
        return quote!(::core::compile_error!("action without functionRef"));
    };
    let Some(method) = cx.function_method(&function.ref_name.value) else {
        let message = format!("undefined function `{}`", function.ref_name.value);
        return quote!(::core::compile_error!(#message));
    };
    // Called through the trait's path: a sub-flow's trait, a supertrait, may have a method of
    // the same name.
    let functions = cx.functions_ident();
    let (input_binding, source) = match &action.input_path {
        Some(path) => {
            let path = path_ref(path);
            (
                quote!(let action_input = #rt::select_input(#path, &data)?;),
                quote!(&action_input),
            )
        }
        None => (TokenStream::new(), quote!(&data)),
    };
    let args = match &function.parameters {
        Some(param) => emit_param(param, &source),
        None => match &action.input_path {
            Some(_) => quote!(action_input),
            None => quote!(data.clone()),
        },
    };
    let timeout = super::duration_option(action.timeout.as_ref());
    let timeout_text = action.timeout.as_ref().map_or("", |t| t.text.as_str());
    let call = quote! {
        async {
            #input_binding
            let args = #args;
            #rt::call_action(
                #functions::#method(&self.functions, args),
                #timeout,
                #timeout_text,
                #task_name,
                #label,
            )
            .await
        }
    };
    if action.retry.is_empty() {
        return call;
    }
    retrying(task, action, call)
}

/// The call again and again under the action's own retries (the earlier drafts): the first
/// definition whose condition matches the error decides, until it is spent. A failure that no
/// retry takes any more is recorded as this action's (`failed_action`), for the handlers of its
/// retries' transitions.
fn retrying(task: &Task, action: &Action, call: TokenStream) -> TokenStream {
    let rt = rt();
    let position = task
        .actions()
        .iter()
        .position(|a| std::ptr::eq(*a, action))
        .unwrap_or(usize::MAX);
    let failed = format_ident!("failed");
    let scope = format_ident!("scope");
    let choices = action.retry.iter().enumerate().map(|(d, retry)| {
        let test = match &retry.condition {
            Some(expression) => crate::emit_parts::expr::condition(expression, &failed, &scope),
            None => quote!(::core::result::Result::<bool, #rt::ErrorObject>::Ok(true)),
        };
        quote! {
            let outcome = #test;
            match outcome {
                ::core::result::Result::Ok(true) => break 'choice ::core::result::Result::Ok(::core::option::Option::Some(#d)),
                ::core::result::Result::Ok(false) => {}
                ::core::result::Result::Err(error) => break 'choice ::core::result::Result::Err(error),
            }
        }
    });
    let policies = super::exit::retry_policies(&action.retry);
    quote! {
        async {
            #policies
            let mut progress = #rt::RetryProgress::default();
            loop {
                let error = match #call.await {
                    ::core::result::Result::Ok(result) => break ::core::result::Result::Ok(result),
                    ::core::result::Result::Err(error) => error,
                };
                let failed_data = #rt::data_with_error(&data, &error);
                let error_scope = error.to_json();
                let #failed: &#rt::Value = &failed_data;
                let #scope: &#rt::Value = &error_scope;
                // Conditions that read only bare names leave `failed` unused, and the other way round.
                let _ = (#failed, #scope);
                let choice: ::core::result::Result<::core::option::Option<usize>, #rt::ErrorObject> = 'choice: {
                    #(#choices)*
                    ::core::result::Result::Ok(::core::option::Option::None)
                };
                let choice = match choice {
                    ::core::result::Result::Ok(choice) => choice,
                    ::core::result::Result::Err(condition_error) => break ::core::result::Result::Err(condition_error),
                };
                let next = choice.and_then(|definition| {
                    POLICIES
                        .get(definition)
                        .and_then(|policy| progress.next(definition, policy))
                });
                match next {
                    ::core::option::Option::Some(next) => {
                        progress = next;
                        progress.wait().await;
                    }
                    ::core::option::Option::None => {
                        failed_action.store(#position, ::core::sync::atomic::Ordering::Relaxed);
                        break ::core::result::Result::Err(error);
                    }
                }
            }
        }
    }
}

/// Keeps the selected part of the result (the earlier drafts' action `outputPath`), then writes
/// it at the results path, or merges it into the task data.
fn emit_place(task: &Task, action: &Action, index: usize, result: &TokenStream) -> TokenStream {
    let rt = rt();
    if let Some(selection) = &action.result_selection {
        let selection = path_ref(selection);
        let place = place(task, action, index, &quote!(selected));
        return quote! {
            let mut selected = #result;
            #rt::filter_in_place(#selection, &mut selected)?;
            #place
        };
    }
    place(task, action, index, result)
}

fn place(task: &Task, action: &Action, index: usize, result: &TokenStream) -> TokenStream {
    let rt = rt();
    match &action.results_path {
        Some(path) => {
            let path = path_ref(path);
            quote!(#path.write(&mut data, #result)?;)
        }
        None => {
            let task_name = &task.name.value;
            let label = action_label(action, index);
            quote!(#rt::merge_result(&mut data, #result, #task_name, #label)?;)
        }
    }
}

/// The arguments built from the template; `$` strings select from `source` (a `&Value`).
fn emit_param(param: &Param, source: &TokenStream) -> TokenStream {
    let rt = rt();
    match param {
        Param::Literal(value) => json(value),
        Param::Path(path) => {
            let path = path_ref(path);
            quote!(#rt::select_or_null(#path, #source)?)
        }
        Param::Array(items) => {
            let items = items.iter().map(|i| emit_param(i, source));
            quote!(#rt::Value::Array(::std::vec![#(#items),*]))
        }
        Param::Object(entries) if entries.is_empty() => quote!(#rt::Value::Object(#rt::Map::new())),
        Param::Object(entries) => {
            let inserts = entries.iter().map(|(key, value)| {
                let value = emit_param(value, source);
                quote!(map.insert(::std::string::String::from(#key), #value);)
            });
            quote! {{
                let mut map = #rt::Map::new();
                #(#inserts)*
                #rt::Value::Object(map)
            }}
        }
    }
}
