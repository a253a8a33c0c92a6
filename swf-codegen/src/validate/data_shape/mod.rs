//! Data paths checked against the data schemas at build time (issue 12). From the workflow's
//! `dataInputSchema` (and each task's own schemas), the shape of the data is followed through
//! the tasks: input and output filters, results paths, injected data, foreach elements; then
//! every definite path that reads the data is looked up in the shape where it reads it.
//!
//! The rules, in one place:
//! - Where no schema says, nothing is assumed: data of unknown shape raises nothing. A task
//!   whose result or event data is merged into its data (no `dataResultsPath`), a parallel,
//!   sub-flow or callback task, and every onError handler make the data unknown from there on.
//! - A path that can never select anything is an **error** (`E0153`): a member that a closed
//!   object (`additionalProperties: false`) does not declare, a member of a value the schema
//!   says is never an object, an index into a value that is never an array.
//! - A member that an open object does not declare is a **warning** (`W0002`): the data may
//!   hold it, but the schema does not say so (with a "did you mean" from the declared names).
//! - A numeric comparison on a value the schema says is only a string, or a string comparison
//!   (`Str*` operators) on one that is only a number, is an **error** (`E0154`).
//! - A parameter string that is not a path but names a member path of the data (`order.total`)
//!   is a **warning** (`W0003`): it is passed as that literal text.
//! - An `inputCollection` the schema says is never an array is an **error** (`E0155`).

mod checks;
mod flow;
mod shape;

use crate::diagnostic::Diagnostics;
use crate::ir::Workflow;
use shape::Shape;

pub(super) fn check(workflow: &Workflow, diags: &mut Diagnostics) {
    let input = workflow
        .schemas
        .input
        .as_ref()
        .and_then(|s| s.document.as_ref())
        .map(|document| Shape::from_schema(&document.json))
        .unwrap_or_default();
    let declares_any = !crate::schema::documents(workflow).is_empty();
    if declares_any {
        flow::check_scope(&workflow.scope, input, diags);
    }
}

#[cfg(test)]
mod tests;
