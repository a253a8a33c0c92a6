//! The state enum of a scope (the workflow, a branch, a foreach body): one variant per task
//! holding what that task needs to run or to resume (see `fields`), plus the two ends. It is
//! serializable, naming each task by its name in the definition, so that an instance can be
//! saved after any step and resumed by another process or another build of the same workflow.

use super::fields::{Fields, Flavour, Progress};
use super::names::{SERDE_COMPLETED, SERDE_TERMINATED, serde_name};
use super::{Context, api, events, rt};
use crate::ir::TaskKind;
use proc_macro2::TokenStream;
use quote::quote;

const SERDE_CRATE: &str = "::swf_runtime::__private::serde";

/// The scope's state enum, its methods, and the types holding its parallel tasks' branches.
pub(super) fn emit(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let variants = (0..cx.scope.tasks.len()).map(|i| {
        let task = cx.task(i);
        let variant = cx.variant(i);
        let doc = format!(
            " Task `{}` ({}, line {}), about to run (or running) with `data` as its input.",
            task.name.value,
            task.written_type(cx.workflow.dialect),
            task.span.line
        );
        let doc = super::names::doc_text(&doc);
        let fields = Fields::of(cx, i).declarations(Flavour::Variant);
        quote! {
            #[doc = #doc]
            #variant {
                /// The task's data.
                data: #rt::Value,
                #fields
            }
        }
    });
    // The tasks' names and types are tables read at the variant's index: an arm per task in
    // each of `task_name` and `task_type` was a fifth of a large workflow's tokens (issue 10).
    let tasks = (0..cx.scope.tasks.len()).map(|i| {
        let task = cx.task(i);
        let name = &task.name.value;
        let kind = task.written_type(cx.workflow.dialect);
        quote!((#name, #kind))
    });
    let count = index_literal(cx.scope.tasks.len());
    let indices = (0..cx.scope.tasks.len()).map(|i| {
        let variant = cx.variant(i);
        let index = index_literal(i);
        quote!(#state::#variant { .. } => #index,)
    });
    let completed = index_literal(cx.scope.tasks.len());
    let terminated = index_literal(cx.scope.tasks.len() + 1);
    let doc = if cx.root {
        format!(
            " Where an instance of the `{}` workflow is: the task it is at (and, inside it, its \
             branches, iterations or called workflow), or how it ended.",
            cx.workflow.name.value
        )
    } else {
        format!(
            " Where {} is: the task it is at, or how it ended.",
            describe(cx)
        )
    };
    let doc = super::names::doc_text(&doc);
    let branches = (0..cx.scope.tasks.len()).filter_map(|i| emit_branches(cx, i));
    let scope_state = emit_scope_state(cx);
    let saved = emit_saved(cx);
    quote! {
        #[doc = #doc]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::cmp::PartialEq,
        )]
        // A scope that never terminates leaves `Terminated` unbuilt, and a binary may never
        // build some states itself.
        #[allow(dead_code)]
        pub enum #state {
            #(#variants,)*
            /// The scope ended; `output` is its data output.
            Completed {
                /// The output.
                output: #rt::Value,
            },
            /// An `end: {kind: terminate}` ended the whole instance.
            Terminated {
                /// The output.
                output: #rt::Value,
            },
        }

        // The generated API is a library surface: a binary that uses part of it must not warn.
        #[allow(dead_code)]
        impl #state {
            /// Each task's name and type, in document order. (A variant's name never has an
            /// underscore, so none can be this one's.)
            const NAMES_AND_TYPES: [(&'static str, &'static str); #count] = [#(#tasks),*];

            /// The position of the variant: its task's in `NAMES_AND_TYPES`, then the two ends.
            fn variant_index(&self) -> usize {
                match self {
                    #(#indices)*
                    #state::Completed { .. } => #completed,
                    #state::Terminated { .. } => #terminated,
                }
            }

            /// The name of the task this state is at, `None` once the scope ended.
            pub fn task_name(&self) -> ::core::option::Option<&'static str> {
                Self::NAMES_AND_TYPES.get(self.variant_index()).map(|task| task.0)
            }

            /// The output, once the scope has ended.
            pub fn output(&self) -> ::core::option::Option<&#rt::Value> {
                match self {
                    #state::Completed { output } | #state::Terminated { output } => {
                        ::core::option::Option::Some(output)
                    }
                    _ => ::core::option::Option::None,
                }
            }
        }

        #saved
        #scope_state
        #(#branches)*
    }
}

