//! The pipeline every entry point shares (macro, build.rs, swfc):
//! parse → IR → schema files read → validate (each file, then the files compiled together) → emit.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::emit::{self, PublicNames};
use crate::ir::Workflow;
use crate::source::SourceFile;
use proc_macro2::TokenStream;

/// The outcome of compiling one workflow file.
#[derive(Debug)]
pub struct Compilation {
    /// Every diagnostic, errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The IR, when the file could be read as a workflow at all.
    pub workflow: Option<Workflow>,
    /// The generated code, when there are no errors.
    pub tokens: Option<TokenStream>,
    /// The public item names, also known when compilation failed (the macro emits them as stubs).
    pub names: PublicNames,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == crate::diagnostic::Severity::Error)
    }

    /// Stand-ins for the public items, for a failed compilation.
    pub fn stub_tokens(&self) -> TokenStream {
        let functions: Vec<String> = self
            .workflow
            .as_ref()
            .map(|w| w.functions.iter().map(|f| f.name.value.clone()).collect())
            .unwrap_or_default();
        emit::stubs(&self.names, &functions)
    }
}

/// Parses and validates one file on its own, without generating code (`swfc check`).
pub fn check(source: &SourceFile) -> (Option<Workflow>, Diagnostics) {
    check_all(std::slice::from_ref(source))
        .pop()
        .unwrap_or_else(|| (None, Diagnostics::new(&source.name)))
}

/// Parses and validates files compiled together: each on its own, then across them (ids,
/// sub-flows).
pub fn check_all(sources: &[SourceFile]) -> Vec<(Option<Workflow>, Diagnostics)> {
    let mut workflows = Vec::with_capacity(sources.len());
    let mut diags = Vec::with_capacity(sources.len());
    for source in sources {
        let mut file_diags = Diagnostics::new(&source.name);
        let mut workflow = crate::parse::parse(source, &mut file_diags);
        if let Some(workflow) = &mut workflow {
            crate::schema::load(workflow, source, &mut file_diags);
            crate::validate::validate(workflow, &mut file_diags);
        }
        workflows.push(workflow);
        diags.push(file_diags);
    }
    let refs: Vec<Option<&Workflow>> = workflows.iter().map(Option::as_ref).collect();
    crate::validate::validate_set(&refs, &mut diags);
    workflows.into_iter().zip(diags).collect()
}

/// Runs the whole pipeline on one file.
pub fn compile(source: &SourceFile) -> Compilation {
    compile_all(std::slice::from_ref(source))
        .pop()
        .unwrap_or_else(|| Compilation {
            diagnostics: Vec::new(),
            workflow: None,
            tokens: None,
            names: PublicNames::from_id(file_stem(&source.name)),
        })
}

/// What the generated code carries besides the workflow's meaning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Put the workflow's diagram (an inline SVG that renders on docs.rs without scripts) in
    /// the machine type's documentation. Needs the `svg` feature (else it is ignored), and is
    /// skipped for workflows of more than [`DIAGRAM_DOC_MAX_TASKS`] tasks, whose picture would
    /// not be read. The macro turns it on; `swfc gen` and the snapshot tests leave it off.
    pub diagram_docs: bool,
    /// Strict paths: a definite path in an action parameter or a comparison (switch data
    /// conditions, transition conditions) that selects nothing fails the task with a
    /// `DataError` naming the path and the members the data has where it stops, instead of
    /// giving `null` (a parameter) or a false comparison, as the drafts say. See
    /// [`Workflow::make_paths_strict`](crate::ir::Workflow::make_paths_strict).
    pub strict_paths: bool,
}

/// The most tasks (all scopes together) a workflow may have for its diagram to go into its
/// documentation.
pub const DIAGRAM_DOC_MAX_TASKS: usize = 60;

/// Runs the whole pipeline on files compiled together: sub-flows may call any of them.
pub fn compile_all(sources: &[SourceFile]) -> Vec<Compilation> {
    compile_all_with(sources, Options::default())
}

/// [`compile_all`] with `options`.
pub fn compile_all_with(sources: &[SourceFile], options: Options) -> Vec<Compilation> {
    let checked = check_all(sources);
    let owning = owning_workflows(checked.iter().filter_map(|(w, _)| w.as_ref()));
    let named: Vec<(Option<&Workflow>, &str)> = checked
        .iter()
        .zip(sources)
        .map(|((workflow, _), source)| (workflow.as_ref(), file_stem(&source.name)))
        .collect();
    let (public, names) = emit::names::assign(&named);
    checked
        .into_iter()
        .zip(public)
        .zip(names)
        .map(|(((mut workflow, diags), public), item_names)| {
            if options.strict_paths {
                workflow.iter_mut().for_each(Workflow::make_paths_strict);
            }
            let tokens = match (&workflow, item_names) {
                (Some(workflow), Some(mut item_names)) if !diags.has_errors() => {
                    item_names.owning = owning.clone();
                    if options.diagram_docs {
                        item_names.diagram_doc = diagram_doc(workflow);
                    }
                    Some(emit::workflow(workflow, &item_names))
                }
                _ => None,
            };
            Compilation {
                diagnostics: diags.into_sorted(),
                workflow,
                tokens,
                names: public,
            }
        })
        .collect()
}

