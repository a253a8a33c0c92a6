//! `workflow!("path/to/file.sw.yaml", ...)`: compiles Serverless Workflow files into typed async
//! state machines where the macro is invoked. A thin shell over `swf-codegen`: it resolves the
//! paths, makes cargo rebuild when a file changes, and turns diagnostics into compile errors.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use std::path::{Path, PathBuf};
use swf_codegen::diagnostic::{Severity, render_human_each};
use swf_codegen::ir::Dialect;
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
/// compile error on its path, whose message starts with `file:line:col`; a warning is a
/// deprecation warning with the same message.
///
/// Each file's draft dialect is detected from its keys; `dialect = "v0.1"` (or `first`,
/// `second`, `tasks`) among the arguments names it for every file of the invocation.
///
/// `strict_paths = true` makes a definite path in an action parameter or a comparison that
/// selects nothing fail the task (a `DataError` naming the path and the members the data has
/// where it stops) instead of giving `null` or a false comparison.
#[proc_macro]
pub fn workflow(input: TokenStream) -> TokenStream {
    let parser = Punctuated::<Argument, Token![,]>::parse_terminated;
    let arguments = match parser.parse(input) {
        Ok(arguments) => arguments,
        Err(error) => return error.to_compile_error().into(),
    };
    let mut paths = Vec::new();
    let mut dialect = None;
    let mut strict_paths = false;
    for argument in arguments {
        match argument {
            Argument::Path(path) => paths.push(path),
            Argument::StrictPaths(on) => strict_paths = on.value,
            Argument::Dialect(name) => match Dialect::from_name(&name.value()) {
                Some(named) => dialect = Some(named),
                None => {
                    let message = format!(
                        "unknown dialect `{}`: use one of {}",
                        name.value(),
                        Dialect::ALL.map(Dialect::name).join(", ")
                    );
                    return syn::Error::new(name.span(), message)
                        .to_compile_error()
                        .into();
                }
            },
        }
    }
    if paths.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "workflow! needs the path of a workflow file, relative to Cargo.toml",
        )
        .to_compile_error()
        .into();
    }
    expand(&paths, dialect, strict_paths).into()
}

/// One argument of `workflow!`: a file path, `dialect = "name"` or `strict_paths = true`.
enum Argument {
    Path(LitStr),
    Dialect(LitStr),
    StrictPaths(syn::LitBool),
}

impl syn::parse::Parse for Argument {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return input.parse().map(Argument::Path);
        }
        let key: syn::Ident = input.parse()?;
        if key == "dialect" {
            input.parse::<Token![=]>()?;
            return input.parse().map(Argument::Dialect);
        }
        if key == "strict_paths" {
            input.parse::<Token![=]>()?;
            return input.parse().map(Argument::StrictPaths);
        }
        Err(syn::Error::new(
            key.span(),
            "expected a workflow file path, `dialect = \"...\"` or `strict_paths = true`",
        ))
    }
}

