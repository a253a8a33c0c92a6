//! Tasks that run nested scopes: parallel branches and foreach iterations. Each nested scope is
//! driven by its own generated `drive` method; the runtime joins them and cancels the losers.

use super::{Context, drive_needs_io, rt};
use crate::emit_parts::path::path_ref;
use crate::ir::{Completion, ParallelOutput, TaskKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The attempt of a parallel task: every branch gets a copy of the task data; the outputs of
/// the branches that completed are merged into it in branch order (or, in the kebab-case
/// drafts, make an array in branch order). A branch the task does not wait for is started on
/// its own tokio task first and has no part in the output.
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
    let drive = |b: usize, branch: &crate::ir::Branch| {
        let nested = cx.nested(index, b, &branch.scope);
        (nested.drive_fn(), drive_needs_io(&branch.scope))
    };
    let waited: Vec<usize> = (0..branches.len())
        .filter(|b| branches[*b].wait_for_completion)
        .collect();
    let detached = branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| !branch.wait_for_completion)
        .map(|(b, branch)| {
            let (drive, needs_io) = drive(b, branch);
            let (io_setup, io_arg) = if needs_io {
                (quote!(let branch_io = io.detached();), quote!(, &branch_io))
            } else {
                (TokenStream::new(), TokenStream::new())
            };
            quote! {{
                let machine = Self::new(::core::clone::Clone::clone(&self.functions));
                let input = data.clone();
                #io_setup
                ::core::mem::drop(runtime.spawn(async move {
                    machine.#drive(input #io_arg).await
                }));
            }}
        })
        .collect::<Vec<_>>();
    let detach = if detached.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            // Branches the task does not wait for run on their own; their outcome is their own.
            let ::core::result::Result::Ok(runtime) = #rt::tokio::runtime::Handle::try_current() else {
                return ::core::result::Result::Err(#rt::ErrorObject::new(
                    "RuntimeError",
                    "a branch the parallel task does not wait for runs on its own tokio task, but the workflow is not running on a tokio runtime",
                ));
            };
            #(#detached)*
        }
    };
    let futures = waited.iter().map(|b| {
        let (drive, needs_io) = drive(*b, &branches[*b]);
        let io = needs_io.then(|| quote!(io));
        quote!(::std::boxed::Box::pin(self.#drive(data.clone(), #io)))
    });
    let needed = match completion {
        Completion::And | Completion::AllOf => waited.len(),
        Completion::Xor => 1,
        Completion::NOfM | Completion::AtLeast => {
            n.as_ref().map_or(waited.len(), |n| n.value as usize)
        }
    };
    let waited_flags = branches.iter().map(|b| b.wait_for_completion);
    let branch_timeout = super::duration_option(branch_timeout.as_ref());
    let join = quote! {
        #rt::join_branches(::std::vec![#(#futures),*], #needed, #branch_timeout, #name)
    };
    let joined = match state_timeout {
        Some(timeout) => {
            let millis = timeout.millis;
            let text = &timeout.text;
            quote! {
                match #rt::tokio::time::timeout(#rt::Duration::from_millis(#millis), #join).await {
                    ::core::result::Result::Ok(joined) => joined,
                    ::core::result::Result::Err(_) => {
                        return ::core::result::Result::Err(#rt::ErrorObject::new(
                            #rt::ErrorObject::TIMEOUT,
                            ::std::format!("parallel task `{}` did not complete within {}", #name, #text),
                        ));
                    }
                }
            }
        }
        None => quote!(#join.await),
    };
    let combine = match output {
        ParallelOutput::Merge => quote! {
            for output in joined.outputs.into_iter().flatten() {
                #rt::merge_data(&mut data, output, #name, "branch output")?;
            }
        },
        ParallelOutput::Array => {
            // One element per branch, in branch order: `null` for a branch not waited for or
            // cancelled before it completed.
            let count = branches.len();
            quote! {
                let mut outputs = joined.outputs.into_iter();
                let waited: [bool; #count] = [#(#waited_flags),*];
                data = #rt::Value::Array(
                    waited
                        .iter()
                        .map(|waited| if *waited { outputs.next().flatten() } else { ::core::option::Option::None })
                        .map(|output| output.unwrap_or(#rt::Value::Null))
                        .collect(),
                );
            }
        }
    };
    quote! {
        #detach
        // A failing branch fails this task: its retry and onError decide.
        let joined = #joined.map_err(|failure| failure.error().clone())?;
        if let ::core::option::Option::Some(output) = joined.terminated {
            data = output;
            return ::core::result::Result::Ok(::core::option::Option::None);
        }
        #combine
        ::core::result::Result::Ok(::core::option::Option::Some(0))
    }
}

/// The attempt of a foreach task: one iteration of the body per element of the input
/// collection, each with the element at `inputParameter` in a copy of the task data (or, for a
/// v0.1 loop, the element itself); their outputs, in element order, go to `outputCollection`.
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
    if input_parameter.is_none() && !element_as_input {
        return quote!(::core::compile_error!("foreach without inputParameter"));
    }
    let name = &task.name.value;
    let collection_text = &collection.text;
    let collection = path_ref(collection);
    let max = max.as_ref().map_or(0, |m| m.value as usize);
    let delay_between = super::duration_option(time_delay.as_ref());
    let iteration = iteration_fn(cx, index);
    let io = drive_needs_io(scope).then(|| quote!(io));
    let store = output_collection.as_ref().map(|path| {
        let path = path_ref(path);
        quote!(#path.write(&mut data, #rt::Value::Array(iterated.outputs))?;)
    });
    if let Some(condition) = completion_condition {
        let output = format_ident!("checked");
        let test = crate::emit_parts::expr::condition(condition, &output, &output);
        let store = output_collection.as_ref().map(|path| {
            let path = path_ref(path);
            quote!(#path.write(&mut data, #rt::Value::Array(outputs))?;)
        });
        let (each, delay) = match time_delay {
            Some(delay) => {
                let millis = delay.millis;
                (
                    quote!((position, item) in items.into_iter().enumerate()),
                    quote! {
                        if position > 0 {
                            #rt::tokio::time::sleep(#rt::Duration::from_millis(#millis)).await;
                        }
                    },
                )
            }
            None => (quote!(item in items), TokenStream::new()),
        };
        // The condition is checked on each iteration's output, so iterations run in order, one
        // at a time.
        return quote! {
            let items = #rt::collection_items(#collection, &data, #name, #collection_text)?;
            let mut outputs = ::std::vec::Vec::new();
            for #each {
                #delay
                let ended = self.#iteration(&data, item, #io)
                    .await
                    .map_err(|failure| failure.error().clone())?;
                match ended {
                    #rt::ScopeEnd::Completed(output) => {
                        let checked = &output;
                        let done = #test?;
                        outputs.push(output);
                        if done {
                            break;
                        }
                    }
                    #rt::ScopeEnd::Terminated(output) => {
                        data = output;
                        return ::core::result::Result::Ok(::core::option::Option::None);
                    }
                }
            }
            #store
            ::core::result::Result::Ok(::core::option::Option::Some(0))
        };
    }
    quote! {
        let items = #rt::collection_items(#collection, &data, #name, #collection_text)?;
        let base = &data;
        let iterated = #rt::for_each(items, #max, #delay_between, |_, item| {
            self.#iteration(base, item, #io)
        })
        .await
        .map_err(|failure| failure.error().clone())?;
        if let ::core::option::Option::Some(output) = iterated.terminated {
            data = output;
            return ::core::result::Result::Ok(::core::option::Option::None);
        }
        #store
        ::core::result::Result::Ok(::core::option::Option::Some(0))
    }
}

