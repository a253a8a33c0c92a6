//! Events: the workflow's event definitions as specs and typed enums, the tasks that wait for
//! events (event, switch on events, callback), produced events and scheduled starts.

use super::fields::{Fields, Progress};
use super::names::ident;
use super::{Context, action, api, rt};
use crate::emit_parts::boolean::{self, BoolExpr};
use crate::emit_parts::path::path_ref;
use crate::ir::{
    Action, ActionMode, DurationSpec, EventActions, EventCondition, JsonPath, ProduceData,
    ProduceEvent, Task,
};
use crate::source::Spanned;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// `fn event_specs()` on the machine: the event definitions in document order, indexed by
/// generated code with constants (which the compiler checks).
pub(super) fn emit_specs(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    if cx.workflow.events.is_empty() {
        return TokenStream::new();
    }
    let count = cx.workflow.events.len();
    let enum_ident = event_enum_ident(cx);
    quote! {
        fn event_specs() -> &'static [#rt::EventSpec; #count] {
            #enum_ident::specs()
        }
    }
}

pub(super) fn event_enum_ident(cx: &Context<'_>) -> proc_macro2::Ident {
    ident(&format!("{}Event", cx.names.public.base))
}

fn spec_array(cx: &Context<'_>) -> TokenStream {
    let api = api();
    let specs = cx.workflow.events.iter().map(|event| {
        let name = &event.name.value;
        let source = event.source.as_ref().map_or("", |s| s.value.as_str());
        let event_type = event.event_type.as_ref().map_or("", |s| s.value.as_str());
        let correlation = match &event.correlation_token {
            Some(token) => {
                let token = &token.value;
                quote!(::core::option::Option::Some(#token))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #api::EventSpec {
                name: #name,
                source: #source,
                event_type: #event_type,
                correlation: #correlation,
            }
        }
    });
    quote!([#(#specs),*])
}

/// `<Id>Event`: one variant per event definition, to build the events the workflow consumes
/// and to recognise the ones it produces.
pub(super) fn emit_event_enum(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let api = api();
    if cx.workflow.events.is_empty() {
        return TokenStream::new();
    }
    let enum_ident = event_enum_ident(cx);
    let count = cx.workflow.events.len();
    let specs = spec_array(cx);
    let variants: Vec<_> = event_variants(cx);
    let docs = cx.workflow.events.iter().map(|e| {
        format!(
            " `{}`: type `{}` from `{}`{}.",
            e.name.value,
            e.event_type.as_ref().map_or("", |s| s.value.as_str()),
            e.source.as_ref().map_or("", |s| s.value.as_str()),
            e.correlation_token
                .as_ref()
                .map(|t| format!(", correlated by `{}`", t.value))
                .unwrap_or_default()
        )
    });
    let docs = docs.map(|d| super::names::doc_text(&d));
    let indices = 0..variants.len();
    let all = variants.clone();
    let (consumed, produced) = event_usage(cx);
    let consumed = consumed.iter().map(|i| &variants[*i]);
    let produced = produced.iter().map(|i| &variants[*i]);
    let doc = format!(
        " The events of the `{}` workflow, one per event definition.",
        cx.workflow.name.value
    );
    let doc = super::names::doc_text(&doc);
    quote! {
        #[doc = #doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq)]
        // A binary may never build some of the definitions itself.
        #[allow(dead_code)]
        pub enum #enum_ident {
            #(#[doc = #docs] #variants,)*
        }

        #[allow(dead_code)]
        impl #enum_ident {
            /// Every event definition, in document order.
            pub const ALL: &'static [#enum_ident] = &[#(#enum_ident::#all),*];

            /// The events the workflow waits for (event, switch and callback tasks).
            pub const CONSUMED: &'static [#enum_ident] = &[#(#enum_ident::#consumed),*];

            /// The events the workflow produces (on transitions and ends).
            pub const PRODUCED: &'static [#enum_ident] = &[#(#enum_ident::#produced),*];

            /// Every definition's source, type and correlation attribute, in document order.
            pub fn specs() -> &'static [#rt::EventSpec; #count] {
                static SPECS: [#api::EventSpec; #count] = #specs;
                &SPECS
            }

            /// The definition's source, type and correlation attribute.
            pub fn spec(self) -> &'static #rt::EventSpec {
                let specs = Self::specs();
                match self {
                    #(#enum_ident::#variants => &specs[#indices],)*
                }
            }

            /// The definition a CloudEvent matches (source and type), if any.
            pub fn of(event: &#rt::CloudEvent) -> ::core::option::Option<Self> {
                Self::ALL.iter().copied().find(|kind| kind.spec().matches(event))
            }

            /// A CloudEvent of this definition with `id` and JSON `data`.
            pub fn event(self, id: &str, data: #rt::Value) -> ::core::result::Result<#rt::CloudEvent, #rt::ErrorObject> {
                self.spec().event(id, data)
            }

            /// A CloudEvent of this definition carrying `value` in its correlation attribute.
            pub fn correlated(self, id: &str, value: &str, data: #rt::Value) -> ::core::result::Result<#rt::CloudEvent, #rt::ErrorObject> {
                self.spec().correlated_event(id, value, data)
            }
        }
    }
}

/// Which definitions the workflow consumes and which it produces, as indices in document order.
fn event_usage(cx: &Context<'_>) -> (Vec<usize>, Vec<usize>) {
    let mut consumed = Vec::new();
    let mut produced = Vec::new();
    collect_usage(cx, &cx.workflow.scope, &mut consumed, &mut produced);
    consumed.sort_unstable();
    consumed.dedup();
    produced.sort_unstable();
    produced.dedup();
    (consumed, produced)
}

fn collect_usage(
    cx: &Context<'_>,
    scope: &crate::ir::Scope,
    consumed: &mut Vec<usize>,
    produced: &mut Vec<usize>,
) {
    use crate::ir::EndKind;
    for task in &scope.tasks {
        let waited = task.waited_event_refs();
        consumed.extend(waited.iter().filter_map(|r| cx.event_index(&r.value)));
        let ends = task.end.iter().filter_map(|end| match &end.kind {
            EndKind::Event { produce } => produce.as_ref(),
            _ => None,
        });
        let transitions = task
            .transitions()
            .into_iter()
            .filter_map(|t| t.produce_event.as_ref());
        produced.extend(
            ends.chain(transitions)
                .filter_map(|p| cx.event_index(&p.event_ref.value)),
        );
        for nested in task.nested_scopes() {
            collect_usage(cx, nested, consumed, produced);
        }
    }
}

fn event_variants(cx: &Context<'_>) -> Vec<proc_macro2::Ident> {
    super::names::unique_variants(
        cx.workflow.events.iter().map(|e| e.name.value.as_str()),
        &["Self"],
        "Event",
    )
    .iter()
    .map(|v| ident(v))
    .collect()
}

/// The event indices an event task waits for, in document order, each once.
pub(super) fn event_indices(cx: &Context<'_>, entries: &[EventActions]) -> Vec<usize> {
    indices_of(cx, entries.iter().flat_map(|entry| &entry.event_refs))
}

/// The indexes of the event definitions `names` name, each once, in order.
pub(super) fn indices_of<'a>(
    cx: &Context<'_>,
    names: impl IntoIterator<Item = &'a Spanned<String>>,
) -> Vec<usize> {
    let mut out = Vec::new();
    for name in names {
        if let Some(index) = cx.event_index(&name.value)
            && !out.contains(&index)
        {
            out.push(index);
        }
    }
    out
}

