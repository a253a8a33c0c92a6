//! Events: the definitions generated code declares, the inbox and correlation of each instance,
//! taking events, waiting for them and producing them.

mod data;
mod definitions;
mod inbox;
mod io;
mod produce;
mod registry;
mod spec;
mod take;
mod waiting;

#[cfg(test)]
mod tests;

pub use data::event_data;
pub(crate) use data::with_json_text_parsed;
pub use definitions::{Refusal, Undeliverable};
pub(crate) use io::ChildStart;
pub use io::{DEFAULT_INBOX_CAPACITY, Io, IoBuilder, PlainRunIo, plain_run_io};
pub(crate) use spec::matches_no_definition;
pub use spec::{EventSpec, context_attribute};
pub use take::EventEntry;
pub use waiting::Listening;
pub(crate) use waiting::{Registration, Since};

pub(crate) use inbox::{Bindings, Inbox, Offered, Spill};
pub(crate) use io::HostLink;
pub(crate) use registry::{SharedRegistry, lock as lock_registry};

/// The error name of a failure to wait for or produce an event.
pub const EVENT_ERROR: &str = "EventError";

/// The CloudEvent type, under the name generated code uses.
pub use cloudevents::Event as CloudEvent;
