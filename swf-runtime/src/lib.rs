//! Runtime support for Serverless Workflow state machines compiled by `swf`.
//!
//! `swf` turns a Serverless Workflow definition (YAML or JSON, any of the drafts it accepts) into
//! typed async Rust at build time: a state enum, a trait with one method per function, and a
//! machine that steps through the states. This crate is what that generated code runs on: JSONPath
//! filters compiled once, the merge rules for task data, retry schedules, action timeouts, the
//! building blocks of compiled expressions and switch conditions, and the error types.
//!
//! Applications use only a few names from here:
//!
//! - [`FunctionError`], what their function implementations return on failure;
//! - [`WorkflowError`], what `run` returns when an instance halts on an unhandled error, holding
//!   the [`ErrorObject`] that workflows see as `{"error": {"name", "message", "trace"}}`;
//! - [`CustomCondition`], the argument of their predicates for `custom` switch conditions;
//! - [`CompensationLog`], the completed tasks awaiting compensation that a saved state carries,
//!   and [`WorkflowError::compensating`], the error that led to a compensation that failed;
//! - [`include_workflow!`], to include code that a `build.rs` generated;
//! - [`Value`] and [`json!`], the data every workflow works on;
//! - for workflows that consume or produce events: [`Host`] (with [`HostConfig`],
//!   [`HostChannels`], [`Unmatched`], [`Outcome`], [`InstanceId`]), which runs many instances
//!   and routes incoming events to them by correlation; [`Io`], the outside world of one
//!   instance run by hand; [`CloudEvent`] and its builders; [`Clock`] and [`ManualClock`] for
//!   scheduled starts.
//!
//! Generated code reaches everything else through the hidden `__private` module, so that the
//! rest of the API can change with the code generator without breaking applications.
//!
//! The runtime holds no global mutable state and knows nothing about any particular workflow: the
//! only process-wide data are the compiled forms of the paths and regular expressions that
//! generated code declares as `static`s, each compiled on first use. Nothing here panics on any
//! input: every failure is an [`ErrorObject`] that the workflow can handle with `retry` and
//! `onError`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod action;
mod arguments;
mod boxed;
mod calls;
mod clock;
mod collection;
mod compensation;
mod concurrent;
mod data;
mod drive;
mod durable;
mod error;
mod event_build;
mod events;
mod expr;
mod host;
mod inline;
mod input;
mod iso;
mod members;
mod path;
mod progress;
mod retry;
mod saved_state;
mod schedule;
mod schema;
mod scope_path;
mod scoped;
pub mod store;
mod switch;
mod trace;
mod transition;

pub use serde_json::{self, Value, json};
pub use swf_macros::workflow;

pub use cloudevents::{AttributesReader, Event as CloudEvent, EventBuilder, EventBuilderV10};
pub use jiff::Timestamp;

pub use action::{CallContext, FUNCTION_PANIC};
pub use clock::{Clock, ManualClock, SystemClock};
pub use compensation::{COMPENSATION_ERROR, Compensating, CompensationLog};
pub use concurrent::{Iteration, Iterations, ScopeEnd, ScopeState, Slot};
pub use durable::{
    DURABLE_ERROR, Discard, DurableConfig, DurableHost, Ended, EventSink, MAX_STORED_KEY_BYTES,
    ProbePoint, Report, StartError,
};
pub use error::{ErrorObject, ExecStatus, FunctionError, WorkflowError};
pub use events::{
    DEFAULT_INBOX_CAPACITY, EVENT_ERROR, EventEntry, EventSpec, Io, IoBuilder, Listening, Refusal,
    Undeliverable, context_attribute, event_data,
};
pub use host::{
    HOST_ERROR, Host, HostChannels, HostConfig, InstanceId, Machine, Outcome, StartOnEvents,
    Unmatched,
};
pub use progress::{ActionResume, CallbackPhase, Progress, Wait};
pub use retry::{RetryPolicy, RetryProgress};
pub use schedule::{SCHEDULE_ERROR, ScheduleWindow, check_schedule};
pub use schema::{SCHEMA_ERROR, SchemaSite};
pub use switch::CustomCondition;
pub use trace::WorkflowInfo;

