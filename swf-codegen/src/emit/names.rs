//! Rust identifiers for workflow names. User strings only ever reach generated code through
//! these sanitizers (identifiers) or as escaped literals.

use crate::ir::{Scope, Workflow};
use proc_macro2::{Ident, Span};
use std::collections::{BTreeMap, BTreeSet};

/// The public names generated for one workflow, derived from its `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicNames {
    /// `OrderWorkflow`: the machine type.
    pub workflow: String,
    /// `OrderFunctions`: the trait users implement.
    pub functions: String,
    /// `OrderState`: the serializable state enum.
    pub state: String,
    /// `Order`: the prefix of every generated type name.
    pub base: String,
}

impl PublicNames {
    /// Names from a workflow id such as `order-processing` (→ `OrderProcessingWorkflow`), on
    /// their own: an id that becomes no identifier (`***`) gives `Unnamed`, one that starts
    /// with a digit (`3d-printer`) gets `Workflow` in front (`Workflow3dPrinterWorkflow`).
    /// [`assign`] also keeps the names of workflows compiled together apart.
    pub fn from_id(id: &str) -> Self {
        Self::from_base(base_name(id))
    }

    fn from_base(base: String) -> Self {
        PublicNames {
            workflow: format!("{base}Workflow"),
            functions: format!("{base}Functions"),
            state: format!("{base}State"),
            base,
        }
    }

    /// Every module-level type these names stand for (the event enum included).
    fn types(&self) -> [String; 4] {
        [
            self.workflow.clone(),
            self.functions.clone(),
            self.state.clone(),
            format!("{}Event", self.base),
        ]
    }
}

/// The base of a workflow's type names: a valid identifier whatever the id.
fn base_name(id: &str) -> String {
    let base = upper_camel(id);
    if base.is_empty() {
        "Unnamed".into()
    } else if base.starts_with(|c: char| c.is_ascii_digit()) {
        format!("Workflow{base}")
    } else {
        base
    }
}

/// Names of the generated items of one workflow, computed once, by [`assign`], before emission:
/// every identifier is valid Rust and unique in its namespace whatever the workflow's names.
#[derive(Debug, Clone)]
pub struct Names {
    pub public: PublicNames,
    /// Per function definition, in document order: the trait method name.
    pub functions: Vec<String>,
    /// Ids of the workflows compiled together whose machines must own their functions
    /// (`Clone + 'static`): those that start a sub-flow detached, directly or through a
    /// sub-flow they wait for.
    pub owning: Vec<String>,
    /// The public names of every workflow compiled together, by id: what sub-flows name.
    pub workflows: BTreeMap<String, PublicNames>,
    /// The workflow's diagram (an inline SVG) for the machine type's documentation, when the
    /// caller asked for one (see `pipeline::Options::diagram_docs`).
    pub diagram_doc: Option<String>,
    /// Every scope's names, by its path from the root (task index, branch index), the root
    /// at the empty path.
    scopes: BTreeMap<Vec<(usize, usize)>, ScopeNames>,
}

/// The generated names of one scope (the workflow, a parallel branch, a foreach body).
#[derive(Debug, Clone)]
pub struct ScopeNames {
    /// The scope's state enum.
    pub state: String,
    /// The prefix of the scope's methods on the machine: empty at the root.
    pub prefix: String,
    /// Per task, in document order: its variant in the state enum and its snake_case name in
    /// method names.
    pub tasks: Vec<(String, String)>,
    /// Per task, in document order: for a parallel task, the type holding its branches.
    pub branches: Vec<Option<String>>,
    /// What the names of the types of scopes nested in this one start with: the workflow's
    /// base at the root, the scope's state enum inside.
    type_base: String,
}

/// The variant names a task cannot take in a state enum: the scope's ends, and `Self` (a
/// keyword).
pub const TERMINAL_VARIANTS: &[&str] = &["Completed", "Terminated", "Self"];

