//! Small emitters shared by the code generator: pure functions from IR pieces to tokens.
//!
//! Generated code reaches the runtime only through `::swf_runtime::__private`, and text from the
//! workflow file only ever appears in it as escaped string literals, never as identifiers or
//! code. The same input always gives the same tokens.

pub mod boolean;
pub mod expr;
pub mod path;
pub mod value;

#[cfg(test)]
pub(crate) mod pretty {
    //! Test helper: emitted expressions pretty-printed the way users will read them.

    use proc_macro2::TokenStream;
    use quote::quote;

    /// Formats an emitted expression as the body of `fn emitted()`.
    pub(crate) fn expression(tokens: TokenStream) -> String {
        let expr: syn::Expr = syn::parse2(tokens).expect("the emitted tokens are an expression");
        let file: syn::File =
            syn::parse2(quote! { fn emitted() { #expr } }).expect("wrapped in a function");
        prettyplease::unparse(&file)
    }
}