fn expand(literals: &[LitStr], dialect: Option<Dialect>, strict_paths: bool) -> TokenStream2 {
    let mut sources = Vec::new();
    let mut read = Vec::new();
    let mut tracking = Vec::new();
    // The error of each file that cannot be read, with placeholder types named after its file
    // (as for a file with errors), so that the code using them adds no errors of its own.
    let mut unreadable = TokenStream2::new();
    for literal in literals {
        let relative = literal.value();
        let stubs = || {
            let names = swf_codegen::emit::PublicNames::from_id(swf_codegen::file_stem(&relative));
            swf_codegen::emit::stubs(&names, &[])
        };
        let full = match resolve(&relative) {
            Ok(full) => full,
            Err(message) => {
                unreadable.extend(syn::Error::new(literal.span(), message).to_compile_error());
                unreadable.extend(stubs());
                continue;
            }
        };
        let text = match swf_codegen::source::read_bounded(&full) {
            Ok(text) => text,
            Err(error) => {
                // The crate's directory by name only: the message is the same on every machine
                // and whatever the target directory.
                let crate_dir = std::env::var("CARGO_MANIFEST_DIR")
                    .ok()
                    .and_then(|dir| {
                        Path::new(&dir)
                            .file_name()
                            .map(|name| name.to_string_lossy().into_owned())
                    })
                    .unwrap_or_default();
                let message = format!(
                    "{relative}: cannot read the workflow file ({error}); the path is relative to the directory of the crate's Cargo.toml (`{crate_dir}/`)"
                );
                unreadable.extend(syn::Error::new(literal.span(), message).to_compile_error());
                unreadable.extend(stubs());
                continue;
            }
        };
        // Makes cargo rebuild the crate when the workflow file changes.
        let full_text = full.display().to_string();
        tracking.push(quote!(
            const _: &[u8] = ::core::include_bytes!(#full_text);
        ));
        sources.push(
            SourceFile::new(relative.replace('\\', "/"), text)
                .with_dialect(dialect)
                .with_location(&full),
        );
        read.push(literal);
    }

    // The machine type's rustdoc shows the workflow's diagram (with feature `diagram-docs`).
    let options = swf_codegen::Options {
        diagram_docs: true,
        strict_paths,
    };
    let compilations = swf_codegen::compile_all_with(&sources, options);
    if !unreadable.is_empty() {
        // The files read are not reported on: what they call may be in the one that was not.
        let stubs = compilations
            .iter()
            .map(swf_codegen::Compilation::stub_tokens);
        return quote!(#(#tracking)* #unreadable #(#stubs)*);
    }
    let any_errors = compilations.iter().any(|c| c.has_errors());
    // Makes cargo rebuild the crate when a schema file the workflows read changes.
    for workflow in compilations.iter().filter_map(|c| c.workflow.as_ref()) {
        for document in swf_codegen::schema::watched(workflow) {
            if document.is_file() {
                let path = document.display().to_string();
                tracking.push(quote!(
                    const _: &[u8] = ::core::include_bytes!(#path);
                ));
            }
        }
    }
    let mut output = quote!(#(#tracking)*);
    for ((compilation, literal), source) in compilations.iter().zip(read).zip(&sources) {
        if any_errors {
            // The same rendering as swfc: the YAML line, carets under the token, the help.
            let errors: Vec<_> = compilation
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .cloned()
                .collect();
            let errors = render_human_each(source, &errors)
                .into_iter()
                .map(|rendered| {
                    syn::Error::new(literal.span(), for_rustc(&rendered)).to_compile_error()
                });
            let stubs = compilation.stub_tokens();
            output.extend(quote!(#(#errors)* #stubs));
        } else if let Some(tokens) = &compilation.tokens {
            output.extend(warnings(compilation, literal));
            output.extend(tokens.clone());
        }
    }
    output
}

/// A rendered diagnostic as the message of a compile error: rustc already writes `error: `
/// before it, so the first line keeps only the code (`[E0104] message`).
fn for_rustc(rendered: &str) -> String {
    let rendered = rendered.trim_end();
    let Some(rest) = rendered.strip_prefix("error[") else {
        return rendered.to_owned();
    };
    match rest.split_once("]: ") {
        Some((code, message)) => format!("[{code}] {message}"),
        None => rendered.to_owned(),
    }
}

/// Stable Rust has no way for a macro to emit a warning; using a deprecated item is the one that
/// reaches the user, with the diagnostic as the deprecation note.
fn warnings(compilation: &swf_codegen::Compilation, literal: &LitStr) -> TokenStream2 {
    let notes = compilation
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.one_line());
    let warnings = notes.map(|note| {
        let item = quote::quote_spanned!(literal.span()=> WORKFLOW_WARNING);
        quote! {
            const _: () = {
                #[deprecated(note = #note)]
                const WORKFLOW_WARNING: () = ();
                #item
            };
        }
    });
    quote!(#(#warnings)*)
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

    fn expand_one(literals: &[LitStr]) -> TokenStream2 {
        expand(literals, None, false)
    }

    #[test]
    fn a_named_dialect_reads_the_file_as_that_dialect() {
        let path = [literal("../examples/workflows/order.sw.yaml")];
        let detected = expand(&path, None, false).to_string();
        assert!(!detected.contains("compile_error"), "{detected}");
        let named = expand(&path, Some(Dialect::V01), false).to_string();
        assert!(named.contains("compile_error"), "{named}");
    }

    /// Editing the workflow file rebuilds the crate: the expansion includes its bytes.
    #[test]
    fn the_expansion_tracks_the_workflow_file() {
        let expanded = expand_one(&[literal("../examples/workflows/order.sw.yaml")]).to_string();
        assert!(expanded.contains("include_bytes"), "{expanded}");
        assert!(expanded.contains("order.sw.yaml"), "{expanded}");
        assert!(expanded.contains("OrderWorkflow"), "{expanded}");
    }

    /// Editing a data schema rebuilds the crate too: the expansion includes the bytes of every
    /// schema file the workflow reads.
    #[cfg(feature = "schemas")]
    #[test]
    fn the_expansion_tracks_the_schema_files() {
        let expanded =
            expand_one(&[literal("../tests/workflows/schemas/orders.sw.yaml")]).to_string();
        assert!(!expanded.contains("compile_error"), "{expanded}");
        for schema in [
            "order-input.json",
            "order-output.json",
            "priceable.yaml",
            "priced.json",
        ] {
            let tracked = format!("schemas/{schema}\"");
            assert!(
                expanded.split("include_bytes").skip(1).any(|rest| rest
                    .split(')')
                    .next()
                    .is_some_and(|arg| arg.contains(&tracked))),
                "{schema} is not tracked: {expanded}"
            );
        }
    }

    /// A diagnostic is a compile error whose message starts with `file:line:col`.
    #[test]
    fn diagnostics_become_compile_errors_at_their_position() {
        let expanded = expand_one(&[literal("../tests/ui/unknown_target.sw.yaml")]).to_string();
        assert!(expanded.contains("compile_error"), "{expanded}");
        // As swfc shows it: the position, the YAML line, carets under the token, the help.
        assert!(
            expanded.contains("[E0104] `nextTask` names `Secnod`"),
            "{expanded}"
        );
        assert!(
            expanded.contains("../tests/ui/unknown_target.sw.yaml:8:28"),
            "{expanded}"
        );
        assert!(
            expanded.contains("{nextTask: Secnod}\\n  │                            ^^^^^^\\n"),
            "{expanded}"
        );
        // The public names are still there, so code using them does not add errors.
        assert!(expanded.contains("BrokenWorkflow"), "{expanded}");
    }

    #[test]
    fn absolute_paths_are_refused() {
        let expanded = expand_one(&[literal("/etc/wf.yaml")]).to_string();
        assert!(
            expanded.contains("absolute paths are refused"),
            "{expanded}"
        );
    }
}
