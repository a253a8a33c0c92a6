//! Tasks that run nested scopes: parallel branches, foreach iterations and sub-flows. Their
//! states live in the task's state (`branches`, `each`, `child`), and each step of the task runs
//! one round: one step of each branch or iteration that can run, concurrently (the runtime's
//! `round`), so that a saved instance keeps the branches and iterations that finished.

use super::state::{branch_labels, slot_field};
use super::{Context, rt};
use crate::emit_parts::path::path_ref;
use crate::ir::{
    Action, Completion, EndKind, JsonPath, ParallelOutput, Param, PathKind, PathSegment, Scope,
    StartKind, Switch, SwitchConditions, Task, TaskKind, Transition,
};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// How many of a foreach task's iterations may run at once (0: no limit); a loop with a
/// completion condition runs them one at a time, so the condition is checked on each in turn.
pub(super) fn concurrency(task: &Task, max: Option<&crate::source::Spanned<u64>>) -> usize {
    let checked = matches!(
        &task.kind,
        TaskKind::ForEach {
            completion_condition: Some(_),
            ..
        }
    );
    if checked {
        1
    } else {
        max.map_or(0, |m| usize::try_from(m.value).unwrap_or(usize::MAX))
    }
}

/// The attempt of a parallel task. Its first step starts the branches (each with a copy of the
/// task data, sharing the arrays it does not read when its output is merged back: see
/// `branch_reads`; a branch the task does not wait for on its own tokio task); every step runs a
/// round; once enough branches completed, the rest are cancelled and the outputs of those that
/// completed are merged into the task data in branch order (or, in the kebab-case drafts, make
/// an array in branch order).
pub(super) fn emit_parallel(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let TaskKind::Parallel {
        branches,
        completion,
        output,
        n,
        state_timeout,
        branch_timeout,
    } = &task.kind
    else {
        return quote!(::core::compile_error!("not a parallel task"));
    };
    let name = &task.name.value;
    let ty = cx.branches_type(index);
    let labels = branch_labels(branches);
    let slots: Vec<_> = (0..branches.len()).map(slot_field).collect();
    let branch_deadline = super::duration_option(branch_timeout.as_ref());
    // The keys of the task data each branch reads, when its output is merged back and it can
    // share the arrays it does not read with the task data rather than copy them.
    let reads: Vec<Option<Vec<String>>> = branches
        .iter()
        .map(|branch| {
            (matches!(output, ParallelOutput::Merge) && branch.wait_for_completion)
                .then(|| branch_reads(&branch.scope))
                .flatten()
        })
        .collect();
    let starts = branches.iter().enumerate().map(|(b, branch)| {
        let slot = &slots[b];
        if !branch.wait_for_completion {
            return quote!(#slot: #rt::Slot::Stopped,);
        }
        let begin = cx.nested(index, b, &branch.scope).begin_fn();
        let input = match &reads[b] {
            Some(keys) => quote!(#rt::SharedData::new(&data, &[#(#keys),*]).into_input()),
            None => quote!(data.clone()),
        };
        quote! {
            #slot: match Self::#begin(#input, io).map_err(|failure| failure.error().clone())? {
                ::core::result::Result::Ok(state) => #rt::Slot::start(state, #rt::deadline_of(io, #branch_deadline)),
                // A branch whose scheduled start is not active completes at once with its input.
                ::core::result::Result::Err(output) => #rt::Slot::Done { output },
            },
        }
    });
    let detached: Vec<TokenStream> = branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| !branch.wait_for_completion)
        .map(|(b, branch)| {
            let nested = cx.nested(index, b, &branch.scope);
            let drive = format_ident!("{}drive_detached", nested.prefix);
            quote! {{
                let machine = Self::new(::core::clone::Clone::clone(&self.functions));
                let input = data.clone();
                let branch_io = io.detached();
                ::core::mem::drop(runtime.spawn(async move {
                    machine.#drive(input, &branch_io).await
                }));
            }}
        })
        .collect();
    let detach = (!detached.is_empty()).then(|| {
        quote! {
            // A durable host saves what it waits for; a branch nobody waits for would run
            // outside any saved state and be lost with the process.
            if io.records_children() {
                return ::core::result::Result::Err(#rt::ErrorObject::new(
                    "RuntimeError",
                    "a branch the parallel task does not wait for cannot run under a durable host: its state would be saved nowhere; wait for it (wait-for-completion: true) or call a sub-flow detached, which becomes an instance of its own",
                ));
            }
            // Branches the task does not wait for run on their own; their outcome is their own.
            let ::core::result::Result::Ok(runtime) = #rt::tokio::runtime::Handle::try_current() else {
                return ::core::result::Result::Err(#rt::ErrorObject::new(
                    "RuntimeError",
                    "a branch the parallel task does not wait for runs on its own tokio task, but the workflow is not running on a tokio runtime",
                ));
            };
            #(#detached)*
        }
    });
    let waited: Vec<usize> = (0..branches.len())
        .filter(|b| branches[*b].wait_for_completion)
        .collect();
    let needed = match completion {
        Completion::And | Completion::AllOf => waited.len(),
        Completion::Xor => 1.min(waited.len()),
        Completion::NOfM | Completion::AtLeast => n
            .as_ref()
            .map_or(waited.len(), |n| {
                usize::try_from(n.value).unwrap_or(usize::MAX)
            })
            .min(waited.len()),
    };
    let branch_text = branch_timeout.as_ref().map_or("", |t| t.text.as_str());
    let steps = waited.iter().map(|&b| {
        let slot = &slots[b];
        let advance = cx.nested(index, b, &branches[b].scope).advance_fn();
        let label = format!("branch {} of task `{name}`", b + 1);
        let scope = format!("{}/{}", super::names::serde_name(name), labels[b]);
        quote! {
            #rt::step_slot(&mut branches.#slot, &control, origin, io, #label, #branch_text, move |state| {
                #rt::in_scope(#scope, || self.#advance(state, io))
            })
        }
    });
    let waited_slots: Vec<_> = waited.iter().map(|b| &slots[*b]).collect();
    let timeout_message = state_timeout.as_ref().map_or_else(String::new, |timeout| {
        format!(
            "parallel task `{name}` did not complete within {}",
            timeout.text
        )
    });
    let state_deadline = super::duration_option(state_timeout.as_ref());
    let combine = match output {
        ParallelOutput::Merge if reads.iter().any(Option::is_some) => {
            // A statement per branch rather than a loop over an array of the outputs, which
            // was copied whole into its iterator (issue 10; so below too).
            let merged = waited.iter().map(|&b| {
                let slot = &slots[b];
                let read = match &reads[b] {
                    Some(keys) => quote!(::core::option::Option::Some(&[#(#keys),*][..])),
                    None => quote!(::core::option::Option::None),
                };
                quote! {
                    if let ::core::option::Option::Some(output) = branches.#slot.take_output() {
                        #rt::SharedData::merge_output(&mut data, #read, output, #name, "branch output")?;
                    }
                }
            });
            quote!(#(#merged)*)
        }
        ParallelOutput::Merge => quote! {
            #(
                if let ::core::option::Option::Some(output) = branches.#waited_slots.take_output() {
                    #rt::merge_data(&mut data, output, #name, "branch output")?;
                }
            )*
        },
        // One element per branch, in branch order: `null` for a branch not waited for or
        // cancelled before it completed.
        ParallelOutput::Array => quote! {
            data = #rt::Value::Array(::std::vec![
                #(branches.#slots.take_output().unwrap_or(#rt::Value::Null)),*
            ]);
        },
    };
    quote! {
        let fresh = branches.is_none();
        let mut branches = match branches {
            ::core::option::Option::Some(branches) => branches,
            ::core::option::Option::None => {
                #detach
                ::std::boxed::Box::new(#ty {
                    #(#starts)*
                    until: #rt::deadline_of(io, #state_deadline),
                    origin: #rt::step_origin(io),
                })
            }
        };
        let origin = branches.origin;
        let completed = [#(branches.#waited_slots.is_done()),*].into_iter().filter(|done| *done).count();
        let until = branches.until;
        let control = #rt::Control::new();
        let end = #rt::round(
            ::std::vec![#(#steps),*],
            &control,
            completed,
            #needed,
            io,
            until,
            #timeout_message,
        )
        .await?;
        match end {
            #rt::RoundEnd::Terminated(output) => {
                data = output;
                return ::core::result::Result::Ok(#rt::Attempt::Terminate);
            }
            #rt::RoundEnd::Waiting(wait) if !fresh => {
                return ::core::result::Result::Ok(#rt::Attempt::Stay(branches, ::core::option::Option::Some(wait)));
            }
            #rt::RoundEnd::Ran | #rt::RoundEnd::Waiting(_) => {
                return ::core::result::Result::Ok(#rt::Attempt::Stay(branches, ::core::option::Option::None));
            }
            #rt::RoundEnd::Enough => {}
        }
        #combine
        ::core::result::Result::Ok(#rt::Attempt::Exit(0))
    }
}

