//! The pipeline every entry point shares (macro, build.rs, swfc):
//! parse → IR → validate → check what can be compiled → emit.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::emit::{self, Names, PublicNames};
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

/// Parses and validates, without generating code (`swfc check`).
pub fn check(source: &SourceFile) -> (Option<Workflow>, Diagnostics) {
    let mut diags = Diagnostics::new(&source.name);
    let workflow = crate::parse::parse(source, &mut diags);
    if let Some(workflow) = &workflow {
        crate::validate::validate(workflow, &mut diags);
        emit::check_supported(workflow, &mut diags);
    }
    (workflow, diags)
}

/// Runs the whole pipeline on one file.
pub fn compile(source: &SourceFile) -> Compilation {
    let (workflow, mut diags) = check(source);
    let names = match &workflow {
        Some(w) if !w.id.value.is_empty() => PublicNames::from_id(&w.id.value),
        _ => PublicNames::from_id(file_stem(&source.name)),
    };
    let tokens = match &workflow {
        Some(workflow) => {
            let item_names = Names::new(workflow, &mut diags);
            (!diags.has_errors()).then(|| emit::workflow(workflow, &item_names))
        }
        None => None,
    };
    Compilation {
        diagnostics: diags.into_sorted(),
        workflow,
        tokens,
        names,
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

/// Formats generated tokens as a Rust file with prettyplease.
pub fn format_file(tokens: TokenStream) -> Result<String, syn::Error> {
    let file: syn::File = syn::parse2(tokens)?;
    Ok(prettyplease::unparse(&file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_drop_workflow_suffixes() {
        assert_eq!(file_stem("workflows/order.sw.yaml"), "order");
        assert_eq!(file_stem("a\\b\\greet.json"), "greet");
        assert_eq!(file_stem("plain.yml"), "plain");
    }
}