/// The diagram for the machine type's documentation, if the workflow is small enough.
#[cfg(feature = "svg")]
fn diagram_doc(workflow: &Workflow) -> Option<String> {
    (count_tasks(&workflow.scope) <= DIAGRAM_DOC_MAX_TASKS)
        .then(|| crate::diagram::svg_for_rustdoc(workflow).ok())
        .flatten()
}

#[cfg(not(feature = "svg"))]
fn diagram_doc(_workflow: &Workflow) -> Option<String> {
    None
}

/// The tasks of `scope` and of every scope nested in it.
#[cfg(feature = "svg")]
fn count_tasks(scope: &crate::ir::Scope) -> usize {
    scope
        .tasks
        .iter()
        .map(|task| {
            1 + task
                .nested_scopes()
                .iter()
                .map(|s| count_tasks(s))
                .sum::<usize>()
        })
        .sum()
}

/// The ids of the workflows that start a sub-flow or a branch detached, directly or through
/// sub-flows they wait for: what is spawned must own its functions, so theirs must be
/// `Clone + 'static`.
fn owning_workflows<'a>(workflows: impl Iterator<Item = &'a Workflow> + Clone) -> Vec<String> {
    use crate::ir::TaskKind;
    let detaches = |w: &Workflow| {
        emit::any_task(&w.scope, &|t| match &t.kind {
            TaskKind::SubFlow {
                wait_for_completion,
                ..
            } => !wait_for_completion,
            TaskKind::Parallel { branches, .. } => branches.iter().any(|b| !b.wait_for_completion),
            _ => false,
        })
    };
    let mut owning: Vec<String> = workflows
        .clone()
        .filter(|w| detaches(w))
        .map(|w| w.id.value.clone())
        .collect();
    // Callers of owning workflows own too; sub-flow cycles are refused, so this settles.
    loop {
        let before = owning.len();
        for workflow in workflows.clone() {
            let calls_owning = crate::validate::sub_flows(&workflow.scope)
                .iter()
                .any(|called| owning.contains(&called.value));
            if calls_owning && !owning.contains(&workflow.id.value) {
                owning.push(workflow.id.value.clone());
            }
        }
        if owning.len() == before {
            return owning;
        }
    }
}

/// `workflows/order.sw.yaml` → `order`: the name a file's generated code is known by.
pub fn file_stem(path: &str) -> &str {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let mut stem = file;
    for suffix in [".yaml", ".yml", ".json"] {
        if let Some(s) = stem.strip_suffix(suffix) {
            stem = s;
            break;
        }
    }
    stem.strip_suffix(".sw").unwrap_or(stem)
}

/// Formats generated tokens as a Rust file with prettyplease, under an `@generated` header that
/// names the workflow file it came from.
pub fn format_file(source_name: &str, tokens: TokenStream) -> Result<String, syn::Error> {
    let file: syn::File = syn::parse2(tokens)?;
    Ok(format!(
        "// @generated by swf-codegen from {}. Do not edit: edit the workflow file.\n\n{}",
        emit::names::comment_text(source_name),
        prettyplease::unparse(&file)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path with a newline once injected code into the `@generated` header.
    #[test]
    fn the_header_keeps_a_hostile_path_in_its_comment() {
        let tokens: TokenStream = "pub struct A;".parse().expect("tokens");
        let file = format_file("evil\npub fn injected() {}\r.yaml", tokens).expect("formats");
        let header = file.lines().next().expect("a first line");
        assert!(
            header.contains("evil\\npub fn injected() {}\\r.yaml"),
            "{header}"
        );
        let parsed: syn::File = syn::parse_str(&file).expect("parses");
        assert_eq!(parsed.items.len(), 1, "{file}");
    }

    /// Ids that start with a digit panicked the generator (`3dPrinterFunctions`); names in
    /// doc comments with a CR produced doc comments rustc refuses.
    #[test]
    fn hostile_names_generate_valid_code() {
        let text = include_str!("../../tests/workflows/hostile/3d-printer.sw.yaml");
        let compilation = compile(&SourceFile::new("3d-printer.sw.yaml", text.to_owned()));
        assert!(!compilation.has_errors(), "{:?}", compilation.diagnostics);
        let tokens = compilation.tokens.expect("code");
        let file = format_file("3d-printer.sw.yaml", tokens).expect("formats");
        assert!(!file.contains('\r'), "a bare CR in the generated code");
        assert!(file.contains("pub struct Workflow3dPrinterWorkflow"));
        syn::parse_str::<syn::File>(&file).expect("parses");
    }

    #[test]
    fn file_stems_drop_workflow_suffixes() {
        assert_eq!(file_stem("workflows/order.sw.yaml"), "order");
        assert_eq!(file_stem("a\\b\\greet.json"), "greet");
        assert_eq!(file_stem("plain.yml"), "plain");
    }
}
