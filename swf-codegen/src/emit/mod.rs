//! Code generation: pure functions from the validated IR to tokens. Nothing here reads files or
//! iterates a hash map, so the same workflow always gives the same bytes.
//!
//! Every scope (the workflow, each parallel branch, each foreach body) becomes a state enum and a
//! set of methods on the machine: `enter_*` (a transition into a task), `run_*` (one attempt of a
//! task), `step` and, for nested scopes, `drive` (runs the scope to its end).

mod action;
mod compensation;
mod events;
mod exit;
mod functions;
mod machine;
pub mod names;
mod nested;
mod scope;
mod state;
mod stub;
mod task;

pub use names::{Names, PublicNames};
pub use stub::stubs;

use crate::ir::{EndKind, Operator, Scope, StartKind, SwitchConditions, Task, TaskKind, Workflow};
use names::ident;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The path through which generated code reaches the runtime.
pub(crate) fn rt() -> TokenStream {
    quote!(::swf_runtime::__private)
}

/// Everything one workflow compiles to: the functions trait, the state enum, the machine.
pub fn workflow(workflow: &Workflow, names: &Names) -> TokenStream {
    let cx = Context::root(workflow, names);
    let functions = functions::emit(&cx);
    let state = state::emit(&cx);
    let scopes = scope::emit_tree(&cx);
    let machine = machine::emit(&cx, &scopes);
    let nested_enums = &scopes.enums;
    let events = events::emit_event_enum(&cx);
    quote! {
        #functions
        #state
        #events
        #(#nested_enums)*
        #machine
    }
}