/// The machine's methods whose names do not come from the workflow: the public API, the
/// sub-flow entry points and the event table. Every derived method name avoids them (the root
/// scope's `begin` and `advance` are its own, see `SCOPE_METHODS`).
pub const MACHINE_METHODS: &[&str] = &[
    "new",
    "functions",
    "run",
    "start",
    "step",
    "run_with",
    "start_with",
    "step_with",
    "begin_subflow",
    "run_detached",
    "event_specs",
];

/// The method names a scope with method prefix `prefix` defines besides its tasks' own.
const SCOPE_METHODS: &[&str] = &[
    "advance",
    "begin",
    "compensate",
    "after_compensation",
    "drive_detached",
];

/// Hands out names in one namespace: each name once, a taken one with a number (`Fork2`).
#[derive(Debug, Default)]
pub struct Namer {
    taken: BTreeSet<String>,
}

impl Namer {
    /// A namer for which `reserved` are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Namer {
            taken: reserved.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The first of `base`, `base2`, `base3`... for which every name `derive` makes of it is
    /// free; takes those names and returns the chosen one.
    pub fn fresh_group(&mut self, base: &str, derive: impl Fn(&str) -> Vec<String>) -> String {
        let mut candidate = base.to_owned();
        let mut counter = 2u32;
        loop {
            let derived = derive(&candidate);
            let mut distinct = BTreeSet::new();
            if derived
                .iter()
                .all(|name| !self.taken.contains(name) && distinct.insert(name.as_str()))
            {
                self.taken.extend(derived);
                return candidate;
            }
            candidate = format!("{base}{counter}");
            counter += 1;
        }
    }

    /// The first free name of `base`, `base2`, `base3`...
    pub fn fresh(&mut self, base: &str) -> String {
        self.fresh_group(base, |candidate| vec![candidate.to_owned()])
    }
}

/// Assigns the names of the workflows compiled together, in order: `fallbacks` gives each its
/// file stem, used when a workflow has no id. One namespace holds every module-level type of
/// all of them (public names first, so that they are what their ids say whenever they can be).
/// Function method names are not deduplicated (they are the API users implement); clashes are
/// refused by validation (E0123).
pub fn assign(workflows: &[(Option<&Workflow>, &str)]) -> (Vec<PublicNames>, Vec<Option<Names>>) {
    let mut types = Namer::default();
    let public: Vec<PublicNames> = workflows
        .iter()
        .map(|(workflow, stem)| {
            let id = match workflow {
                Some(w) if !w.id.value.is_empty() => w.id.value.as_str(),
                _ => stem,
            };
            let base = types.fresh_group(&base_name(id), |b| {
                PublicNames::from_base(b.to_owned()).types().to_vec()
            });
            PublicNames::from_base(base)
        })
        .collect();
    let mut by_id = BTreeMap::new();
    for ((workflow, _), names) in workflows.iter().zip(&public) {
        if let Some(w) = workflow {
            by_id
                .entry(w.id.value.clone())
                .or_insert_with(|| names.clone());
        }
    }
    let names = workflows
        .iter()
        .zip(&public)
        .map(|((workflow, _), public)| {
            let workflow = (*workflow)?;
            let mut methods = Namer::with_reserved(MACHINE_METHODS);
            let mut scopes = BTreeMap::new();
            let root = scope_names(
                &workflow.scope,
                public.state.clone(),
                String::new(),
                &public.base,
                &mut types,
                &mut methods,
            );
            assign_nested(
                &workflow.scope,
                Vec::new(),
                root,
                &mut types,
                &mut methods,
                &mut scopes,
            );
            Some(Names {
                public: public.clone(),
                functions: workflow
                    .functions
                    .iter()
                    .map(|f| method_name(&f.name.value))
                    .collect(),
                owning: Vec::new(),
                workflows: by_id.clone(),
                diagram_doc: None,
                scopes,
            })
        })
        .collect();
    (public, names)
}

