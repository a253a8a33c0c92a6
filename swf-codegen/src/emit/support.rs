//! What this version of the code generator can run. Constructs outside it parse and validate,
//! then are refused here with a diagnostic at their position, before any code is emitted.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Scope, TaskKind, Workflow};

pub fn check_supported(workflow: &Workflow, diags: &mut Diagnostics) {
    check_scope(&workflow.scope, diags);
}

fn check_scope(scope: &Scope, diags: &mut Diagnostics) {
    for task in &scope.tasks {
        if let TaskKind::SubFlow { .. } = task.kind {
            diags
                .error(
                    Code::NOT_YET_COMPILED,
                    task.name.span,
                    "a `subflow` task cannot be compiled yet",
                )
                .help("sub-flows need the workflows they call compiled together with them, which arrives with multi-file compilation");
        }
        for nested in task.nested_scopes() {
            check_scope(nested, diags);
        }
    }
}