/// `Some(Duration::from_millis(n))` for a duration, `None` without one.
pub(crate) fn duration_option(duration: Option<&crate::ir::DurationSpec>) -> TokenStream {
    let rt = rt();
    match duration {
        Some(d) => {
            let millis = d.millis;
            quote!(::core::option::Option::Some(#rt::Duration::from_millis(#millis)))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// One scope being emitted, with what the emitters of a workflow share.
#[derive(Clone)]
pub(crate) struct Context<'a> {
    pub workflow: &'a Workflow,
    pub names: &'a Names,
    pub scope: &'a Scope,
    /// Prefix of this scope's method names: empty at the root, `fork_b1_` inside a branch.
    pub prefix: String,
    /// This scope's state enum.
    pub state: String,
    /// Per task, in document order: (variant, snake name).
    pub tasks: Vec<(String, String)>,
    pub root: bool,
}

impl<'a> Context<'a> {
    pub fn root(workflow: &'a Workflow, names: &'a Names) -> Self {
        Context {
            workflow,
            names,
            scope: &workflow.scope,
            prefix: String::new(),
            state: names.public.state.clone(),
            tasks: names::task_names(&workflow.scope),
            root: true,
        }
    }

    /// The scope of branch `branch` (or the foreach body, `branch` 0) of task `index`.
    pub fn nested(&self, index: usize, branch: usize, scope: &'a Scope) -> Self {
        let (variant, snake) = &self.tasks[index];
        let (prefix, state) = match &self.task(index).kind {
            TaskKind::ForEach { .. } => (
                format!("{}{snake}_body_", self.prefix),
                format!("{}{variant}Body", self.scope_base()),
            ),
            _ => (
                format!("{}{snake}_b{}_", self.prefix, branch + 1),
                format!("{}{variant}Branch{}", self.scope_base(), branch + 1),
            ),
        };
        Context {
            workflow: self.workflow,
            names: self.names,
            scope,
            prefix,
            state,
            tasks: names::task_names(scope),
            root: false,
        }
    }

    /// What nested scopes' enum names start with: the workflow's base name at the root, the
    /// enclosing scope's enum name inside.
    fn scope_base(&self) -> &str {
        if self.root {
            &self.names.public.base
        } else {
            &self.state
        }
    }

    pub fn state_ident(&self) -> Ident {
        ident(&self.state)
    }

    pub fn workflow_ident(&self) -> Ident {
        ident(&self.names.public.workflow)
    }

    pub fn functions_ident(&self) -> Ident {
        ident(&self.names.public.functions)
    }

    pub fn variant(&self, index: usize) -> Ident {
        ident(&self.tasks[index].0)
    }

    pub fn run_fn(&self, index: usize) -> Ident {
        ident(&format!("{}run_task_{}", self.prefix, self.tasks[index].1))
    }

    pub fn enter_fn(&self, index: usize) -> Ident {
        ident(&format!(
            "{}enter_task_{}",
            self.prefix, self.tasks[index].1
        ))
    }

    /// The method that runs one task of this scope: the public `step` (or `step_with` when the
    /// machine takes an `Io`) at the root.
    pub fn step_fn(&self) -> Ident {
        match (self.root, self.uses_io()) {
            (true, true) => ident("step_with"),
            (true, false) => ident("step"),
            (false, _) => ident(&format!("{}step", self.prefix)),
        }
    }

    /// Whether `run_*` of task `index` takes the `Io`: the task needs it, or it runs the
    /// scope's compensation, which steps with the `Io` when this scope's `step` takes it.
    pub fn task_takes_io(&self, index: usize) -> bool {
        let task = self.task(index);
        task_needs_io(task)
            || (self.step_takes_io() && compensation::calls_compensation(self, task))
    }

    /// Whether this scope's `step` takes the `Io`: when a task needs it, and always at the root
    /// of a machine that takes one.
    pub fn step_takes_io(&self) -> bool {
        scope_needs_io(self.scope) || (self.root && self.uses_io())
    }

    /// The method that runs a nested scope to its end.
    pub fn drive_fn(&self) -> Ident {
        ident(&format!("{}drive", self.prefix))
    }

    pub fn task(&self, index: usize) -> &'a Task {
        &self.scope.tasks[index]
    }

    pub fn start_index(&self) -> usize {
        self.scope
            .tasks
            .iter()
            .position(|t| t.start.is_some())
            .unwrap_or(0)
    }

    /// The index of the task a transition names (by name, then by id) in this scope; validation
    /// has made sure it exists.
    pub fn target(&self, next: &str) -> Option<usize> {
        let tasks = &self.scope.tasks;
        tasks.iter().position(|t| t.name.value == next).or_else(|| {
            tasks
                .iter()
                .position(|t| t.id.as_ref().is_some_and(|id| id.value == next))
        })
    }

    pub fn function_method(&self, ref_name: &str) -> Option<Ident> {
        self.workflow
            .functions
            .iter()
            .position(|f| f.name.value == ref_name)
            .map(|i| ident(&self.names.functions[i]))
    }

    /// The position of an event definition, which indexes the generated event specs.
    pub fn event_index(&self, name: &str) -> Option<usize> {
        self.workflow
            .events
            .iter()
            .position(|e| e.name.value == name)
    }

    /// True when some switch uses the `custom` operator, which adds a trait method.
    pub fn uses_custom_conditions(&self) -> bool {
        any_task(&self.workflow.scope, &|t| match &t.kind {
            TaskKind::Switch(s) => match &s.conditions {
                SwitchConditions::Data(c) => c.iter().any(|c| {
                    c.test
                        .comparisons()
                        .iter()
                        .any(|c| c.operator.value == Operator::Custom)
                }),
                SwitchConditions::Event(_) => false,
            },
            _ => false,
        })
    }

    /// True when the workflow talks to the outside world (events) or needs a clock (a scheduled
    /// start): its machine then takes an `Io`, so that nothing it produces can be lost.
    pub fn uses_io(&self) -> bool {
        scope_needs_io(&self.workflow.scope)
            || self.workflow.scope.tasks.iter().any(|t| {
                matches!(
                    t.start.as_ref().map(|s| &s.kind),
                    Some(StartKind::Scheduled { .. })
                )
            })
    }
}

/// True when `test` holds for a task of `scope` or of any scope nested in it.
pub fn any_task(scope: &Scope, test: &dyn Fn(&Task) -> bool) -> bool {
    scope
        .tasks
        .iter()
        .any(|t| test(t) || t.nested_scopes().iter().any(|s| any_task(s, test)))
}

/// True when running `task` needs the instance's `Io`: it waits for or produces events, or a
/// scope nested in it does.
pub(crate) fn task_needs_io(task: &Task) -> bool {
    let own = match &task.kind {
        TaskKind::Event { .. } | TaskKind::Callback { .. } | TaskKind::SubFlow { .. } => true,
        TaskKind::Switch(s) => matches!(s.conditions, SwitchConditions::Event(_)),
        _ => false,
    };
    own || task.transitions().iter().any(|t| t.produce_event.is_some())
        || matches!(
            task.end.as_ref().map(|e| &e.kind),
            Some(EndKind::Event { .. })
        )
        || task.nested_scopes().iter().any(|s| drive_needs_io(s))
}

/// True when a task of the scope needs the `Io`.
pub(crate) fn scope_needs_io(scope: &Scope) -> bool {
    scope.tasks.iter().any(task_needs_io)
}

/// True when running a nested scope needs the `Io`: a task of it does, or its start is
/// scheduled (checked against the `Io`'s clock).
pub(crate) fn drive_needs_io(scope: &Scope) -> bool {
    scope_needs_io(scope) || scheduled_interval(scope).is_some()
}

/// The interval of the scope's start task, when that start is scheduled.
pub(crate) fn scheduled_interval(scope: &Scope) -> Option<&crate::source::Spanned<String>> {
    scope
        .tasks
        .iter()
        .find_map(|t| match t.start.as_ref().map(|s| &s.kind) {
            Some(StartKind::Scheduled {
                interval: Some(interval),
            }) => Some(interval),
            _ => None,
        })
}
