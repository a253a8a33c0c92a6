//! Code generation: pure functions from the validated IR to tokens. Nothing here reads files or
//! iterates a hash map, so the same workflow always gives the same bytes.
//!
//! Every scope (the workflow, each parallel branch, each foreach body) becomes a serializable
//! state enum and a set of methods on the machine: `enter_*` (a transition into a task),
//! `run_*` (one step of a task) and `advance` (one step of the scope). A step never blocks on
//! an event or a deadline: it reports what it waits for (`Progress::Waiting`), and the state
//! keeps every deadline as an instant, every running branch and iteration, and every
//! compensation in progress, so that a saved instance resumes exactly where it was.

mod action;
mod compensation;
mod events;
mod exit;
mod fields;
mod functions;
mod machine;
pub mod names;
mod nested;
mod private_block;
mod public_paths;
mod schema;
mod scope;
mod state;
mod stub;
mod task;
#[cfg(feature = "schemas")]
mod typed;

pub use names::{Names, PublicNames};
/// Stand-ins for a failed compilation's public items (see `stub::stubs`), with public paths.
pub fn stubs(names: &PublicNames, function_names: &[String]) -> TokenStream {
    public_paths::public_paths(stub::stubs(names, function_names))
}

use crate::ir::{Operator, Scope, StartKind, SwitchConditions, Task, TaskKind, Workflow};
use names::ident;
use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::quote;

/// The path through which generated code reaches the runtime.
pub(crate) fn rt() -> RuntimePath {
    RuntimePath { private: true }
}

/// The runtime's public root, through which the bodies of public items name its public types
/// (`::swf_runtime::WorkflowError::new`): the pass that writes public paths for rustdoc
/// (`public_paths`) does not walk bodies.
pub(crate) fn api() -> RuntimePath {
    RuntimePath { private: false }
}

/// `::swf_runtime::__private` (or `::swf_runtime`), written where it is interpolated. Most
/// emitters interpolate it several times: a stream made once is copied token by token at each
/// interpolation (proc_macro2 copies a stream it shares), and making it cost more than writing
/// its tokens (issue 10: 7% of the generator's instructions).
#[derive(Clone, Copy)]
pub(crate) struct RuntimePath {
    private: bool,
}

impl quote::ToTokens for RuntimePath {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let colon = |spacing| TokenTree::Punct(Punct::new(':', spacing));
        let ident = |name| TokenTree::Ident(Ident::new(name, Span::call_site()));
        tokens.extend([
            colon(Spacing::Joint),
            colon(Spacing::Alone),
            ident("swf_runtime"),
        ]);
        if self.private {
            tokens.extend([
                colon(Spacing::Joint),
                colon(Spacing::Alone),
                ident("__private"),
            ]);
        }
    }
}

/// True when `tokens` mention the identifier `name` anywhere (inside groups too): generated
/// functions name a parameter `_name` when their body never reads it, so they compile
/// warning-free whatever the task needs.
pub(crate) fn mentions(tokens: &TokenStream, name: &str) -> bool {
    mentions_each(tokens, [name])[0]
}

/// [`mentions`] of each of `names`, in one walk: reading a borrowed stream copies it.
pub(crate) fn mentions_each<const N: usize>(tokens: &TokenStream, names: [&str; N]) -> [bool; N] {
    let mut found = [false; N];
    mark_mentions(tokens, &names, &mut found);
    found
}

fn mark_mentions(tokens: &TokenStream, names: &[&str], found: &mut [bool]) {
    for tree in tokens.clone() {
        match tree {
            TokenTree::Ident(ident) => {
                if let Some(index) = names.iter().position(|name| ident == name) {
                    found[index] = true;
                }
            }
            TokenTree::Group(group) => mark_mentions(&group.stream(), names, found),
            _ => {}
        }
    }
}

/// `group` taken apart: its delimiter, its span and its trees. The group is dropped before its
/// stream is iterated, so the trees are moved out of a stream nothing else holds rather than
/// copied (`Group::stream` shares the group's).
pub(crate) fn group_parts(group: Group) -> (Delimiter, Span, Vec<TokenTree>) {
    let (delimiter, span, stream) = (group.delimiter(), group.span(), group.stream());
    drop(group);
    (delimiter, span, stream.into_iter().collect())
}