/// The names of `scope` (its state enum already chosen, `base_prefix` its method prefix before
/// deduplication), taking its methods and its parallel tasks' branch types.
fn scope_names(
    scope: &Scope,
    state: String,
    base_prefix: String,
    type_base: &str,
    types: &mut Namer,
    methods: &mut Namer,
) -> ScopeNames {
    let tasks = task_names(scope);
    let snakes: Vec<&str> = tasks.iter().map(|(_, s)| s.as_str()).collect();
    let prefix = methods.fresh_group(&base_prefix, |p| {
        let own = SCOPE_METHODS.iter().map(|m| format!("{p}{m}"));
        let per_task = snakes
            .iter()
            .flat_map(|s| [format!("{p}run_task_{s}"), format!("{p}enter_task_{s}")]);
        own.chain(per_task).collect()
    });
    let branches = scope
        .tasks
        .iter()
        .zip(&tasks)
        .map(|(task, (variant, _))| {
            matches!(task.kind, crate::ir::TaskKind::Parallel { .. })
                .then(|| types.fresh(&format!("{type_base}{variant}Branches")))
        })
        .collect();
    ScopeNames {
        state,
        prefix,
        tasks,
        branches,
        type_base: type_base.to_owned(),
    }
}

/// Names the scopes nested in `scope` (whose names are `names`, at `path`), depth first.
fn assign_nested(
    scope: &Scope,
    path: Vec<(usize, usize)>,
    names: ScopeNames,
    types: &mut Namer,
    methods: &mut Namer,
    out: &mut BTreeMap<Vec<(usize, usize)>, ScopeNames>,
) {
    let mut children = Vec::new();
    for (index, task) in scope.tasks.iter().enumerate() {
        let (variant, snake) = &names.tasks[index];
        let foreach = matches!(task.kind, crate::ir::TaskKind::ForEach { .. });
        for (branch, nested) in task.nested_scopes().into_iter().enumerate() {
            // A method prefix never ends a name of its own: methods of different scopes stay
            // apart, and `fresh_group` numbers the prefix when they would not.
            let (prefix, state) = if foreach {
                (
                    format!("{}{snake}_body_", names.prefix),
                    format!("{}{variant}Body", names.type_base),
                )
            } else {
                (
                    format!("{}{snake}_b{}_", names.prefix, branch + 1),
                    format!("{}{variant}Branch{}", names.type_base, branch + 1),
                )
            };
            let state = types.fresh(&state);
            let type_base = state.clone();
            let nested_names = scope_names(nested, state, prefix, &type_base, types, methods);
            let mut nested_path = path.clone();
            nested_path.push((index, branch));
            children.push((nested, nested_path, nested_names));
        }
    }
    out.insert(path, names);
    for (nested, nested_path, nested_names) in children {
        assign_nested(nested, nested_path, nested_names, types, methods, out);
    }
}

impl Names {
    /// The names of the scope at `path` (see [`Names`]); every scope of the workflow has some.
    pub fn scope(&self, path: &[(usize, usize)]) -> &ScopeNames {
        &self.scopes[path]
    }
}

/// The (variant, snake_case) names of a scope's tasks, in order: variants unique and none a
/// terminal variant, snake_case names unique too (`A b` and `Ab` both give `ab`).
pub fn task_names(scope: &Scope) -> Vec<(String, String)> {
    let variants = unique_variants(
        scope.tasks.iter().map(|t| t.name.value.as_str()),
        TERMINAL_VARIANTS,
        "Task",
    );
    let mut snakes = Namer::default();
    variants
        .into_iter()
        .map(|variant| {
            let snake = snakes.fresh(&snake(&variant));
            (variant, snake)
        })
        .collect()
}

/// UpperCamelCase variant names for `names`, in order, each unique and none in `reserved`: a
/// name that is empty or starts with a digit gets `prefix`, a clash gets a number.
pub fn unique_variants<'a>(
    names: impl Iterator<Item = &'a str>,
    reserved: &[&str],
    prefix: &str,
) -> Vec<String> {
    let mut namer = Namer::with_reserved(reserved);
    names
        .map(|name| {
            let mut variant = upper_camel(name);
            if variant.is_empty() || variant.starts_with(|c: char| c.is_ascii_digit()) {
                variant = format!("{prefix}{variant}");
            }
            namer.fresh(&variant)
        })
        .collect()
}

