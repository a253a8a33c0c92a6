//! What each task's variant of its scope's state enum holds: its data, and whatever it needs to
//! resume where it was (retry progress, a deadline, a callback phase, running branches or
//! iterations, a called workflow's state, a compensation in progress). One description serves
//! the enum, the `run_*` signature, the dispatch in `advance` and every place that rebuilds the
//! variant.

use super::{Context, compensation, rt};
use crate::ir::{ActionMode, SwitchConditions, Task, TaskKind};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The compensation record a variant carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Log {
    /// None: the scope compensates nothing.
    None,
    /// A normal task's `compensations: CompensationLog`.
    Record,
    /// A compensation task's `compensating: Compensating`.
    Compensating,
}

/// The field that says where a task that has not finished is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Progress {
    /// Nothing: the task runs in one step.
    None,
    /// `until: Timestamp`: a delay's end.
    DelayEnd,
    /// `until: Option<Timestamp>`: an event wait's deadline.
    WaitEnd,
    /// `phase: CallbackPhase`.
    Callback,
    /// `branches: Option<…Branches>`.
    Branches(Ident),
    /// `each: Option<Iterations<…Body>>`.
    Iterations(Ident),
    /// `child: Option<…State>`: a called workflow's state.
    Child(Ident),
    /// `resume: Option<ActionResume>`: the earlier drafts' action retries; an event task also
    /// has its wait's deadline (`until`).
    Resume { wait_end: bool },
}

/// Everything a task's variant holds besides its data.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fields {
    pub retry: bool,
    pub log: Log,
    pub progress: Progress,
}

impl Fields {
    pub fn of(cx: &Context<'_>, index: usize) -> Self {
        let task = cx.task(index);
        let log = if !compensation::in_use(cx) {
            Log::None
        } else if task.used_for_compensation {
            Log::Compensating
        } else {
            Log::Record
        };
        Fields {
            retry: !task.retry.is_empty(),
            log,
            progress: progress_of(cx, index),
        }
    }

