//! The functions trait: one async method per function definition, so that a workflow whose
//! functions are not all implemented does not compile.

use super::{Context, rt};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let trait_ident = cx.functions_ident();
    let methods =
        cx.workflow
            .functions
            .iter()
            .zip(&cx.names.functions)
            .map(|(function, method)| {
                let method = super::names::ident(method);
                let doc = match &function.resource {
                    Some(resource) => format!(
                        " Function `{}` (resource `{}`), defined at line {}.",
                        function.name.value, resource.value, function.span.line
                    ),
                    None => format!(
                        " Function `{}`, defined at line {}.",
                        function.name.value, function.span.line
                    ),
                };
                let signature = method_signature(&method);
                quote! {
                    #[doc = #doc]
                    #signature
                }
            });
    let custom = cx.uses_custom_conditions().then(|| {
        quote! {
            /// Decides the switch data conditions whose operator is `custom`.
            fn custom_condition(&self, condition: #rt::CustomCondition<'_>) -> bool;
        }
    });
    let doc = format!(
        " The functions the `{}` workflow calls. Implement every method to run it.",
        cx.workflow.name.value
    );
    quote! {
        #[doc = #doc]
        pub trait #trait_ident: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
            #custom
        }
    }
}

/// `fn name(&self, args: Value) -> impl Future<Output = Result<Value, FunctionError>> + Send;`,
/// also used by the stubs emitted for a workflow that did not compile.
pub(super) fn method_signature(method: &proc_macro2::Ident) -> TokenStream {
    let rt = rt();
    quote! {
        fn #method(
            &self,
            args: #rt::Value,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<#rt::Value, #rt::FunctionError>,
        > + ::core::marker::Send;
    }
}
