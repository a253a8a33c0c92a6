//! Data schemas in generated code: each loaded schema becomes a `static` (compiled once per
//! process by the runtime, on first use) checked where the data crosses the boundary it
//! describes. See `swf_runtime::__private::DataSchema` for what a violation raises.

use super::{Context, rt};
use crate::ir::{SchemaRef, Task, Workflow};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// An expression of type `&'static DataSchema` for `schema`; `None` when it was not loaded
/// (a diagnostic stopped the build then).
fn schema_ref(schema: Option<&SchemaRef>) -> Option<TokenStream> {
    let document = schema?.document.as_ref()?;
    let rt = rt();
    let file = Literal::string(&document.file);
    let text = Literal::string(&document.json.to_string());
    Some(quote! {
        {
            static SCHEMA: #rt::DataSchema = #rt::DataSchema::new(#file, #text);
            &SCHEMA
        }
    })
}

/// Whether `workflow` or any of its tasks declares a schema.
pub(super) fn declares_any(workflow: &Workflow) -> bool {
    !crate::schema::documents(workflow).is_empty()
}

/// Fails the build, with a message that says what to do, when the runtime was built without
/// the `schemas` feature (build.rs generation with a compiler that had it).
pub(super) fn feature_check(workflow: &Workflow) -> TokenStream {
    if !declares_any(workflow) {
        return TokenStream::new();
    }
    let rt = rt();
    let message = format!(
        "the workflow `{}` declares data schemas: turn on the `schemas` feature of swf-runtime",
        workflow.id.value.escape_default()
    );
    quote! {
        const _: () = if !#rt::SCHEMAS {
            ::core::panic!(#message)
        };
    }
}

/// `begin`'s check of the workflow input (`input`), once it is known to be an object.
pub(super) fn workflow_input_check(cx: &Context<'_>, start_task: &str) -> TokenStream {
    let Some(schema) = schema_ref(cx.workflow.schemas.input.as_ref()) else {
        return TokenStream::new();
    };
    let rt = rt();
    quote!(let input = #rt::checked_input(#schema, Self::ID, #start_task, input)?;)
}

/// In the root `advance`, what it returns when the workflow declares an output schema: its
/// `step` with the output checked if the instance ended; `task` is the task the state was at
/// before the step.
pub(super) fn workflow_output_check(cx: &Context<'_>) -> Option<TokenStream> {
    if !cx.root {
        return None;
    }
    let schema = schema_ref(cx.workflow.schemas.output.as_ref())?;
    let rt = rt();
    let state = cx.state_ident();
    Some(quote!(#rt::checked_output(step, #schema, Self::ID, task, #state::output)))
}

/// The first statement of a task's attempt: its data checked against its input schema.
pub(super) fn task_input_check(task: &Task) -> TokenStream {
    let Some(schema) = schema_ref(task.schemas.input.as_ref()) else {
        return TokenStream::new();
    };
    let rt = rt();
    let name = &task.name.value;
    quote!(#schema.check(&data, #rt::SchemaSite::TaskInput(#name))?;)
}

/// After a task's attempt: its data checked against its output schema when it is done.
pub(super) fn task_output_check(task: &Task) -> TokenStream {
    let Some(schema) = schema_ref(task.schemas.output.as_ref()) else {
        return TokenStream::new();
    };
    let rt = rt();
    let name = &task.name.value;
    quote!(let attempt = #rt::checked_exit(attempt, #schema, &data, #name);)
}
