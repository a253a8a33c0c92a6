//! Rust identifiers for workflow names. User strings only ever reach generated code through
//! these sanitizers (identifiers) or as escaped literals.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Scope, Workflow};
use proc_macro2::{Ident, Span};

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
    /// Names from a workflow id such as `order-processing` (→ `OrderProcessingWorkflow`).
    pub fn from_id(id: &str) -> Self {
        let mut base = upper_camel(id);
        if base.is_empty() {
            base = "Unnamed".into();
        }
        PublicNames {
            workflow: format!("{base}Workflow"),
            functions: format!("{base}Functions"),
            state: format!("{base}State"),
            base,
        }
    }
}

/// Names of the generated items for each function, computed once before emission.
#[derive(Debug, Clone)]
pub struct Names {
    pub public: PublicNames,
    /// Per function definition, in document order: the trait method name.
    pub functions: Vec<String>,
    /// Ids of the workflows compiled together whose machines must own their functions
    /// (`Clone + 'static`): those that start a sub-flow detached, directly or through a
    /// sub-flow they wait for.
    pub owning: Vec<String>,
}

/// Variant names a task cannot take: the terminal states, and `Self` (a keyword).
const TERMINAL_VARIANTS: &[&str] = &["Completed", "Terminated", "Self"];

impl Names {
    /// Computes every name; clashes between function method names are reported (they would
    /// make the trait ambiguous), clashes between task variants are resolved with a suffix.
    pub fn new(workflow: &Workflow, diags: &mut Diagnostics) -> Self {
        let public = PublicNames::from_id(&workflow.id.value);
        let mut functions: Vec<String> = Vec::new();
        for function in &workflow.functions {
            let method = method_name(&function.name.value);
            if let Some(index) = functions.iter().position(|m| *m == method) {
                let first = &workflow.functions[index].name;
                diags
                    .error(
                        Code::NAME_CLASH,
                        function.name.span,
                        format!(
                            "functions `{}` and `{}` (line {}) would both become the trait method `{method}`",
                            function.name.value, first.value, first.span.line
                        ),
                    )
                    .help("rename one of the functions so their snake_case forms differ");
            }
            functions.push(method);
        }
        Names {
            public,
            functions,
            owning: Vec::new(),
        }
    }
}

pub fn task_names(scope: &Scope) -> Vec<(String, String)> {
    unique_variants(
        scope.tasks.iter().map(|t| t.name.value.as_str()),
        TERMINAL_VARIANTS,
        "Task",
    )
    .into_iter()
    .map(|variant| {
        let snake = snake(&variant);
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
    let mut taken: Vec<String> = reserved.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    for name in names {
        let mut variant = upper_camel(name);
        if variant.is_empty() || variant.starts_with(|c: char| c.is_ascii_digit()) {
            variant = format!("{prefix}{variant}");
        }
        let base = variant.clone();
        let mut counter = 2;
        while taken.contains(&variant) {
            variant = format!("{base}{counter}");
            counter += 1;
        }
        taken.push(variant.clone());
        out.push(variant);
    }
    out
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
