//! One `run_*` method per task: one step of it. The task's attempt evaluates to
//! `Attempt::Exit(n)` (the exit to take: a switch's choice, else 0), `Attempt::Terminate` (a
//! nested scope ended the whole instance, its output in `data`) or `Attempt::Stay` (the task is
//! not done: it carries its progress to the next step, or waits); its error goes through the
//! task's retry and onError definitions.

use super::exit::{
    dispatches_on_exit, emit_error_path, emit_exit_dispatch, emit_exit_dispatch_of_output,
};
use super::fields::{Fields, Log, Progress, Stay};
use super::{Context, action, events, nested, rt};
use crate::emit_parts::boolean::{self, BoolExpr};
use crate::emit_parts::{path::path_ref, value::json};
use crate::ir::{Comparison, DataCondition, DataTest, Operator, SwitchConditions, Task, TaskKind};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The `run_*` of a step that awaits: a function returning an `async move` block of `body`
/// rather than an `async fn`, which would move its arguments into locals and so hold each
/// twice (the task data among them) in the future its scope's `advance` copies as it starts
/// it, and a branch or iteration boxes (issue 10).
fn step_fn(
    doc: &str,
    run_fn: &Ident,
    params: &TokenStream,
    io: &TokenStream,
    state: &Ident,
    body: &TokenStream,
) -> TokenStream {
    let rt = rt();
    quote! {
        #[doc = #doc]
        fn #run_fn<'a>(&'a self, #params #io: &'a #rt::Io) -> impl ::core::future::Future<Output = #rt::Step<#state>> + 'a {
            async move { #body }
        }
    }
}

/// Whether a task's `run_*` is an `async fn` (most) or a plain one: a step that awaits
/// nothing (a data switch described by data) is not a coroutine of its own, nor an await
/// point of its scope's `advance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunKind {
    Async,
    /// A plain associated function describing the task's calls and its transition: a
    /// `CallStep`, which the scope's `advance` runs, one `await` for every such task.
    Calls,
    /// A plain method.
    Sync,
    /// A plain associated function: its step reads nothing of the machine.
    Associated,
}