/// `Serialize` and `Deserialize` for the state enum, written rather than derived. serde's
/// derive writes the whole reading and writing out for every variant (a field enum and two
/// visitors each), which was more than half of a large workflow's build (issue 10). Here each
/// distinct set of variant fields in the scope (its shape) has one content type to write and
/// one to read, derived once; the tag goes through the runtime's `saved::deserialize`; and the
/// generated part only maps a variant to its index and content. The saved form is the derive's:
/// `{"Task name": {"data": …, "retry": …}}`.
fn emit_saved(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let shapes = shapes(cx);
    // A variant that holds only its data (most) uses the runtime's content types.
    let contents = shapes
        .iter()
        .enumerate()
        .filter(|(_, (fields, _))| !holds_only_data(fields))
        .map(|(shape, (fields, _))| {
            let (saved, saving) = content_types(shape, fields);
            let owned = fields.declarations(Flavour::Saved);
            let borrowed = fields.declarations(Flavour::Saving);
            quote! {
                // A saved state with a field its task does not have was saved at a task of another
                // kind (the definition changed): it is refused, not reinterpreted.
                #[derive(Deserialize)]
                #[serde(crate = #SERDE_CRATE, deny_unknown_fields)]
                struct #saved {
                    data: #rt::Value,
                    #owned
                }

                #[derive(Serialize)]
                #[serde(crate = #SERDE_CRATE)]
                struct #saving<'a> {
                    data: &'a #rt::Value,
                    #borrowed
                }
            }
        });
    let completed = index_literal(cx.scope.tasks.len());
    let terminated = index_literal(cx.scope.tasks.len() + 1);
    // The variants that hold only their data (most) share one arm, a pattern each, and one
    // call writes them at their index. The others write their content in their own arm.
    let ret = shapes
        .iter()
        .any(|(fields, _)| holds_only_data(fields))
        .then(|| quote!(return));
    let mut data_only = Vec::new();
    let mut writes: Vec<TokenStream> = vec![TokenStream::new(); cx.scope.tasks.len()];
    for (shape, (fields, tasks)) in shapes.iter().enumerate() {
        let saving = content_types(shape, fields).1;
        let names = fields.names();
        for &i in tasks {
            let variant = cx.variant(i);
            if holds_only_data(fields) {
                data_only.push(quote!(Self::#variant { data }));
                continue;
            }
            let index = index_literal(i);
            writes[i] = quote! {
                Self::#variant { #(#names),* } => #ret Self::write(serializer, #index, &#saving { #(#names),* }),
            };
        }
    }
    let ended = quote! {
        Self::Completed { output } => #ret Self::write(serializer, #completed, &Ending { output }),
        Self::Terminated { output } => #ret Self::write(serializer, #terminated, &Ending { output }),
    };
    let serialize = if data_only.is_empty() {
        quote! {
            match self {
                #(#writes)*
                #ended
            }
        }
    } else {
        quote! {
            let data = match self {
                #(#data_only)|* => data,
                #(#writes)*
                #ended
            };
            Self::write(serializer, self.variant_index(), &saved::DataRef { data })
        }
    };
    // One arm a shape: its content read once, then the variant chosen by the index.
    let reads = shapes.iter().enumerate().map(|(shape, (fields, tasks))| {
        let saved = content_types(shape, fields).0;
        let names = fields.names();
        let pattern = index_ranges(tasks);
        let build = |i: usize| {
            let variant = cx.variant(i);
            quote!(Self::#variant { #(#names),* })
        };
        let chosen = match tasks.split_last() {
            Some((last, [])) => build(*last),
            Some((last, others)) => {
                let others = others.iter().map(|&i| {
                    let index = index_literal(i);
                    let built = build(i);
                    quote!(#index => #built,)
                });
                let last = build(*last);
                quote!(match index { #(#others)* _ => #last })
            }
            None => TokenStream::new(),
        };
        quote! {
            #pattern => {
                let #saved { #(#names),* } = content.newtype_variant()?;
                Ok(#chosen)
            }
        }
    });
    let tags = (0..cx.scope.tasks.len()).map(|i| serde_name(&cx.task(i).name.value));
    let name = state.to_string();
    quote! {
        // The names below shadow the user's module only inside this block.
        const _: () = {
            use ::core::result::Result::{self, Ok};
            use #rt::saved::{self, Ended, Ending, SavedVariants};
            use #rt::serde::{de::VariantAccess, Deserialize, Deserializer, Serialize, Serializer};

            #(#contents)*

            impl SavedVariants for #state {
                const NAME: &'static str = #name;
                const TAGS: &'static [&'static str] = &[#(#tags,)* #SERDE_COMPLETED, #SERDE_TERMINATED];

                fn read<'de, A: VariantAccess<'de>>(index: usize, content: A) -> Result<Self, A::Error> {
                    match index {
                        #(#reads)*
                        _ => {
                            let Ended { output } = content.newtype_variant()?;
                            Ok(if index == #completed {
                                Self::Completed { output }
                            } else {
                                Self::Terminated { output }
                            })
                        }
                    }
                }
            }

            impl<'de> Deserialize<'de> for #state {
                fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    saved::deserialize(deserializer)
                }
            }

            impl Serialize for #state {
                fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    #serialize
                }
            }
        };
    }
}