/// `check-inventory`, `checkInventory`, `Check Inventory` → `check_inventory`; keywords (and the
/// trait's own method names) get a trailing underscore.
pub fn method_name(name: &str) -> String {
    let mut method = snake(name);
    if method.is_empty() || method.starts_with(|c: char| c.is_ascii_digit()) {
        method = format!("f_{method}");
    }
    if is_reserved(&method) {
        method.push('_');
    }
    method
}

/// Splits a name into words at punctuation, spaces and lower→upper case changes.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        let boundary = match previous {
            Some(p) => (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase(),
            None => false,
        };
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.push(c);
        previous = Some(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

pub fn upper_camel(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => {
                    first.to_ascii_uppercase().to_string() + &chars.as_str().to_ascii_lowercase()
                }
                None => String::new(),
            }
        })
        .collect()
}

pub fn snake(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_")
}

fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "as" | "async" | "await" | "break" | "const" | "continue" | "crate" | "dyn" | "else"
            | "enum" | "extern" | "false" | "fn" | "for" | "if" | "impl" | "in" | "let" | "loop"
            | "match" | "mod" | "move" | "mut" | "pub" | "ref" | "return" | "self" | "static"
            | "struct" | "super" | "trait" | "true" | "type" | "unsafe" | "use" | "where"
            | "while" | "abstract" | "become" | "box" | "do" | "final" | "macro" | "override"
            | "priv" | "typeof" | "unsized" | "virtual" | "yield" | "try" | "gen"
            // The trait's own method for custom switch conditions.
            | "custom_condition"
    )
}

/// The names under which a saved state stores its position (tasks and branches by their names
/// in the definition, never by generated identifiers), and the ends it can reach. The mapping is
/// one-to-one: a name that is one of the reserved words, or starts with `~`, gets a `~` in
/// front, so no task can be mistaken for an end.
pub fn serde_name(name: &str) -> String {
    if SERDE_RESERVED.contains(&name) || name.starts_with('~') {
        format!("~{name}")
    } else {
        name.to_owned()
    }
}

/// The saved names of a scope's ends.
pub const SERDE_COMPLETED: &str = "completed";
/// See [`SERDE_COMPLETED`].
pub const SERDE_TERMINATED: &str = "terminated";
const SERDE_RESERVED: &[&str] = &[SERDE_COMPLETED, SERDE_TERMINATED];

/// `text` made safe for one line of a comment or doc comment: control characters and line
/// separators (`\n`, `\r`, U+2028...) are written as escapes, so a name can neither end the
/// comment (and inject code) nor hold a bare CR, which rustc refuses in doc comments.
pub fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of a generated doc comment (see [`comment_text`]).
pub fn doc_text(text: &str) -> String {
    comment_text(text)
}

pub fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_rust_conventions() {
        assert_eq!(method_name("checkInventory"), "check_inventory");
        assert_eq!(method_name("check-inventory"), "check_inventory");
        assert_eq!(method_name("Send Email"), "send_email");
        assert_eq!(method_name("type"), "type_");
        assert_eq!(method_name("3rd"), "f_3rd");
        assert_eq!(upper_camel("order-processing"), "OrderProcessing");
        assert_eq!(
            upper_camel("doLowRistOperationFunction"),
            "DoLowRistOperationFunction"
        );
        assert_eq!(
            PublicNames::from_id("greeting").workflow,
            "GreetingWorkflow"
        );
        assert_eq!(PublicNames::from_id("***").state, "UnnamedState");
    }

    #[test]
    fn saved_names_never_collide_with_the_ends() {
        assert_eq!(serde_name("Charge card"), "Charge card");
        assert_eq!(serde_name("completed"), "~completed");
        assert_eq!(serde_name("~completed"), "~~completed");
        assert_eq!(serde_name("Completed"), "Completed");
        assert_ne!(serde_name("terminated"), SERDE_TERMINATED);
    }
}