/// The `run_*` method of task `index`, and whether it is `async`.
pub(super) fn emit_run(cx: &Context<'_>, index: usize) -> (TokenStream, RunKind) {
    let rt = rt();
    let state = cx.state_ident();
    let task = cx.task(index);
    let run_fn = cx.run_fn(index);
    let fields = Fields::of(cx, index);
    // `mut data` in the signature rather than `let mut data = data;`, which would hold the
    // task data twice in the step's future.
    let params = fields.parameters(mutates(task));
    let variant_path = {
        let variant = cx.variant(index);
        quote!(#state::#variant)
    };
    let unchanged = fields.rebuild(variant_path.clone(), None);
    let retry_wait = fields.retry.then(|| {
        quote! {
            if let ::core::option::Option::Some(wait) = retry.pending(io) {
                return ::core::result::Result::Ok(#rt::Progress::Waiting(#unchanged, wait));
            }
        }
    });
    let resume_wait = matches!(fields.progress, Progress::Resume { .. }).then(|| {
        quote! {
            if let ::core::option::Option::Some(wait) =
                resume.as_ref().and_then(|resume| resume.retry.pending(io))
            {
                return ::core::result::Result::Ok(#rt::Progress::Waiting(#unchanged, wait));
            }
        }
    });
    // A retry restarts the task from its input (a callback's, kept while it waits).
    let input = fields.retry.then(|| match fields.progress {
        Progress::Callback => quote! {
            let input = match &phase {
                #rt::CallbackPhase::Wait { input: ::core::option::Option::Some(input), .. } => input.clone(),
                _ => data.clone(),
            };
        },
        _ => quote!(let input = data.clone();),
    });
    let compensating = fields.log == Log::Compensating;
    let marking = compensating.then(|| quote!(let marking = compensating.clone();));
    let mark = compensating.then(|| quote!(.map_err(|failure| marking.mark(failure))));
    let input_check = super::schema::task_input_check(task);
    let output_check = super::schema::task_output_check(task);
    // Which action failed once its own retries were spent (the earlier drafts' action retries).
    let failed_action = task.actions().iter().any(|a| !a.retry.is_empty()).then(|| {
        quote! {
            let failed_action = ::core::sync::atomic::AtomicUsize::new(usize::MAX);
        }
    });
    let stay = fields.stay();
    let payload = stay
        .as_ref()
        .map_or(quote!(::core::convert::Infallible), |s| s.payload.clone());
    // An operation whose actions are all plain calls, or a switch whose data conditions are
    // all comparisons the runtime knows, is described by data and run by the runtime, without
    // an `async` block of its own.
    let described = (input_check.is_empty() && stay.is_none())
        .then(|| described(cx, index))
        .flatten();
    // One described call leaves the task data as it was when it fails (a merge or a write that
    // fails changes nothing), so a retry's input is copied only then, not before every attempt.
    let input_unchanged_on_failure = matches!(&described, Some(Described::Calls(calls)) if calls.is_single())
        && !matches!(fields.progress, Progress::Callback);
    let (input, input_on_failure) = if input_unchanged_on_failure {
        (None, input)
    } else {
        (input, None)
    };
    let (statics, attempt) = match &described {
        Some(described) => {
            let run = described.attempt();
            (described.statics(), quote!(let attempt = #run;))
        }
        None => {
            let body = emit_body(cx, index);
            (
                TokenStream::new(),
                quote! {
                    let attempt: ::core::result::Result<#rt::Attempt<#payload>, #rt::ErrorObject> =
                        async { #input_check #body }.await;
                },
            )
        }
    };
    let stay_arm = match &stay {
        Some(Stay {
            field: Some(field), ..
        }) => {
            let rebuilt = fields.rebuild(variant_path.clone(), Some(field));
            quote! {
                ::core::result::Result::Ok(#rt::Attempt::Stay(stay, wait)) => {
                    return ::core::result::Result::Ok(#rt::progress(#rebuilt, wait));
                }
            }
        }
        Some(Stay { field: None, .. }) => quote! {
            ::core::result::Result::Ok(#rt::Attempt::Stay((), wait)) => {
                return ::core::result::Result::Ok(#rt::progress(#unchanged, wait));
            }
        },
        None => quote! {
            ::core::result::Result::Ok(#rt::Attempt::Stay(never, _)) => match never {},
        },
    };
    let exit_binding = if dispatches_on_exit(task) {
        quote!(exit)
    } else {
        quote!(_)
    };
    let success = emit_exit_dispatch(cx, index);
    let doc = format!(" Runs one step of task `{}`.", task.name.value);
    let doc = super::names::doc_text(&doc);
    // A task that finishes within its step and fails plainly (no retry, no onError) settles
    // its attempt through the runtime's `settle`; the others spell out each way it can end.
    let [
        success_awaits,
        success_returns,
        success_reads_io,
        success_reads_self,
    ] = super::mentions_each(&success, ["await", "return", "io", "self"]);
    let plain = stay.is_none()
        && !compensating
        && task.retry.is_empty()
        && task.on_error.is_empty()
        && !success_awaits
        && !success_returns;
    // A plain failure is the runtime's: it is not built only to be dropped.
    let failure = if plain {
        TokenStream::new()
    } else {
        let failure = emit_error_path(cx, index);
        quote!(#input_on_failure #failure)
    };
    let reads_io = [&retry_wait, &resume_wait, &input, &marking]
        .into_iter()
        .any(|part| {
            part.as_ref()
                .is_some_and(|part| super::mentions(part, "io"))
        })
        || success_reads_io
        // A static item cannot read a local: `statics` is not looked at.
        || [&attempt, &stay_arm, &failure]
            .into_iter()
            .any(|part| super::mentions(part, "io"));
    let io = if reads_io { quote!(io) } else { quote!(_io) };
    // Everything up to the attempt's result, the same whether the task settles through the
    // runtime or spells out its ends (a plain task has no `marking`); made only where it is
    // used (a described task's step does without it).
    let attempt_steps = || {
        quote! {
            #statics
            #retry_wait
            #resume_wait
            #input
            #marking
            #failed_action
            #attempt
            #output_check
        }
    };
    if plain {
        let workflow = &cx.workflow.id.value;
        let name = &task.name.value;
        let as_expression = |success: TokenStream| {
            if is_expression(&success) {
                success
            } else {
                quote!({ #success })
            }
        };
        let success = as_expression(success);
        // Described calls and switches end the step with their failure themselves.
        match described.filter(|_| output_check.is_empty()) {
            Some(Described::Calls(described)) => {
                // The task's output filter is applied by its last call, which then merges only
                // what the filter keeps (see the runtime's `Call::output`): the step goes on
                // from the output. Only a plain task's: the filter failing after the merge
                // changes the data that a retry would start again from.
                let output = task.data_filter.output.as_ref();
                let calls = described.statics(output);
                let success = match output {
                    Some(_) => as_expression(emit_exit_dispatch_of_output(cx, index)),
                    None => success,
                };
                // A transition that reads the task data alone (no other field, no `self`, no
                // `io`) fits a `fn` pointer: the whole step is data, a `CallStep`.
                if fields.names().len() == 1 && !success_reads_self && !success_reads_io {
                    let step = described.step(&success);
                    let doc = format!(
                        " The step of task `{}`: its calls and the state after them.",
                        task.name.value
                    );
                    let doc = super::names::doc_text(&doc);
                    let run = quote! {
                        #[doc = #doc]
                        fn #run_fn(data: #rt::Value) -> #rt::CallStep<#state> {
                            #calls
                            #step
                        }
                    };
                    return (run, RunKind::Calls);
                }
                let run = described.plain();
                // Its transition reads more than the data (a compensation log, `io`): an
                // `async fn`, holding the task data twice, unlike the others (see `step_fn`),
                // short to read and compile (issue 10, point 4).
                let params = fields.parameters(false);
                let run = quote! {
                    #[doc = #doc]
                    async fn #run_fn(&self, #params #io: &#rt::Io) -> #rt::Step<#state> {
                        #calls
                        let data = #run;
                        #rt::ran(#success)
                    }
                };
                return (run, RunKind::Async);
            }
            // Its step awaits nothing (plain: its exits do not), so it is no coroutine.
            Some(Described::Switch(conditions)) => {
                let (receiver, kind) = if success_reads_self {
                    (quote!(&self,), RunKind::Sync)
                } else {
                    (TokenStream::new(), RunKind::Associated)
                };
                let run = quote! {
                    #[doc = #doc]
                    fn #run_fn(#receiver #params #io: &#rt::Io) -> #rt::Step<#state> {
                        #conditions
                        let (#exit_binding, data) =
                            #rt::switch::take(&CONDITIONS, data, #workflow, #name)?;
                        // Bound first: the formatter gives a `match` as an argument two lines more.
                        let next = #success;
                        #rt::ran(next)
                    }
                };
                return (run, kind);
            }
            None => {}
        }
        let attempt_steps = attempt_steps();
        let body = quote! {
            #attempt_steps
            #rt::settle(attempt, data, #workflow, #name, |#exit_binding, data| #success)
        };
        return (
            step_fn(&doc, &run_fn, &params, &io, &state, &body),
            RunKind::Async,
        );
    }
    let success = settled(success);
    let failure = settled(failure);
    let attempt_steps = attempt_steps();
    let body = quote! {
        #attempt_steps
        let next: ::core::result::Result<#state, #rt::WorkflowError> = match attempt {
            ::core::result::Result::Ok(#rt::Attempt::Exit(#exit_binding)) => #success,
            ::core::result::Result::Ok(#rt::Attempt::Terminate) => ::core::result::Result::Ok(#state::Terminated { output: data }),
            #stay_arm
            ::core::result::Result::Err(error) => #failure,
        };
        next #mark .map(#rt::Progress::Ran)
    };
    (
        step_fn(&doc, &run_fn, &params, &io, &state, &body),
        RunKind::Async,
    )
}

/// An arm of the attempt's settling as an expression: the arm itself when it neither awaits nor
/// returns, else inside an `async` block, where `return` gives the arm's value, not the step's.
fn settled(arm: TokenStream) -> TokenStream {
    if super::mentions_each(&arm, ["await", "return"]).contains(&true) {
        quote!(async { #arm }.await)
    } else if is_expression(&arm) {
        arm
    } else {
        quote!({ #arm })
    }
}

/// Whether `tokens` are one expression, not statements: no `;` outside groups.
fn is_expression(tokens: &TokenStream) -> bool {
    !tokens
        .clone()
        .into_iter()
        .any(|tree| matches!(tree, proc_macro2::TokenTree::Punct(p) if p.as_char() == ';'))
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

/// The attempt itself.
fn emit_body(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let name = &task.name.value;
    let next = quote!(::core::result::Result::Ok(#rt::Attempt::Exit(0)));
    match &task.kind {
        TaskKind::Operation {
            action_mode,
            actions,
        } => {
            let run = action::emit_actions(cx, task, actions, *action_mode, 0);
            // After an action's own retry wait, the step resumes at that action.
            let from = matches!(Fields::of(cx, index).progress, Progress::Resume { .. })
                .then(|| quote!(let from = resume.as_ref().map_or(0, |resume| resume.action);));
            quote! { #from #run #next }
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
        TaskKind::Delay { .. } => quote! {
            if io.now() < until {
                return ::core::result::Result::Ok(#rt::Attempt::Stay((), ::core::option::Option::Some(#rt::Wait::until(until))));
            }
            #next
        },
        TaskKind::Switch(switch) => match &switch.conditions {
            SwitchConditions::Data(conditions) => {
                let tests = conditions.iter().enumerate().map(|(i, condition)| {
                    let test = emit_data_condition(cx, task, condition);
                    quote! {
                        let matched = #test;
                        if matched {
                            return ::core::result::Result::Ok(#rt::Attempt::Exit(#i));
                        }
                    }
                });
                let default = conditions.len();
                quote! {
                    #(#tests)*
                    ::core::result::Result::Ok(#rt::Attempt::Exit(#default))
                }
            }
            SwitchConditions::Event(conditions) => events::emit_event_switch(cx, index, conditions),
        },
        TaskKind::Event {
            exclusive,
            events_actions,
            ..
        } => events::emit_event_task(cx, index, *exclusive, events_actions),
        TaskKind::Callback {
            action,
            event_ref,
            timeout,
            event_data_filter,
        } => events::emit_callback(
            cx,
            index,
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

/// A task described by data (see `action::described_calls` and [`described_switch`]).
enum Described {
    Calls(action::DescribedCalls),
    /// The switch's `static CONDITIONS`.
    Switch(TokenStream),
}

impl Described {
    /// The `static` items that describe the task.
    fn statics(&self) -> TokenStream {
        match self {
            Described::Calls(calls) => calls.statics(None),
            Described::Switch(conditions) => conditions.clone(),
        }
    }

    /// The task's attempt: a `Result<Attempt<Infallible>, ErrorObject>`.
    fn attempt(&self) -> TokenStream {
        let rt = rt();
        match self {
            Described::Calls(calls) => calls.in_place(),
            Described::Switch(_) => quote!(#rt::switch::choose(&CONDITIONS, &data)),
        }
    }
}

/// Task `index` described by data, when its kind has a description and it fits.
fn described(cx: &Context<'_>, index: usize) -> Option<Described> {
    let task = cx.task(index);
    match &task.kind {
        TaskKind::Operation {
            action_mode,
            actions,
        } => action::described_calls(cx, task, actions, *action_mode).map(Described::Calls),
        TaskKind::Switch(switch) => match &switch.conditions {
            SwitchConditions::Data(conditions) => {
                described_switch(conditions).map(Described::Switch)
            }
            SwitchConditions::Event(_) => None,
        },
        _ => None,
    }
}

/// A data-condition switch described by data: its `static CONDITIONS` (the runtime's
/// `switch::Test`s), or `None` when a condition uses the `custom` operator (the user's
/// function decides it).
fn described_switch(conditions: &[DataCondition]) -> Option<TokenStream> {
    let rt = rt();
    let tests = conditions
        .iter()
        .map(|condition| described_test(&condition.test))
        .collect::<Option<Vec<_>>>()?;
    let count = proc_macro2::Literal::usize_unsuffixed(tests.len());
    Some(quote!(static CONDITIONS: [#rt::switch::Test; #count] = [#(#tests),*];))
}

fn described_test(test: &DataTest) -> Option<TokenStream> {
    let rt = rt();
    let each = |items: &[DataTest]| items.iter().map(described_test).collect::<Option<Vec<_>>>();
    Some(match test {
        DataTest::Compare(comparison) => described_comparison(comparison)?,
        DataTest::All(items) => {
            let items = each(items)?;
            quote!(#rt::switch::Test::All(&[#(#items),*]))
        }
        DataTest::Any(items) => {
            let items = each(items)?;
            quote!(#rt::switch::Test::Any(&[#(#items),*]))
        }
        DataTest::Not(inner) => {
            let inner = described_test(inner)?;
            quote!(#rt::switch::Test::Not(&#inner))
        }
    })
}

/// One comparison as the runtime's `switch::Test::compare`.
fn described_comparison(condition: &Comparison) -> Option<TokenStream> {
    let rt = rt();
    let path = path_ref(condition.path.as_ref()?);
    let op = condition_op(condition.operator.value)?;
    let strings = condition
        .operator
        .value
        .compares_strings()
        .then(|| quote!(.strings()));
    let value = condition.value.as_ref().map_or("", |v| v.value.as_str());
    let regex = matches!(
        condition.operator.value,
        Operator::Matches | Operator::NotMatches
    )
    .then(|| {
        quote!(.regex({
            static REGEX: #rt::expr::LazyRegex = #rt::expr::LazyRegex::new(#value);
            &REGEX
        }))
    });
    let operand = operand(value);
    Some(quote! {
        #rt::switch::Test::compare(#rt::switch::ConditionOp::#op, #path, #operand) #strings #regex
    })
}

/// The runtime's `ConditionOp` for a data condition's operator, `None` for `custom`.
fn condition_op(operator: Operator) -> Option<TokenStream> {
    Some(match operator {
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
        Operator::Custom => return None,
    })
}

/// A condition's value with the number it reads as, as the runtime's `switch::Operand`.
fn operand(value: &str) -> TokenStream {
    use proc_macro2::Literal;
    let rt = rt();
    // Unsuffixed: the variant's field gives the type.
    if let Ok(integer) = value.parse::<i64>() {
        let integer = Literal::i64_unsuffixed(integer);
        return quote!(#rt::switch::Operand::Integer(#value, #integer));
    }
    if let Ok(integer) = value.parse::<u64>() {
        let integer = Literal::u64_unsuffixed(integer);
        return quote!(#rt::switch::Operand::Unsigned(#value, #integer));
    }
    match value.parse::<f64>() {
        Ok(number) if number.is_finite() => {
            let number = Literal::f64_unsuffixed(number);
            quote!(#rt::switch::Operand::Float(#value, #number))
        }
        _ => quote!(#rt::switch::Operand::Text(#value)),
    }
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
    if condition.operator.value == Operator::Custom {
        let functions = cx.functions_ident();
        let name = &task.name.value;
        let metadata = json(metadata.unwrap_or(&serde_json::Value::Null));
        // User code: never inline on a host's router (see `leave_inline`).
        return quote! {{
            #rt::leave_inline().await;
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
    let Some(op) = condition_op(condition.operator.value) else {
        return quote!(false);
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
    let value = operand(value);
    quote! {
        #rt::switch::data_condition(
            #rt::switch::ConditionOp::#op,
            #rt::switch::Comparison::#comparison,
            #path.select_ref(&data)?.as_deref(),
            &#value.value(),
            #regex,
        )?
    }
}