/// The scope's distinct sets of variant fields, in document order of first use, each with the
/// tasks whose variants have it.
fn shapes(cx: &Context<'_>) -> Vec<(Fields, Vec<usize>)> {
    let mut shapes: Vec<(Fields, Vec<usize>)> = Vec::new();
    for i in 0..cx.scope.tasks.len() {
        let fields = Fields::of(cx, i);
        match shapes.iter_mut().find(|(known, _)| *known == fields) {
            Some((_, tasks)) => tasks.push(i),
            None => shapes.push((fields, vec![i])),
        }
    }
    shapes
}

/// A pattern matching exactly `indices` (ascending): `0..=3 | 5 | 7..=9`.
fn index_ranges(indices: &[usize]) -> TokenStream {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in indices {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => runs.push((i, i)),
        }
    }
    let runs = runs.into_iter().map(|(start, end)| {
        let first = index_literal(start);
        let last = index_literal(end);
        if start == end {
            quote!(#first)
        } else {
            quote!(#first..=#last)
        }
    });
    quote!(#(#runs)|*)
}

/// The content types, read and written, of the `shape`th distinct set of fields in a scope:
/// the runtime's for a variant that holds only its data, else the scope's own.
fn content_types(shape: usize, fields: &Fields) -> (TokenStream, TokenStream) {
    if holds_only_data(fields) {
        return (quote!(saved::Data), quote!(saved::DataRef));
    }
    let saved = quote::format_ident!("Saved{shape}");
    let saving = quote::format_ident!("Saving{shape}");
    (quote!(#saved), quote!(#saving))
}

/// Whether a variant with `fields` holds its data and nothing else.
fn holds_only_data(fields: &Fields) -> bool {
    fields.names().len() == 1
}

/// `index` as an unsuffixed literal.
fn index_literal(index: usize) -> proc_macro2::Literal {
    proc_macro2::Literal::usize_unsuffixed(index)
}

/// How a nested scope is named in docs.
fn describe(cx: &Context<'_>) -> String {
    let prefix = cx.prefix.trim_end_matches('_');
    format!(
        "the nested scope `{prefix}` of the `{}` workflow",
        cx.workflow.name.value
    )
}

/// `ScopeState`: how the scope ended, what it listens for, where it is.
fn emit_scope_state(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    let state = cx.state_ident();
    let listening = (0..cx.scope.tasks.len()).filter_map(|i| {
        let variant = cx.variant(i);
        let fields = Fields::of(cx, i);
        let names: Vec<_> = fields
            .names()
            .into_iter()
            .filter(|name| {
                !matches!(
                    name.to_string().as_str(),
                    "data" | "compensations" | "compensating"
                )
            })
            .collect();
        if names.is_empty() {
            return None;
        }
        let body = listening(cx, i, &fields);
        Some(quote! {
            #state::#variant { #(#names,)* .. } => {
                #body
            }
        })
    });
    // A task's position is its saved name: the same as its name, which `task_name` gives,
    // unless the name is one of the ends' (then `~name`). Only those, and tasks with nested
    // positions, get an arm of their own.
    let by_name = (0..cx.scope.tasks.len())
        .any(|i| serde_name(&cx.task(i).name.value) == cx.task(i).name.value);
    let positions = (0..cx.scope.tasks.len()).map(|i| {
        let variant = cx.variant(i);
        let name = serde_name(&cx.task(i).name.value);
        let own = (name != cx.task(i).name.value).then(|| {
            quote!(#state::#variant { .. } => ::std::string::String::from(#name),)
        });
        let nested = match Fields::of(cx, i).progress {
            Progress::Branches(_) => Some(quote! {
                #state::#variant { branches: ::core::option::Option::Some(branches), .. } => {
                    #rt::nested_position(#name, branches.positions())
                }
            }),
            Progress::Iterations(_) => Some(quote! {
                #state::#variant { each: ::core::option::Option::Some(each), .. } => {
                    #rt::nested_position(#name, each.positions())
                }
            }),
            Progress::Child(_) => Some(quote! {
                #state::#variant { child: ::core::option::Option::Some(child), .. } => {
                    #rt::nested_position(#name, ::core::iter::once(#api::ScopeState::position(child)))
                }
            }),
            _ => None,
        };
        quote! {
            #nested
            #own
        }
    });
    let by_name = by_name.then(|| {
        quote! {
            task => ::std::string::String::from(task.task_name().unwrap_or_default()),
        }
    });
    let listening: Vec<TokenStream> = listening.collect();
    // A scope whose tasks never wait has nothing to match on (clippy's match_single_binding).
    let listening_body = if listening.is_empty() {
        quote!(#api::Wait::default())
    } else {
        quote! {
            match self {
                #(#listening)*
                _ => #api::Wait::default(),
            }
        }
    };
    quote! {
        impl #rt::ScopeState for #state {
            fn end(self) -> ::core::result::Result<#rt::ScopeEnd, Self> {
                match self {
                    #state::Completed { output } => ::core::result::Result::Ok(#api::ScopeEnd::Completed(output)),
                    #state::Terminated { output } => ::core::result::Result::Ok(#api::ScopeEnd::Terminated(output)),
                    other => ::core::result::Result::Err(other),
                }
            }

            fn listening(&self) -> #rt::Wait {
                #listening_body
            }

            fn position(&self) -> ::std::string::String {
                match self {
                    #(#positions)*
                    #state::Completed { .. } => ::std::string::String::from(#SERDE_COMPLETED),
                    #state::Terminated { .. } => ::std::string::String::from(#SERDE_TERMINATED),
                    #by_name
                }
            }

            fn task_type(&self) -> &'static str {
                #state::NAMES_AND_TYPES.get(self.variant_index()).map_or("", |task| task.1)
            }

            fn terminated(output: #rt::Value) -> Self {
                #state::Terminated { output }
            }
        }
    }
}