/// Everything one workflow compiles to: the functions trait, the event enum, the state types of
/// every scope, the machine.
pub fn workflow(workflow: &Workflow, names: &Names) -> TokenStream {
    let cx = Context::root(workflow, names);
    let functions = functions::emit(&cx);
    // The scopes' streams are moved, never interpolated by reference: an interpolated stream
    // is copied, and a group still shared with its original is copied again by the passes
    // that rewrite paths (they are most of the workflow's tokens).
    let scope::Emitted {
        public_methods,
        methods,
        types,
    } = scope::emit_tree(&cx);
    let (machine, private) = machine::emit(&cx, public_methods, methods);
    let events = events::emit_event_enum(&cx);
    let schemas = schema::feature_check(workflow);
    #[cfg(feature = "schemas")]
    let typed = typed::emit(&cx);
    #[cfg(not(feature = "schemas"))]
    let typed = TokenStream::new();
    let mut public = TokenStream::new();
    public.extend([schemas, functions, events]);
    public.extend(types);
    public.extend([machine, typed]);
    let mut generated = public_paths::public_paths(public);
    generated.extend([private]);
    generated
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
    /// Per task, in document order: the type of a parallel task's branches.
    branches: Vec<Option<String>>,
    /// Where this scope is: (task index, branch index) from the root.
    path: Vec<(usize, usize)>,
    /// Whether the scope keeps a compensation log (see `compensation::in_use`), computed once.
    compensation_in_use: bool,
    /// Task names, then ids, to their index: what transitions name.
    targets: std::collections::BTreeMap<&'a str, usize>,
    pub root: bool,
}

impl<'a> Context<'a> {
    pub fn root(workflow: &'a Workflow, names: &'a Names) -> Self {
        Self::at(workflow, names, &workflow.scope, Vec::new())
    }

    fn at(
        workflow: &'a Workflow,
        names: &'a Names,
        scope: &'a Scope,
        path: Vec<(usize, usize)>,
    ) -> Self {
        let scope_names = names.scope(&path);
        Context {
            workflow,
            names,
            scope,
            prefix: scope_names.prefix.clone(),
            state: scope_names.state.clone(),
            tasks: scope_names.tasks.clone(),
            branches: scope_names.branches.clone(),
            root: path.is_empty(),
            targets: scope.targets(),
            path,
            compensation_in_use: compensation::scope_in_use(scope),
        }
    }

    /// The scope of branch `branch` (or the foreach body, `branch` 0) of task `index`.
    pub fn nested(&self, index: usize, branch: usize, scope: &'a Scope) -> Self {
        let mut path = self.path.clone();
        path.push((index, branch));
        Self::at(self.workflow, self.names, scope, path)
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

    /// The method that runs one step of this scope: the public `advance` at the root.
    pub fn advance_fn(&self) -> Ident {
        ident(&format!("{}advance", self.prefix))
    }

    /// The method that enters this scope at its start task (a nested scope's start).
    pub fn begin_fn(&self) -> Ident {
        ident(&format!("{}begin", self.prefix))
    }

    /// The type holding the branches of parallel task `index` of this scope (only parallel
    /// tasks have one: [`names::assign`] names theirs, and only they ask).
    pub fn branches_type(&self, index: usize) -> Ident {
        let name = self.branches[index].as_deref();
        ident(name.expect("names::assign names the branches of every parallel task"))
    }

    /// The public names of the workflow compiled with this one whose id is `id` (a sub-flow).
    pub fn sub_flow_names(&self, id: &str) -> PublicNames {
        match self.names.workflows.get(id) {
            Some(names) => names.clone(),
            None => PublicNames::from_id(id),
        }
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
        self.targets.get(next).copied()
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
    /// start): its public API then takes an `Io` (`run_with`, `start_with`, `step_with`), so
    /// that nothing it produces can be lost by accident.
    pub fn uses_io(&self) -> bool {
        self.workflow.scope.tasks.iter().any(|t| {
            matches!(
                t.start.as_ref().map(|s| &s.kind),
                Some(StartKind::Scheduled { .. })
            )
        }) || any_task(&self.workflow.scope, &task_talks_to_the_world)
    }
}

/// True when `test` holds for a task of `scope` or of any scope nested in it.
pub fn any_task(scope: &Scope, test: &dyn Fn(&Task) -> bool) -> bool {
    scope
        .tasks
        .iter()
        .any(|t| test(t) || t.nested_scopes().iter().any(|s| any_task(s, test)))
}

/// True when running `task` itself waits for, produces or starts what lives outside the
/// instance: events, or a sub-flow (which may do either).
fn task_talks_to_the_world(task: &Task) -> bool {
    let own = match &task.kind {
        TaskKind::Event { .. } | TaskKind::Callback { .. } | TaskKind::SubFlow { .. } => true,
        TaskKind::Switch(s) => matches!(s.conditions, SwitchConditions::Event(_)),
        _ => false,
    };
    own || task.transitions().iter().any(|t| t.produce_event.is_some())
        || matches!(
            task.end.as_ref().map(|e| &e.kind),
            Some(crate::ir::EndKind::Event { .. })
        )
        || scheduled_interval_of_nested(task)
}

/// True when a scope nested in `task` starts on a schedule (checked against the `Io`'s clock).
fn scheduled_interval_of_nested(task: &Task) -> bool {
    task.nested_scopes()
        .iter()
        .any(|scope| scheduled_interval(scope).is_some())
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
