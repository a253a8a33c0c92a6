//! Code generation: pure functions from the validated IR to tokens. Nothing here reads files or
//! iterates a hash map, so the same workflow always gives the same bytes.

mod action;
mod exit;
mod functions;
pub mod names;
mod state;
mod stub;
mod support;
mod task;

pub use names::{Names, PublicNames};
pub use stub::stubs;
pub use support::check_supported;

use crate::ir::{Task, Workflow};
use names::ident;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The path through which generated code reaches the runtime.
pub(crate) fn rt() -> TokenStream {
    quote!(::swf_runtime::__private)
}

/// Everything one workflow compiles to: the functions trait, the state enum, the machine.
pub fn workflow(workflow: &Workflow, names: &Names) -> TokenStream {
    let cx = Context { workflow, names };
    let functions = functions::emit(&cx);
    let state = state::emit(&cx);
    let machine = task::emit_machine(&cx);
    quote! {
        #functions
        #state
        #machine
    }
}

/// What the emitters of one workflow share.
pub(crate) struct Context<'a> {
    pub workflow: &'a Workflow,
    pub names: &'a Names,
}

impl Context<'_> {
    pub fn state_ident(&self) -> Ident {
        ident(&self.names.public.state)
    }

    pub fn workflow_ident(&self) -> Ident {
        ident(&self.names.public.workflow)
    }

    pub fn functions_ident(&self) -> Ident {
        ident(&self.names.public.functions)
    }

    pub fn variant(&self, index: usize) -> Ident {
        ident(&self.names.tasks[index].0)
    }

    pub fn run_fn(&self, index: usize) -> Ident {
        ident(&format!("run_{}", self.names.tasks[index].1))
    }

    pub fn enter_fn(&self, index: usize) -> Ident {
        ident(&format!("enter_{}", self.names.tasks[index].1))
    }

    pub fn task(&self, index: usize) -> &Task {
        &self.workflow.scope.tasks[index]
    }

    /// The index of the task a transition names (by name, then by id); validation has made
    /// sure it exists.
    pub fn target(&self, next: &str) -> Option<usize> {
        let tasks = &self.workflow.scope.tasks;
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

    /// True when some switch uses the `custom` operator, which adds a trait method.
    pub fn uses_custom_conditions(&self) -> bool {
        self.workflow.scope.tasks.iter().any(|t| match &t.kind {
            crate::ir::TaskKind::Switch(s) => match &s.conditions {
                crate::ir::SwitchConditions::Data(c) => c
                    .iter()
                    .any(|c| c.operator.value == crate::ir::Operator::Custom),
                crate::ir::SwitchConditions::Event(_) => false,
            },
            _ => false,
        })
    }
}