fn iteration_fn(cx: &Context<'_>, index: usize) -> proc_macro2::Ident {
    format_ident!("{}{}_iteration", cx.prefix, cx.tasks[index].1)
}

/// `*_iteration`: one iteration's future, with its input built from the task data.
pub(super) fn emit_iteration_method(cx: &Context<'_>, index: usize) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let TaskKind::ForEach {
        input_parameter,
        element_as_input,
        scope,
        ..
    } = &task.kind
    else {
        return TokenStream::new();
    };
    let name = &task.name.value;
    let id = &cx.workflow.id.value;
    let iteration = iteration_fn(cx, index);
    let body = cx.nested(index, 0, scope);
    let drive = body.drive_fn();
    let input = match (input_parameter, element_as_input) {
        (_, true) => quote! {
            let _ = base;
            let input = item;
        },
        (Some(parameter), false) => {
            let parameter = path_ref(parameter);
            quote! {
                let mut input = base.clone();
                if let ::core::result::Result::Err(error) = #parameter.write(&mut input, item) {
                    return ::core::result::Result::Err(#rt::WorkflowError::new(#id, #name, error, input));
                }
            }
        }
        (None, false) => return TokenStream::new(),
    };
    let (param, arg) = if drive_needs_io(scope) {
        (quote!(io: &'a #rt::Io,), quote!(, io))
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    quote! {
        fn #iteration<'a>(
            &'a self,
            base: &'a #rt::Value,
            item: #rt::Value,
            #param
        ) -> ::core::pin::Pin<::std::boxed::Box<dyn ::core::future::Future<Output = ::core::result::Result<#rt::ScopeEnd, #rt::WorkflowError>> + ::core::marker::Send + 'a>> {
            // The copy is made when the iteration first runs, not when it is queued, so that
            // iterations waiting for a slot (or already finished) hold no copy.
            ::std::boxed::Box::pin(async move {
                #input
                self.#drive(input #arg).await
            })
        }
    }
}

/// The attempt of a subflow task: the called workflow runs with this instance's functions and
/// `Io`. Waiting for it, its output becomes the task data; detached, it runs on its own tokio
/// task and this one continues with its input.
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
    let child = super::names::ident(&super::PublicNames::from_id(&id.value).workflow);
    let next = quote!(::core::result::Result::Ok(::core::option::Option::Some(0)));
    if *wait_for_completion {
        // A callee that starts detached sub-flows needs functions it can own.
        let functions = if cx.names.owning.contains(&id.value) {
            quote!(::core::clone::Clone::clone(&self.functions))
        } else {
            quote!(&self.functions)
        };
        quote! {
            let ended = #child::new(#functions)
                .drive_subflow(data.clone(), io)
                .await
                .map_err(|failure| failure.error().clone())?;
            match ended {
                #rt::ScopeEnd::Completed(output) => data = output,
                #rt::ScopeEnd::Terminated(output) => {
                    data = output;
                    return ::core::result::Result::Ok(::core::option::Option::None);
                }
            }
            #next
        }
    } else {
        quote! {
            let child = #child::new(self.functions.clone());
            let child_io = io.detached();
            let input = data.clone();
            // Detached: the called workflow's outcome is its own; this task goes on at once.
            let Ok(runtime) = #rt::tokio::runtime::Handle::try_current() else {
                return ::core::result::Result::Err(#rt::ErrorObject::new(
                    "RuntimeError",
                    "a detached sub-flow runs on its own tokio task, but the workflow is not running on a tokio runtime",
                ));
            };
            ::core::mem::drop(runtime.spawn(async move {
                child.drive_subflow(input, &child_io).await
            }));
            #next
        }
    }
}
