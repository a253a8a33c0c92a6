//! `workflow!("path/to/file.sw.yaml", ...)`: compiles Serverless Workflow files into typed async
//! state machines where the macro is invoked. A thin shell over `swf-codegen`: it resolves the
//! paths, makes cargo rebuild when a file changes, and turns diagnostics into compile errors.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use std::path::{Path, PathBuf};
use swf_codegen::diagnostic::Severity;
use swf_codegen::source::SourceFile;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

/// Compiles the workflow files at the given paths (relative to the crate's `Cargo.toml`).
///
/// For each workflow, emits `<Id>Functions` (the trait of its functions), `<Id>State` (the
/// serializable state enum), `<Id>Workflow<F>` (the machine) and, when it defines events,
/// `<Id>Event`; `<Id>` is the workflow's `id` in UpperCamelCase. Files given together are
/// compiled together: a subflow task may call any of them by id. Every problem in a file is a
/// compile error on its path, whose message starts with `file:line:col`.
#[proc_macro]
pub fn workflow(input: TokenStream) -> TokenStream {
    let parser = Punctuated::<LitStr, Token![,]>::parse_terminated;
    match parser.parse(input) {
        Ok(paths) if paths.is_empty() => syn::Error::new(
            proc_macro2::Span::call_site(),
            "workflow! needs the path of a workflow file, relative to Cargo.toml",
        )
        .to_compile_error()
        .into(),
        Ok(paths) => expand(&paths.into_iter().collect::<Vec<_>>()).into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(literals: &[LitStr]) -> TokenStream2 {
    let mut sources = Vec::new();
    let mut tracking = Vec::new();
    for literal in literals {
        let relative = literal.value();
        let full = match resolve(&relative) {
            Ok(full) => full,
            Err(message) => return syn::Error::new(literal.span(), message).to_compile_error(),
        };
        let text = match std::fs::read_to_string(&full) {
            Ok(text) => text,
            Err(error) => {
                let message = format!(
                    "{relative}: cannot read the workflow file ({error}); the path is relative to the crate's Cargo.toml ({})",
                    full.display()
                );
                return syn::Error::new(literal.span(), message).to_compile_error();
            }
        };
        // Makes cargo rebuild the crate when the workflow file changes.
        let full_text = full.display().to_string();
        tracking.push(quote!(
            const _: &[u8] = ::core::include_bytes!(#full_text);
        ));
        sources.push(SourceFile::new(relative.replace('\\', "/"), text));
    }

    let compilations = swf_codegen::compile_all(&sources);
    let any_errors = compilations.iter().any(|c| c.has_errors());
    let mut output = quote!(#(#tracking)*);
    for (compilation, literal) in compilations.iter().zip(literals) {
        if any_errors {
            let errors = compilation
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| syn::Error::new(literal.span(), d.one_line()).to_compile_error());
            let stubs = compilation.stub_tokens();
            output.extend(quote!(#(#errors)* #stubs));
        } else if let Some(tokens) = &compilation.tokens {
            output.extend(tokens.clone());
        }
    }
    output
}

/// The file's path: relative to `CARGO_MANIFEST_DIR`; absolute paths are refused so that a
/// crate builds the same on every machine.
fn resolve(relative: &str) -> Result<PathBuf, String> {
    if Path::new(relative).is_absolute() || relative.starts_with('/') || relative.starts_with('\\')
    {
        return Err(format!(
            "{relative}: absolute paths are refused; give the path relative to the crate's Cargo.toml"
        ));
    }
    let root = std::env::var_os("CARGO_MANIFEST_DIR").ok_or_else(|| {
        "CARGO_MANIFEST_DIR is not set: workflow! must be expanded by cargo".to_string()
    })?;
    Ok(PathBuf::from(root).join(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(path: &str) -> LitStr {
        LitStr::new(path, proc_macro2::Span::call_site())
    }

    /// Editing the workflow file rebuilds the crate: the expansion includes its bytes.
    #[test]
    fn the_expansion_tracks_the_workflow_file() {
        let expanded = expand(&[literal("../examples/workflows/order.sw.yaml")]).to_string();
        assert!(expanded.contains("include_bytes"), "{expanded}");
        assert!(expanded.contains("order.sw.yaml"), "{expanded}");
        assert!(expanded.contains("OrderWorkflow"), "{expanded}");
    }

    /// A diagnostic is a compile error whose message starts with `file:line:col`.
    #[test]
    fn diagnostics_become_compile_errors_at_their_position() {
        let expanded = expand(&[literal("../tests/ui/unknown_target.sw.yaml")]).to_string();
        assert!(expanded.contains("compile_error"), "{expanded}");
        assert!(
            expanded.contains("../tests/ui/unknown_target.sw.yaml:8:28: error[E0104]"),
            "{expanded}"
        );
        // The public names are still there, so code using them does not add errors.
        assert!(expanded.contains("BrokenWorkflow"), "{expanded}");
    }

    #[test]
    fn absolute_paths_are_refused() {
        let expanded = expand(&[literal("/etc/wf.yaml")]).to_string();
        assert!(
            expanded.contains("absolute paths are refused"),
            "{expanded}"
        );
    }
}
