//! The typed entry point of a workflow that declares data schemas: its input and output as Rust
//! types generated from the schemas (see `crate::schema::typed`), and `run_typed`, which takes
//! and gives them. The `Value` API stays as it is.

use super::{Context, rt};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit(cx: &Context<'_>) -> TokenStream {
    let machine = cx.workflow_ident();
    let Some(Ok((names, types))) =
        crate::schema::typed::workflow_types(cx.workflow, &machine.to_string())
    else {
        // No schema, or one typify cannot type (a warning says so): no typed API.
        return TokenStream::new();
    };
    let rt = rt();
    let module = &names.module;
    let bounds = super::machine::bounds(cx);
    let workflow_name = &cx.workflow.name.value;
    let module_doc = format!(
        " The data of the `{workflow_name}` workflow as Rust types, generated from its data schemas (typify): what [`{machine}::run_typed`] takes and gives."
    );
    let module_doc = super::names::doc_text(&module_doc);
    let (input_type, into_value) = match &names.input {
        Some(input) => (
            quote!(#module::#input),
            quote!(let input = #rt::typed_input(&input, Self::ID)?;),
        ),
        None => (quote!(#rt::Value), TokenStream::new()),
    };
    let (output_type, from_value) = match &names.output {
        Some(output) => (
            quote!(#module::#output),
            quote!(#rt::typed_output(output, Self::ID)),
        ),
        None => (
            quote!(#rt::Value),
            quote!(::core::result::Result::Ok(output)),
        ),
    };
    quote! {
        #[doc = #module_doc]
        #[allow(missing_docs, dead_code, non_camel_case_types, clippy::all, clippy::pedantic)]
        pub mod #module {
            #types
        }

        impl<F: #bounds> #machine<F> {
            /// [`Self::run`] with the input and output as the Rust types of the workflow's data
            /// schemas.
            ///
            /// # Errors
            /// As [`Self::run`]; also a `DataSchemaError` when the output does not fit its type.
            pub async fn run_typed(
                &self,
                input: #input_type,
            ) -> ::core::result::Result<#output_type, #rt::WorkflowError> {
                #into_value
                let output = self.run(input).await?;
                #from_value
            }
        }
    }
}
