//! What the macro emits when a workflow has errors: the public names, with the functions that
//! could be read and both forms of the machine's API (with and without an `Io`), so that the
//! user sees the workflow's diagnostics and not a cascade of "cannot find" errors from the code
//! that uses it. These bodies never run: the crate does not compile.

use super::functions::method_signature;
use super::names::{PublicNames, ident, method_name};
use super::rt;
use proc_macro2::TokenStream;
use quote::quote;

pub fn stubs(names: &PublicNames, function_names: &[String]) -> TokenStream {
    let rt = rt();
    let machine = ident(&names.workflow);
    let functions = ident(&names.functions);
    let state = ident(&names.state);
    let methods = function_names
        .iter()
        .map(|name| method_signature(&ident(&method_name(name))));
    quote! {
        pub trait #functions: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
        }

        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq)]
        pub enum #state {
            Completed { output: #rt::Value },
            Terminated { output: #rt::Value },
        }

        pub struct #machine<F> {
            functions: F,
        }

        impl<F: #functions> #machine<F> {
            pub fn new(functions: F) -> Self {
                #machine { functions }
            }

            pub fn functions(&self) -> &F {
                &self.functions
            }

            pub async fn run(&self, input: #rt::Value) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
                let _ = input;
                ::core::panic!("the workflow did not compile")
            }

            pub fn start(&self, input: #rt::Value) -> ::core::result::Result<#state, #rt::WorkflowError> {
                let _ = input;
                ::core::panic!("the workflow did not compile")
            }

            pub async fn step(&self, state: #state) -> ::core::result::Result<#state, #rt::WorkflowError> {
                let _ = state;
                ::core::panic!("the workflow did not compile")
            }

            pub async fn run_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#rt::Value, #rt::WorkflowError> {
                let _ = (input, io);
                ::core::panic!("the workflow did not compile")
            }

            pub fn start_with(&self, input: #rt::Value, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
                let _ = (input, io);
                ::core::panic!("the workflow did not compile")
            }

            pub async fn step_with(&self, state: #state, io: &#rt::Io) -> ::core::result::Result<#state, #rt::WorkflowError> {
                let _ = (state, io);
                ::core::panic!("the workflow did not compile")
            }
        }
    }
}
