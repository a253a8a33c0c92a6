//! Example workflows compiled by the `workflow!` macro. Run one with
//! `cargo run -p swf-examples --bin parcel`.
//!
//! As a library, this crate is also the strict crate of issue 11: it denies missing docs and
//! warns on clippy's pedantic lints (which the workspace's clippy run turns into errors), and
//! exports the generated code of every snapshot workflow (events, parallel and foreach tasks,
//! sub-flows, compensation, the earlier drafts), so generated public items that lack docs, or
//! code that pedantic clippy refuses, fail the build.
#![deny(missing_docs)]
#![warn(clippy::pedantic)]

/// Data schemas: validation, and the typed entry point with the types typify generates.
#[cfg(feature = "schemas")]
pub mod schemas {
    swf_runtime::workflow!("../tests/workflows/schemas/orders.sw.yaml");
}

/// The order workflow of the `order` example.
pub mod order {
    swf_runtime::workflow!("workflows/order.sw.yaml");
}

/// The parcel workflow of the `parcel` example.
pub mod parcel {
    swf_runtime::workflow!("workflows/parcel.sw.yaml");
}

/// A workflow that waits for events and produces one.
pub mod approval {
    swf_runtime::workflow!("../tests/snapshots/approval.sw.yaml");
}

/// Data filters of every kind.
pub mod filters {
    swf_runtime::workflow!("../tests/snapshots/filters.sw.yaml");
}

/// Parallel and foreach tasks and a sub-flow, compiled together with the called workflow.
pub mod nested {
    swf_runtime::workflow!(
        "../tests/snapshots/nested.sw.yaml",
        "../tests/snapshots/nested_child.sw.yaml"
    );
}

/// Compensation.
pub mod saga {
    swf_runtime::workflow!("../tests/snapshots/saga.sw.yaml");
}

/// Switches on data.
pub mod switches {
    swf_runtime::workflow!("../tests/snapshots/switches.sw.yaml");
}

/// The first draft (kebab-case).
pub mod kebab_first {
    swf_runtime::workflow!("../tests/snapshots/kebab_first.sw.yaml");
}

/// The v0.1 draft, with event conditions.
pub mod v01_events {
    swf_runtime::workflow!("../tests/snapshots/v01_events.sw.yaml");
}