/// Merges an event's data (selected by the event data filter) into `data`, or writes it at the
/// entry's results path; `event` is an expression of type `&CloudEvent` (the earlier drafts' event filter `resultPath`).
fn merge_event_data(task: &Task, filter: Option<&JsonPath>, event: &TokenStream) -> TokenStream {
    place_event_data(task, filter, None, event)
}

fn place_event_data(
    task: &Task,
    filter: Option<&JsonPath>,
    results: Option<&JsonPath>,
    event: &TokenStream,
) -> TokenStream {
    let rt = rt();
    let name = &task.name.value;
    let select = filter.map(|path| {
        let path = path_ref(path);
        quote!(#rt::filter_in_place(#path, &mut event_data)?;)
    });
    let binding = if select.is_some() {
        quote!(let mut event_data = #rt::event_data(#event);)
    } else {
        quote!(let event_data = #rt::event_data(#event);)
    };
    let place = match results {
        Some(path) => {
            let path = path_ref(path);
            quote!(#path.write(&mut data, event_data)?;)
        }
        None => quote!(#rt::merge_data(&mut data, event_data, #name, "event data")?;),
    };
    quote! {
        #binding
        #select
        #place
    }
}

/// The path of the workflow's event specs, from any item of the generated code.
pub(super) fn specs_path(cx: &Context<'_>) -> TokenStream {
    let event_enum = event_enum_ident(cx);
    quote!(#event_enum::specs())
}

/// What an event wait that finds nothing makes of the attempt: the task stays, waiting until
/// `until` for the definitions `wanted` (a value; `return` it where it is not the tail).
fn wait_for(cx: &Context<'_>, index: usize, wanted: &[usize]) -> TokenStream {
    let rt = rt();
    let specs = specs_path(cx);
    let payload = match Fields::of(cx, index).progress {
        Progress::Resume { .. } => quote!(::core::option::Option::None),
        _ => quote!(()),
    };
    quote! {{
        let specs = #specs;
        ::core::result::Result::Ok(#rt::Attempt::Stay(
            #payload,
            ::core::option::Option::Some(#rt::Wait::new(until, &[#(&specs[#wanted]),*])),
        ))
    }}
}

/// For a task that resumes at an action (the earlier drafts' action retries): `from`, the
/// action to resume at (0 when not resuming), and `resuming`.
fn resume_bindings(cx: &Context<'_>, index: usize) -> Option<TokenStream> {
    matches!(Fields::of(cx, index).progress, Progress::Resume { .. }).then(|| {
        quote! {
            let from = resume.as_ref().map_or(0, |resume| resume.action);
            let resuming = resume.is_some();
        }
    })
}

/// `match from { .. }`: the entry holding the action a resuming task resumes at.
fn entry_of_action(entries: &[EventActions]) -> TokenStream {
    let mut first = 0_usize;
    let arms = entries.iter().enumerate().filter_map(|(e, entry)| {
        let count = entry.actions.len();
        let range = (count > 0).then(|| {
            let last = first + count - 1;
            quote!(#first..=#last => #e,)
        });
        first += count;
        range
    });
    quote! {
        match from {
            #(#arms)*
            _ => 0,
        }
    }
}

/// The position of each entry's first action among all the task's actions.
fn first_actions(entries: &[EventActions]) -> Vec<usize> {
    entries
        .iter()
        .scan(0_usize, |next, entry| {
            let first = *next;
            *next += entry.actions.len();
            Some(first)
        })
        .collect()
}

pub(super) fn emit_event_task(
    cx: &Context<'_>,
    index: usize,
    exclusive: bool,
    entries: &[EventActions],
) -> TokenStream {
    if entries.iter().any(has_own_exit) {
        return emit_event_conditions(cx, index, exclusive, entries);
    }
    let rt = rt();
    let task = cx.task(index);
    let wanted = event_indices(cx, entries);
    let waiting = wait_for(cx, index, &wanted);
    let resume = resume_bindings(cx, index);
    let not_resuming = resume.is_some().then(|| quote!(!resuming &&));
    let firsts = first_actions(entries);
    let next = quote!(::core::result::Result::Ok(#rt::Attempt::Exit(0)));
    if exclusive {
        // The first entry listing the event that arrived runs its actions.
        let mut claimed: Vec<usize> = Vec::new();
        let mut arms = Vec::new();
        let mut bodies = Vec::new();
        for (e, entry) in entries.iter().enumerate() {
            let indices: Vec<usize> = entry
                .event_refs
                .iter()
                .filter_map(|r| cx.event_index(&r.value))
                .filter(|i| !claimed.contains(i))
                .collect();
            claimed.extend(&indices);
            if !indices.is_empty() {
                arms.push(quote!(#(#indices)|* => #e,));
            }
            let merge = merge_event_data(task, entry.event_data_filter.as_ref(), &quote!(event));
            let actions =
                action::emit_actions(cx, task, &entry.actions, entry.action_mode, firsts[e]);
            bodies.push(quote! {
                #e => {
                    if let ::core::option::Option::Some(event) = &arrived {
                        #merge
                    }
                    #actions
                }
            });
        }
        let resumed_entry = resume.as_ref().map(|_| {
            let entry = entry_of_action(entries);
            quote! {
                if resuming {
                    ::core::option::Option::Some((#entry, ::core::option::Option::None))
                } else
            }
        });
        quote! {
            #resume
            let chosen: ::core::option::Option<(usize, ::core::option::Option<::std::boxed::Box<#rt::CloudEvent>>)> =
                #resumed_entry
                {
                    match io.take_any(Self::event_specs(), &[#(#wanted),*], until)? {
                        ::core::option::Option::Some((index, event)) => {
                            let entry = match index {
                                #(#arms)*
                                _ => 0,
                            };
                            ::core::option::Option::Some((entry, ::core::option::Option::Some(event)))
                        }
                        // Timed out: the task transitions without performing its actions.
                        ::core::option::Option::None if #rt::passed(io, until) => ::core::option::Option::None,
                        ::core::option::Option::None => return #waiting,
                    }
                };
            if let ::core::option::Option::Some((entry, arrived)) = chosen {
                match entry {
                    #(#bodies)*
                    _ => {}
                }
            }
            #next
        }
    } else {
        // Every event of every entry; then each entry merges its events and runs its actions.
        let steps = entries.iter().enumerate().map(|(e, entry)| {
            let positions: Vec<usize> = entry
                .event_refs
                .iter()
                .filter_map(|r| cx.event_index(&r.value))
                .filter_map(|i| wanted.iter().position(|w| *w == i))
                .collect();
            let merges = positions.iter().map(|p| {
                merge_event_data(
                    task,
                    entry.event_data_filter.as_ref(),
                    &quote!(&events[#p].1),
                )
            });
            let actions =
                action::emit_actions(cx, task, &entry.actions, entry.action_mode, firsts[e]);
            quote! {
                if let ::core::option::Option::Some(events) = &arrived {
                    #(#merges)*
                }
                #actions
            }
        });
        let take = quote! {
            match io.take_all(Self::event_specs(), &[#(#wanted),*], until)? {
                ::core::option::Option::Some(events) => ::core::option::Option::Some(events),
                // Timed out: the task transitions without performing its actions.
                ::core::option::Option::None if #rt::passed(io, until) => {
                    return ::core::result::Result::Ok(#rt::Attempt::Exit(0));
                }
                ::core::option::Option::None => return #waiting,
            }
        };
        let arrived = match &not_resuming {
            Some(_) => quote!(if resuming { ::core::option::Option::None } else { #take }),
            None => take,
        };
        quote! {
            #resume
            let arrived: ::core::option::Option<::std::vec::Vec<(usize, #rt::CloudEvent)>> = #arrived;
            #(#steps)*
            #next
        }
    }
}

/// True for the earlier drafts' entries: a condition over event names, their own transition or
/// their own timeout.
pub(super) fn has_own_exit(entry: &EventActions) -> bool {
    entry.condition.is_some() || entry.transition.is_some() || entry.timeout.is_some()
}

/// The entry whose timeout elapses first (its timeout in ms, its position), in document order
/// among equals; `None` when no entry has a timeout.
pub(super) fn earliest_entry_timeout(entries: &[EventActions]) -> Option<(u64, usize)> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(e, entry)| entry.timeout.as_ref().map(|t| (t.millis, e)))
        .min()
}

/// An event task of the earlier drafts: each entry waits for its condition over event names.
/// The task waits until one entry's condition holds (that entry merges the data of its events,
/// runs its actions and exits through its transition: `exit` is the entry's position; the
/// events it does not name stay in the inbox), or until the earliest entry timeout elapses
/// (that entry's exit, without actions).
fn emit_event_conditions(
    cx: &Context<'_>,
    index: usize,
    exclusive: bool,
    entries: &[EventActions],
) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let wanted = event_indices(cx, entries);
    let waiting = wait_for(cx, index, &wanted);
    let resume = resume_bindings(cx, index);
    let firsts = first_actions(entries);
    let position = |name: &str| {
        cx.event_index(name)
            .and_then(|index| wanted.iter().position(|w| *w == index))
    };
    let mut holds_fns = Vec::new();
    let mut specs = Vec::new();
    let mut arms = Vec::new();
    for (e, entry) in entries.iter().enumerate() {
        let test = match &entry.condition {
            Some(condition) => arrival_test(condition, &position),
            None => {
                let arrivals: Vec<BoolExpr> = entry
                    .event_refs
                    .iter()
                    .filter_map(|r| position(&r.value))
                    .map(|p| BoolExpr::atom(quote!(arrived[#p])))
                    .collect();
                if exclusive {
                    boolean::any(arrivals)
                } else {
                    boolean::all(arrivals)
                }
            }
        };
        let mut uses: Vec<usize> = entry
            .event_refs
            .iter()
            .filter_map(|r| position(&r.value))
            .collect();
        uses.sort_unstable();
        uses.dedup();
        let holds = format_ident!("entry_{}", e);
        let test = test.tokens;
        holds_fns.push(quote! {
            // As written, even where it could be simplified (`a and (a or b)`).
            #[allow(clippy::overly_complex_bool_expr, clippy::nonminimal_bool)]
            fn #holds(arrived: &[bool]) -> bool {
                #test
            }
        });
        specs.push(quote!(#rt::EventEntry { holds: &#holds, uses: &[#(#uses),*] }));
        let merges = uses.iter().map(|p| {
            let index = wanted[*p];
            let merge = place_event_data(
                task,
                entry.event_data_filter.as_ref(),
                entry.event_results_path.as_ref(),
                &quote!(event),
            );
            quote! {
                for (_, event) in events.iter().filter(|(i, _)| *i == #index) {
                    #merge
                }
            }
        });
        let actions = action::emit_actions(cx, task, &entry.actions, entry.action_mode, firsts[e]);
        arms.push(quote! {
            #e => {
                #(#merges)*
                #actions
                ::core::result::Result::Ok(#rt::Attempt::Exit(#e))
            }
        });
    }
    // The entry whose timeout elapses first. Without any timeout the wait ends only when a
    // condition holds, so the first entry's exit is never taken by a timeout.
    let timed_out_entry = earliest_entry_timeout(entries).map_or(0, |(_, e)| e);
    let take = quote! {
        match io.take_entries(Self::event_specs(), &[#(#wanted),*], &entries, until)? {
            ::core::option::Option::Some(taken) => taken,
            // Timed out: the entry's transition, without performing its actions.
            ::core::option::Option::None if #rt::passed(io, until) => {
                return ::core::result::Result::Ok(#rt::Attempt::Exit(#timed_out_entry));
            }
            ::core::option::Option::None => return #waiting,
        }
    };
    let taken = match &resume {
        Some(_) => {
            let entry = entry_of_action(entries);
            quote!(if resuming { (#entry, ::std::vec::Vec::new()) } else { #take })
        }
        None => take,
    };
    quote! {
        #(#holds_fns)*
        let entries = [#(#specs),*];
        #resume
        let (entry, events): (usize, ::std::vec::Vec<(usize, #rt::CloudEvent)>) = #taken;
        match entry {
            #(#arms)*
            _ => ::core::result::Result::Ok(#rt::Attempt::Exit(#timed_out_entry)),
        }
    }
}

/// A condition over event names as a `bool` expression over `arrived` (indexed by position in
/// the task's wanted list).
fn arrival_test(
    condition: &crate::ir::EventExpr,
    position: &dyn Fn(&str) -> Option<usize>,
) -> BoolExpr {
    use crate::ir::EventExpr;
    match condition {
        EventExpr::Event(name) => match position(&name.value) {
            Some(p) => BoolExpr::atom(quote!(arrived[#p])),
            None => BoolExpr::atom(quote!(false)),
        },
        EventExpr::All(items) => {
            boolean::all(items.iter().map(|i| arrival_test(i, position)).collect())
        }
        EventExpr::Any(items) => {
            boolean::any(items.iter().map(|i| arrival_test(i, position)).collect())
        }
    }
}

pub(super) fn emit_event_switch(
    cx: &Context<'_>,
    index: usize,
    conditions: &[EventCondition],
) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let wanted: Vec<usize> = conditions
        .iter()
        .filter_map(|c| c.event_ref.as_ref())
        .filter_map(|r| cx.event_index(&r.value))
        .collect();
    let waiting = wait_for(cx, index, &wanted);
    let mut claimed: Vec<usize> = Vec::new();
    let arms: Vec<_> = conditions
        .iter()
        .enumerate()
        .filter_map(|(position, condition)| {
            let index = cx.event_index(&condition.event_ref.as_ref()?.value)?;
            if claimed.contains(&index) {
                return None;
            }
            claimed.push(index);
            let merge =
                merge_event_data(task, condition.event_data_filter.as_ref(), &quote!(&event));
            Some(quote! {
                #index => {
                    #merge
                    ::core::result::Result::Ok(#rt::Attempt::Exit(#position))
                }
            })
        })
        .collect();
    let default = conditions.len();
    quote! {
        match io.take_any(Self::event_specs(), &[#(#wanted),*], until)? {
            ::core::option::Option::Some((index, event)) => match index {
                #(#arms)*
                _ => ::core::result::Result::Ok(#rt::Attempt::Exit(#default)),
            },
            // No event in time: the default transition.
            ::core::option::Option::None if #rt::passed(io, until) => {
                ::core::result::Result::Ok(#rt::Attempt::Exit(#default))
            }
            ::core::option::Option::None => #waiting,
        }
    }
}

/// A callback task: its first step calls the action and starts waiting (the timeout counts from
/// the end of the action); then each step takes the callback event if it arrived. Without it in
/// time, the task transitions with the action's result but no event data.
pub(super) fn emit_callback(
    cx: &Context<'_>,
    index: usize,
    action: Option<&Action>,
    event_ref: Option<&Spanned<String>>,
    timeout: Option<&DurationSpec>,
    filter: Option<&JsonPath>,
) -> TokenStream {
    let rt = rt();
    let task = cx.task(index);
    let run = action
        .map(|a| action::emit_actions(cx, task, std::slice::from_ref(a), ActionMode::Sequential, 0))
        .unwrap_or_default();
    let event = event_ref
        .and_then(|r| cx.event_index(&r.value))
        .unwrap_or(0);
    let timeout = super::duration_option(timeout);
    let merge = merge_event_data(task, filter, &quote!(&event));
    let specs = specs_path(cx);
    // A task that may be retried keeps its input while it waits: a retry calls the action
    // again with it.
    let keep_input = if task.retry.is_empty() {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(input.clone()))
    };
    quote! {
        match &phase {
            #rt::CallbackPhase::Call => {
                #run
                let until = #rt::deadline_of(io, #timeout);
                ::core::result::Result::Ok(#rt::Attempt::Stay(
                    #rt::CallbackPhase::Wait { until, input: #keep_input },
                    ::core::option::Option::None,
                ))
            }
            #rt::CallbackPhase::Wait { until, .. } => match io.take_any(Self::event_specs(), &[#event], *until)? {
                ::core::option::Option::Some((_, event)) => {
                    #merge
                    ::core::result::Result::Ok(#rt::Attempt::Exit(0))
                }
                ::core::option::Option::None if #rt::passed(io, *until) => {
                    ::core::result::Result::Ok(#rt::Attempt::Exit(0))
                }
                ::core::option::Option::None => {
                    let specs = #specs;
                    ::core::result::Result::Ok(#rt::Attempt::Stay(
                        phase.clone(),
                        ::core::option::Option::Some(#rt::Wait::new(*until, &[&specs[#event]])),
                    ))
                }
            },
        }
    }
}

/// Produces an event from `data` (a `Value` binding), failing the task with the data it had.
pub(super) fn emit_produce(
    cx: &Context<'_>,
    task: &Task,
    produce: &ProduceEvent,
    data: &proc_macro2::Ident,
) -> TokenStream {
    let rt = rt();
    let Some(index) = cx.event_index(&produce.event_ref.value) else {
        return quote!(::core::compile_error!("undefined event"));
    };
    let spec = quote!(&Self::event_specs()[#index]);
    let produced = match &produce.data {
        Some(ProduceData::Path(path)) => {
            let path = path_ref(path);
            quote! {
                match #rt::select_or_null(#path, &#data) {
                    ::core::result::Result::Ok(payload) => io.produce(#spec, payload).await,
                    ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
                }
            }
        }
        Some(ProduceData::Object(value)) => {
            let value = crate::emit_parts::value::json(value);
            quote!(io.produce(#spec, #value).await)
        }
        // Without `data`, the event carries the task's data output.
        None => quote!(io.produce(#spec, #data.clone()).await),
    };
    let name = &task.name.value;
    let failure = super::exit::fail(cx, quote!(#name), quote!(error), quote!(#data));
    quote! {
        let produced = #produced;
        if let ::core::result::Result::Err(error) = produced {
            return ::core::result::Result::Err(#failure);
        }
    }
}

/// A scheduled start's window, parsed and checked at build time.
pub(super) fn emit_schedule_window(interval: &Spanned<String>) -> TokenStream {
    let rt = rt();
    match crate::syntax::interval::parse_window(&interval.value) {
        Ok(window) => window.to_tokens(&rt),
        Err(message) => quote!(::core::compile_error!(#message)),
    }
}
