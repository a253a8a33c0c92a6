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

    /// The variant's field declarations (after `data`).
    pub fn declarations(&self) -> TokenStream {
        let rt = rt();
        let optional =
            quote!(#[serde(default, skip_serializing_if = "::core::option::Option::is_none")]);
        let retry = self.retry.then(|| {
            quote! {
                /// The task's retries so far, and when the next attempt may start.
                #[serde(default)]
                retry: #rt::RetryProgress,
            }
        });
        let log = match self.log {
            Log::None => TokenStream::new(),
            Log::Record => quote! {
                /// The completed tasks of this scope awaiting compensation.
                #[serde(default)]
                compensations: #rt::CompensationLog,
            },
            Log::Compensating => quote! {
                /// The compensation this task runs for.
                compensating: #rt::Compensating,
            },
        };
        let progress = match &self.progress {
            Progress::None => TokenStream::new(),
            Progress::DelayEnd => quote! {
                /// When the delay ends.
                until: #rt::Timestamp,
            },
            Progress::WaitEnd => quote! {
                /// When the wait for events ends without one.
                #optional
                until: ::core::option::Option<#rt::Timestamp>,
            },
            Progress::Callback => quote! {
                /// Whether the action ran and the task waits for the callback event.
                #[serde(default)]
                phase: #rt::CallbackPhase,
            },
            Progress::Branches(ty) => quote! {
                /// The branches, once the task started them.
                #optional
                branches: ::core::option::Option<#ty>,
            },
            Progress::Iterations(body) => quote! {
                /// The iterations, once the task started them.
                #optional
                each: ::core::option::Option<#rt::Iterations<#body>>,
            },
            Progress::Child(state) => quote! {
                /// The called workflow's state, once the task started it.
                #optional
                child: ::core::option::Option<#state>,
            },
            Progress::Resume { wait_end } => {
                let until = wait_end.then(|| {
                    quote! {
                        /// When the wait for events ends without one.
                        #optional
                        until: ::core::option::Option<#rt::Timestamp>,
                    }
                });
                quote! {
                    #until
                    /// The action to call again after its own retry wait, when one failed.
                    #optional
                    resume: ::core::option::Option<#rt::ActionResume>,
                }
            }
        };
        quote!(#retry #log #progress)
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

    /// The parameters of `run_*`, after `&self`: one per field.
    pub fn parameters(&self) -> TokenStream {
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
            Progress::Branches(ty) => quote!(branches: ::core::option::Option<#ty>,),
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
        quote!(data: #rt::Value, #retry #log #progress)
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
                quote!(#ty),
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
