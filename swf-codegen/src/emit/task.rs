//! One `run_*` method per task. Each task body runs as one attempt whose error goes through the
//! task's retry and onError definitions.
//!
//! The attempt evaluates to `Ok(Some(exit))`, the index of the transition to take (a switch's
//! condition, else 0), or `Ok(None)` when a nested scope ended the whole instance (`terminate`),
//! leaving its output in `data`.

use super::exit::{dispatches_on_exit, emit_error_path, emit_exit_dispatch};
use super::{Context, action, compensation, events, nested, rt};
use crate::emit_parts::boolean::{self, BoolExpr};
use crate::emit_parts::{path::path_ref, value::json};
use crate::ir::{Comparison, DataCondition, DataTest, Operator, SwitchConditions, Task, TaskKind};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit_run(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let task = cx.task(index);
    let run = cx.run_fn(index);
    let has_retry = !task.retry.is_empty();
    let retry_param = has_retry.then(|| quote!(retry: #rt::RetryProgress,));
    let log_param = compensation::field(cx);
    let io_param = cx.task_takes_io(index).then(|| quote!(io: &#rt::Io,));
    let wait = has_retry.then(|| quote!(retry.wait().await; let input = data.clone();));
    let body = emit_body(cx, index);
    let data_binding = mutates(task).then(|| quote!(let mut data = data;));
    let success = emit_exit_dispatch(cx, index);
    let failure = emit_error_path(cx, index);
    let terminates = can_terminate(task).then(|| {
        quote! {
            ::core::result::Result::Ok(::core::option::Option::None) => {
                ::core::result::Result::Ok(#state::Terminated { output: data })
            }
        }
    });
    let exit_binding = if dispatches_on_exit(task) {
        quote!(exit)
    } else if can_terminate(task) {
        quote!(::core::option::Option::Some(_))
    } else {
        quote!(_)
    };
    // Which action failed once its own retries were spent (the earlier drafts' action retries).
    let failed_action = task.actions().iter().any(|a| !a.retry.is_empty()).then(|| {
        quote! {
            let failed_action = ::core::sync::atomic::AtomicUsize::new(usize::MAX);
        }
    });
    let doc = format!(" Runs task `{}` once.", task.name.value);
    quote! {
        #[doc = #doc]
        async fn #run(&self, data: #rt::Value, #retry_param #log_param #io_param) -> ::core::result::Result<#state, #rt::WorkflowError> {
            #wait
            #data_binding
            #failed_action
            let attempt: ::core::result::Result<::core::option::Option<usize>, #rt::ErrorObject> = async { #body }.await;
            match attempt {
                #terminates
                ::core::result::Result::Ok(#exit_binding) => { #success }
                ::core::result::Result::Err(error) => { #failure }
            }
        }
    }
}

/// Whether the attempt changes `data` (so it is bound mutably).
fn mutates(task: &Task) -> bool {
    match &task.kind {
        TaskKind::Operation { actions, .. } => !actions.is_empty(),
        TaskKind::Inject { data } => !injects_nothing(data),
        TaskKind::Delay { .. } => false,
        TaskKind::Switch(switch) => matches!(switch.conditions, SwitchConditions::Event(_)),
        TaskKind::SubFlow {
            wait_for_completion,
            ..
        } => *wait_for_completion,
        TaskKind::Event { .. }
        | TaskKind::Callback { .. }
        | TaskKind::Parallel { .. }
        | TaskKind::ForEach { .. } => true,
    }
}

/// Whether a nested scope of the task can end the whole instance.
pub(super) fn can_terminate(task: &Task) -> bool {
    matches!(
        task.kind,
        TaskKind::Parallel { .. }
            | TaskKind::ForEach { .. }
            | TaskKind::SubFlow {
                wait_for_completion: true,
                ..
            }
    )
}

/// The attempt itself.
fn emit_body(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let name = &task.name.value;
    let next = quote!(::core::result::Result::Ok(::core::option::Option::Some(0)));
    match &task.kind {
        TaskKind::Operation {
            action_mode,
            actions,
        } => {
            let run = action::emit_actions(cx, task, actions, *action_mode);
            quote! { #run #next }
        }
        // Injecting nothing leaves the data as it is, whatever its kind (a filter may have made
        // it an array).
        TaskKind::Inject { data } if injects_nothing(data) => next,
        TaskKind::Inject { data } => {
            let value = json(data);
            quote! {
                #rt::merge_data(&mut data, #value, #name, "inject data")?;
                #next
            }
        }
        TaskKind::Delay { time_delay } => {
            let millis = time_delay.as_ref().map_or(0, |d| d.millis);
            quote! {
                #rt::tokio::time::sleep(#rt::Duration::from_millis(#millis)).await;
                #next
            }
        }
        TaskKind::Switch(switch) => match &switch.conditions {
            SwitchConditions::Data(conditions) => {
                let tests = conditions.iter().enumerate().map(|(i, condition)| {
                    let test = emit_data_condition(cx, task, condition);
                    quote! {
                        let matched = #test;
                        if matched {
                            return ::core::result::Result::Ok(::core::option::Option::Some(#i));
                        }
                    }
                });
                let default = conditions.len();
                quote! {
                    #(#tests)*
                    ::core::result::Result::Ok(::core::option::Option::Some(#default))
                }
            }
            SwitchConditions::Event(conditions) => {
                events::emit_event_switch(cx, task, conditions, switch.event_timeout.as_ref())
            }
        },
        TaskKind::Event {
            exclusive,
            events_actions,
            timeout,
        } => events::emit_event_task(cx, task, *exclusive, events_actions, timeout.as_ref()),
        TaskKind::Callback {
            action,
            event_ref,
            timeout,
            event_data_filter,
        } => events::emit_callback(
            cx,
            task,
            action.as_ref(),
            event_ref.as_ref(),
            timeout.as_ref(),
            event_data_filter.as_ref(),
        ),
        TaskKind::Parallel { .. } => nested::emit_parallel(cx, index),
        TaskKind::ForEach { .. } => nested::emit_for_each(cx, index),
        TaskKind::SubFlow { .. } => nested::emit_sub_flow(cx, index),
    }
}

fn injects_nothing(data: &serde_json::Value) -> bool {
    data.as_object().is_some_and(serde_json::Map::is_empty) || data.is_null()
}

/// One data condition: `bool`, inside the attempt (errors propagate with `?`); combinations
/// short-circuit as written.
fn emit_data_condition(cx: &Context<'_>, task: &Task, condition: &DataCondition) -> TokenStream {
    emit_data_test(cx, task, &condition.test, condition.metadata.as_ref()).tokens
}

fn emit_data_test(
    cx: &Context<'_>,
    task: &Task,
    test: &DataTest,
    metadata: Option<&serde_json::Value>,
) -> BoolExpr {
    let each = |items: &[DataTest]| {
        items
            .iter()
            .map(|t| emit_data_test(cx, task, t, metadata))
            .collect()
    };
    match test {
        DataTest::Compare(comparison) => {
            BoolExpr::atom(emit_comparison(cx, task, comparison, metadata))
        }
        DataTest::All(items) => boolean::all(each(items)),
        DataTest::Any(items) => boolean::any(each(items)),
        DataTest::Not(inner) => boolean::not(emit_data_test(cx, task, inner, metadata)),
    }
}

fn emit_comparison(
    cx: &Context<'_>,
    task: &Task,
    condition: &Comparison,
    metadata: Option<&serde_json::Value>,
) -> TokenStream {
    let rt = rt();
    let Some(path) = &condition.path else {
        return quote!(false);
    };
    let path_text = &path.text;
    let path = path_ref(path);
    let value = condition.value.as_ref().map_or("", |v| v.value.as_str());
    let comparison = if condition.operator.value.compares_strings() {
        quote!(Strings)
    } else {
        quote!(Auto)
    };
    let op = match condition.operator.value {
        Operator::Exists => quote!(Exists),
        Operator::NotExists => quote!(NotExists),
        Operator::Null => quote!(Null),
        Operator::NotNull => quote!(NotNull),
        Operator::Equals | Operator::StrEquals => quote!(Equals),
        Operator::NotEquals => quote!(NotEquals),
        Operator::LessThan | Operator::StrLessThan => quote!(LessThan),
        Operator::LessThanOrEquals | Operator::StrLessThanOrEquals => quote!(LessThanOrEquals),
        Operator::GreaterThan | Operator::StrGreaterThan => quote!(GreaterThan),
        Operator::GreaterThanOrEquals | Operator::StrGreaterThanOrEquals => {
            quote!(GreaterThanOrEquals)
        }
        Operator::Matches => quote!(Matches),
        Operator::NotMatches => quote!(NotMatches),
        Operator::Custom => {
            let functions = cx.functions_ident();
            let name = &task.name.value;
            let metadata = json(metadata.unwrap_or(&serde_json::Value::Null));
            return quote! {{
                let selected = #path.select(&data)?;
                let metadata = #metadata;
                #functions::custom_condition(&self.functions, #rt::CustomCondition {
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
            #rt::switch::Comparison::#comparison,
            #path.select(&data)?.as_ref(),
            #value,
            #regex,
        )?
    }
}
