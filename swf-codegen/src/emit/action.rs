//! Actions: select the action's input, build the function's arguments, call the function (with
//! its timeout and call context), then write the result at its results path or merge it into
//! the task data.
//!
//! The earlier drafts' actions retry on their own: a sequential action whose retry matches
//! ends the step with the task's progress (`ActionResume`: this action, its retry count and
//! when it may run again), so that the wait is saved and the actions before it are not called
//! again; actions run in parallel retry within the step.

use super::fields::action_retries;
use super::{Context, rt};
use crate::emit_parts::{path::path_ref, value::json};
use crate::ir::{Action, ActionMode, JsonPath, Param, Task};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Statements running `actions` inside a task attempt; `data` is the mutable task data.
/// `first` is the position of the first of them among all the task's actions.
pub(super) fn emit_actions(
    cx: &Context<'_>,
    task: &Task,
    actions: &[Action],
    mode: ActionMode,
    first: usize,
) -> TokenStream {
    if let Some(described) = described_calls(cx, task, actions, mode) {
        let run = described.in_place();
        let calls = described.statics(None);
        // In a block of its own: a task may run several lists (one per event entry).
        return quote!({ #calls #run?; });
    }
    let resumable = task_resumes(task);
    match mode {
        ActionMode::Sequential => {
            let steps = actions.iter().enumerate().map(|(i, action)| {
                let position = first + i;
                let step = if action.retry.is_empty() {
                    let (prepare, call) = call_parts(cx, task, action, i, &task_attempt(task));
                    let place = emit_place(task, action, i, &quote!(result));
                    // Each action's `args` and `result` shadow the previous one's.
                    quote! {
                        #prepare
                        let result = #call.await?;
                        #place
                    }
                } else {
                    resuming_call(cx, task, action, i, position)
                };
                if resumable {
                    // `from <= 0` would be clippy's absurd_extreme_comparisons.
                    let runs = if position == 0 {
                        quote!(from == 0usize)
                    } else {
                        quote!(from <= #position)
                    };
                    quote! {
                        if #runs {
                            #step
                        }
                    }
                } else {
                    step
                }
            });
            quote!(#(#steps)*)
        }
        ActionMode::Parallel if actions.is_empty() => TokenStream::new(),
        ActionMode::Parallel => {
            let results: Vec<_> = (0..actions.len())
                .map(|i| format_ident!("result_{}", i))
                .collect();
            let calls = actions.iter().enumerate().map(|(i, action)| {
                if action.retry.is_empty() {
                    emit_call(cx, task, action, i, &task_attempt(task))
                } else {
                    retrying_in_step(cx, task, action, i, first + i)
                }
            });
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

/// A task's actions described by data (see [`described_calls`]).
pub(super) struct DescribedCalls {
    /// Each call, a `Call` constant.
    calls: Vec<TokenStream>,
    /// Whether there is one call.
    single: bool,
    /// Which attempt of the task runs them (an expression).
    attempt: TokenStream,
}

impl DescribedCalls {
    /// The `static CALLS: [Call; N]` item, or `static CALL: Call` for one call; the last call
    /// applies the task's `output` filter when given (see the runtime's `Call::output`).
    pub fn statics(&self, output: Option<&JsonPath>) -> TokenStream {
        let rt = rt();
        let output = output.map(|path| {
            let path = path_ref(path);
            quote!(.output(#path))
        });
        let last = self.calls.len().saturating_sub(1);
        let calls = self.calls.iter().enumerate().map(|(index, call)| {
            let output = output.as_ref().filter(|_| index == last);
            quote!(#call #output)
        });
        if self.single {
            quote!(static CALL: #rt::Call = #(#calls)*;)
        } else {
            let count = proc_macro2::Literal::usize_unsuffixed(self.calls.len());
            quote!(static CALLS: [#rt::Call; #count] = [#(#calls),*];)
        }
    }

    /// Whether there is one call.
    pub fn is_single(&self) -> bool {
        self.single
    }

    /// The calls run on the mutable task data `data`: a `Result<Attempt<Infallible>,
    /// ErrorObject>`.
    pub fn in_place(&self) -> TokenStream {
        let rt = rt();
        let attempt = &self.attempt;
        let calls = if self.single {
            quote!(::core::slice::from_ref(&CALL))
        } else {
            quote!(&CALLS)
        };
        quote!(#rt::call_functions(self, #calls, #attempt, &mut data, io).await)
    }

    /// The task's `CallStep`: its calls on `data`, then `next`, an expression of the task data
    /// after them (`data`) alone.
    pub fn step(&self, next: &TokenStream) -> TokenStream {
        let rt = rt();
        if self.single {
            quote!(#rt::CallStep::one(&CALL, data, |data| #next))
        } else {
            quote!(#rt::CallStep::new(&CALLS, data, |data| #next))
        }
    }

    /// The calls run on `data`, moved: the task data after them, or the failure of the run
    /// with the data it had (`?` leaves the step with it).
    pub fn plain(&self) -> TokenStream {
        let rt = rt();
        let attempt = &self.attempt;
        if self.single {
            quote!(#rt::run_call(self, &CALL, #attempt, data, io).await?)
        } else {
            quote!(#rt::run_calls(self, &CALLS, #attempt, data, io).await?)
        }
    }
}

/// When every one of `actions` is a plain call (sequential, a function of this workflow, no
/// retries of its own): the `static CALLS` describing them (see the runtime's `calls`), to
/// run with [`DescribedCalls::in_place`] or [`DescribedCalls::plain`]. The runtime's code for
/// a call is then compiled once per machine, not once per task.
pub(super) fn described_calls(
    cx: &Context<'_>,
    task: &Task,
    actions: &[Action],
    mode: ActionMode,
) -> Option<DescribedCalls> {
    let rt = rt();
    // One action runs the same in either mode; several in parallel are joined (see above).
    if actions.is_empty()
        || (mode == ActionMode::Parallel && actions.len() > 1)
        || task_resumes(task)
    {
        return None;
    }
    let task_name = &task.name.value;
    let calls = actions
        .iter()
        .enumerate()
        .map(|(index, action)| {
            let function = action
                .function
                .as_ref()
                .filter(|_| action.retry.is_empty())?;
            let number = cx
                .workflow
                .functions
                .iter()
                .position(|f| f.name.value == function.ref_name.value)?;
            let number = proc_macro2::Literal::usize_unsuffixed(number);
            let function_name = &function.ref_name.value;
            let label = action_label(action, index);
            let input = action.input_path.as_ref().map(|path| {
                let path = path_ref(path);
                quote!(.input(#path))
            });
            // A `static` of its own, which the private block hoists and shares between the
            // calls that build the same arguments (see `private_block`).
            let args = function.parameters.as_ref().map(|param| {
                let template = template(param);
                quote!(.args({
                    static ARGS: #rt::Arguments = #rt::Arguments::new(#template);
                    &ARGS
                }))
            });
            let select = action.result_selection.as_ref().map(|path| {
                let path = path_ref(path);
                quote!(.select(#path))
            });
            let results = action.results_path.as_ref().map(|path| {
                let path = path_ref(path);
                quote!(.results(#path))
            });
            let timeout = action.timeout.as_ref().map(|timeout| {
                let millis = timeout.millis;
                let text = timeout.text.as_str();
                quote!(.timeout(#rt::Duration::from_millis(#millis), #text))
            });
            Some(quote! {
                #rt::Call::new(#number, #function_name, #task_name, #label)
                    #input #args #select #results #timeout
            })
        })
        .collect::<Option<Vec<_>>>()?;
    // One call (most tasks) is a `static` of its own: the formatter keeps it on one line.
    let single = calls.len() == 1;
    Some(DescribedCalls {
        calls,
        single,
        attempt: task_attempt(task),
    })
}

/// The arguments template as the runtime's `Template`, a constant.
fn template(param: &Param) -> TokenStream {
    let rt = rt();
    match param {
        Param::Literal(value) => literal_template(value),
        Param::Path(path) => {
            let path = path_ref(path);
            quote!(#rt::Template::Path(#path))
        }
        Param::Array(items) => template_array(items.iter().map(template)),
        Param::Object(members) => template_object(
            members
                .iter()
                .map(|(key, value)| (key.as_str(), template(value))),
        ),
    }
}

fn template_array(items: impl Iterator<Item = TokenStream>) -> TokenStream {
    let rt = rt();
    quote!(#rt::Template::Array(&[#(#items),*]))
}

fn template_object<'a>(members: impl Iterator<Item = (&'a str, TokenStream)>) -> TokenStream {
    let rt = rt();
    let members = members.map(|(key, value)| quote!((#key, #value)));
    quote!(#rt::Template::Object(&[#(#members),*]))
}

fn literal_template(value: &serde_json::Value) -> TokenStream {
    use serde_json::Value;
    let rt = rt();
    match value {
        Value::Null => quote!(#rt::Template::Null),
        Value::Bool(b) => quote!(#rt::Template::Bool(#b)),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                quote!(#rt::Template::Unsigned(#u))
            } else if let Some(i) = n.as_i64() {
                quote!(#rt::Template::Signed(#i))
            } else {
                match n.as_f64().filter(|f| f.is_finite()) {
                    Some(f) => quote!(#rt::Template::Float(#f)),
                    // serde_json refuses NaN and infinities, so this cannot come from a file.
                    None => quote!(::core::compile_error!("swf: a number that is not finite")),
                }
            }
        }
        Value::String(text) => quote!(#rt::Template::Text(#text)),
        Value::Array(items) => template_array(items.iter().map(literal_template)),
        Value::Object(members) => template_object(
            members
                .iter()
                .map(|(key, value)| (key.as_str(), literal_template(value))),
        ),
    }
}

fn action_label(action: &Action, index: usize) -> String {
    match &action.name {
        Some(name) => name.value.clone(),
        None => format!("action {}", index + 1),
    }
}

/// Which attempt of the task a call belongs to: its retry count (1 without retries).
fn task_attempt(task: &Task) -> TokenStream {
    if task.retry.is_empty() {
        quote!(1)
    } else {
        quote!(retry.attempt())
    }
}

/// Whether the task resumes at an action after an action's own retry (see the module docs):
/// its fields' progress is `Progress::Resume` exactly then. Decided from the task itself (a
/// scan of the scope for its position made generation quadratic in the number of tasks).
fn task_resumes(task: &Task) -> bool {
    action_retries(task)
}

/// An `async` block resolving to `Result<Value, ErrorObject>`: the call of the action's function,
/// as attempt `attempt` (an expression).
fn emit_call(
    cx: &Context<'_>,
    task: &Task,
    action: &Action,
    index: usize,
    attempt: &TokenStream,
) -> TokenStream {
    let (prepare, call) = call_parts(cx, task, action, index, attempt);
    quote! {
        async {
            #prepare
            #call.await
        }
    }
}

/// The statements that bind the call's arguments (`args`), and the call itself: a future of
/// `Result<Value, ErrorObject>`. A sequential action runs them in the task's attempt directly
/// (its `?` leaves the attempt as the call's own would); parallel ones in `emit_call`'s block.
fn call_parts(
    cx: &Context<'_>,
    task: &Task,
    action: &Action,
    index: usize,
    attempt: &TokenStream,
) -> (TokenStream, TokenStream) {
    let rt = rt();
    let task_name = &task.name.value;
    let label = action_label(action, index);
    let Some(function) = &action.function else {
        return (
            TokenStream::new(),
            quote!(::core::compile_error!("action without functionRef")),
        );
    };
    let Some(method) = cx.function_method(&function.ref_name.value) else {
        let message = format!("undefined function `{}`", function.ref_name.value);
        return (TokenStream::new(), quote!(::core::compile_error!(#message)));
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
    let timeout = action.timeout.as_ref().map(|timeout| {
        let millis = timeout.millis;
        let text = timeout.text.as_str();
        quote!(.with_timeout(#rt::Duration::from_millis(#millis), #text))
    });
    let function_name = &function.ref_name.value;
    (
        quote! {
            #input_binding
            let args = #args;
        },
        quote! {
            #rt::ActionCall::new(#function_name, #task_name, #label, #attempt) #timeout
                .call(io, || #functions::#method(&self.functions, args))
        },
    )
}

/// Binds `choice` to the first retry definition of the action whose condition matches
/// `error` (with `data`), or breaks out with the condition's own failure.
fn retry_choice(action: &Action, on_condition_error: TokenStream) -> TokenStream {
    let rt = rt();
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
        #policies
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
            ::core::result::Result::Err(condition_error) => #on_condition_error,
        };
    }
}

/// A sequential action with retries of its own: one attempt per step. A failure its retry takes
/// ends the step with the task's progress at this action; one no retry takes any more is
/// recorded as this action's (`failed_action`), for the handlers of its retries' transitions.
fn resuming_call(
    cx: &Context<'_>,
    task: &Task,
    action: &Action,
    index: usize,
    position: usize,
) -> TokenStream {
    let rt = rt();
    let call = emit_call(cx, task, action, index, &quote!(progress.attempt()));
    let place = emit_place(task, action, index, &quote!(result));
    let choose = retry_choice(
        action,
        quote!(return ::core::result::Result::Err(condition_error)),
    );
    quote! {{
        let progress = match &resume {
            ::core::option::Option::Some(resume) if resume.action == #position => resume.retry.clone(),
            _ => #rt::RetryProgress::default(),
        };
        let result = match #call.await {
            ::core::result::Result::Ok(result) => result,
            ::core::result::Result::Err(error) => {
                #choose
                let next = choice.and_then(|definition| {
                    POLICIES
                        .get(definition)
                        .and_then(|policy| progress.next(definition, policy, io.now()))
                });
                if let ::core::option::Option::Some(retry) = next {
                    return ::core::result::Result::Ok(#rt::Attempt::Stay(
                        ::core::option::Option::Some(#rt::ActionResume { action: #position, retry }),
                        ::core::option::Option::None,
                    ));
                }
                failed_action.store(#position, ::core::sync::atomic::Ordering::Relaxed);
                return ::core::result::Result::Err(error);
            }
        };
        #place
    }}
}

/// An action with retries of its own among actions run in parallel: called again and again
/// within the step (waiting by the `Io`'s clock), until it succeeds or no retry takes its error.
fn retrying_in_step(
    cx: &Context<'_>,
    task: &Task,
    action: &Action,
    index: usize,
    position: usize,
) -> TokenStream {
    let rt = rt();
    let call = emit_call(cx, task, action, index, &quote!(progress.attempt()));
    let choose = retry_choice(
        action,
        quote!(break ::core::result::Result::Err(condition_error)),
    );
    quote! {
        async {
            let mut progress = #rt::RetryProgress::default();
            loop {
                let error = match #call.await {
                    ::core::result::Result::Ok(result) => break ::core::result::Result::Ok(result),
                    ::core::result::Result::Err(error) => error,
                };
                #choose
                let next = choice.and_then(|definition| {
                    POLICIES
                        .get(definition)
                        .and_then(|policy| progress.next(definition, policy, io.now()))
                });
                match next {
                    ::core::option::Option::Some(next) => {
                        progress = next;
                        if let ::core::option::Option::Some(at) = progress.not_before() {
                            io.clock().sleep_until(at).await;
                        }
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
        Param::Object(entries) => {
            let members = entries.iter().map(|(key, value)| {
                let value = emit_param(value, source);
                quote!((#key, #value))
            });
            quote!(#rt::object([#(#members),*]))
        }
    }
}
