//! `workflow!("path/to/file.sw.yaml")`: compiles a Serverless Workflow file into a typed async
//! state machine where the macro is invoked. A thin shell over `swf-codegen`: it resolves the path,
//! makes cargo rebuild when the file changes, and turns diagnostics into compile errors.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use std::path::{Path, PathBuf};
use swf_codegen::source::SourceFile;
use syn::{LitStr, parse_macro_input};

/// Compiles the workflow file at the given path (relative to the crate's `Cargo.toml`).
///
/// Emits `<Id>Functions` (the trait of the workflow's functions), `<Id>State` (the serializable
/// state enum) and `<Id>Workflow<F>` (the machine, with `run`, `start` and `step`), where `<Id>`
/// is the workflow's `id` in UpperCamelCase. Every problem in the file is a compile error whose
/// message starts with `file:line:col`.
#[proc_macro]
pub fn workflow(input: TokenStream) -> TokenStream {
    let literal = parse_macro_input!(input as LitStr);
    expand(&literal).into()
}

fn expand(literal: &LitStr) -> TokenStream2 {
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
    let track = quote!(
        const _: &[u8] = ::core::include_bytes!(#full_text);
    );

    let compilation = swf_codegen::compile(&SourceFile::new(relative.replace('\\', "/"), text));
    if compilation.has_errors() {
        let errors = compilation
            .diagnostics
            .iter()
            .filter(|d| d.severity == swf_codegen::diagnostic::Severity::Error)
            .map(|d| syn::Error::new(literal.span(), d.one_line()).to_compile_error());
        let stubs = compilation.stub_tokens();
        return quote! {
            #(#errors)*
            #track
            #stubs
        };
    }
    let tokens = compilation.tokens.unwrap_or_default();
    quote! {
        #track
        #tokens
    }
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