    /// The variant's fields after `data`, in order.
    fn members(&self) -> Vec<Member> {
        let rt = rt();
        let mut members = Vec::new();
        if self.retry {
            members.push(Member {
                doc: " The task's retries so far, and when the next attempt may start.",
                absent: Absent::Default,
                name: format_ident!("retry"),
                ty: quote!(#rt::RetryProgress),
            });
        }
        match self.log {
            Log::None => {}
            Log::Record => members.push(Member {
                doc: " The completed tasks of this scope awaiting compensation.",
                absent: Absent::Default,
                name: format_ident!("compensations"),
                ty: quote!(#rt::CompensationLog),
            }),
            Log::Compensating => members.push(Member {
                doc: " The compensation this task runs for.",
                absent: Absent::Required,
                name: format_ident!("compensating"),
                ty: quote!(#rt::Compensating),
            }),
        }
        let wait_end = || Member {
            doc: " When the wait for events ends without one.",
            absent: Absent::None,
            name: format_ident!("until"),
            ty: quote!(::core::option::Option<#rt::Timestamp>),
        };
        match &self.progress {
            Progress::None => {}
            Progress::DelayEnd => members.push(Member {
                doc: " When the delay ends.",
                absent: Absent::Required,
                name: format_ident!("until"),
                ty: quote!(#rt::Timestamp),
            }),
            Progress::WaitEnd => members.push(wait_end()),
            Progress::Callback => members.push(Member {
                doc: " Whether the action ran and the task waits for the callback event.",
                absent: Absent::Default,
                name: format_ident!("phase"),
                ty: quote!(#rt::CallbackPhase),
            }),
            Progress::Branches(ty) => members.push(Member {
                doc: " The branches, once the task started them.",
                absent: Absent::None,
                name: format_ident!("branches"),
                // Boxed: the branches hold every branch's state, which every level of the
                // driver would otherwise copy with the task's state at every step.
                ty: quote!(::core::option::Option<::std::boxed::Box<#ty>>),
            }),
            Progress::Iterations(body) => members.push(Member {
                doc: " The iterations, once the task started them.",
                absent: Absent::None,
                name: format_ident!("each"),
                ty: quote!(::core::option::Option<#rt::Iterations<#body>>),
            }),
            Progress::Child(state) => members.push(Member {
                doc: " The called workflow's state, once the task started it.",
                absent: Absent::None,
                name: format_ident!("child"),
                ty: quote!(::core::option::Option<#state>),
            }),
            Progress::Resume { wait_end: with_end } => {
                if *with_end {
                    members.push(wait_end());
                }
                members.push(Member {
                    doc: " The action to call again after its own retry wait, when one failed.",
                    absent: Absent::None,
                    name: format_ident!("resume"),
                    ty: quote!(::core::option::Option<#rt::ActionResume>),
                });
            }
        }
        members
    }

    /// The variant's field declarations after `data`, as `flavour` declares them.
    pub fn declarations(&self, flavour: Flavour) -> TokenStream {
        let members = self.members().into_iter().map(|member| {
            let Member {
                doc,
                absent,
                name,
                ty,
            } = member;
            match (flavour, absent) {
                (Flavour::Variant, _) => quote! {
                    #[doc = #doc]
                    #name: #ty,
                },
                (Flavour::Saved, Absent::Required) => quote!(#name: #ty,),
                (Flavour::Saved, Absent::Default | Absent::None) => {
                    quote!(#[serde(default)] #name: #ty,)
                }
                (Flavour::Saving, Absent::Required | Absent::Default) => quote!(#name: &'a #ty,),
                // `skip_serializing_if` is given the field by reference, and a reference to a
                // reference derefs to what `Option::is_none` takes.
                (Flavour::Saving, Absent::None) => quote! {
                    #[serde(skip_serializing_if = "::core::option::Option::is_none")]
                    #name: &'a #ty,
                },
            }
        });
        quote!(#(#members)*)
    }

    /// The names of every field, `data` first: for patterns and shorthand rebuilding.
    pub fn names(&self) -> Vec<Ident> {
        let mut names = vec![format_ident!("data")];
        if self.retry {
            names.push(format_ident!("retry"));
        }
        match self.log {
            Log::None => {}
            Log::Record => names.push(format_ident!("compensations")),
            Log::Compensating => names.push(format_ident!("compensating")),
        }
        if matches!(self.progress, Progress::Resume { wait_end: true }) {
            names.push(format_ident!("until"));
        }
        if let Some(field) = self.progress_field() {
            names.push(field);
        }
        names
    }

    /// The parameters of `run_*`, after `&self`: one per field (`mut data` when the step
    /// changes the task data in place).
    pub fn parameters(&self, mutable_data: bool) -> TokenStream {
        let rt = rt();
        let retry = self.retry.then(|| quote!(retry: #rt::RetryProgress,));
        let log = match self.log {
            Log::None => TokenStream::new(),
            Log::Record => quote!(compensations: #rt::CompensationLog,),
            Log::Compensating => quote!(compensating: #rt::Compensating,),
        };
        let progress = match &self.progress {
            Progress::None => TokenStream::new(),
            Progress::DelayEnd => quote!(until: #rt::Timestamp,),
            Progress::WaitEnd => quote!(until: ::core::option::Option<#rt::Timestamp>,),
            Progress::Callback => quote!(phase: #rt::CallbackPhase,),
            Progress::Branches(ty) => {
                quote!(branches: ::core::option::Option<::std::boxed::Box<#ty>>,)
            }
            Progress::Iterations(body) => {
                quote!(each: ::core::option::Option<#rt::Iterations<#body>>,)
            }
            Progress::Child(state) => quote!(child: ::core::option::Option<#state>,),
            Progress::Resume { wait_end } => {
                let until =
                    wait_end.then(|| quote!(until: ::core::option::Option<#rt::Timestamp>,));
                quote!(#until resume: ::core::option::Option<#rt::ActionResume>,)
            }
        };
        let data = if mutable_data {
            quote!(mut data)
        } else {
            quote!(data)
        };
        quote!(#data: #rt::Value, #retry #log #progress)
    }

    fn progress_field(&self) -> Option<Ident> {
        Some(match &self.progress {
            Progress::None => return None,
            Progress::DelayEnd | Progress::WaitEnd => format_ident!("until"),
            Progress::Callback => format_ident!("phase"),
            Progress::Branches(_) => format_ident!("branches"),
            Progress::Iterations(_) => format_ident!("each"),
            Progress::Child(_) => format_ident!("child"),
            Progress::Resume { .. } => format_ident!("resume"),
        })
    }

    /// What a task that is not done carries from one step to the next (`Attempt::Stay`), and
    /// how its field is rebuilt from it: `None` when the task finishes within one step and never
    /// waits.
    pub fn stay(&self) -> Option<Stay> {
        let rt = rt();
        let (payload, field) = match &self.progress {
            Progress::None => return None,
            Progress::DelayEnd | Progress::WaitEnd => (quote!(()), None),
            Progress::Callback => (quote!(#rt::CallbackPhase), Some(quote!(phase: stay))),
            Progress::Branches(ty) => (
                quote!(::std::boxed::Box<#ty>),
                Some(quote!(branches: ::core::option::Option::Some(stay))),
            ),
            Progress::Iterations(body) => (
                quote!(#rt::Iterations<#body>),
                Some(quote!(each: ::core::option::Option::Some(stay))),
            ),
            Progress::Child(state) => (
                quote!(#state),
                Some(quote!(child: ::core::option::Option::Some(stay))),
            ),
            // `None` while an event task waits for its events, `Some` once an action failed.
            Progress::Resume { .. } => (
                quote!(::core::option::Option<#rt::ActionResume>),
                Some(quote!(resume: stay)),
            ),
        };
        Some(Stay { payload, field })
    }

    /// The variant rebuilt from the locals of the same names (`S::V { data, retry, until }`),
    /// with `progress` (tokens of a field init) in place of the progress field when given.
    pub fn rebuild(&self, variant: TokenStream, progress: Option<&TokenStream>) -> TokenStream {
        let progress_field = self.progress_field();
        let inits = self
            .names()
            .into_iter()
            .map(|name| match (&progress_field, progress) {
                (Some(field), Some(init)) if *field == name => quote!(#init),
                _ => quote!(#name),
            });
        quote!(#variant { #(#inits),* })
    }
}

/// One field of a variant after `data`.
struct Member {
    doc: &'static str,
    absent: Absent,
    name: Ident,
    ty: TokenStream,
}

/// What a saved state may leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Absent {
    /// Nothing: the field is always saved.
    Required,
    /// The field, read as its default.
    Default,
    /// The field, read as `None`; and it is left out when it is `None`.
    None,
}

/// Where field declarations go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavour {
    /// The public state enum's variant, documented.
    Variant,
    /// The content read back from a saved state: owned, with its serde attributes.
    Saved,
    /// The content written to a saved state: borrowed from the variant (lifetime `'a`), with its
    /// serde attributes.
    Saving,
}

/// What a task carries between steps: the payload type of `Attempt::Stay`, and the field init
/// rebuilding its progress field from the payload bound as `stay` (`None`: the field is kept).
pub(super) struct Stay {
    pub payload: TokenStream,
    pub field: Option<TokenStream>,
}

fn progress_of(cx: &Context<'_>, index: usize) -> Progress {
    let task = cx.task(index);
    match &task.kind {
        TaskKind::Delay { .. } => Progress::DelayEnd,
        TaskKind::Event { .. } if action_retries(task) => Progress::Resume { wait_end: true },
        TaskKind::Event { .. } => Progress::WaitEnd,
        TaskKind::Switch(switch) if matches!(switch.conditions, SwitchConditions::Event(_)) => {
            Progress::WaitEnd
        }
        TaskKind::Callback { .. } => Progress::Callback,
        TaskKind::Parallel { .. } => Progress::Branches(cx.branches_type(index)),
        TaskKind::ForEach { scope, .. } => {
            Progress::Iterations(cx.nested(index, 0, scope).state_ident())
        }
        TaskKind::SubFlow {
            workflow_id: Some(id),
            wait_for_completion: true,
        } => Progress::Child(super::names::ident(&cx.sub_flow_names(&id.value).state)),
        TaskKind::Operation { .. } if action_retries(task) => Progress::Resume { wait_end: false },
        _ => Progress::None,
    }
}

/// Whether the task has actions with retries of their own (the earlier drafts) that resume from
/// the saved state: those of sequential actions. Actions run in parallel retry within the step.
pub(super) fn action_retries(task: &Task) -> bool {
    let sequential = |mode: ActionMode, actions: &[crate::ir::Action]| {
        mode == ActionMode::Sequential && actions.iter().any(|a| !a.retry.is_empty())
    };
    match &task.kind {
        TaskKind::Operation {
            action_mode,
            actions,
        } => sequential(*action_mode, actions),
        TaskKind::Event { events_actions, .. } => events_actions
            .iter()
            .any(|entry| sequential(entry.action_mode, &entry.actions)),
        _ => false,
    }
}
