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
                let doc = super::names::doc_text(&doc);
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
    let doc = super::names::doc_text(&doc);
    // A workflow that calls sub-flows needs their functions too.
    let mut called: Vec<String> = Vec::new();
    for id in crate::validate::sub_flows(&cx.workflow.scope) {
        let name = cx.sub_flow_names(&id.value).functions;
        if !called.contains(&name) && name != cx.names.public.functions {
            called.push(name);
        }
    }
    let supertraits = called.iter().map(|name| {
        let name = super::names::ident(name);
        quote!(#name +)
    });
    let forwards = forwarding_impls(cx);
    quote! {
        #[doc = #doc]
        pub trait #trait_ident: #(#supertraits)* ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
            #custom
        }

        #forwards
    }
}

/// `fn name(&self, args: Value) -> impl Future<Output = Result<Value, FunctionError>> + Send;`,
/// also used by the stubs emitted for a workflow that did not compile.
pub(super) fn method_signature(method: &proc_macro2::Ident) -> TokenStream {
    let header = method_header(method);
    quote!(#header;)
}

/// The signature of a function's trait method, without its `;` or body.
fn method_header(method: &proc_macro2::Ident) -> TokenStream {
    let rt = rt();
    quote! {
        fn #method(
            &self,
            args: #rt::Value,
        ) -> impl ::core::future::Future<
            Output = ::core::result::Result<#rt::Value, #rt::FunctionError>,
        > + ::core::marker::Send
    }
}

/// `&T` implements the trait when `T` does, so that a workflow calling this one as a sub-flow
/// can lend it its own functions.
fn forwarding_impls(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let trait_ident = cx.functions_ident();
    let methods = cx.names.functions.iter().map(|method| {
        let method = super::names::ident(method);
        let header = method_header(&method);
        quote! {
            #header {
                <T as #trait_ident>::#method(*self, args)
            }
        }
    });
    let custom = cx.uses_custom_conditions().then(|| {
        quote! {
            fn custom_condition(&self, condition: #rt::CustomCondition<'_>) -> bool {
                <T as #trait_ident>::custom_condition(*self, condition)
            }
        }
    });
    quote! {
        impl<T: #trait_ident + ?Sized> #trait_ident for &T {
            #(#methods)*
            #custom
        }
    }
}