/// What a task's variant listens for (its fields bound by reference).
fn listening(cx: &Context<'_>, index: usize, fields: &Fields) -> TokenStream {
    let api = api();
    let task = cx.task(index);
    let retry = fields
        .retry
        .then(|| quote!(wait.merge(&#api::Wait::new(retry.not_before(), &[]));));
    let own = match &fields.progress {
        Progress::None => TokenStream::new(),
        Progress::DelayEnd => quote!(wait.merge(&#api::Wait::until(*until));),
        Progress::WaitEnd => {
            let specs = waited_specs(cx, index);
            quote!(wait.merge(&#api::Wait::new(*until, &[#(#specs),*]));)
        }
        Progress::Resume { wait_end } => {
            let events = wait_end.then(|| {
                let specs = waited_specs(cx, index);
                quote! {
                    if resume.is_none() {
                        wait.merge(&#api::Wait::new(*until, &[#(#specs),*]));
                    }
                }
            });
            quote! {
                #events
                if let ::core::option::Option::Some(resume) = resume {
                    wait.merge(&#api::Wait::new(resume.retry.not_before(), &[]));
                }
            }
        }
        Progress::Callback => {
            let specs = waited_specs(cx, index);
            quote! {
                if let #api::CallbackPhase::Wait { until, .. } = phase {
                    wait.merge(&#api::Wait::new(*until, &[#(#specs),*]));
                }
            }
        }
        Progress::Branches(_) => quote! {
            if let ::core::option::Option::Some(branches) = branches {
                wait.merge(&branches.listening());
            }
        },
        Progress::Iterations(_) => {
            let max = match &task.kind {
                TaskKind::ForEach { max, .. } => super::nested::concurrency(task, max.as_ref()),
                _ => 0,
            };
            quote! {
                if let ::core::option::Option::Some(each) = each {
                    wait.merge(&each.listening(#max));
                }
            }
        }
        Progress::Child(_) => quote! {
            if let ::core::option::Option::Some(child) = child {
                wait.merge(&#api::ScopeState::listening(child));
            }
        },
    };
    quote! {
        let mut wait = #api::Wait::default();
        #retry
        #own
        wait
    }
}

/// `&specs[i]` for each event definition the task waits for, in order (`specs` bound to the
/// workflow's event specs).
fn waited_specs(cx: &Context<'_>, index: usize) -> Vec<TokenStream> {
    let indices = events::indices_of(cx, cx.task(index).waited_event_refs());
    let specs = events::specs_path(cx);
    indices
        .into_iter()
        .map(|index| quote!(&#specs[#index]))
        .collect()
}

/// The type holding the branches of parallel task `index`: one slot per branch, saved under the
/// branch's name, and the task's deadline.
fn emit_branches(cx: &Context<'_>, index: usize) -> Option<TokenStream> {
    let rt = rt();
    let api = api();
    let task = cx.task(index);
    let TaskKind::Parallel { branches, .. } = &task.kind else {
        return None;
    };
    let ty = cx.branches_type(index);
    let labels = branch_labels(branches);
    let slots: Vec<_> = (0..branches.len()).map(slot_field).collect();
    let fields = branches.iter().enumerate().map(|(b, branch)| {
        let field = &slots[b];
        let nested = cx.nested(index, b, &branch.scope).state_ident();
        let saved = &labels[b];
        let doc = format!(
            " Branch `{}` (line {}).",
            branch.name.value, branch.span.line
        );
        let doc = super::names::doc_text(&doc);
        quote! {
            #[doc = #doc]
            #[serde(rename = #saved)]
            pub #field: #rt::Slot<#nested>,
        }
    });
    let doc = format!(
        " The branches of parallel task `{}`, each where it is.",
        task.name.value
    );
    let doc = super::names::doc_text(&doc);
    let positions = slots
        .iter()
        .zip(&labels)
        .map(|(field, label)| quote!(self.#field.position(#label)));
    Some(quote! {
        #[doc = #doc]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::cmp::PartialEq,
            #rt::serde::Serialize,
            #rt::serde::Deserialize,
        )]
        #[serde(crate = #SERDE_CRATE, deny_unknown_fields)]
        pub struct #ty {
            #(#fields)*
            /// When the task must have completed (`stateExecTimeout`).
            #[serde(default, rename = "~until", skip_serializing_if = "::core::option::Option::is_none")]
            pub until: ::core::option::Option<#rt::Timestamp>,
            /// The instance's step in which the task started its branches: their calls' keys
            /// count from it.
            #[serde(default, rename = "~origin")]
            pub origin: u64,
        }

        #[allow(dead_code)]
        impl #ty {
            /// What the running branches listen for, and the task's deadline.
            pub fn listening(&self) -> #rt::Wait {
                let mut wait = #api::Wait::new(self.until, &[]);
                #(wait.merge(&self.#slots.listening());)*
                wait
            }

            /// Where the running branches are (`branch/position`).
            pub fn positions(&self) -> impl ::core::iter::Iterator<Item = ::std::string::String> {
                [#(#positions),*].into_iter().flatten()
            }
        }
    })
}

/// The field of branch `b` in a branches type.
pub(super) fn slot_field(b: usize) -> proc_macro2::Ident {
    quote::format_ident!("b{}", b + 1)
}

/// How each branch is named in a saved state and in positions: its name when the task's branch
/// names are all different, else `#1`, `#2`...
pub(super) fn branch_labels(branches: &[crate::ir::Branch]) -> Vec<String> {
    let mut names: Vec<&str> = branches.iter().map(|b| b.name.value.as_str()).collect();
    names.sort_unstable();
    let distinct = names.windows(2).all(|w| w[0] != w[1]) && !names.contains(&"");
    branches
        .iter()
        .enumerate()
        .map(|(b, branch)| {
            if distinct {
                serde_name(&branch.name.value)
            } else {
                format!("#{}", b + 1)
            }
        })
        .collect()
}
