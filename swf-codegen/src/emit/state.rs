//! The state enum: one variant per task holding what that task needs to run (its input data and,
//! when it retries, its retry progress), plus the terminal variants. It is serializable so that
//! an instance can be saved after any step and resumed.

use super::{Context, compensation, rt};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit(cx: &Context<'_>) -> TokenStream {
    let rt = rt();
    let state = cx.state_ident();
    let variants = cx.workflow.scope.tasks.iter().enumerate().map(|(i, task)| {
        let variant = cx.variant(i);
        let doc = format!(
            " Task `{}` ({}, line {}), about to run with `data` as its input.",
            task.name.value,
            task.type_name(),
            task.span.line
        );
        let retry = (!task.retry.is_empty()).then(|| quote!(retry: #rt::RetryProgress,));
        let log = compensation::field(cx);
        quote! {
            #[doc = #doc]
            #variant { data: #rt::Value, #retry #log }
        }
    });
    let names = cx.workflow.scope.tasks.iter().enumerate().map(|(i, task)| {
        let variant = cx.variant(i);
        let name = &task.name.value;
        quote!(#state::#variant { .. } => ::core::option::Option::Some(#name))
    });
    let serde_crate = "::swf_runtime::__private::serde";
    let doc = format!(
        " Where an instance of the `{}` workflow is: the next task to run, or how it ended.",
        cx.workflow.name.value
    );
    quote! {
        #[doc = #doc]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::cmp::PartialEq,
            #rt::serde::Serialize,
            #rt::serde::Deserialize,
        )]
        #[serde(crate = #serde_crate)]
        // A workflow that never terminates leaves `Terminated` unbuilt, and a binary may never
        // build some states itself.
        #[allow(dead_code)]
        pub enum #state {
            #(#variants,)*
            /// The workflow ended; `output` is its data output.
            Completed { output: #rt::Value },
            /// An `end: {kind: terminate}` ended the whole instance.
            Terminated { output: #rt::Value },
        }

        // The generated API is a library surface: a binary that uses part of it must not warn.
        #[allow(dead_code)]
        impl #state {
            /// The name of the task this state is about to run, `None` once the workflow ended.
            pub fn task_name(&self) -> ::core::option::Option<&'static str> {
                match self {
                    #(#names,)*
                    #state::Completed { .. } | #state::Terminated { .. } => ::core::option::Option::None,
                }
            }

            /// The workflow output, once the instance has ended.
            pub fn output(&self) -> ::core::option::Option<&#rt::Value> {
                match self {
                    #state::Completed { output } | #state::Terminated { output } => {
                        ::core::option::Option::Some(output)
                    }
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}