/// The attempt of a foreach task: one iteration of the body per element of the input
/// collection, each with the element at `inputParameter` in a copy of the task data (or, for a
/// v0.1 loop, the element itself), started in element order as room and `timeDelay` allow;
/// their outputs, in element order, go to `outputCollection`.
pub(super) fn emit_for_each(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let TaskKind::ForEach {
        input_collection,
        input_parameter,
        element_as_input,
        output_collection,
        max,
        time_delay,
        completion_condition,
        scope,
    } = &task.kind
    else {
        return quote!(::core::compile_error!("not a foreach task"));
    };
    let Some(collection) = input_collection else {
        return quote!(::core::compile_error!("foreach without inputCollection"));
    };
    let name = &task.name.value;
    let collection_text = &collection.text;
    let collection = path_ref(collection);
    let max = concurrency(task, max.as_ref());
    let delay = super::duration_option(time_delay.as_ref());
    let body = cx.nested(index, 0, scope);
    let begin = body.begin_fn();
    let advance = body.advance_fn();
    let keep = output_collection.is_some();
    // The keys of the task data the body reads, when iterations can share the rest.
    let reads = match (input_parameter, element_as_input, completion_condition) {
        (Some(parameter), false, None) => body_reads(scope, parameter, keep),
        _ => None,
    };
    // The element's member is made in the shared input once, not added to every copy.
    let share = reads
        .as_ref()
        .zip(input_parameter.as_ref())
        .map(|(keys, parameter)| {
            let parameter = path_ref(parameter);
            quote!(let shared = #rt::SharedData::new(&data, &[#(#keys),*]).with_slot(#parameter);)
        });
    let copy = if reads.is_some() {
        quote!(shared.input())
    } else {
        quote!(data.clone())
    };
    let input = match (input_parameter, element_as_input) {
        (_, true) => quote!(let input = element;),
        (Some(parameter), false) => {
            let parameter = path_ref(parameter);
            quote! {
                let mut input = #copy;
                #parameter.write(&mut input, element)?;
            }
        }
        (None, false) => return quote!(::core::compile_error!("foreach without inputParameter")),
    };
    let done = match completion_condition {
        Some(condition) => {
            let output = format_ident!("checked");
            let test = crate::emit_parts::expr::condition(condition, &output, &output);
            quote!(&|checked: &#rt::Value| #test)
        }
        None => quote!(&|_: &#rt::Value| ::core::result::Result::Ok(false)),
    };
    let store = output_collection.as_ref().map(|path| {
        let path = path_ref(path);
        if reads.is_some() {
            quote! {
                let outputs = each.into_outputs().into_iter().map(|output| shared.restore(output)).collect();
                #path.write(&mut data, #rt::Value::Array(outputs))?;
            }
        } else {
            quote!(#path.write(&mut data, #rt::Value::Array(each.into_outputs()))?;)
        }
    });
    let scope_name = super::names::serde_name(name);
    quote! {
        let fresh = each.is_none();
        let items = #rt::collection_refs(#collection, &data, #name, #collection_text)?;
        let mut each = each.unwrap_or_else(|| #rt::Iterations::new(items.len(), #keep, #rt::step_origin(io)));
        #share
        let begin = |item: usize| -> ::core::result::Result<_, #rt::ErrorObject> {
            let element = items.get(item).map_or(#rt::Value::Null, |element| (*element).clone());
            #input
            // `Err(output)`: a body whose scheduled start is not active completes at once.
            Self::#begin(input, io).map_err(|failure| failure.error().clone())
        };
        let end = each
            .round(
                io,
                #max,
                #delay,
                begin,
                |item, state| #rt::in_iteration(#scope_name, item, || self.#advance(state, io)),
                #done,
            )
            .await?;
        match end {
            #rt::RoundEnd::Terminated(output) => {
                data = output;
                return ::core::result::Result::Ok(#rt::Attempt::Terminate);
            }
            // A task that just began saves its iterations even when they all wait.
            #rt::RoundEnd::Waiting(wait) if !fresh => {
                return ::core::result::Result::Ok(#rt::Attempt::Stay(each, ::core::option::Option::Some(wait)));
            }
            _ => {}
        }
        if !each.finished() {
            return ::core::result::Result::Ok(#rt::Attempt::Stay(each, ::core::option::Option::None));
        }
        #store
        ::core::result::Result::Ok(#rt::Attempt::Exit(0))
    }
}

/// The top-level keys of its input that a foreach body can read, when it reads its data only
/// through definite paths (names then indexes) and never uses it whole; `None` when it may read
/// all of it. The iterations then share the arrays it does not read (the runtime's
/// `SharedData`), which only works because such a body meets those arrays in merges and writes
/// alone, where only their kind matters. So this is a whitelist: task kinds, filters and options
/// not named here count as reading everything. `keeps_outputs`: the iterations' outputs are
/// kept (`outputCollection`), so what an end task's output filter selects is read.
fn body_reads(scope: &Scope, parameter: &JsonPath, keeps_outputs: bool) -> Option<Vec<String>> {
    let outputs = if keeps_outputs {
        Outputs::Kept
    } else {
        Outputs::Dropped
    };
    scope_reads(scope, vec![first_key(parameter)?], outputs)
}

/// What becomes of the outputs of a body whose input is shared.
#[derive(Clone, Copy, PartialEq)]
enum Outputs {
    /// Seen by no one (a foreach without `outputCollection`).
    Dropped,
    /// Kept as they are (`outputCollection`): an output that is the whole data would need the
    /// shared arrays copied back into it, which is the copy sharing avoids.
    Kept,
    /// Merged into the task data (a parallel branch's), where a shared array left whole merges
    /// without being copied back (`SharedData::merge_output`).
    Merged,
}

/// The keys `scope` reads, added to `keys`, sorted; `None` when it may read everything.
fn scope_reads(scope: &Scope, mut keys: Vec<String>, outputs: Outputs) -> Option<Vec<String>> {
    for task in &scope.tasks {
        task_reads(task, outputs, &mut keys)?;
    }
    keys.sort();
    keys.dedup();
    Some(keys)
}

/// The top-level keys of the task data a parallel branch can read, when it reads them only
/// through definite paths and the branches can share the arrays it does not read (see
/// [`body_reads`]); its output is merged into the task data.
fn branch_reads(scope: &Scope) -> Option<Vec<String>> {
    scope_reads(scope, Vec::new(), Outputs::Merged)
}

/// Adds the keys `task` reads to `keys`; `None` when it may read everything.
fn task_reads(task: &Task, outputs: Outputs, keys: &mut Vec<String>) -> Option<()> {
    let plain = task.retry.is_empty()
        && task.on_error.is_empty()
        // A schema sees the whole data.
        && task.schemas.is_empty()
        && task.compensated_by.is_none()
        && !task.used_for_compensation
        && task.data_filter.input.is_none()
        && task
            .start
            .as_ref()
            .is_none_or(|start| matches!(start.kind, StartKind::Default))
        && task.transition.as_ref().is_none_or(|transition| {
            transition.condition.is_none()
                && transition.produce_event.is_none()
                && !transition.compensate
        })
        && task.end.as_ref().is_none_or(|end| {
            matches!(end.kind, EndKind::Default) && end.status.is_none() && !end.compensate
        });
    if !plain {
        return None;
    }
    match (&task.data_filter.output, &task.end) {
        (None, _) => {}
        // What an end's filter selects is the iteration's output; the task data after it is
        // seen by no one when the outputs are not kept. If it selects nothing the whole data
        // is the output, which `SharedData::restore` makes whole again.
        (Some(output), Some(_)) => {
            if outputs != Outputs::Dropped {
                keys.push(first_key(output)?);
            }
        }
        // The next task would read below the selected value.
        (Some(_), None) => return None,
    }
    if task.end.is_some() && task.data_filter.output.is_none() && outputs == Outputs::Kept {
        return None;
    }
    match &task.kind {
        TaskKind::Operation { actions, .. } => {
            for action in actions {
                action_reads(action, keys)?;
            }
            Some(())
        }
        // Reads what its comparisons name, changes nothing.
        TaskKind::Switch(switch) => switch_reads(switch, keys),
        // Merged: only the kinds of what it meets matter.
        TaskKind::Inject { .. } => Some(()),
        // Waits, and reads nothing.
        TaskKind::Delay { .. } => Some(()),
        _ => None,
    }
}

/// A data switch whose comparisons read definite paths and whose transitions only move on.
fn switch_reads(switch: &Switch, keys: &mut Vec<String>) -> Option<()> {
    let SwitchConditions::Data(conditions) = &switch.conditions else {
        return None;
    };
    let plain = |transition: &Transition| {
        transition.condition.is_none()
            && transition.produce_event.is_none()
            && !transition.compensate
    };
    for condition in conditions {
        if !condition.transition.as_ref().is_none_or(plain) {
            return None;
        }
        for comparison in condition.test.comparisons() {
            keys.push(first_key(comparison.path.as_ref()?)?);
        }
    }
    switch.default.as_ref().is_none_or(plain).then_some(())
}

fn action_reads(action: &Action, keys: &mut Vec<String>) -> Option<()> {
    if !action.retry.is_empty() {
        return None;
    }
    // A results path writes through what it names, creating objects on the way.
    if let Some(results) = &action.results_path {
        keys.push(first_key(results)?);
    }
    if let Some(input) = &action.input_path {
        // The parameters then read below it, or from the whole data when it selects nothing.
        keys.push(first_key(input)?);
    }
    // Without parameters the function gets its input whole.
    param_reads(action.function.as_ref()?.parameters.as_ref()?, keys)
}

fn param_reads(param: &Param, keys: &mut Vec<String>) -> Option<()> {
    match param {
        Param::Literal(_) => Some(()),
        Param::Path(path) => {
            keys.push(first_key(path)?);
            Some(())
        }
        Param::Object(members) => members
            .iter()
            .try_for_each(|(_, member)| param_reads(member, keys)),
        Param::Array(elements) => elements
            .iter()
            .try_for_each(|element| param_reads(element, keys)),
    }
}

/// The top-level key a definite path starts with; `None` for a query, the root or an index.
fn first_key(path: &JsonPath) -> Option<String> {
    match &path.kind {
        PathKind::Definite(segments) => match segments.first()? {
            PathSegment::Key(key) => Some(key.clone()),
            PathSegment::Index(_) | PathSegment::FromEnd(_) => None,
        },
        PathKind::Query(_) | PathKind::Invalid => None,
    }
}

/// The attempt of a subflow task: the called workflow runs with this instance's functions and
/// `Io`. Waiting for it, its state lives in this task's (one step of the task is one step of
/// it) and its output becomes the task data; detached, it runs on its own tokio task and this
/// task continues with its input.
pub(super) fn emit_sub_flow(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let TaskKind::SubFlow {
        workflow_id: Some(id),
        wait_for_completion,
    } = &task.kind
    else {
        return quote!(::core::compile_error!("subflow without workflowId"));
    };
    let child = super::names::ident(&cx.sub_flow_names(&id.value).workflow);
    let next = quote!(::core::result::Result::Ok(#rt::Attempt::Exit(0)));
    if *wait_for_completion {
        // A callee that starts detached sub-flows needs functions it can own.
        let functions = if cx.names.owning.contains(&id.value) {
            quote!(::core::clone::Clone::clone(&self.functions))
        } else {
            quote!(&self.functions)
        };
        let scope = super::names::serde_name(&task.name.value);
        quote! {
            let machine = #child::new(#functions);
            let fresh = child.is_none();
            let child = match child {
                ::core::option::Option::Some(child) => child,
                ::core::option::Option::None => {
                    match machine.begin_subflow(data.clone(), io).map_err(|failure| failure.error().clone())? {
                        ::core::result::Result::Ok(child) => child,
                        // A called workflow whose scheduled start is not active completes at
                        // once with its input.
                        ::core::result::Result::Err(output) => {
                            data = output;
                            return #next;
                        }
                    }
                }
            };
            let stepped = #rt::in_scope(#scope, || machine.advance(child, io))
                .await
                .map_err(|failure| failure.error().clone())?;
            match stepped {
                #rt::Progress::Waiting(child, wait) => ::core::result::Result::Ok(#rt::Attempt::Stay(
                    child,
                    (!fresh).then_some(wait),
                )),
                #rt::Progress::Ran(child) => match #rt::ScopeState::end(child) {
                    ::core::result::Result::Ok(#rt::ScopeEnd::Completed(output)) => {
                        data = output;
                        #next
                    }
                    ::core::result::Result::Ok(#rt::ScopeEnd::Terminated(output)) => {
                        data = output;
                        ::core::result::Result::Ok(#rt::Attempt::Terminate)
                    }
                    ::core::result::Result::Err(child) => {
                        ::core::result::Result::Ok(#rt::Attempt::Stay(child, ::core::option::Option::None))
                    }
                },
            }
        }
    } else {
        quote! {
            let child = #child::new(self.functions.clone());
            if io.records_children() {
                // Under a durable host the called workflow becomes an instance of its own,
                // created with this step; a host of that workflow runs it.
                if let ::core::result::Result::Ok(state) = child
                    .begin_subflow(data.clone(), io)
                    .map_err(|failure| failure.error().clone())?
                {
                    io.start_child(#child::<F>::ID, #child::<F>::VERSION, #child::<F>::DEFINITION_HASH, &state)?;
                }
                return #next;
            }
            let child_io = io.detached();
            let input = data.clone();
            // Detached: the called workflow's outcome is its own; this task goes on at once.
            let ::core::result::Result::Ok(runtime) = #rt::tokio::runtime::Handle::try_current() else {
                return ::core::result::Result::Err(#rt::ErrorObject::new(
                    "RuntimeError",
                    "a detached sub-flow runs on its own tokio task, but the workflow is not running on a tokio runtime",
                ));
            };
            ::core::mem::drop(runtime.spawn(async move {
                child.run_detached(input, &child_io).await
            }));
            #next
        }
    }
}
