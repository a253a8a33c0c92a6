//! Data schemas (`dataInputSchema`, `dataOutputSchema`): the files they name are read at build
//! time, next to the workflow file, checked and embedded in the generated code, which
//! validates the data against them at run time.
//!
//! Reading happens between parsing and validation, the one stage that touches the file system
//! besides reading the workflow itself.

mod check;
mod reference;
#[cfg(feature = "schemas")]
pub mod typed;

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{SchemaDocument, SchemaRef, Scope, Workflow};
use crate::parse::yaml;
use crate::source::SourceFile;

/// Reads every schema `workflow` declares (its own and its tasks', nested ones too) into the
/// IR, reporting each one that cannot be read or does not compile at its reference.
pub fn load(workflow: &mut Workflow, source: &SourceFile, diags: &mut Diagnostics) {
    let loader = Loader {
        directory: source.directory(),
        shown_directory: std::path::Path::new(&source.name)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
    };
    for schema in workflow.schemas.iter_mut() {
        loader.load(schema, diags);
    }
    load_scope(&loader, &mut workflow.scope, diags);
    #[cfg(feature = "schemas")]
    if let Some(Err(problem)) = typed::workflow_types(workflow, "Workflow") {
        let span = workflow
            .schemas
            .iter()
            .next()
            .map_or(workflow.span, |s| s.reference.span);
        diags
            .warning(
                Code::NO_TYPED_API,
                span,
                format!("no typed entry point (`run_typed`) for these schemas: typify cannot type them ({problem})"),
            )
            .help("the data is still validated against the schemas; `run` takes and gives JSON values");
    }
}

fn load_scope(loader: &Loader, scope: &mut Scope, diags: &mut Diagnostics) {
    for task in &mut scope.tasks {
        for schema in task.schemas.iter_mut() {
            loader.load(schema, diags);
        }
        for nested in task.nested_scopes_mut() {
            load_scope(loader, nested, diags);
        }
    }
}

/// Every schema `workflow` declares (its own, then its tasks' in document order).
pub fn references(workflow: &Workflow) -> Vec<&SchemaRef> {
    fn scope_references<'a>(scope: &'a Scope, out: &mut Vec<&'a SchemaRef>) {
        for task in &scope.tasks {
            out.extend(task.schemas.iter());
            for nested in task.nested_scopes() {
                scope_references(nested, out);
            }
        }
    }
    let mut out: Vec<&SchemaRef> = workflow.schemas.iter().collect();
    scope_references(&workflow.scope, &mut out);
    out
}

/// Every schema document of `workflow` that was read, in document order.
pub fn documents(workflow: &Workflow) -> Vec<&SchemaDocument> {
    references(workflow)
        .into_iter()
        .filter_map(|s| s.document.as_ref())
        .collect()
}

/// The schema files a build of `workflow` must watch: those read, and those it could not
/// read (creating or fixing one must rebuild).
pub fn watched(workflow: &Workflow) -> Vec<&std::path::Path> {
    references(workflow)
        .into_iter()
        .filter_map(|s| s.path.as_deref())
        .collect()
}

struct Loader {
    /// Where relative references are read from.
    directory: std::path::PathBuf,
    /// The same directory as diagnostics name it (the workflow file's name, without the file).
    shown_directory: std::path::PathBuf,
}

impl Loader {
    fn load(&self, schema: &mut SchemaRef, diags: &mut Diagnostics) {
        let reference = &schema.reference;
        let path = match reference::resolve(&reference.value) {
            Ok(path) => path,
            Err(problem) => {
                diags
                    .error(Code::SCHEMA_UNREADABLE, reference.span, problem.message)
                    .help(problem.help);
                return;
            }
        };
        let file = shown(&self.shown_directory.join(&path));
        let full = self.directory.join(&path);
        schema.path = Some(full.clone());
        let text = match crate::source::read_bounded(&full) {
            Ok(text) if text.len() > crate::source::MAX_INPUT_BYTES => {
                diags.error(
                    Code::LIMIT,
                    reference.span,
                    format!(
                        "the schema `{file}` is larger than {} MiB, the most a schema file may hold",
                        crate::source::MAX_INPUT_BYTES >> 20
                    ),
                );
                return;
            }
            Ok(text) => text,
            Err(error) => {
                diags
                    .error(
                        Code::SCHEMA_UNREADABLE,
                        reference.span,
                        format!("cannot read the schema `{file}`: {error}"),
                    )
                    .help("the path is relative to the directory of the workflow file");
                return;
            }
        };
        let mut schema_diags = Diagnostics::new(&file);
        let Some(root) = yaml::load(&text, &mut schema_diags) else {
            let first = schema_diags
                .items()
                .first()
                .map(|d| format!(": {file}:{}: {}", d.span, d.message))
                .unwrap_or_default();
            diags
                .error(
                    Code::BAD_SCHEMA,
                    reference.span,
                    format!("the schema `{file}` is not JSON (or YAML){first}"),
                )
                .help("fix the schema file");
            return;
        };
        let json = root.to_json();
        if !(json.is_object() || json.is_boolean()) {
            diags
                .error(
                    Code::BAD_SCHEMA,
                    reference.span,
                    format!(
                        "the schema `{file}` is {}, where a JSON Schema is an object (or `true`/`false`)",
                        root.kind_name()
                    ),
                )
                .help("fix the schema file");
            return;
        }
        if let Err(problem) = check::compiles(&json, &root) {
            let at = problem
                .span
                .map(|span| format!("{file}:{span}"))
                .unwrap_or_else(|| file.clone());
            diags
                .error(
                    problem.code,
                    reference.span,
                    format!(
                        "the schema `{file}` does not compile: {at} (`{}`): {}",
                        problem.pointer, problem.message
                    ),
                )
                .help(problem.help);
            return;
        }
        schema.document = Some(SchemaDocument { file, json });
    }
}

/// A path as diagnostics show it: `/` between components whatever the platform.
fn shown(path: &std::path::Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
        .replace("//", "/")
}

#[cfg(test)]
mod tests;