/// Includes the Rust code that `swf_codegen::Builder` generated into `OUT_DIR` for a workflow.
///
/// ```ignore
/// // build.rs: swf_codegen::Builder::new().file("workflows/order.sw.yaml").compile()?;
/// swf_runtime::include_workflow!("order");
/// ```
#[macro_export]
macro_rules! include_workflow {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $name, ".rs"));
    };
}

/// What generated code uses. Not part of the public API: it changes with the code generator.
#[doc(hidden)]
pub mod __private {
    pub use serde;
    pub use serde_json;
    pub use std::time::Duration;
    pub use tokio;

    pub use jiff::Timestamp;
    pub use serde_json::Value;

    pub use crate::error::{ErrorObject, FunctionError, WorkflowError};
    pub use crate::retry::{RetryPolicy, RetryProgress};
    pub use crate::switch::CustomCondition;

    pub use crate::concurrent::{
        Control, Iterations, RoundEnd, ScopeEnd, ScopeState, Slot, nested_position, round,
        step_slot,
    };
    pub use crate::drive::{learn_events, run_to_end, step_until_ran};
    pub use crate::events::{
        CloudEvent, EventEntry, EventSpec, Io, PlainRunIo, event_data, plain_run_io,
    };
    pub use crate::host::{Machine, StartOnEvents};
    pub use crate::progress::{
        ActionResume, Attempt, CallbackPhase, Progress, Wait, deadline, deadline_of, passed,
        progress, ran, retried_deadline, retried_deadline_of, settle,
    };
    pub use crate::schedule::{SCHEDULE_ERROR, ScheduleWindow, check_schedule};
    pub use crate::trace::{WorkflowInfo, traced_run};

    pub use crate::action::{ActionCall, in_iteration, in_scope, step_origin};
    pub use crate::arguments::{Arguments, Template};
    pub use crate::calls::{
        Call, CallFunction, CallStep, call_failed, call_functions, run_call, run_calls,
    };
    pub use crate::collection::{SharedData, collection_refs};
    pub use crate::compensation::{COMPENSATION_ERROR, Compensating, CompensationLog};
    pub use crate::data::{
        data_with_error, filter_in_place, filter_output, merge_data, merge_result, object,
        select_input, select_or_null,
    };
    pub use crate::inline::leave_inline;
    pub use crate::input::workflow_input;
    pub use crate::path::{JsonPath, Segment};
    pub use crate::schema::{
        DataSchema, SCHEMAS, SchemaSite, checked_exit, checked_input, checked_output, typed_input,
        typed_output,
    };
    pub use crate::transition::transition_refused;
    pub use crate::{run_call_in_place, run_call_step};

    /// Writing a state enum and reading it back (see `saved_state`).
    pub mod saved {
        pub use crate::saved_state::{Data, DataRef, Ended, Ending, SavedVariants, deserialize};
    }

    /// A JSON object, as serde_json represents it (members kept in document order).
    pub type Map = serde_json::Map<String, Value>;

    /// What one step of a task gives: the state after it (or what it waits for), or the
    /// failure of the run.
    pub type Step<S> = Result<Progress<S>, WorkflowError>;

    /// The building blocks of compiled expressions.
    pub mod expr {
        pub use crate::expr::{
            CompareOp, LazyRegex, compare, matches, operand_name, operand_path, path_test, truthy,
        };
    }

    /// Switch data conditions.
    pub mod switch {
        pub use crate::switch::{
            Compare, Comparison, ConditionOp, ConditionValue, CustomCondition, Operand, Test,
            choose, data_condition, take,
        };
    }
}
